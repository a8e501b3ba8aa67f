//! The Unicode data the scan needs (NFKC, canonical combining classes, the few general
//! categories and emoji properties it asks about) in compact tables of its own.
//!
//! The scan used the `unicode-normalization` and `unicode-properties` crates, whose
//! tables (perfect hashes of 8-byte entries, one range entry per general category run)
//! were about 150 KB of the component's 467 KB. `ucd_tables.rs` holds the same data as
//! sorted runs: a code point range and one value for the whole run. The crates are now
//! only dev-dependencies: `tables_are_the_crates` regenerates the tables from them and
//! fails if the file differs (`METIS_WRITE_UCD=1` rewrites it), and the tests below check
//! NFKC and every property against the crates for every code point.

use alloc::vec::Vec;

use crate::sort::sort;

use super::ucd_tables::{
    CATEGORY_RUNS, COMBINING_CLASS_RUNS, COMPOSE_KEYS, COMPOSE_SECONDS, COMPOSE_VALUES,
    DECOMPOSE_KEYS, DECOMPOSE_POOL, DECOMPOSE_VALUES, EMOJI_RUNS,
};

/// The general categories the scan tells apart; every other one is `Other`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Category {
    Other = 0,
    /// `Mn`, `Mc` or `Me`.
    Mark = 1,
    /// `Cc`.
    Control = 2,
    /// `Cf`.
    Format = 3,
    /// `Co`.
    PrivateUse = 4,
    /// `Cn`.
    Unassigned = 5,
}

const CATEGORIES: [Category; 6] = [
    Category::Other,
    Category::Mark,
    Category::Control,
    Category::Format,
    Category::PrivateUse,
    Category::Unassigned,
];

/// The value of the run holding `c` in `runs`, each run a start code point above
/// `value_bits` bits of value, running to the next run's start.
fn run_value(runs: &[u32], value_bits: u32, c: char) -> u32 {
    let at = runs.partition_point(|&run| run >> value_bits <= c as u32);
    at.checked_sub(1)
        .map_or(0, |i| runs[i] & ((1 << value_bits) - 1))
}

/// The bytes these tables take.
pub(super) fn table_bytes() -> usize {
    let tables: [&[u32]; 8] = [
        CATEGORY_RUNS,
        COMBINING_CLASS_RUNS,
        EMOJI_RUNS,
        DECOMPOSE_KEYS,
        DECOMPOSE_VALUES,
        COMPOSE_SECONDS,
        COMPOSE_KEYS,
        COMPOSE_VALUES,
    ];
    tables.iter().map(|t| size_of_val(*t)).sum::<usize>() + DECOMPOSE_POOL.len()
}

pub(crate) fn category(c: char) -> Category {
    CATEGORIES[run_value(CATEGORY_RUNS, 3, c) as usize]
}

pub fn is_format(c: char) -> bool {
    category(c) == Category::Format
}

pub(crate) fn is_mark(c: char) -> bool {
    category(c) == Category::Mark
}

pub(crate) fn canonical_combining_class(c: char) -> u8 {
    run_value(COMBINING_CLASS_RUNS, 8, c) as u8
}

// An emoji run's value: bit 0 for `Emoji`, bit 1 for `Emoji` or `Emoji_Component`.
const EMOJI: u32 = 1;
const IN_EMOJI_SEQUENCES: u32 = 2;

/// The `Emoji` property.
pub(crate) fn is_emoji(c: char) -> bool {
    run_value(EMOJI_RUNS, 2, c) & EMOJI != 0
}

/// `Emoji` or `Emoji_Component`: whether `c` occurs in emoji sequences.
pub(crate) fn in_emoji_sequences(c: char) -> bool {
    run_value(EMOJI_RUNS, 2, c) & IN_EMOJI_SEQUENCES != 0
}

// Hangul syllables decompose and compose by arithmetic, not by table (Unicode §3.12).
const S_BASE: u32 = 0xAC00;
const L_BASE: u32 = 0x1100;
const V_BASE: u32 = 0x1161;
const T_BASE: u32 = 0x11A7;
const L_COUNT: u32 = 19;
const V_COUNT: u32 = 21;
const T_COUNT: u32 = 28;
const N_COUNT: u32 = V_COUNT * T_COUNT;
const S_COUNT: u32 = L_COUNT * N_COUNT;

fn from_u32(c: u32) -> char {
    char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// The full compatibility decomposition of `c`, each character passed to `emit`.
pub(crate) fn decompose(c: char, emit: &mut impl FnMut(char)) {
    let code = c as u32;
    if (S_BASE..S_BASE + S_COUNT).contains(&code) {
        let s = code - S_BASE;
        emit(from_u32(L_BASE + s / N_COUNT));
        emit(from_u32(V_BASE + (s % N_COUNT) / T_COUNT));
        if !s.is_multiple_of(T_COUNT) {
            emit(from_u32(T_BASE + s % T_COUNT));
        }
        return;
    }
    // A key is a run's first code point above 11 bits of its length less one; a value
    // is either the first character of a run of consecutive ones, or (top bit set) where
    // one decomposition of several characters lies in the pool.
    let at = DECOMPOSE_KEYS.partition_point(|&key| key >> 11 <= code);
    if let Some(i) = at.checked_sub(1) {
        let (start, len) = (DECOMPOSE_KEYS[i] >> 11, (DECOMPOSE_KEYS[i] & 0x7FF) + 1);
        if code - start < len {
            let value = DECOMPOSE_VALUES[i];
            if value & 1 << 31 == 0 {
                emit(from_u32(value + (code - start)));
            } else {
                let from = ((value >> 8) & 0xFFFF) as usize;
                let to = from + (value & 0xFF) as usize;
                DECOMPOSE_POOL
                    .get(from..to)
                    .into_iter()
                    .flat_map(str::chars)
                    .for_each(emit);
            }
            return;
        }
    }
    emit(c);
}

/// The primary composite of `a` followed by `b`, if there is one.
fn compose(a: char, b: char) -> Option<char> {
    let (a, b) = (a as u32, b as u32);
    if (L_BASE..L_BASE + L_COUNT).contains(&a) && (V_BASE..V_BASE + V_COUNT).contains(&b) {
        return char::from_u32(S_BASE + ((a - L_BASE) * V_COUNT + (b - V_BASE)) * T_COUNT);
    }
    if (S_BASE..S_BASE + S_COUNT).contains(&a)
        && (a - S_BASE).is_multiple_of(T_COUNT)
        && (T_BASE + 1..T_BASE + T_COUNT).contains(&b)
    {
        return char::from_u32(a + (b - T_BASE));
    }
    let second = COMPOSE_SECONDS.binary_search(&b).ok()? as u32;
    let key = second << 21 | a;
    let at = COMPOSE_KEYS.binary_search(&key).ok()?;
    char::from_u32(COMPOSE_VALUES[at])
}

fn is_composition_second(c: char) -> bool {
    let code = c as u32;
    (V_BASE..V_BASE + V_COUNT).contains(&code)
        || (T_BASE + 1..T_BASE + T_COUNT).contains(&code)
        || COMPOSE_SECONDS.binary_search(&code).is_ok()
}

/// Whether `text` is certainly its own NFKC form: no character decomposes, none is a
/// combining mark, none can compose with the one before. (Some NFKC texts fail it, such
/// as precomposed letters; they are then normalised to themselves.)
pub(crate) fn is_nfkc_quick(text: &str) -> bool {
    text.chars().all(|c| {
        c.is_ascii()
            || (canonical_combining_class(c) == 0 && !is_composition_second(c) && {
                let mut same = true;
                decompose(c, &mut |d| same &= d == c);
                same
            })
    })
}

/// The NFKC form of `text`: full compatibility decomposition, canonical ordering, then
/// canonical composition (Unicode §3.11, UAX #15).
pub(crate) fn nfkc(text: &str) -> Vec<char> {
    let mut chars: Vec<(char, u8)> = Vec::with_capacity(text.len());
    for c in text.chars() {
        decompose(c, &mut |d| chars.push((d, canonical_combining_class(d))));
    }
    // Canonical ordering: each run of combining marks, stably by class.
    let mut i = 0;
    let mut run: Vec<(u8, usize, char)> = Vec::new();
    while i < chars.len() {
        let len = chars[i..]
            .iter()
            .take_while(|&&(_, class)| class != 0)
            .count();
        if len > 1 {
            run.clear();
            run.extend(
                chars[i..i + len]
                    .iter()
                    .enumerate()
                    .map(|(j, &(c, class))| (class, j, c)),
            );
            sort(&mut run);
            for (slot, &(class, _, c)) in chars[i..i + len].iter_mut().zip(&run) {
                *slot = (c, class);
            }
        }
        i += len.max(1);
    }
    let mut out: Vec<char> = Vec::with_capacity(chars.len());
    // The last starter's place in `out`, and the class of the last character kept after
    // it (0 while that is the starter itself; 256 when the text opens with a mark).
    let mut starter: Option<usize> = None;
    let mut last_class: u16 = 256;
    for (c, class) in chars {
        let class = u16::from(class);
        if let Some(at) = starter
            && (last_class < class || last_class == 0)
            && let Some(composite) = compose(out[at], c)
        {
            out[at] = composite;
            continue;
        }
        if class == 0 {
            starter = Some(out.len());
        }
        last_class = class;
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write as _;
    use std::prelude::rust_2024::*;
    use unicode_normalization::UnicodeNormalization;
    use unicode_normalization::char as crate_char;
    use unicode_properties::{GeneralCategory, UnicodeEmoji, UnicodeGeneralCategory};

    fn all_chars() -> impl Iterator<Item = char> {
        (0..=0x10FFFF).filter_map(char::from_u32)
    }

    fn crate_category(c: char) -> Category {
        match c.general_category() {
            GeneralCategory::NonspacingMark
            | GeneralCategory::SpacingMark
            | GeneralCategory::EnclosingMark => Category::Mark,
            GeneralCategory::Control => Category::Control,
            GeneralCategory::Format => Category::Format,
            GeneralCategory::PrivateUse => Category::PrivateUse,
            GeneralCategory::Unassigned => Category::Unassigned,
            _ => Category::Other,
        }
    }

    /// Runs of equal values over every code point, as `start << bits | value`.
    fn runs(bits: u32, value: impl Fn(char) -> u32) -> Vec<u32> {
        let mut out: Vec<u32> = Vec::new();
        let mut last = None;
        for c in all_chars() {
            let v = value(c);
            assert!(v < 1 << bits);
            if last != Some(v) {
                out.push((c as u32) << bits | v);
                last = Some(v);
            }
        }
        out
    }

    fn crate_decomposition(c: char) -> Vec<char> {
        let mut out = Vec::new();
        crate_char::decompose_compatible(c, |d| out.push(d));
        out
    }

    fn is_hangul_syllable(c: char) -> bool {
        (S_BASE..S_BASE + S_COUNT).contains(&(c as u32))
    }

    /// Decomposition runs, values and the pool of longer decompositions.
    fn decompositions() -> (Vec<u32>, Vec<u32>, String) {
        let (mut keys, mut values, mut pool) = (Vec::new(), Vec::new(), String::new());
        // The run being built: first code point, length, first character.
        let mut run: Option<(u32, u32, u32)> = None;
        let flush =
            |run: &mut Option<(u32, u32, u32)>, keys: &mut Vec<u32>, values: &mut Vec<u32>| {
                if let Some((start, len, first)) = run.take() {
                    keys.push(start << 11 | (len - 1));
                    values.push(first);
                }
            };
        for c in all_chars().filter(|c| !is_hangul_syllable(*c)) {
            let d = crate_decomposition(c);
            let code = c as u32;
            if d == [c] {
                flush(&mut run, &mut keys, &mut values);
                continue;
            }
            if let [one] = d[..] {
                if let Some((start, len, first)) = run
                    && start + len == code
                    && first + len == one as u32
                    && len < 0x800
                {
                    run = Some((start, len + 1, first));
                    continue;
                }
                flush(&mut run, &mut keys, &mut values);
                run = Some((code, 1, one as u32));
                continue;
            }
            flush(&mut run, &mut keys, &mut values);
            let text: String = d.iter().collect();
            let offset = pool.find(&text).unwrap_or_else(|| {
                pool.push_str(&text);
                pool.len() - text.len()
            });
            assert!(offset < 1 << 16 && text.len() < 1 << 8);
            keys.push(code << 11);
            values.push(1 << 31 | (offset as u32) << 8 | text.len() as u32);
        }
        flush(&mut run, &mut keys, &mut values);
        (keys, values, pool)
    }

    /// Every primary composite: the pair its canonical decomposition splits into, found
    /// from the decomposition and confirmed by the crate's `compose`.
    fn compositions() -> (Vec<u32>, Vec<u32>, Vec<u32>) {
        let mut pairs: Vec<(char, char, char)> = Vec::new();
        for c in all_chars().filter(|c| !is_hangul_syllable(*c)) {
            let mut d = Vec::new();
            crate_char::decompose_canonical(c, |x| d.push(x));
            let Some((&b, prefix)) = d.split_last() else {
                continue;
            };
            let prefix: String = prefix.iter().collect();
            let mut firsts = prefix.nfc();
            if let (Some(a), None) = (firsts.next(), firsts.next())
                && crate_char::compose(a, b) == Some(c)
            {
                pairs.push((a, b, c));
            }
        }
        let mut seconds: Vec<u32> = pairs.iter().map(|&(_, b, _)| b as u32).collect();
        seconds.sort_unstable();
        seconds.dedup();
        assert!(seconds.len() < 1 << 11);
        let mut keyed: Vec<(u32, u32)> = pairs
            .iter()
            .map(|&(a, b, c)| {
                let second = seconds.binary_search(&(b as u32)).unwrap() as u32;
                (second << 21 | a as u32, c as u32)
            })
            .collect();
        keyed.sort_unstable();
        let (keys, values) = keyed.into_iter().unzip();
        (seconds, keys, values)
    }

    /// `values` as the table `name` onto `out`, and its bytes onto `bytes`.
    fn table(out: &mut String, bytes: &mut usize, name: &str, values: &[u32]) {
        *bytes += size_of_val(values);
        writeln!(out, "pub(super) const {name}: &[u32] = &[").unwrap();
        for line in values.chunks(10) {
            let line: Vec<String> = line.iter().map(|v| format!("0x{v:X}")).collect();
            writeln!(out, "    {},", line.join(", ")).unwrap();
        }
        writeln!(out, "];").unwrap();
    }

    /// The tables' source, and the bytes of their data.
    fn generated() -> (String, usize) {
        let mut bytes = 0;
        let mut out = String::from(
            "//! Generated by `ucd.rs`'s `tables_are_the_crates` from the `unicode-normalization`\n\
             //! and `unicode-properties` crates (`METIS_WRITE_UCD=1` rewrites it): do not edit.\n\n",
        );
        let category = runs(3, |c| crate_category(c) as u32);
        table(&mut out, &mut bytes, "CATEGORY_RUNS", &category);
        let classes = runs(8, |c| u32::from(crate_char::canonical_combining_class(c)));
        table(&mut out, &mut bytes, "COMBINING_CLASS_RUNS", &classes);
        let emoji = runs(2, |c| {
            u32::from(c.is_emoji_char()) * EMOJI
                + u32::from(c.is_emoji_char_or_emoji_component()) * IN_EMOJI_SEQUENCES
        });
        table(&mut out, &mut bytes, "EMOJI_RUNS", &emoji);
        let (keys, values, pool) = decompositions();
        table(&mut out, &mut bytes, "DECOMPOSE_KEYS", &keys);
        table(&mut out, &mut bytes, "DECOMPOSE_VALUES", &values);
        writeln!(
            out,
            "pub(super) const DECOMPOSE_POOL: &str = \"{}\";",
            pool.escape_default()
        )
        .unwrap();
        bytes += pool.len();
        let (seconds, keys, values) = compositions();
        table(&mut out, &mut bytes, "COMPOSE_SECONDS", &seconds);
        table(&mut out, &mut bytes, "COMPOSE_KEYS", &keys);
        table(&mut out, &mut bytes, "COMPOSE_VALUES", &values);
        (out, bytes)
    }

    #[test]
    fn tables_are_the_crates() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/ucd_tables.rs");
        let (want, bytes) = generated();
        if std::env::var_os("METIS_WRITE_UCD").is_some() {
            std::fs::write(path, &want).unwrap();
        }
        let have = std::fs::read_to_string(path).unwrap();
        assert!(
            have == want,
            "{path} is stale: run with METIS_WRITE_UCD=1 to regenerate it"
        );
        // What the component's size budget counts: every table, the pool's text included.
        assert_eq!(table_bytes(), bytes);
    }

    #[test]
    fn properties_are_the_crates_for_every_code_point() {
        for c in all_chars() {
            let at = format!("U+{:04X}", c as u32);
            assert_eq!(category(c), crate_category(c), "{at}");
            let format = c.general_category() == GeneralCategory::Format;
            assert_eq!(is_format(c), format, "{at}");
            let class = crate_char::canonical_combining_class(c);
            assert_eq!(canonical_combining_class(c), class, "{at}");
            assert_eq!(is_emoji(c), c.is_emoji_char(), "{at}");
            let in_sequences = c.is_emoji_char_or_emoji_component();
            assert_eq!(in_emoji_sequences(c), in_sequences, "{at}");
            let mut mine = Vec::new();
            decompose(c, &mut |d| mine.push(d));
            assert_eq!(mine, crate_decomposition(c), "{at}");
        }
    }

    fn assert_nfkc(text: &str) {
        let want: Vec<char> = text.nfkc().collect();
        assert_eq!(nfkc(text), want, "{text:?} ({})", text.escape_unicode());
        if is_nfkc_quick(text) {
            assert_eq!(
                text.chars().collect::<Vec<_>>(),
                want,
                "{}",
                text.escape_unicode()
            );
        }
    }

    /// A syllable without a trailing consonant composes with one (U+11A8 to U+11C2), not
    /// with the vowel jamo just before them nor anything after.
    #[test]
    fn a_hangul_syllable_composes_only_with_a_trailing_consonant() {
        for tail in ['\u{11A6}', '\u{11A7}', '\u{11A8}', '\u{11C2}', '\u{11C3}'] {
            for text in [
                format!("가{tail}"),
                format!("\u{1100}\u{1161}{tail}"),
                format!("각{tail}"),
            ] {
                assert_nfkc(&text);
            }
        }
        assert_eq!(nfkc("가\u{11A8}"), ['각']);
        assert_eq!(nfkc("가\u{11A7}"), ['가', '\u{11A7}']);
    }

    /// The quick check passes text in which no character decomposes, is a mark or may
    /// compose with the one before (so normalising it is skipped), and fails the rest.
    #[test]
    fn the_quick_check_passes_what_normalising_leaves_alone() {
        for text in [
            "Привет мир",
            "中文",
            "שלום",
            "\u{1100}",
            "\u{11A6}\u{11A7}",
            "\u{11C3}",
        ] {
            assert!(is_nfkc_quick(text), "{}", text.escape_unicode());
        }
        for text in [
            "é", "e\u{301}", "ﬁ", "가",
            // Jamo that compose with a syllable or a leading consonant before them.
            "\u{1161}", "\u{1175}", "\u{11A8}", "\u{11C2}",
            // A second of the composition table of combining class 0: Oriya's AA sign.
            "\u{B3E}",
        ] {
            assert!(!is_nfkc_quick(text), "{}", text.escape_unicode());
        }
    }

    /// Every code point alone, and followed by marks that reorder and compose with it.
    #[test]
    fn nfkc_is_the_crates_for_every_code_point() {
        for c in all_chars() {
            assert_nfkc(c.encode_utf8(&mut [0; 4]));
        }
        let tails = [
            "\u{301}",
            "\u{327}\u{301}",
            "\u{301}\u{327}",
            "\u{11A8}",
            "\u{1161}",
        ];
        let firsts: std::collections::HashSet<u32> =
            COMPOSE_KEYS.iter().map(|k| k & 0x1F_FFFF).collect();
        for c in all_chars().filter(|c| {
            canonical_combining_class(*c) != 0
                || is_composition_second(*c)
                || crate_decomposition(*c) != [*c]
                || firsts.contains(&(*c as u32))
                || c.is_ascii_alphabetic()
        }) {
            for tail in tails {
                assert_nfkc(&format!("{c}{tail}"));
                assert_nfkc(&format!("\u{300}{c}{tail}x"));
            }
        }
    }

    /// Random texts over characters where normalisation does something: marks of many
    /// classes, jamo, compatibility forms, composites, exclusions and singletons.
    #[test]
    fn nfkc_is_the_crates_for_random_texts() {
        let alphabet: Vec<char> =
            "aAeEoOsSuUnNkK \n\u{300}\u{301}\u{302}\u{308}\u{316}\u{327}\u{328}\
            \u{338}\u{345}\u{34F}\u{5B0}\u{5B4}\u{93C}\u{94D}\u{CCA}\u{CC6}\u{CC2}\u{CD5}\u{1100}\
            \u{1161}\u{11A8}\u{AC00}\u{AC01}\u{1E9B}\u{17F}\u{344}\u{F73}\u{F77}\u{2ADC}\u{FB01}\
            \u{2460}\u{FF76}\u{FF9E}\u{3099}\u{304B}\u{1D15E}\u{110AB}\u{110BA}\u{F900}\u{2126}\
            \u{E9}\u{1E69}\u{1D5}\u{212B}\u{3200}\u{FDFA}\u{1D400}\u{200B}\u{FEFF}\u{130}\u{1F1}"
                .chars()
                .collect();
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for _ in 0..200_000 {
            let len = next(10);
            let text: String = (0..len).map(|_| alphabet[next(alphabet.len())]).collect();
            assert_nfkc(&text);
        }
    }
}
