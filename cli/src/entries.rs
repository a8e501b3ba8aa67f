//! `list` and `remove`: a file's entries, numbered. An entry is a non-blank line (one
//! with anything but whitespace on it), numbered from 1 in file order, so the numbers
//! `list` prints are the ones `remove` takes; blank lines are kept, never numbered.

use std::ops::Range;

/// One entry of a file's text.
pub struct Entry<'a> {
    /// Its number among the entries, from 1.
    pub number: usize,
    /// The line it is on, from 1 (blank lines counted).
    pub line: usize,
    /// The line, without its line ending.
    pub text: &'a str,
    /// The bytes it takes in the file, its line ending included.
    span: Range<usize>,
}

/// Every entry of `text`.
pub fn entries(text: &str) -> Vec<Entry<'_>> {
    let mut found = Vec::new();
    let mut start = 0;
    for (index, line) in text.split_inclusive('\n').enumerate() {
        let span = start..start + line.len();
        start = span.end;
        let bare = line.strip_suffix('\n').unwrap_or(line);
        let bare = bare.strip_suffix('\r').unwrap_or(bare);
        if !bare.trim().is_empty() {
            found.push(Entry {
                number: found.len() + 1,
                line: index + 1,
                text: bare,
                span,
            });
        }
    }
    found
}

/// `text` without `entry`'s line, its line ending included, so no blank line is left
/// where it was. The last line of a file without a final newline takes the line ending
/// before it along, so the file still ends as it did.
pub fn without(text: &str, entry: &Entry<'_>) -> String {
    let mut span = entry.span.clone();
    let last_without_newline = span.end == text.len() && !text.ends_with('\n');
    if last_without_newline && span.start > 0 {
        let before = &text[..span.start];
        let ending = if before.ends_with("\r\n") { 2 } else { 1 };
        span.start -= ending;
    }
    let mut kept = String::with_capacity(text.len());
    kept.push_str(&text[..span.start]);
    kept.push_str(&text[span.end..]);
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remove(text: &str, number: usize) -> String {
        without(text, &entries(text)[number - 1])
    }

    #[test]
    fn blank_lines_are_not_entries_and_are_kept() {
        let text = "# Notes\n\n- one\r\n   \n- two";
        let listed: Vec<(usize, usize, &str)> = entries(text)
            .iter()
            .map(|e| (e.number, e.line, e.text))
            .collect();
        assert_eq!(
            listed,
            [(1, 1, "# Notes"), (2, 3, "- one"), (3, 5, "- two")]
        );
        assert_eq!(remove(text, 2), "# Notes\n\n   \n- two");
        assert_eq!(remove(text, 3), "# Notes\n\n- one\r\n   ");
        assert_eq!(remove("only", 1), "");
        assert_eq!(remove("a\nb\n", 1), "b\n");
    }
}
