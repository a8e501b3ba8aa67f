//! The Unicode data the scan needs beyond `unicode-normalization` and `unicode-properties`:
//! the Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt), the ASCII letter or
//! digit each look-alike stands for, lowercase and capital (UTS #39 confusable
//! prototypes), the Latin letters with a stroke, and the ranges of the scripts whose
//! writing needs a joiner, a bidi mark or a variation selector.
//!
//! The tables are derived from the `unicode-security` crate (UTS #39 data of Unicode 18)
//! by the tests below, so they follow the standard, not a taste; they are kept here rather
//! than linked from that crate because its confusables table (every prototype, about
//! 6,700 entries) would add about 110 KB to the component, and the scan needs only the
//! 650 or so entries whose prototype is one ASCII letter or digit.

/// Default_Ignorable_Code_Point: what renders as nothing unless a font has a reason to
/// show it (joiners, bidi controls, variation selectors, tags, fillers).
const DEFAULT_IGNORABLE: &[(char, char)] = &[
    ('\u{AD}', '\u{AD}'),
    ('\u{34F}', '\u{34F}'),
    ('\u{61C}', '\u{61C}'),
    ('\u{115F}', '\u{1160}'),
    ('\u{17B4}', '\u{17B5}'),
    ('\u{180B}', '\u{180F}'),
    ('\u{200B}', '\u{200F}'),
    ('\u{202A}', '\u{202E}'),
    ('\u{2060}', '\u{206F}'),
    ('\u{3164}', '\u{3164}'),
    ('\u{FE00}', '\u{FE0F}'),
    ('\u{FEFF}', '\u{FEFF}'),
    ('\u{FFA0}', '\u{FFA0}'),
    ('\u{FFF0}', '\u{FFF8}'),
    ('\u{1BCA0}', '\u{1BCA3}'),
    ('\u{1D173}', '\u{1D17A}'),
    ('\u{E0000}', '\u{E0FFF}'),
];

/// Whether `c` is a Default_Ignorable_Code_Point.
pub(super) fn is_default_ignorable(c: char) -> bool {
    if c < '\u{AD}' {
        return false;
    }
    in_ranges(DEFAULT_IGNORABLE, c)
}

fn in_ranges(ranges: &[(char, char)], c: char) -> bool {
    ranges
        .binary_search_by(|&(low, high)| {
            if high < c {
                core::cmp::Ordering::Less
            } else if low > c {
                core::cmp::Ordering::Greater
            } else {
                core::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// The Hangul fillers: blank jamo that render as a space's width (U+3164 and U+FFA0 are
/// U+1160 after NFKC).
pub(super) fn is_hangul_filler(c: char) -> bool {
    matches!(c, '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}')
}

/// The ASCII letter or digit a character that NFKC and lowercasing leave as it is stands
/// for: every such character whose UTS #39 skeleton, lowercased, is one ASCII letter or
/// digit (Cyrillic а, Greek ο, Armenian օ, small capital ᴏ, …), then the Latin small
/// capitals UTS #39 leaves out (it counts ᴇ confusable with nothing ASCII) by their names.
/// Sorted by character.
const ASCII_PROTOTYPES: &[(char, u8)] = &[
    ('\u{A1}', b'i'),
    ('\u{D7}', b'x'),
    ('\u{FE}', b'p'),
    ('\u{131}', b'i'),
    ('\u{18D}', b'g'),
    ('\u{192}', b'f'),
    ('\u{1BD}', b's'),
    ('\u{1BF}', b'p'),
    ('\u{1C0}', b'l'),
    ('\u{223}', b'8'),
    ('\u{237}', b'j'),
    ('\u{251}', b'a'),
    ('\u{261}', b'g'),
    ('\u{263}', b'y'),
    ('\u{269}', b'i'),
    ('\u{26A}', b'i'),
    ('\u{26F}', b'w'),
    ('\u{284}', b'f'),
    ('\u{28B}', b'u'),
    ('\u{28F}', b'y'),
    ('\u{3B1}', b'a'),
    ('\u{3B3}', b'y'),
    ('\u{3B9}', b'i'),
    ('\u{3BD}', b'v'),
    ('\u{3BF}', b'o'),
    ('\u{3C1}', b'p'),
    ('\u{3C3}', b'o'),
    ('\u{3C5}', b'u'),
    ('\u{3ED}', b'o'),
    ('\u{3F3}', b'j'),
    ('\u{3F8}', b'p'),
    ('\u{430}', b'a'),
    ('\u{431}', b'6'),
    ('\u{433}', b'r'),
    ('\u{435}', b'e'),
    ('\u{43E}', b'o'),
    ('\u{440}', b'p'),
    ('\u{441}', b'c'),
    ('\u{443}', b'y'),
    ('\u{445}', b'x'),
    ('\u{448}', b'w'),
    ('\u{455}', b's'),
    ('\u{456}', b'i'),
    ('\u{458}', b'j'),
    ('\u{461}', b'w'),
    ('\u{475}', b'v'),
    ('\u{4AF}', b'y'),
    ('\u{4BB}', b'h'),
    ('\u{4BD}', b'e'),
    ('\u{4CF}', b'l'),
    ('\u{501}', b'd'),
    ('\u{51B}', b'q'),
    ('\u{51D}', b'w'),
    ('\u{561}', b'w'),
    ('\u{563}', b'q'),
    ('\u{566}', b'q'),
    ('\u{570}', b'h'),
    ('\u{575}', b'j'),
    ('\u{578}', b'n'),
    ('\u{57C}', b'n'),
    ('\u{57D}', b'u'),
    ('\u{581}', b'g'),
    ('\u{582}', b'i'),
    ('\u{584}', b'f'),
    ('\u{585}', b'o'),
    ('\u{5C0}', b'l'),
    ('\u{5D5}', b'l'),
    ('\u{5D8}', b'v'),
    ('\u{5DF}', b'l'),
    ('\u{5E1}', b'o'),
    ('\u{627}', b'l'),
    ('\u{647}', b'o'),
    ('\u{661}', b'l'),
    ('\u{665}', b'o'),
    ('\u{667}', b'v'),
    ('\u{6BE}', b'o'),
    ('\u{6C1}', b'o'),
    ('\u{6D5}', b'o'),
    ('\u{6F1}', b'l'),
    ('\u{6F5}', b'o'),
    ('\u{6F7}', b'v'),
    ('\u{7C0}', b'o'),
    ('\u{7CA}', b'l'),
    ('\u{7CB}', b'o'),
    ('\u{7CC}', b'y'),
    ('\u{7D3}', b'f'),
    ('\u{7D5}', b'b'),
    ('\u{7E0}', b't'),
    ('\u{840}', b'o'),
    ('\u{964}', b'l'),
    ('\u{966}', b'o'),
    ('\u{969}', b'3'),
    ('\u{9E6}', b'o'),
    ('\u{9EA}', b'8'),
    ('\u{9ED}', b'9'),
    ('\u{A66}', b'o'),
    ('\u{A67}', b'9'),
    ('\u{A6A}', b'8'),
    ('\u{AE6}', b'o'),
    ('\u{AE9}', b'3'),
    ('\u{B03}', b'8'),
    ('\u{B20}', b'o'),
    ('\u{B66}', b'o'),
    ('\u{B68}', b'9'),
    ('\u{BE6}', b'o'),
    ('\u{C02}', b'o'),
    ('\u{C66}', b'o'),
    ('\u{C82}', b'o'),
    ('\u{CE6}', b'o'),
    ('\u{D02}', b'o'),
    ('\u{D1F}', b's'),
    ('\u{D20}', b'o'),
    ('\u{D66}', b'o'),
    ('\u{D6D}', b'9'),
    ('\u{D82}', b'o'),
    ('\u{E50}', b'o'),
    ('\u{ED0}', b'o'),
    ('\u{1004}', b'c'),
    ('\u{101D}', b'o'),
    ('\u{1040}', b'o'),
    ('\u{104A}', b'l'),
    ('\u{105A}', b'c'),
    ('\u{10E7}', b'y'),
    ('\u{10FD}', b's'),
    ('\u{10FF}', b'o'),
    ('\u{110B}', b'o'),
    ('\u{11BC}', b'o'),
    ('\u{1200}', b'u'),
    ('\u{12D0}', b'o'),
    ('\u{142F}', b'v'),
    ('\u{144C}', b'u'),
    ('\u{146D}', b'p'),
    ('\u{146F}', b'd'),
    ('\u{1472}', b'b'),
    ('\u{148D}', b'j'),
    ('\u{14AA}', b'l'),
    ('\u{14BF}', b'2'),
    ('\u{1541}', b'x'),
    ('\u{157C}', b'h'),
    ('\u{157D}', b'x'),
    ('\u{1587}', b'r'),
    ('\u{15AF}', b'b'),
    ('\u{15B4}', b'f'),
    ('\u{15C5}', b'a'),
    ('\u{15DE}', b'd'),
    ('\u{15EA}', b'd'),
    ('\u{15F0}', b'm'),
    ('\u{15F7}', b'b'),
    ('\u{1616}', b'2'),
    ('\u{166D}', b'x'),
    ('\u{166E}', b'x'),
    ('\u{16B7}', b'x'),
    ('\u{16C1}', b'l'),
    ('\u{16D0}', b'l'),
    ('\u{16D5}', b'k'),
    ('\u{16D6}', b'm'),
    ('\u{1702}', b'3'),
    ('\u{172A}', b'7'),
    ('\u{1763}', b'x'),
    ('\u{17E0}', b'o'),
    ('\u{1A45}', b'o'),
    ('\u{1A80}', b'o'),
    ('\u{1A90}', b'o'),
    ('\u{1BEA}', b'o'),
    ('\u{1BEC}', b'x'),
    ('\u{1C82}', b'o'),
    ('\u{1C83}', b'c'),
    ('\u{1C84}', b'7'),
    ('\u{1CF5}', b'x'),
    ('\u{1D04}', b'c'),
    ('\u{1D0F}', b'o'),
    ('\u{1D11}', b'o'),
    ('\u{1D1C}', b'u'),
    ('\u{1D20}', b'v'),
    ('\u{1D21}', b'w'),
    ('\u{1D22}', b'z'),
    ('\u{1D26}', b'r'),
    ('\u{1D83}', b'g'),
    ('\u{1D8C}', b'y'),
    ('\u{1E9D}', b'f'),
    ('\u{1EFF}', b'y'),
    ('\u{212E}', b'e'),
    ('\u{21BF}', b'l'),
    ('\u{2223}', b'l'),
    ('\u{2228}', b'v'),
    ('\u{222A}', b'u'),
    ('\u{22A4}', b't'),
    ('\u{22C1}', b'v'),
    ('\u{22C3}', b'u'),
    ('\u{22FF}', b'e'),
    ('\u{2373}', b'i'),
    ('\u{2374}', b'p'),
    ('\u{237A}', b'a'),
    ('\u{23FD}', b'l'),
    ('\u{2502}', b'l'),
    ('\u{2503}', b'l'),
    ('\u{2573}', b'x'),
    ('\u{27D9}', b't'),
    ('\u{292B}', b'x'),
    ('\u{292C}', b'x'),
    ('\u{29E2}', b'w'),
    ('\u{2A2F}', b'x'),
    ('\u{2C6C}', b'z'),
    ('\u{2C85}', b'r'),
    ('\u{2C8D}', b'z'),
    ('\u{2C93}', b'i'),
    ('\u{2C9F}', b'o'),
    ('\u{2CA3}', b'p'),
    ('\u{2CA5}', b'c'),
    ('\u{2CA9}', b'y'),
    ('\u{2CBD}', b'w'),
    ('\u{2CCB}', b'9'),
    ('\u{2CCF}', b'p'),
    ('\u{2CD3}', b'6'),
    ('\u{2D2D}', b'z'),
    ('\u{2D38}', b'v'),
    ('\u{2D39}', b'e'),
    ('\u{2D4A}', b'l'),
    ('\u{2D4F}', b'l'),
    ('\u{2D54}', b'o'),
    ('\u{2D55}', b'q'),
    ('\u{2D5D}', b'x'),
    ('\u{3007}', b'o'),
    ('\u{3112}', b't'),
    ('\u{311A}', b'y'),
    ('\u{4E05}', b't'),
    ('\u{4E2B}', b'y'),
    ('\u{A4D0}', b'b'),
    ('\u{A4D1}', b'p'),
    ('\u{A4D2}', b'd'),
    ('\u{A4D3}', b'd'),
    ('\u{A4D4}', b't'),
    ('\u{A4D6}', b'g'),
    ('\u{A4D7}', b'k'),
    ('\u{A4D9}', b'j'),
    ('\u{A4DA}', b'c'),
    ('\u{A4DC}', b'z'),
    ('\u{A4DD}', b'f'),
    ('\u{A4DF}', b'm'),
    ('\u{A4E0}', b'n'),
    ('\u{A4E1}', b'l'),
    ('\u{A4E2}', b's'),
    ('\u{A4E3}', b'r'),
    ('\u{A4E6}', b'v'),
    ('\u{A4E7}', b'h'),
    ('\u{A4EA}', b'w'),
    ('\u{A4EB}', b'x'),
    ('\u{A4EC}', b'y'),
    ('\u{A4EE}', b'a'),
    ('\u{A4F0}', b'e'),
    ('\u{A4F2}', b'l'),
    ('\u{A4F3}', b'o'),
    ('\u{A4F4}', b'u'),
    ('\u{A50B}', b't'),
    ('\u{A543}', b'6'),
    ('\u{A557}', b'b'),
    ('\u{A56F}', b'l'),
    ('\u{A576}', b's'),
    ('\u{A589}', b'8'),
    ('\u{A5CB}', b'e'),
    ('\u{A647}', b'i'),
    ('\u{A6C9}', b'z'),
    ('\u{A6DF}', b'v'),
    ('\u{A6EF}', b'2'),
    ('\u{A731}', b's'),
    ('\u{A76F}', b'9'),
    ('\u{A781}', b'l'),
    ('\u{A799}', b'f'),
    ('\u{A79F}', b'u'),
    ('\u{A7FA}', b'w'),
    ('\u{A7FE}', b'l'),
    ('\u{A830}', b'l'),
    ('\u{A8CE}', b'l'),
    ('\u{AA5D}', b'l'),
    ('\u{AB32}', b'e'),
    ('\u{AB35}', b'f'),
    ('\u{AB3D}', b'o'),
    ('\u{AB47}', b'r'),
    ('\u{AB48}', b'r'),
    ('\u{AB4E}', b'u'),
    ('\u{AB52}', b'u'),
    ('\u{AB5A}', b'y'),
    ('\u{AB64}', b'a'),
    ('\u{AB75}', b'i'),
    ('\u{AB81}', b'r'),
    ('\u{AB83}', b'w'),
    ('\u{AB93}', b'z'),
    ('\u{AB9E}', b'4'),
    ('\u{ABA4}', b'w'),
    ('\u{ABA9}', b'v'),
    ('\u{ABAA}', b's'),
    ('\u{ABAF}', b'c'),
    ('\u{ABBE}', b'6'),
    ('\u{1017E}', b'f'),
    ('\u{1018B}', b'd'),
    ('\u{10282}', b'b'),
    ('\u{10286}', b'e'),
    ('\u{10287}', b'f'),
    ('\u{1028A}', b'l'),
    ('\u{10290}', b'x'),
    ('\u{10292}', b'o'),
    ('\u{10295}', b'p'),
    ('\u{10296}', b's'),
    ('\u{10297}', b't'),
    ('\u{102A0}', b'a'),
    ('\u{102A1}', b'b'),
    ('\u{102A2}', b'c'),
    ('\u{102A5}', b'f'),
    ('\u{102AB}', b'o'),
    ('\u{102B0}', b'm'),
    ('\u{102B1}', b't'),
    ('\u{102B2}', b'y'),
    ('\u{102B4}', b'x'),
    ('\u{102CF}', b'h'),
    ('\u{102F5}', b'z'),
    ('\u{10301}', b'b'),
    ('\u{10302}', b'c'),
    ('\u{10309}', b'l'),
    ('\u{1030F}', b'o'),
    ('\u{10311}', b'm'),
    ('\u{10315}', b't'),
    ('\u{10317}', b'x'),
    ('\u{1031A}', b'8'),
    ('\u{1031C}', b'b'),
    ('\u{10320}', b'l'),
    ('\u{10322}', b'x'),
    ('\u{1042C}', b'o'),
    ('\u{1043D}', b'c'),
    ('\u{10448}', b's'),
    ('\u{104EA}', b'o'),
    ('\u{104F6}', b'u'),
    ('\u{10507}', b'z'),
    ('\u{1050E}', b'l'),
    ('\u{10513}', b'n'),
    ('\u{10516}', b'o'),
    ('\u{10518}', b'k'),
    ('\u{1051B}', b'c'),
    ('\u{1051D}', b'v'),
    ('\u{10525}', b'f'),
    ('\u{10526}', b'l'),
    ('\u{10527}', b'x'),
    ('\u{10926}', b'l'),
    ('\u{1092C}', b'o'),
    ('\u{10C13}', b'x'),
    ('\u{10C17}', b'o'),
    ('\u{10C1F}', b'v'),
    ('\u{10C20}', b'y'),
    ('\u{10C21}', b'm'),
    ('\u{10C3E}', b'l'),
    ('\u{10CC2}', b'x'),
    ('\u{10CFA}', b'l'),
    ('\u{10CFC}', b'x'),
    ('\u{10D07}', b'o'),
    ('\u{11047}', b'l'),
    ('\u{110C0}', b'l'),
    ('\u{11124}', b'o'),
    ('\u{11141}', b'l'),
    ('\u{111C5}', b'l'),
    ('\u{11302}', b'o'),
    ('\u{113D4}', b'l'),
    ('\u{11445}', b'8'),
    ('\u{1144B}', b'l'),
    ('\u{114D0}', b'o'),
    ('\u{115C5}', b'l'),
    ('\u{11641}', b'l'),
    ('\u{11706}', b'v'),
    ('\u{1170A}', b'w'),
    ('\u{1170E}', b'w'),
    ('\u{1170F}', b'w'),
    ('\u{118C0}', b'v'),
    ('\u{118C1}', b's'),
    ('\u{118C2}', b'f'),
    ('\u{118C3}', b'i'),
    ('\u{118C4}', b'y'),
    ('\u{118C6}', b'7'),
    ('\u{118C8}', b'o'),
    ('\u{118CA}', b'3'),
    ('\u{118CC}', b'9'),
    ('\u{118D5}', b'6'),
    ('\u{118D6}', b'9'),
    ('\u{118D7}', b'o'),
    ('\u{118D8}', b'u'),
    ('\u{118DC}', b'y'),
    ('\u{118E0}', b'o'),
    ('\u{118E5}', b'z'),
    ('\u{118E6}', b'w'),
    ('\u{118E9}', b'c'),
    ('\u{118EC}', b'x'),
    ('\u{118EF}', b'w'),
    ('\u{118F2}', b'c'),
    ('\u{11ABC}', b'z'),
    ('\u{11ABE}', b'n'),
    ('\u{11C41}', b'l'),
    ('\u{11DDA}', b'l'),
    ('\u{11DE0}', b'o'),
    ('\u{11DE1}', b'l'),
    ('\u{169C1}', b'9'),
    ('\u{169FE}', b'8'),
    ('\u{16A19}', b'r'),
    ('\u{16AD6}', b's'),
    ('\u{16AE9}', b'o'),
    ('\u{16D63}', b'l'),
    ('\u{16E82}', b'4'),
    ('\u{16E8A}', b'7'),
    ('\u{16F08}', b'v'),
    ('\u{16F0A}', b't'),
    ('\u{16F16}', b'l'),
    ('\u{16F28}', b'l'),
    ('\u{16F35}', b'r'),
    ('\u{16F3A}', b's'),
    ('\u{16F3B}', b'3'),
    ('\u{16F40}', b'a'),
    ('\u{16F42}', b'u'),
    ('\u{16F43}', b'y'),
    ('\u{1CEFC}', b'v'),
    ('\u{1D100}', b'l'),
    ('\u{1D134}', b'c'),
    ('\u{1D1FE}', b'7'),
    ('\u{1D206}', b'3'),
    ('\u{1D207}', b'b'),
    ('\u{1D20C}', b'w'),
    ('\u{1D20D}', b'v'),
    ('\u{1D212}', b'7'),
    ('\u{1D213}', b'f'),
    ('\u{1D216}', b'r'),
    ('\u{1D22A}', b'l'),
    ('\u{1D373}', b't'),
    ('\u{1D377}', b'l'),
    ('\u{1DF5A}', b'a'),
    ('\u{1DF6A}', b'a'),
    ('\u{1DF7D}', b'w'),
    ('\u{1DF81}', b'e'),
    ('\u{1E140}', b'o'),
    ('\u{1E141}', b'l'),
    ('\u{1E145}', b'v'),
    ('\u{1E2F0}', b'o'),
    ('\u{1E2F2}', b'9'),
    ('\u{1E8C7}', b'l'),
    ('\u{1E8CB}', b'8'),
    ('\u{1ED01}', b'l'),
    ('\u{1F74C}', b'c'),
    ('\u{1F768}', b't'),
];

/// LATIN LETTER SMALL CAPITAL A, B, D, E, F, G, H, J, K, L, M, N, P, Q, R, T: the small
/// capitals whose UTS #39 skeleton is not ASCII (the others, ᴄ ɪ ᴏ ᴜ ᴠ ᴡ ʏ ᴢ ꜱ, are in the
/// table above).
const SMALL_CAPITALS: &[(char, u8)] = &[
    ('\u{262}', b'g'),
    ('\u{274}', b'n'),
    ('\u{280}', b'r'),
    ('\u{299}', b'b'),
    ('\u{29C}', b'h'),
    ('\u{29F}', b'l'),
    ('\u{1D00}', b'a'),
    ('\u{1D05}', b'd'),
    ('\u{1D07}', b'e'),
    ('\u{1D0A}', b'j'),
    ('\u{1D0B}', b'k'),
    ('\u{1D0D}', b'm'),
    ('\u{1D18}', b'p'),
    ('\u{1D1B}', b't'),
    ('\u{A730}', b'f'),
    ('\u{A7AF}', b'q'),
];

/// Characters whose UTS #39 skeleton is one of the small capitals above, which the scan
/// reads as their letters: Cyrillic `т`, `н`, `в` and Greek `τ` look like `ᴛ`, `ʜ`, `ʙ`
/// and `ᴛ`, so `instrucтions` is `instructions`. Sorted by character.
const SMALL_CAPITAL_LOOK_ALIKES: &[(char, u8)] = &[
    ('\u{3C4}', b't'),
    ('\u{432}', b'b'),
    ('\u{43D}', b'h'),
    ('\u{442}', b't'),
    ('\u{50D}', b'g'),
    ('\u{13FB}', b'g'),
    ('\u{13FC}', b'b'),
    ('\u{1D29}', b'p'),
    ('\u{2C83}', b'b'),
    ('\u{2C8F}', b'h'),
    ('\u{2C9B}', b'n'),
    ('\u{2CA7}', b't'),
    ('\u{2CD1}', b'l'),
    ('\u{A68D}', b't'),
    ('\u{AB70}', b'd'),
    ('\u{AB71}', b'r'),
    ('\u{AB72}', b't'),
    ('\u{AB7A}', b'a'),
    ('\u{AB7B}', b'j'),
    ('\u{AB7C}', b'e'),
    ('\u{AB8B}', b'h'),
    ('\u{AB90}', b'g'),
    ('\u{ABA2}', b'r'),
    ('\u{ABAE}', b'l'),
    ('\u{ABB2}', b'p'),
    ('\u{10443}', b'l'),
];

/// The capitals NFKC keeps whose UTS #39 skeleton is one ASCII letter or digit, with the
/// ASCII character of that skeleton (a capital where it has one: the skeleton reads `I`
/// and `l` alike, and Cyrillic `І` in `INSTRUCTIONS` stands for `I`), lowercased. Their
/// own lowercase often imitates nothing (Cyrillic `Т` is `т`, Greek `Η` is `η`) or
/// something else (Greek `Ν` is `ν`, which reads as `v`), so a capital is read as written,
/// before lowercasing. Sorted by character.
const CAPITAL_PROTOTYPES: &[(char, u8)] = &[
    ('\u{184}', b'b'),
    ('\u{196}', b'i'),
    ('\u{1A6}', b'r'),
    ('\u{1A7}', b'2'),
    ('\u{1B7}', b'3'),
    ('\u{1BC}', b'5'),
    ('\u{21C}', b'3'),
    ('\u{222}', b'8'),
    ('\u{24C}', b'r'),
    ('\u{37F}', b'j'),
    ('\u{391}', b'a'),
    ('\u{392}', b'b'),
    ('\u{395}', b'e'),
    ('\u{396}', b'z'),
    ('\u{397}', b'h'),
    ('\u{399}', b'i'),
    ('\u{39A}', b'k'),
    ('\u{39C}', b'm'),
    ('\u{39D}', b'n'),
    ('\u{39F}', b'o'),
    ('\u{3A1}', b'p'),
    ('\u{3A4}', b't'),
    ('\u{3A5}', b'y'),
    ('\u{3A7}', b'x'),
    ('\u{3DC}', b'f'),
    ('\u{3E8}', b'2'),
    ('\u{3EC}', b'6'),
    ('\u{3FA}', b'm'),
    ('\u{405}', b's'),
    ('\u{406}', b'i'),
    ('\u{408}', b'j'),
    ('\u{410}', b'a'),
    ('\u{412}', b'b'),
    ('\u{415}', b'e'),
    ('\u{417}', b'3'),
    ('\u{41A}', b'k'),
    ('\u{41C}', b'm'),
    ('\u{41D}', b'h'),
    ('\u{41E}', b'o'),
    ('\u{420}', b'p'),
    ('\u{421}', b'c'),
    ('\u{422}', b't'),
    ('\u{423}', b'y'),
    ('\u{425}', b'x'),
    ('\u{42C}', b'b'),
    ('\u{474}', b'v'),
    ('\u{4AE}', b'y'),
    ('\u{4BA}', b'h'),
    ('\u{4C0}', b'i'),
    ('\u{4E0}', b'3'),
    ('\u{50C}', b'g'),
    ('\u{51A}', b'q'),
    ('\u{51C}', b'w'),
    ('\u{545}', b'3'),
    ('\u{54D}', b'u'),
    ('\u{54F}', b's'),
    ('\u{555}', b'o'),
    ('\u{10B9}', b'h'),
    ('\u{10BD}', b's'),
    ('\u{10C7}', b'2'),
    ('\u{10CD}', b'z'),
    ('\u{13A0}', b'd'),
    ('\u{13A1}', b'r'),
    ('\u{13A2}', b't'),
    ('\u{13A5}', b'i'),
    ('\u{13A9}', b'y'),
    ('\u{13AA}', b'a'),
    ('\u{13AB}', b'j'),
    ('\u{13AC}', b'e'),
    ('\u{13B3}', b'w'),
    ('\u{13B7}', b'm'),
    ('\u{13BB}', b'h'),
    ('\u{13BD}', b'y'),
    ('\u{13C0}', b'g'),
    ('\u{13C2}', b'h'),
    ('\u{13C3}', b'z'),
    ('\u{13CE}', b'4'),
    ('\u{13CF}', b'b'),
    ('\u{13D2}', b'r'),
    ('\u{13D4}', b'w'),
    ('\u{13D5}', b's'),
    ('\u{13D9}', b'v'),
    ('\u{13DA}', b's'),
    ('\u{13DE}', b'l'),
    ('\u{13DF}', b'c'),
    ('\u{13E2}', b'p'),
    ('\u{13E6}', b'k'),
    ('\u{13E7}', b'd'),
    ('\u{13EE}', b'6'),
    ('\u{13F3}', b'g'),
    ('\u{13F4}', b'b'),
    ('\u{1C95}', b'3'),
    ('\u{1CB7}', b'2'),
    ('\u{1CBD}', b's'),
    ('\u{1CBF}', b'o'),
    ('\u{2C6B}', b'z'),
    ('\u{2C82}', b'b'),
    ('\u{2C8C}', b'z'),
    ('\u{2C8E}', b'h'),
    ('\u{2C92}', b'i'),
    ('\u{2C94}', b'k'),
    ('\u{2C98}', b'm'),
    ('\u{2C9A}', b'n'),
    ('\u{2C9C}', b'3'),
    ('\u{2C9E}', b'o'),
    ('\u{2CA2}', b'p'),
    ('\u{2CA4}', b'c'),
    ('\u{2CA6}', b't'),
    ('\u{2CA8}', b'y'),
    ('\u{2CAC}', b'x'),
    ('\u{2CC4}', b'3'),
    ('\u{2CCA}', b'9'),
    ('\u{2CCC}', b'3'),
    ('\u{2CCE}', b'p'),
    ('\u{2CD0}', b'l'),
    ('\u{2CD2}', b'6'),
    ('\u{2CDC}', b'6'),
    ('\u{A644}', b'2'),
    ('\u{A75A}', b'2'),
    ('\u{A76A}', b'3'),
    ('\u{A76E}', b'9'),
    ('\u{A798}', b'f'),
    ('\u{A7AB}', b'3'),
    ('\u{A7AE}', b'i'),
    ('\u{A7B2}', b'j'),
    ('\u{A7B3}', b'x'),
    ('\u{A7B4}', b'b'),
    ('\u{10404}', b'o'),
    ('\u{10415}', b'c'),
    ('\u{1041B}', b'l'),
    ('\u{10420}', b's'),
    ('\u{104B4}', b'r'),
    ('\u{104C2}', b'o'),
    ('\u{104CE}', b'u'),
    ('\u{104D2}', b'7'),
    ('\u{10C82}', b'x'),
    ('\u{10CA5}', b'i'),
    ('\u{118A0}', b'v'),
    ('\u{118A2}', b'f'),
    ('\u{118A3}', b'l'),
    ('\u{118A4}', b'y'),
    ('\u{118A6}', b'e'),
    ('\u{118A9}', b'z'),
    ('\u{118AC}', b'9'),
    ('\u{118AE}', b'e'),
    ('\u{118AF}', b'4'),
    ('\u{118B2}', b'l'),
    ('\u{118B5}', b'o'),
    ('\u{118B8}', b'u'),
    ('\u{118BB}', b'5'),
    ('\u{118BC}', b't'),
    ('\u{16EAA}', b'i'),
    ('\u{16EB6}', b'b'),
];

/// Latin letters with a stroke or a bar, whose UTS #39 skeleton is an ASCII letter with an
/// overlay mark (`ł` is `l` with U+0338): the scan drops the overlay as it drops an accent,
/// so `wyłącz` reads as `wylacz`. Sorted by character.
const STROKED_LATIN: &[(char, u8)] = &[
    ('\u{F8}', b'o'),
    ('\u{111}', b'd'),
    ('\u{127}', b'h'),
    ('\u{142}', b'l'),
    ('\u{167}', b't'),
    ('\u{180}', b'b'),
    ('\u{19A}', b'l'),
    ('\u{1B6}', b'z'),
    ('\u{1E5}', b'g'),
    ('\u{23C}', b'c'),
    ('\u{247}', b'e'),
    ('\u{249}', b'j'),
    ('\u{24D}', b'r'),
    ('\u{24F}', b'y'),
    ('\u{25F}', b'j'),
    ('\u{268}', b'i'),
    ('\u{26B}', b'l'),
    ('\u{275}', b'o'),
    ('\u{1D6E}', b'f'),
    ('\u{1D70}', b'n'),
    ('\u{1D72}', b'r'),
    ('\u{1D74}', b's'),
    ('\u{1D75}', b't'),
    ('\u{1D76}', b'z'),
    ('\u{1D7B}', b'i'),
    ('\u{1D7C}', b'i'),
    ('\u{1D7D}', b'p'),
    ('\u{1D7E}', b'u'),
    ('\u{A74B}', b'o'),
    ('\u{AB3E}', b'o'),
];

/// The ASCII letter or digit `c` looks like as written: a lowercase or caseless look-alike
/// (`ASCII_PROTOTYPES`, the small capitals and their look-alikes), a capital one (`CAPITAL_PROTOTYPES`), or a
/// capital whose lowercase is a look-alike (Cyrillic `Ѕ`, like `ѕ`).
pub(super) fn ascii_prototype(c: char) -> Option<char> {
    if c < '\u{A1}' || !in_a_look_alike_block(c) {
        return None;
    }
    for table in [
        &PACKED_ASCII_PROTOTYPES[..],
        &PACKED_SMALL_CAPITALS,
        &PACKED_SMALL_CAPITAL_LOOK_ALIKES,
        &PACKED_CAPITAL_PROTOTYPES,
    ] {
        if let Some(letter) = packed_lookup(table, c) {
            return Some(letter);
        }
    }
    crate::ucd::other_lowercase(c).and_then(ascii_prototype)
}

/// The 256-code-point blocks below U+20000 that hold a look-alike or a capital whose
/// lowercase is one, a bit each: most letters of most scripts (CJK, Hangul) are in none,
/// and are answered without a search.
const LOOK_ALIKE_BLOCKS: [u64; 8] = look_alike_blocks();

const fn look_alike_blocks() -> [u64; 8] {
    let mut blocks = [0u64; 8];
    let tables: [&[(char, u8)]; 4] = [
        ASCII_PROTOTYPES,
        SMALL_CAPITALS,
        SMALL_CAPITAL_LOOK_ALIKES,
        CAPITAL_PROTOTYPES,
    ];
    let mut t = 0;
    while t < tables.len() {
        let mut i = 0;
        while i < tables[t].len() {
            let block = tables[t][i].0 as usize >> 8;
            if block < 512 {
                blocks[block / 64] |= 1 << (block % 64);
            }
            i += 1;
        }
        t += 1;
    }
    blocks
}

/// Whether `c` may have an ASCII prototype: its block holds one, or it is a capital of a
/// cased script (whose lowercase may be in another block), or it is beyond the bitmap.
fn in_a_look_alike_block(c: char) -> bool {
    let block = c as usize >> 8;
    block >= 512 || LOOK_ALIKE_BLOCKS[block / 64] & (1 << (block % 64)) != 0 || c.is_uppercase()
}

/// The ASCII letter a Latin letter with a stroke stands for.
pub(super) fn stroked_latin(c: char) -> Option<char> {
    if c < '\u{F8}' {
        return None;
    }
    packed_lookup(&PACKED_STROKED_LATIN, c)
}

/// The look-alike tables as the component carries them: each pair in 4 bytes (the code
/// point, at most 21 bits, over the ASCII byte) instead of a `(char, u8)`'s 8, still
/// sorted by character. The pairs above stay the source, which the tests check.
const PACKED_ASCII_PROTOTYPES: [u32; ASCII_PROTOTYPES.len()] = pack(ASCII_PROTOTYPES);
const PACKED_SMALL_CAPITALS: [u32; SMALL_CAPITALS.len()] = pack(SMALL_CAPITALS);
const PACKED_SMALL_CAPITAL_LOOK_ALIKES: [u32; SMALL_CAPITAL_LOOK_ALIKES.len()] =
    pack(SMALL_CAPITAL_LOOK_ALIKES);
const PACKED_CAPITAL_PROTOTYPES: [u32; CAPITAL_PROTOTYPES.len()] = pack(CAPITAL_PROTOTYPES);
const PACKED_STROKED_LATIN: [u32; STROKED_LATIN.len()] = pack(STROKED_LATIN);

const fn pack<const N: usize>(table: &[(char, u8)]) -> [u32; N] {
    let mut packed = [0; N];
    let mut i = 0;
    while i < N {
        packed[i] = (table[i].0 as u32) << 8 | table[i].1 as u32;
        i += 1;
    }
    packed
}

/// The ASCII byte paired with `c` in a packed table.
fn packed_lookup(table: &[u32], c: char) -> Option<char> {
    let i = table
        .binary_search_by_key(&(c as u32), |&pair| pair >> 8)
        .ok()?;
    Some(char::from(table[i] as u8))
}

/// Whether a combining mark on `base` is only an accent to the scan: on a Latin or Greek
/// letter or a look-alike (`ignöre`, `αγνόησε`, Cyrillic `ё`), and the optional vowel
/// points of Arabic and Hebrew. Marks that make a letter of another script (Cyrillic `й`,
/// the vowel signs of Devanagari or Bengali, kana voicing) are kept.
pub(super) fn drops_marks(base: char) -> bool {
    base.is_ascii_alphabetic()
        || matches!(base, '\u{C0}'..='\u{24F}' | '\u{370}'..='\u{3FF}' | '\u{1E00}'..='\u{1FFF}')
        || in_ranges(POINTED_SCRIPTS, base)
        || ascii_prototype(base).is_some()
}

/// Arabic and Hebrew, whose vowel points and hamza carriers are commonly left out.
const POINTED_SCRIPTS: &[(char, char)] = &[
    ('\u{591}', '\u{5FF}'),
    ('\u{600}', '\u{6FF}'),
    ('\u{750}', '\u{77F}'),
    ('\u{8A0}', '\u{8FF}'),
    ('\u{FB1D}', '\u{FDFF}'),
    ('\u{FE70}', '\u{FEFE}'),
];

/// Whether `c` is a token of its own in the words stream: Han ideographs and kana, which
/// Chinese and Japanese write without spaces between words.
pub(super) fn is_solo(c: char) -> bool {
    matches!(c, '\u{3005}' | '\u{3040}'..='\u{30FF}' | '\u{31F0}'..='\u{31FF}') || is_ideograph(c)
}

/// Letters of the scripts written with cursive joining (Joining_Type other than
/// Non_Joining): Arabic, Syriac, N'Ko, Mandaic, Mongolian, Phags-pa and the historic
/// cursive scripts, by block. A zero-width non-joiner or joiner between two of them
/// chooses a letter's form (Persian می‌خواهم).
const JOINING_SCRIPTS: &[(char, char)] = &[
    ('\u{600}', '\u{6FF}'),
    ('\u{700}', '\u{74F}'),
    ('\u{750}', '\u{77F}'),
    ('\u{7C0}', '\u{7FF}'),
    ('\u{840}', '\u{85F}'),
    ('\u{860}', '\u{86F}'),
    ('\u{870}', '\u{8FF}'),
    ('\u{1800}', '\u{18AF}'),
    ('\u{A840}', '\u{A87F}'),
    ('\u{FB50}', '\u{FDFF}'),
    ('\u{FE70}', '\u{FEFE}'),
    ('\u{10AC0}', '\u{10AFF}'),
    ('\u{10B80}', '\u{10BAF}'),
    ('\u{10D00}', '\u{10D3F}'),
    ('\u{10F30}', '\u{10FDF}'),
    ('\u{1E900}', '\u{1E95F}'),
];

pub(super) fn is_joining_script(c: char) -> bool {
    c >= '\u{600}' && in_ranges(JOINING_SCRIPTS, c)
}

/// The ranges whose default Bidi_Class is right-to-left (R or AL, DerivedBidiClass.txt):
/// Hebrew, Arabic, Syriac, Thaana, N'Ko, Samaritan, Mandaic, their presentation forms and
/// the right-to-left scripts of the supplementary planes.
const RIGHT_TO_LEFT: &[(char, char)] = &[
    ('\u{590}', '\u{8FF}'),
    ('\u{FB1D}', '\u{FDFF}'),
    ('\u{FE70}', '\u{FEFE}'),
    ('\u{10800}', '\u{10FFF}'),
    ('\u{1E800}', '\u{1EFFF}'),
];

pub(super) fn is_right_to_left(c: char) -> bool {
    c >= '\u{590}' && in_ranges(RIGHT_TO_LEFT, c)
}

/// Unified_Ideograph (CJK), which an ideographic variation selector (U+E0100..U+E01EF)
/// may follow: the CJK Unified Ideographs and their extensions, and the compatibility
/// ideographs.
const IDEOGRAPHS: &[(char, char)] = &[
    ('\u{3400}', '\u{4DBF}'),
    ('\u{4E00}', '\u{9FFF}'),
    ('\u{F900}', '\u{FAFF}'),
    ('\u{20000}', '\u{3FFFF}'),
];

pub(super) fn is_ideograph(c: char) -> bool {
    c >= '\u{3400}' && in_ranges(IDEOGRAPHS, c)
}

/// Mongolian letters (and Todo, Sibe, Manchu), which the free variation selectors
/// U+180B..U+180D, U+180F and the vowel separator U+180E follow.
pub(super) fn is_mongolian_letter(c: char) -> bool {
    matches!(c, '\u{1820}'..='\u{1878}' | '\u{1880}'..='\u{18AA}' | '\u{11660}'..='\u{1167F}')
}

/// The bytes these tables take.
pub(super) fn table_bytes() -> usize {
    [
        DEFAULT_IGNORABLE,
        JOINING_SCRIPTS,
        POINTED_SCRIPTS,
        RIGHT_TO_LEFT,
        IDEOGRAPHS,
    ]
    .iter()
    .map(|t| size_of_val(*t))
    .sum::<usize>()
        + size_of_val(&PACKED_ASCII_PROTOTYPES)
        + size_of_val(&PACKED_SMALL_CAPITALS)
        + size_of_val(&PACKED_SMALL_CAPITAL_LOOK_ALIKES)
        + size_of_val(&PACKED_CAPITAL_PROTOTYPES)
        + size_of_val(&PACKED_STROKED_LATIN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::prelude::rust_2024::*;
    use unicode_normalization::UnicodeNormalization;

    fn skeleton(c: char) -> String {
        unicode_security::skeleton(c.encode_utf8(&mut [0; 4])).collect()
    }

    fn all_chars() -> impl Iterator<Item = char> {
        (0..=0x10FFFF).filter_map(char::from_u32)
    }

    /// The quick bound before the table keeps the table's answer: a character past the
    /// bound but in no range (Chinese, Latin Extended) is neither.
    #[test]
    fn joining_and_right_to_left_scripts_are_their_ranges() {
        for c in ['\u{628}', '\u{710}', '\u{7CA}'] {
            assert!(is_joining_script(c), "{c:?}");
        }
        for c in ['\u{5D0}', '\u{628}', '\u{10800}'] {
            assert!(is_right_to_left(c), "{c:?}");
        }
        for c in ['中', 'é', 'a', '\u{1E00}', '가'] {
            assert!(!is_joining_script(c), "{c:?}");
            assert!(!is_right_to_left(c), "{c:?}");
        }
    }

    /// The skeleton drops exactly the default-ignorable code points, so an empty skeleton
    /// names one.
    #[test]
    fn default_ignorables_are_uts39s() {
        for c in all_chars() {
            assert_eq!(
                is_default_ignorable(c),
                skeleton(c).is_empty(),
                "U+{:04X}",
                c as u32
            );
        }
    }

    /// The table is every character NFKC and lowercasing keep whose skeleton, lowercased,
    /// is one ASCII letter or digit.
    #[test]
    fn ascii_prototypes_are_uts39s() {
        let mut derived: Vec<(char, u8)> = Vec::new();
        for c in all_chars().filter(|c| !c.is_ascii()) {
            let mut one = [0; 4];
            let text: &str = c.encode_utf8(&mut one);
            let normal: String = text.nfkc().flat_map(char::to_lowercase).collect();
            if normal != text {
                continue;
            }
            let prototype = skeleton(c).to_lowercase();
            if let [b] = prototype.as_bytes()
                && b.is_ascii_alphanumeric()
            {
                derived.push((c, *b));
            }
        }
        assert_eq!(ASCII_PROTOTYPES, derived.as_slice());
        for (c, letter) in SMALL_CAPITALS {
            assert!(!derived.iter().any(|(d, _)| d == c), "U+{:04X}", *c as u32);
            assert!(!skeleton(*c).is_ascii(), "U+{:04X}", *c as u32);
            assert!(letter.is_ascii_lowercase());
        }
        assert!(SMALL_CAPITALS.windows(2).all(|w| w[0].0 < w[1].0));
    }

    /// The look-alikes of the small capitals: every character NFKC and lowercasing keep
    /// whose skeleton is one of `SMALL_CAPITALS`.
    #[test]
    fn small_capital_look_alikes_are_uts39s() {
        let mut derived: Vec<(char, u8)> = Vec::new();
        for c in all_chars().filter(|c| !c.is_ascii()) {
            let mut one = [0; 4];
            let text: &str = c.encode_utf8(&mut one);
            let normal: String = text.nfkc().flat_map(char::to_lowercase).collect();
            if normal != text {
                continue;
            }
            let chars: Vec<char> = skeleton(c).chars().collect();
            if let [s] = chars[..]
                && s != c
                && let Some(&(_, letter)) = SMALL_CAPITALS.iter().find(|(small, _)| *small == s)
            {
                derived.push((c, letter));
            }
        }
        assert_eq!(SMALL_CAPITAL_LOOK_ALIKES, derived.as_slice());
    }

    /// The capitals: every character NFKC keeps and lowercasing changes whose skeleton is
    /// one ASCII letter or digit's, as that character (a capital first), lowercased.
    #[test]
    fn capital_prototypes_are_uts39s() {
        let ascii: Vec<(String, char)> = ('0'..='9')
            .chain('A'..='Z')
            .chain('a'..='z')
            .map(|a| (skeleton(a), a))
            .collect();
        let mut derived: Vec<(char, u8)> = Vec::new();
        for c in all_chars().filter(|c| !c.is_ascii()) {
            let mut one = [0; 4];
            let text: &str = c.encode_utf8(&mut one);
            let nfkc: String = text.nfkc().collect();
            let lower: String = c.to_lowercase().collect();
            if nfkc != text || lower == text {
                continue;
            }
            let own = skeleton(c);
            let rank = |a: char| (!a.is_ascii_uppercase(), !a.is_ascii_digit());
            if let Some(a) = ascii
                .iter()
                .filter(|(s, _)| *s == own)
                .map(|&(_, a)| a)
                .min_by_key(|&a| rank(a))
            {
                derived.push((c, a.to_ascii_lowercase() as u8));
            }
        }
        assert_eq!(CAPITAL_PROTOTYPES, derived.as_slice());
        // The reason for the table: these capitals' lowercase imitates nothing, or
        // another letter.
        for (capital, want) in [('\u{422}', 't'), ('\u{41D}', 'h'), ('\u{39D}', 'n')] {
            assert_eq!(ascii_prototype(capital), Some(want));
        }
        assert_eq!(ascii_prototype('\u{406}'), Some('i'));
    }

    /// The block bitmap lets every look-alike of every table through, and every capital
    /// whose lowercase is one.
    #[test]
    fn every_look_alike_is_found_through_the_block_bitmap() {
        for table in [
            ASCII_PROTOTYPES,
            SMALL_CAPITALS,
            SMALL_CAPITAL_LOOK_ALIKES,
            CAPITAL_PROTOTYPES,
        ] {
            for &(c, letter) in table {
                assert_eq!(
                    ascii_prototype(c),
                    Some(char::from(letter)),
                    "U+{:04X}",
                    c as u32
                );
            }
        }
        for c in all_chars() {
            let mut lower = c.to_lowercase();
            if let (Some(l), None) = (lower.next(), lower.next())
                && l != c
                && ascii_prototype(l).is_some()
            {
                assert!(ascii_prototype(c).is_some(), "U+{:04X}", c as u32);
            }
        }
    }

    /// The stroked letters: every Latin letter NFKC and lowercasing keep whose skeleton is
    /// an ASCII letter followed by one overlay mark (U+0334..U+0338).
    #[test]
    fn stroked_latin_letters_are_uts39s() {
        let latin = |c: char| {
            matches!(c, '\u{C0}'..='\u{2AF}' | '\u{1D00}'..='\u{1DBF}' | '\u{1E00}'..='\u{1EFF}'
                | '\u{2C60}'..='\u{2C7F}' | '\u{A720}'..='\u{A7FF}' | '\u{AB30}'..='\u{AB6F}')
        };
        let mut derived: Vec<(char, u8)> = Vec::new();
        for c in all_chars().filter(|&c| latin(c) && c.is_alphabetic()) {
            let mut one = [0; 4];
            let text: &str = c.encode_utf8(&mut one);
            let normal: String = text.nfkc().flat_map(char::to_lowercase).collect();
            if normal != text {
                continue;
            }
            let chars: Vec<char> = skeleton(c).chars().collect();
            if let [letter, overlay] = chars[..]
                && letter.is_ascii_alphabetic()
                && ('\u{334}'..='\u{338}').contains(&overlay)
            {
                derived.push((c, letter.to_ascii_lowercase() as u8));
            }
        }
        assert_eq!(STROKED_LATIN, derived.as_slice());
        for &(c, letter) in STROKED_LATIN {
            assert_eq!(stroked_latin(c), Some(char::from(letter)), "{c}");
            let mut upper = c.to_uppercase();
            if let (Some(u), None) = (upper.next(), upper.next())
                && u != c
            {
                assert_eq!(stroked_latin(u), None, "{u}");
            }
        }
        for c in ['o', 'O', '\u{F7}', 'ö'] {
            assert_eq!(stroked_latin(c), None, "{c}");
        }
    }

    /// Most letters of most scripts (CJK, Hangul) are in no block of the bitmap, and are
    /// answered without a search; a look-alike's block is in it.
    #[test]
    fn the_block_bitmap_leaves_out_most_of_cjk_and_hangul() {
        let ranges = ['\u{4E00}'..='\u{9FFF}', '\u{AC00}'..='\u{D7A3}'];
        let chars: Vec<char> = ranges.into_iter().flatten().collect();
        let searched = chars.iter().filter(|&&c| in_a_look_alike_block(c)).count();
        assert!(searched * 10 < chars.len(), "{searched} of {}", chars.len());
        assert!(in_a_look_alike_block('а'));
        assert!(in_a_look_alike_block('\u{20000}'));
    }

    /// What the component's size budget counts: every table of this module.
    #[test]
    fn table_bytes_counts_every_table() {
        let ranges = [
            DEFAULT_IGNORABLE,
            JOINING_SCRIPTS,
            POINTED_SCRIPTS,
            RIGHT_TO_LEFT,
            IDEOGRAPHS,
        ];
        // The look-alike pairs as carried: packed, 4 bytes each.
        let prototypes = [
            ASCII_PROTOTYPES,
            SMALL_CAPITALS,
            SMALL_CAPITAL_LOOK_ALIKES,
            CAPITAL_PROTOTYPES,
            STROKED_LATIN,
        ];
        let want = ranges
            .iter()
            .map(|t| size_of_val(*t))
            .chain(prototypes.iter().map(|t| t.len() * size_of::<u32>()))
            .sum::<usize>();
        assert_eq!(table_bytes(), want);
    }

    #[test]
    fn the_packed_look_alike_tables_are_their_pairs() {
        for (packed, pairs) in [
            (&PACKED_ASCII_PROTOTYPES[..], ASCII_PROTOTYPES),
            (&PACKED_SMALL_CAPITALS, SMALL_CAPITALS),
            (&PACKED_SMALL_CAPITAL_LOOK_ALIKES, SMALL_CAPITAL_LOOK_ALIKES),
            (&PACKED_CAPITAL_PROTOTYPES, CAPITAL_PROTOTYPES),
            (&PACKED_STROKED_LATIN, STROKED_LATIN),
        ] {
            let unpacked: Vec<(char, u8)> = packed
                .iter()
                .map(|&pair| (char::from_u32(pair >> 8).unwrap(), pair as u8))
                .collect();
            assert_eq!(unpacked, pairs);
        }
    }
}
