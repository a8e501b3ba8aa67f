//! Hidden characters: controls, invisible format characters, tag characters outside a
//! subdivision flag, private-use and unassigned code points.

use alloc::format;
use alloc::vec::Vec;

use unicode_properties::{GeneralCategory, UnicodeEmoji, UnicodeGeneralCategory};

use super::{Candidate, Finding, Precedence};

const ZWJ: char = '\u{200D}';
const CANCEL_TAG: char = '\u{E007F}';

fn is_tag(c: char) -> bool {
    ('\u{E0000}'..='\u{E007F}').contains(&c)
}

/// The black flag that starts a subdivision flag's tag sequence.
const FLAG_BASE: char = '\u{1F3F4}';
/// Subdivision codes (`gbsct`, `usca`) are at most seven letters and digits.
const MAX_FLAG_TAGS: usize = 7;

/// A tag digit or lowercase tag letter: what names a subdivision in a flag.
fn is_flag_tag(c: char) -> bool {
    ('\u{E0030}'..='\u{E0039}').contains(&c) || ('\u{E0061}'..='\u{E007A}').contains(&c)
}

/// How many tag characters (the cancel tag included) follow `chars[start]` as a
/// subdivision flag: 🏴, one to seven tag digits or lowercase letters, the cancel tag, as
/// in the flags of England, Scotland and Wales. 0 if they do not form one. This is the
/// only place tag characters may stand: anywhere else they spell text no reader sees.
fn flag_tags(chars: &[char], start: usize) -> usize {
    if chars[start] != FLAG_BASE {
        return 0;
    }
    let rest = &chars[start + 1..];
    let code = rest
        .iter()
        .take(MAX_FLAG_TAGS)
        .take_while(|c| is_flag_tag(**c))
        .count();
    if (1..=MAX_FLAG_TAGS).contains(&code) && rest.get(code) == Some(&CANCEL_TAG) {
        code + 1
    } else {
        0
    }
}

/// An ASCII control other than a tab or a line break (ASCII's general category `Cc`).
fn is_hidden_control(c: char) -> bool {
    c.is_ascii_control() && !matches!(c, '\t' | '\n' | '\r')
}

/// Whether `c` can stand before a ZWJ in an emoji sequence: an emoji, or a component
/// such as a skin-tone modifier or the emoji variation selector.
fn joins_emoji(c: char) -> bool {
    c.is_emoji_char_or_emoji_component() && !c.is_ascii()
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
        let mut line = 1;
        for (at, &b) in text.as_bytes().iter().enumerate() {
            if b == b'\n' {
                line += 1;
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
    let mut line = 1;
    // Tags before this index belong to a flag that starts before them.
    let mut flag_until = 0;
    for (i, &c) in chars.iter().enumerate() {
        let at = offsets[i];
        let before = i.checked_sub(1).map(|j| chars[j]);
        let after = chars.get(i + 1).copied();
        if c == '\n' {
            line += 1;
        }
        if c.is_ascii() {
            // Not a tag, a flag base or a joiner, and a control or nothing hidden.
            flag_until = i + 1;
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
        if c == ZWJ {
            if !(before.is_some_and(joins_emoji)
                && after.is_some_and(|a| a.is_emoji_char() && !a.is_ascii()))
            {
                found(
                    at,
                    line,
                    "hidden-format-character",
                    c,
                    "zero-width joiner outside an emoji sequence",
                );
            }
            continue;
        }
        match c.general_category() {
            GeneralCategory::Control if !matches!(c, '\t' | '\n' | '\r') => {
                found(at, line, "control-character", c, "control character");
            }
            GeneralCategory::Format => {
                found(
                    at,
                    line,
                    "hidden-format-character",
                    c,
                    "invisible format character",
                );
            }
            GeneralCategory::PrivateUse => {
                found(
                    at,
                    line,
                    "private-use-character",
                    c,
                    "private-use character",
                );
            }
            GeneralCategory::Unassigned => {
                found(at, line, "unassigned-character", c, "unassigned code point");
            }
            _ => {}
        }
    }
}
