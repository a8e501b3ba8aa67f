//! Hidden characters: controls, and a carriage return outside CRLF; the default-ignorable
//! code points (invisible format characters, variation selectors, the combining grapheme
//! joiner, Hangul fillers, tag characters) except where a script or an emoji needs one;
//! private-use and unassigned code points.

use alloc::format;
use alloc::vec::Vec;

use super::ucd::{
    Category, canonical_combining_class, in_emoji_sequences, is_emoji, is_format, is_mark,
};

use super::unicode::{
    is_default_ignorable, is_ideograph, is_joining_script, is_mongolian_letter, is_right_to_left,
};
use super::{Candidate, Finding, Precedence};

const ZWNJ: char = '\u{200C}';
const ZWJ: char = '\u{200D}';
const LRM: char = '\u{200E}';
const RLM: char = '\u{200F}';
const ALM: char = '\u{061C}';
const MONGOLIAN_VOWEL_SEPARATOR: char = '\u{180E}';
const COMBINING_GRAPHEME_JOINER: char = '\u{034F}';
const CANCEL_TAG: char = '\u{E007F}';
/// Canonical_Combining_Class of a virama (halant, al-lakuna, chandrakkala …).
const VIRAMA: u8 = 9;

fn is_tag(c: char) -> bool {
    ('\u{E0000}'..='\u{E007F}').contains(&c)
}

/// The black flag that starts a subdivision flag's tag sequence.
const FLAG_BASE: char = '\u{1F3F4}';
/// The tag sequences recommended for general interchange (RGI_Emoji_Tag_Sequence in
/// the Unicode emoji data): the flags of England, Scotland and Wales. Any other tag
/// sequence shows as a plain black flag, so its tags are text no reader sees.
const RGI_FLAG_CODES: [&str; 3] = ["gbeng", "gbsct", "gbwls"];

/// How many tag characters (the cancel tag included) follow `chars[start]` as an RGI
/// subdivision flag; 0 if they do not form one. This is the only place tag characters
/// may stand.
fn flag_tags(chars: &[char], start: usize) -> usize {
    if chars[start] != FLAG_BASE {
        return 0;
    }
    let rest = &chars[start + 1..];
    for code in RGI_FLAG_CODES {
        let spelled = code.bytes().map(|b| char::from_u32(0xE0000 + u32::from(b)));
        if rest.len() > code.len()
            && rest.iter().zip(spelled).all(|(c, tag)| Some(*c) == tag)
            && rest[code.len()] == CANCEL_TAG
        {
            return code.len() + 1;
        }
    }
    0
}

/// A carriage return that is not part of a CRLF line break: a terminal (`cat`, `git
/// diff`, `metis-memory read`) returns to the start of the line and prints what follows
/// over what came before, so a reader sees only the end of the line while the model reads
/// all of it.
const LONE_CR: &str = "hidden-carriage-return";
const LONE_CR_DETAIL: &str =
    "carriage return without a line feed (a terminal hides the text before it)";

/// An ASCII control other than a tab or a line break (ASCII's general category `Cc`).
fn is_hidden_control(c: char) -> bool {
    c.is_ascii_control() && !matches!(c, '\t' | '\n' | '\r')
}

/// Whether `c` can stand before a ZWJ in an emoji sequence: an emoji, or a component
/// such as a skin-tone modifier or the emoji variation selector.
fn joins_emoji(c: char) -> bool {
    in_emoji_sequences(c) && !c.is_ascii()
}

fn is_variation_selector(c: char) -> bool {
    matches!(c, '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}' | '\u{180B}'..='\u{180D}' | '\u{180F}')
}

/// The text around `chars[i]`, for the characters that are allowed in some places only.
struct Around<'c> {
    chars: &'c [char],
    i: usize,
}

impl Around<'_> {
    fn before(&self) -> Option<char> {
        self.i.checked_sub(1).map(|j| self.chars[j])
    }

    fn after(&self) -> Option<char> {
        self.chars.get(self.i + 1).copied()
    }

    /// The nearest character before that is not a combining mark.
    fn base_before(&self) -> Option<char> {
        self.chars[..self.i]
            .iter()
            .rev()
            .copied()
            .find(|c| !is_mark(*c))
    }

    /// The nearest character after that is not a combining mark.
    fn base_after(&self) -> Option<char> {
        self.chars[self.i + 1..]
            .iter()
            .copied()
            .find(|c| !is_mark(*c))
    }

    /// A joiner (ZWJ) between two emoji, as in 👩‍💻.
    fn joins_emoji(&self) -> bool {
        self.before().is_some_and(joins_emoji)
            && self.after().is_some_and(|a| is_emoji(a) && !a.is_ascii())
    }

    /// A joiner or non-joiner where a script needs one: next to a virama, which it makes
    /// a half form, a conjunct or an explicit virama (Hindi क्‍ष, Sinhala ශ්‍රී, Malayalam
    /// ന്‍, Bengali and Kannada ra before a virama), or between two letters of a cursively
    /// joined script, whose forms it chooses (Persian می‌خواهم).
    fn joins_script(&self) -> bool {
        let virama = |c: char| canonical_combining_class(c) == VIRAMA;
        self.before().is_some_and(virama)
            || self.after().is_some_and(virama)
            || (self.base_before().is_some_and(is_joining_script)
                && self.base_after().is_some_and(is_joining_script))
    }

    /// A variation selector right after a character it can vary: the emoji and text
    /// presentation selectors after an emoji, the other standardized selectors after a
    /// character that is not ASCII, an ideographic one after a CJK ideograph, a Mongolian
    /// free variation selector after a Mongolian letter. One selector, never a run.
    fn selects(&self, c: char) -> bool {
        let Some(base) = self.before() else {
            return false;
        };
        if base.is_whitespace() || is_default_ignorable(base) {
            return false;
        }
        match c {
            '\u{FE0E}' | '\u{FE0F}' => is_emoji(base),
            '\u{FE00}'..='\u{FE0D}' => !base.is_ascii(),
            '\u{E0100}'..='\u{E01EF}' => is_ideograph(base),
            _ => is_mongolian_letter(base),
        }
    }
}

/// Every hidden character of `text`, in order, each with its 1-based line.
pub(super) fn hidden_characters(text: &str, out: &mut Vec<Candidate>) {
    let mut found = |at: usize, line: u32, id: &'static str, c: char, what: &str| {
        out.push(Candidate {
            precedence: Precedence::Hidden { at },
            finding: Finding {
                id,
                detail: format!("{what} U+{:04X}", c as u32),
                line,
            },
        });
    };
    // In ASCII the only hidden characters are the controls (no tag, format, private-use
    // or unassigned character is ASCII).
    if text.is_ascii() {
        let bytes = text.as_bytes();
        let mut line = 1;
        for (at, &b) in bytes.iter().enumerate() {
            if b == b'\n' {
                line += 1;
            }
            if b == b'\r' && bytes.get(at + 1) != Some(&b'\n') {
                found(at, line, LONE_CR, '\r', LONE_CR_DETAIL);
            }
            if is_hidden_control(char::from(b)) {
                found(
                    at,
                    line,
                    "control-character",
                    char::from(b),
                    "control character",
                );
            }
        }
        return;
    }
    let (offsets, chars): (Vec<usize>, Vec<char>) = text.char_indices().unzip();
    // Whether each line has right-to-left text, worked out at the first bidi mark.
    let mut right_to_left: Option<Vec<bool>> = None;
    let mut line = 1;
    // Tags before this index belong to a flag that starts before them. It is set at each
    // character that is neither ASCII nor a tag; an ASCII one needs no reset, as a flag's
    // tags all come before it.
    let mut flag_until = 0;
    for (i, &c) in chars.iter().enumerate() {
        let at = offsets[i];
        if c == '\n' {
            line += 1;
        }
        if c.is_ascii() {
            // Not a tag, a flag base or a joiner, and a control or nothing hidden.
            if c == '\r' && chars.get(i + 1) != Some(&'\n') {
                found(at, line, LONE_CR, c, LONE_CR_DETAIL);
            }
            if is_hidden_control(c) {
                found(at, line, "control-character", c, "control character");
            }
            continue;
        }
        if is_tag(c) {
            if i >= flag_until {
                found(at, line, "hidden-tag-character", c, "tag character");
            }
            continue;
        }
        flag_until = i + 1 + flag_tags(&chars, i);
        let around = Around { chars: &chars, i };
        let hidden: Option<(&'static str, &str)> = match c {
            ZWJ => (!around.joins_emoji() && !around.joins_script()).then_some((
                "hidden-format-character",
                "zero-width joiner outside an emoji sequence or a script that needs it",
            )),
            ZWNJ => (!around.joins_script()).then_some((
                "hidden-format-character",
                "zero-width non-joiner outside a script that needs it",
            )),
            LRM | RLM | ALM => {
                let lines = right_to_left.get_or_insert_with(|| lines_with_right_to_left(&chars));
                let rtl = lines.get(line as usize - 1).copied().unwrap_or(false);
                (!rtl).then_some((
                    "hidden-format-character",
                    "bidi mark on a line without right-to-left text",
                ))
            }
            MONGOLIAN_VOWEL_SEPARATOR => (!(around.before().is_some_and(is_mongolian_letter)
                && around.after().is_some_and(is_mongolian_letter)))
            .then_some((
                "hidden-format-character",
                "Mongolian vowel separator outside Mongolian",
            )),
            _ if is_variation_selector(c) => (!around.selects(c)).then_some((
                "hidden-variation-selector",
                "variation selector that selects nothing (a run, or after a character it cannot vary)",
            )),
            // Not ASCII here, so a control is never a tab or a line break.
            _ => match super::ucd::category(c) {
                Category::Control => Some(("control-character", "control character")),
                Category::Format => {
                    Some(("hidden-format-character", "invisible format character"))
                }
                Category::PrivateUse => Some(("private-use-character", "private-use character")),
                Category::Unassigned => Some(("unassigned-character", "unassigned code point")),
                _ if is_default_ignorable(c) && !ignorable_in_place(&around, c) => Some((
                    "hidden-ignorable-character",
                    "invisible default-ignorable character",
                )),
                _ => None,
            },
        };
        if let Some((id, what)) = hidden {
            found(at, line, id, c, what);
        }
    }
}

/// The default-ignorable letters and marks that are not format characters, where they
/// do their job: the combining grapheme joiner before a combining mark (whose reordering
/// it blocks), the Hangul choseong filler before a vowel jamo, the jungseong filler after
/// a leading consonant jamo. The compatibility fillers (U+3164, U+FFA0) and the Khmer
/// inherent vowels never do.
fn ignorable_in_place(around: &Around, c: char) -> bool {
    match c {
        COMBINING_GRAPHEME_JOINER => around.after().is_some_and(is_mark),
        '\u{115F}' => around
            .after()
            .is_some_and(|a| matches!(a, '\u{1160}'..='\u{11A7}' | '\u{D7B0}'..='\u{D7C6}')),
        '\u{1160}' => around
            .before()
            .is_some_and(|b| matches!(b, '\u{1100}'..='\u{115F}' | '\u{A960}'..='\u{A97C}')),
        _ => false,
    }
}

/// For each line of `chars`, whether it has a right-to-left character (other than a
/// format or default-ignorable one): a bidi mark is ordinary there.
fn lines_with_right_to_left(chars: &[char]) -> Vec<bool> {
    let mut lines = alloc::vec![false];
    for &c in chars {
        if c == '\n' {
            lines.push(false);
        } else if is_right_to_left(c)
            && !is_default_ignorable(c)
            && !is_format(c)
            && let Some(last) = lines.last_mut()
        {
            *last = true;
        }
    }
    lines
}
