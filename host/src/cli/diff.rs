//! The unified diff a write made (`--diff`) or would make (`call --dry-run`).

use metis_memory::{MemoryFile, WriteResult};
use sha2::{Digest, Sha256};

/// The diff from `before` to `after` of `file`, as `diff -u` prints it (empty when they
/// are equal).
pub fn unified(file: MemoryFile, before: &str, after: &str) -> String {
    let name = file.file_name();
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/.metis/{name}"), &format!("b/.metis/{name}"))
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

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
