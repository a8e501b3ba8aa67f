//! git's conflict markers: a file a merge left unresolved holds both sides of a change
//! between `<<<<<<<` and `>>>>>>>` lines, and read as memory it says two contrary things
//! at once, one of them perhaps removed on purpose. It is a person's to resolve.

use alloc::vec::Vec;

/// The shortest marker git writes (`merge.conflictStyle` and `%L` may make it longer).
const MARKER: usize = 7;

/// Whether `line` is a conflict marker of `c`: at least seven of it, then a space or the
/// line's end (`<<<<<<< ours`, `>>>>>>> theirs`).
fn is_marker(line: &str, c: char) -> bool {
    let run = line.chars().take_while(|&x| x == c).count();
    run >= MARKER
        && line[run..]
            .chars()
            .next()
            .is_none_or(|next| next == ' ' || next == '\r')
}

/// The byte offset of each conflict's opening line in `text`, and that line: an opening
/// marker with a closing one after it.
pub fn conflicts(text: &str) -> Vec<(usize, &str)> {
    let mut found = Vec::new();
    let mut open: Option<(usize, &str)> = None;
    let mut at = 0;
    for line in text.split('\n') {
        if is_marker(line, '<') {
            open.get_or_insert((at, line));
        } else if is_marker(line, '>')
            && let Some(opening) = open.take()
        {
            found.push(opening);
        }
        at += line.len() + 1;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conflict_is_an_opening_marker_closed_later() {
        let text = "- a\n<<<<<<< ours\n- b\n=======\n- c\n>>>>>>> theirs\n- d\n";
        assert_eq!(conflicts(text), [(4, "<<<<<<< ours")]);
        // A longer marker (a larger %L), bare markers, CRLF.
        let long = "<<<<<<<<<<\r\nx\r\n>>>>>>>>>>\r\n";
        assert_eq!(conflicts(long), [(0, "<<<<<<<<<<\r")]);
        assert_eq!(conflicts("<<<<<<<\n>>>>>>>\n").len(), 1);
        // Two conflicts, each counted at its opening.
        assert_eq!(
            conflicts("<<<<<<< a\n>>>>>>> b\n<<<<<<< c\n>>>>>>> d").len(),
            2
        );
    }

    #[test]
    fn what_only_looks_like_one_is_not() {
        for text in [
            "<<<<<<< ours\n- never closed\n",
            ">>>>>>> theirs\n<<<<<<< ours\n",
            "<<<<<< six\n>>>>>> six\n",
            "<<<<<<<x\n>>>>>>>x\n",
            "- a <<<<<<< inside a line\n- b >>>>>>> too\n",
            "<<< MEMORY.md 0123456789ab\n- a\n>>> MEMORY.md 0123456789ab\n",
            "Title\n=======\n",
        ] {
            assert!(conflicts(text).is_empty(), "{text:?}");
        }
    }
}
