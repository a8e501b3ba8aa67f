//! The unified diff a write made (`--diff`) or would make (`call --dry-run`).

use metis_memory::{MemoryFile, WriteResult};
use sha2::{Digest, Sha256};

/// The diff from `before` to `after` of `file`, as `diff -u` prints it (empty when they
/// are equal), of the texts as [`visible`] shows them: lines are split at newlines only
/// (a lone carriage return is part of its line, shown as `\r`), and the diff is safe to
/// print on a terminal.
pub fn unified(file: MemoryFile, before: &str, after: &str) -> String {
    // The user's own file is named as it is (`~/.metis/USER.md`), the workspace's inside
    // its `.metis/`.
    let path = match file {
        MemoryFile::GlobalUser => file.name().to_owned(),
        _ => format!(".metis/{}", file.file_name()),
    };
    let (before, after) = (visible(before), visible(after));
    similar::TextDiff::from_lines(before.as_ref(), after.as_ref())
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}

/// The diff of a write, from the text read before it and the text read after it, if
/// those are the versions the write went from and to (their hashes are the result's);
/// `None` when another writer changed the file in between, so no diff would be true.
pub fn of_write(result: &WriteResult, before: &str, after: &str) -> Option<String> {
    let same = |text: &str, hash: &str| sha256_hex(text.as_bytes()) == hash;
    (same(before, &result.before_hash) && same(after, &result.after_hash))
        .then(|| unified(result.file, before, after))
}

/// Characters a terminal acts on instead of showing: C0 and C1 controls but tab and
/// newline (a carriage return rewrites the line, an escape sequence recolours or retitles
/// the terminal) and the bidi overrides and isolates (they reorder what is shown).
fn acts_on_terminal(c: char) -> bool {
    (c.is_control() && c != '\t' && c != '\n')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` as a person should see it on a terminal: every character that would act on it
/// is written as its escape (`\r`, `\u{1b}`), so memory text cannot hide itself in a
/// diff or a listing. Output meant to be exact (`read`, JSON) is never passed through it.
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(acts_on_terminal) {
        return text.into();
    }
    text.chars()
        .map(|c| {
            if acts_on_terminal(c) {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect::<String>()
        .into()
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
