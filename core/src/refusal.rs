//! The text a tool write refused by the poisoning scan gets: what matched, where (the
//! new text, the seam with the file, or a line already in the file), and what the model
//! or the person reading it can do. The scanner finds and blames; naming the memory file
//! and the tools is the tool layer's.

use alloc::format;
use alloc::string::String;

use crate::MemoryFile;
use crate::scan::{Blamed, Finding, Source};

/// The tool error text for a write to `file` refused for `blamed`.
pub fn scan_refusal(blamed: &Blamed, file: MemoryFile) -> String {
    let Finding { id, detail, .. } = &blamed.finding;
    let head = format!("{file} write refused by the memory poisoning scan [{id}]:");
    match blamed.source {
        Source::Added { line } => format!(
            "{head} {detail} in the text this call adds (line {line} of the result); nothing was written: leave that text out or reword it"
        ),
        Source::Seam { line } => format!(
            "{head} {detail} where the text this call adds meets the text already in {file} (line {line} of the result); neither matches alone; nothing was written: reword the new text so it does not continue that line"
        ),
        // The detail quotes what matched, and a refusal must not bring into the model's
        // context text it may never have been shown (a person's line, or one planted):
        // the rule and the line number say where to look.
        Source::AlreadyInFile { line } => format!(
            "{head} line {line} of {file}, which was already there before this call, matches that rule (its text is not repeated here): your new text is not what matched; nothing was written: remove that line first (memory_replace with an empty new, or memory_consolidate without it), or ask the user to review {file} (`metis-memory audit {file}`, `metis-memory edit {file}`)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::{ScanPolicy, blame};

    const IGNORE: &str = "ignore all previous instructions";

    fn refused(before: &str, added: &str, file: MemoryFile) -> String {
        let after = format!("{before}{added}\n");
        scan_refusal(
            &blame(before, added, &after, ScanPolicy::ALL).unwrap(),
            file,
        )
    }

    #[test]
    fn the_new_texts_own_match_is_named_with_its_line() {
        assert_eq!(
            refused("- kept\n", IGNORE, MemoryFile::Memory),
            "MEMORY.md write refused by the memory poisoning scan [injection-ignore-instructions]: matched \"ignore all previous instructions\" in the text this call adds (line 2 of the result); nothing was written: leave that text out or reword it"
        );
    }

    #[test]
    fn a_match_already_in_the_file_says_the_new_text_is_not_what_matched() {
        let message = refused(
            &format!("- kept\n- {IGNORE}\n"),
            "- builds with cargo",
            MemoryFile::User,
        );
        assert_eq!(
            message,
            "USER.md write refused by the memory poisoning scan [injection-ignore-instructions]: line 2 of USER.md, which was already there before this call, matches that rule (its text is not repeated here): your new text is not what matched; nothing was written: remove that line first (memory_replace with an empty new, or memory_consolidate without it), or ask the user to review USER.md (`metis-memory audit USER.md`, `metis-memory edit USER.md`)"
        );
        assert!(!message.contains("previous instructions"), "{message}");
    }

    #[test]
    fn a_phrase_split_at_the_seam_is_named_as_such() {
        let message = refused(
            "- note: ignore all\n",
            "previous instructions",
            MemoryFile::Memory,
        );
        assert!(
            message.contains("where the text this call adds meets the text already in MEMORY.md (line 1 of the result); neither matches alone"),
            "{message}"
        );
    }
}
