use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::MemoryFile;
use crate::audit::AuditFinding;

/// Why an operation on one file failed. Its `Display` is the exact text the agent sees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreError {
    HardCapExceeded {
        file: MemoryFile,
        attempted: u64,
        cap: u64,
    },
    EmptyEntry {
        file: MemoryFile,
    },
    NothingToReplace {
        file: MemoryFile,
    },
    NotFound {
        file: MemoryFile,
    },
    NotUnique {
        file: MemoryFile,
        count: u32,
    },
    InvalidUtf8 {
        file: MemoryFile,
        offset: u64,
    },
    NotARegularFile {
        file: MemoryFile,
    },
    Busy {
        file: MemoryFile,
    },
    Io {
        file: MemoryFile,
        message: String,
    },
    /// The workspace was opened read-only, or its filesystem is: nothing was written.
    ReadOnly {
        file: MemoryFile,
        message: String,
    },
    /// The filesystem refused the size (a file-size limit, `ulimit -f`).
    FileTooLarge {
        file: MemoryFile,
        message: String,
    },
    /// The filesystem is full, or the user's quota is.
    InsufficientSpace {
        file: MemoryFile,
        message: String,
    },
    /// A conditional consolidate found another version of the file than the expected one.
    Changed {
        file: MemoryFile,
        expected_hash: String,
        current_hash: String,
        /// The file's bytes now: the tool layer may show them to the model.
        current: Vec<u8>,
    },
    /// The file is larger than the store reads (`MemoryFile::read_limit`).
    TooLarge {
        file: MemoryFile,
        size: u64,
    },
    /// Prompt composition with the `refuse` audit policy found something in `file`.
    Flagged {
        file: MemoryFile,
        findings: Vec<AuditFinding>,
    },
    /// The write was made (the new bytes are in place, every reader sees them), but the
    /// directory could not be synced after the rename: it may not survive a crash. The
    /// one error after which the file changed.
    Unsynced {
        result: crate::WriteResult,
        reason: String,
    },
    /// A scanned write (`write-options.scan`) refused by the memory poisoning scan: `rule`
    /// matched, and `message` says what and where (the tools' refusal text).
    Poisoned {
        file: MemoryFile,
        rule: String,
        message: String,
    },
}

impl StoreError {
    /// The WIT case name, e.g. `hard-cap-exceeded`: a stable key for scripts and logs.
    pub fn kind(&self) -> &'static str {
        match self {
            StoreError::HardCapExceeded { .. } => "hard-cap-exceeded",
            StoreError::EmptyEntry { .. } => "empty-entry",
            StoreError::NothingToReplace { .. } => "nothing-to-replace",
            StoreError::NotFound { .. } => "not-found",
            StoreError::NotUnique { .. } => "not-unique",
            StoreError::InvalidUtf8 { .. } => "invalid-utf8",
            StoreError::NotARegularFile { .. } => "not-a-regular-file",
            StoreError::Busy { .. } => "busy",
            StoreError::Io { .. } => "io",
            StoreError::ReadOnly { .. } => "read-only",
            StoreError::FileTooLarge { .. } => "file-too-large",
            StoreError::InsufficientSpace { .. } => "insufficient-space",
            StoreError::Changed { .. } => "changed",
            StoreError::Flagged { .. } => "flagged",
            StoreError::TooLarge { .. } => "too-large",
            StoreError::Poisoned { .. } => "poisoned",
            StoreError::Unsynced { .. } => "unsynced",
        }
    }
}

/// How many findings an error text lists before it says how many more there are.
const FINDINGS_SHOWN: usize = 3;

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::HardCapExceeded {
                file,
                attempted,
                cap,
            } => write!(
                f,
                "{file} write rejected: {attempted} bytes exceeds hard cap {cap}; consolidate before adding more"
            ),
            StoreError::EmptyEntry { .. } => f.write_str("entry must be non-empty"),
            StoreError::NothingToReplace { file } => {
                write!(f, "{file} is empty; nothing to replace")
            }
            StoreError::NotFound { file } => write!(f, "replace source not found in {file}"),
            StoreError::NotUnique { file, count } => write!(
                f,
                "replace source appears {count} times in {file}; must be unique"
            ),
            StoreError::InvalidUtf8 { file, offset } => write!(
                f,
                "{file} is not valid UTF-8 (first invalid byte at offset {offset}); only memory_consolidate can replace it"
            ),
            StoreError::NotARegularFile { file } => write!(
                f,
                "{file} is not a regular file inside .metis/ (a directory, a special file, or a symlink leading elsewhere)"
            ),
            StoreError::Busy { file } => {
                write!(f, "{file} is being written by another process; try again")
            }
            StoreError::Io { file, message } => write!(f, "{file}: I/O error: {message}"),
            // Their messages name the cause (read-only, file too large, no space).
            StoreError::ReadOnly { file, message }
            | StoreError::FileTooLarge { file, message }
            | StoreError::InsufficientSpace { file, message } => write!(f, "{file}: {message}"),
            StoreError::Changed {
                file,
                expected_hash,
                current_hash,
                ..
            } if is_sha256_hex(expected_hash) => write!(
                f,
                "{file} changed since it was read (expected sha256 {expected_hash}, found {current_hash}); nothing was written: read it again and consolidate from what is there now"
            ),
            StoreError::Changed {
                file,
                expected_hash,
                ..
            } => write!(
                f,
                "the expected hash {} is not a SHA-256 (64 hex digits), so it matches no version of {file}; nothing was written",
                // Quoted as the tool messages quote what they were given; `{:?}` would
                // bring the standard library's Debug escaping and its tables into the
                // component for this one message.
                crate::json::quote(crate::text::cut(expected_hash, 80))
            ),
            StoreError::TooLarge { file, size } => write!(
                f,
                "{file} is {size} bytes, more than the {} the store reads (4 times its hard cap {}): the store did not write it; look at it, then shorten or remove it by hand",
                file.read_limit(),
                file.hard_cap()
            ),
            StoreError::Poisoned { message, .. } => f.write_str(message),
            StoreError::Unsynced { result, reason } => write!(
                f,
                "{file} was written ({before} -> {after} bytes, sha256 {hash}) but .metis/ could not be synced after it: {reason}; the new content is in place and is what every reader sees, but a crash or power loss may undo it: do not repeat this write",
                file = result.file,
                before = result.before_size_bytes,
                after = result.after_size_bytes,
                hash = result.after_hash,
            ),
            StoreError::Flagged { file, findings } => {
                write!(
                    f,
                    "{file} failed the memory audit, so the system prompt was not composed: "
                )?;
                for (i, finding) in findings.iter().take(FINDINGS_SHOWN).enumerate() {
                    let separator = if i == 0 { "" } else { "; " };
                    write!(f, "{separator}{finding}")?;
                }
                if findings.len() > FINDINGS_SHOWN {
                    write!(f, "; and {} more", findings.len() - FINDINGS_SHOWN)?;
                }
                f.write_str(" (see `metis-memory audit`)")
            }
        }
    }
}

impl core::error::Error for StoreError {}

/// What `changed-info.current-content` carries of a changed file: at most its hard cap
/// of bytes, lossily decoded, so an error never grows with what is on disk.
pub fn changed_content(file: MemoryFile, current: &[u8]) -> String {
    let shown = &current[..current.len().min(file.hard_cap() as usize)];
    String::from_utf8_lossy(shown).into_owned()
}

/// Whether `text` is a SHA-256 as 64 hex digits (either case).
pub fn is_sha256_hex(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::prelude::rust_2024::*;

    #[test]
    fn a_flagged_file_lists_three_findings_then_a_count() {
        let finding = |line| AuditFinding {
            line,
            rule: "injection-ignore-instructions".into(),
            detail: "matched \"ignore previous instructions\"".into(),
        };
        let flagged = |n: u32| {
            StoreError::Flagged {
                file: MemoryFile::User,
                findings: (1..=n).map(finding).collect(),
            }
            .to_string()
        };
        assert!(flagged(3).contains("line 3 ["), "{}", flagged(3));
        assert!(!flagged(3).contains("more"), "{}", flagged(3));
        assert!(flagged(4).contains("; and 1 more (see"), "{}", flagged(4));
        assert!(!flagged(4).contains("line 4 ["), "{}", flagged(4));
    }

    #[test]
    fn only_64_hex_digits_are_a_sha256() {
        assert!(is_sha256_hex(&"aB".repeat(32)));
        assert!(!is_sha256_hex(&"a".repeat(63)));
        assert!(!is_sha256_hex(&"g".repeat(64)));
        assert!(!is_sha256_hex(&"a".repeat(65)));
    }

    #[test]
    fn contract_texts() {
        let m = MemoryFile::Memory;
        let u = MemoryFile::User;
        assert_eq!(
            StoreError::HardCapExceeded {
                file: m,
                attempted: 4097,
                cap: 4096
            }
            .to_string(),
            "MEMORY.md write rejected: 4097 bytes exceeds hard cap 4096; consolidate before adding more"
        );
        assert_eq!(
            StoreError::EmptyEntry {
                file: MemoryFile::Memory
            }
            .to_string(),
            "entry must be non-empty"
        );
        assert_eq!(
            StoreError::NothingToReplace { file: u }.to_string(),
            "USER.md is empty; nothing to replace"
        );
        assert_eq!(
            StoreError::NotFound { file: u }.to_string(),
            "replace source not found in USER.md"
        );
        assert_eq!(
            StoreError::NotUnique { file: m, count: 3 }.to_string(),
            "replace source appears 3 times in MEMORY.md; must be unique"
        );
    }
}
