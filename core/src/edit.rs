use alloc::string::String;
use alloc::vec::Vec;
use sha2::{Digest, Sha256};

use crate::text::{decode_utf8, python_strip};
use crate::{MemoryFile, StoreError};

/// One of the three writes, with its arguments.
#[derive(Clone, Copy, Debug)]
pub enum Edit<'a> {
    /// Append `entry` (stripped) as its own line.
    Add { entry: &'a str },
    /// Replace the single occurrence of `old` with `new`.
    Replace { old: &'a str, new: &'a str },
    /// Make `content` the whole file.
    Consolidate { content: &'a str },
}

/// What a successful write did: the hashes and sizes of the exact bytes before and after.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteResult {
    pub file: MemoryFile,
    pub before_hash: String,
    pub after_hash: String,
    pub before_size_bytes: u64,
    pub after_size_bytes: u64,
    pub over_soft_cap: bool,
    pub over_hard_cap: bool,
}

/// A write the store has decided on: the bytes it was based on and the bytes to store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedWrite {
    pub file: MemoryFile,
    pub before: Vec<u8>,
    pub after: Vec<u8>,
}

impl PlannedWrite {
    /// The result to report once `after` is on disk.
    pub fn result(&self) -> WriteResult {
        let after_size_bytes = self.after.len() as u64;
        WriteResult {
            file: self.file,
            before_hash: sha256_hex(&self.before),
            after_hash: sha256_hex(&self.after),
            before_size_bytes: self.before.len() as u64,
            after_size_bytes,
            over_soft_cap: after_size_bytes > self.file.soft_cap(),
            over_hard_cap: false,
        }
    }
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    // Each byte's two lowercase digits (`{:02x}`) by hand: no formatter per byte.
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut hex = String::with_capacity(64);
    for byte in Sha256::digest(bytes) {
        hex.push(char::from(DIGITS[usize::from(byte >> 4)]));
        hex.push(char::from(DIGITS[usize::from(byte & 0xf)]));
    }
    hex
}

/// `changed` unless `bytes` are the version `expected_hash` names (SHA-256, hex in either
/// case): a write based on an older version would undo what came since. A hash that is
/// not 64 hex digits names no version.
fn check_unchanged(file: MemoryFile, expected_hash: &str, bytes: &[u8]) -> Result<(), StoreError> {
    let current_hash = sha256_hex(bytes);
    if current_hash.eq_ignore_ascii_case(expected_hash) {
        return Ok(());
    }
    Err(StoreError::Changed {
        file,
        expected_hash: expected_hash.into(),
        current_hash,
        current: bytes.to_vec(),
    })
}

/// Decides a write: the new bytes of `file`, or the first error in the reference's order.
///
/// `read_current` yields the file's bytes (empty when missing). It is called at most once
/// and only when the edit needs it, after the checks the reference makes before reading:
/// an empty entry is rejected without touching the file, and an oversized consolidate is
/// rejected before the old content is looked at (it need not even be text). Sizes are
/// checked before the new content is built, so a huge argument allocates nothing more.
///
/// `if_unchanged`, the version the edit was based on (SHA-256, hex in either case), holds
/// any edit to it: compared as soon as the file is read, so only the checks that need no
/// file come first, and `changed` (with the file as it is now) if it is another version.
pub fn plan_write(
    file: MemoryFile,
    edit: Edit<'_>,
    if_unchanged: Option<&str>,
    read_current: impl FnOnce() -> Result<Vec<u8>, StoreError>,
) -> Result<PlannedWrite, StoreError> {
    let read_current = || {
        let bytes = read_current()?;
        if let Some(expected_hash) = if_unchanged {
            check_unchanged(file, expected_hash, &bytes)?;
        }
        Ok(bytes)
    };
    let check_cap = |attempted: usize| {
        let attempted = attempted as u64;
        if attempted > file.hard_cap() {
            Err(StoreError::HardCapExceeded {
                file,
                attempted,
                cap: file.hard_cap(),
            })
        } else {
            Ok(())
        }
    };
    let planned = |before: Vec<u8>, after: Vec<u8>| PlannedWrite {
        file,
        before,
        after,
    };

    match edit {
        Edit::Add { entry } => {
            let entry = python_strip(entry);
            if entry.is_empty() {
                return Err(StoreError::EmptyEntry { file });
            }
            let before = read_current()?;
            decode_utf8(file, &before)?;
            let separator: &[u8] = if before.is_empty() || before.ends_with(b"\n") {
                b""
            } else {
                b"\n"
            };
            check_cap(before.len() + separator.len() + entry.len() + 1)?;
            let after = [&before[..], separator, entry.as_bytes(), b"\n"].concat();
            Ok(planned(before, after))
        }
        Edit::Replace { old, new } => {
            let before = read_current()?;
            let current = decode_utf8(file, &before)?;
            if current.is_empty() {
                return Err(StoreError::NothingToReplace { file });
            }
            match current.matches(old).count() {
                0 => return Err(StoreError::NotFound { file }),
                1 => {}
                count => {
                    return Err(StoreError::NotUnique {
                        file,
                        count: u32::try_from(count).unwrap_or(u32::MAX),
                    });
                }
            }
            check_cap(current.len() - old.len() + new.len())?;
            let after = current.replacen(old, new, 1).into_bytes();
            Ok(planned(before, after))
        }
        Edit::Consolidate { content } => {
            check_cap(content.len())?;
            let before = read_current()?;
            Ok(planned(before, content.as_bytes().to_vec()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::prelude::rust_2024::*;
    use std::vec;

    const M: MemoryFile = MemoryFile::Memory;
    const U: MemoryFile = MemoryFile::User;

    fn on(current: &str) -> impl FnOnce() -> Result<Vec<u8>, StoreError> {
        let bytes = current.as_bytes().to_vec();
        move || Ok(bytes)
    }

    fn after(file: MemoryFile, current: &str, edit: Edit<'_>) -> Result<String, StoreError> {
        plan_write(file, edit, None, on(current)).map(|p| String::from_utf8(p.after).unwrap())
    }

    fn never_read() -> Result<Vec<u8>, StoreError> {
        core::panic!("the file must not be read")
    }

    /// `if_unchanged` holds every edit to the version it names, compared once the file
    /// is read: the checks that need no file come first.
    #[test]
    fn every_edit_is_held_to_the_version_it_names() {
        let current = "- a\n";
        let now = sha256_hex(current.as_bytes());
        let other = sha256_hex(b"- b\n");
        let edits = [
            Edit::Add { entry: "- c" },
            Edit::Replace { old: "a", new: "c" },
            Edit::Consolidate { content: "- c\n" },
        ];
        for edit in edits {
            match plan_write(M, edit, Some(&other), on(current)) {
                Err(StoreError::Changed {
                    current_hash,
                    current: shown,
                    ..
                }) => {
                    assert_eq!(current_hash, now, "{edit:?}");
                    assert_eq!(shown, current.as_bytes(), "{edit:?}");
                }
                planned => core::panic!("{edit:?}: {planned:?}"),
            }
            let upper = now.to_ascii_uppercase();
            assert!(
                plan_write(M, edit, Some(&upper), on(current)).is_ok(),
                "{edit:?}"
            );
        }
        assert!(matches!(
            plan_write(M, Edit::Add { entry: " " }, Some(&other), never_read),
            Err(StoreError::EmptyEntry { .. })
        ));
        // The version is compared before the file is decoded: a file that is not text is
        // `changed` for a write based on another version, not `invalid-utf8`.
        let not_text: &[u8] = b"- a\n\xff\n";
        for edit in edits {
            let read = || Ok(not_text.to_vec());
            assert!(
                matches!(
                    plan_write(M, edit, Some(&other), read),
                    Err(StoreError::Changed { .. })
                ),
                "{edit:?}"
            );
        }
    }

    #[test]
    fn add_newline_discipline() {
        assert_eq!(after(M, "", Edit::Add { entry: " a \n" }), Ok("a\n".into()));
        assert_eq!(after(M, "x", Edit::Add { entry: "a" }), Ok("x\na\n".into()));
        assert_eq!(
            after(M, "x\n", Edit::Add { entry: "a\nb" }),
            Ok("x\na\nb\n".into())
        );
        assert_eq!(
            after(M, "x\r\n", Edit::Add { entry: "a" }),
            Ok("x\r\na\n".into())
        );
        assert_eq!(
            after(M, "a\n", Edit::Add { entry: "a" }),
            Ok("a\na\n".into())
        );
    }

    #[test]
    fn add_rejects_empty_entry_before_reading() {
        for entry in ["", " \t\n", "\u{1c}\u{1f}\u{3000}"] {
            assert_eq!(
                plan_write(M, Edit::Add { entry }, None, never_read),
                Err(StoreError::EmptyEntry { file: M })
            );
        }
    }

    #[test]
    fn caps_are_inclusive_and_in_bytes() {
        let at_cap = "é".repeat(2047) + "\n"; // 4095 bytes + entry "x\n" would be 4097
        assert_eq!(at_cap.len(), 4095);
        assert_eq!(
            plan_write(M, Edit::Add { entry: "x" }, None, on(&at_cap)),
            Err(StoreError::HardCapExceeded {
                file: M,
                attempted: 4097,
                cap: 4096
            })
        );
        let exact = "a".repeat(4096);
        let p = plan_write(
            U,
            Edit::Consolidate {
                content: &exact[..3072],
            },
            None,
            on(""),
        )
        .unwrap();
        assert!(p.result().over_soft_cap);
        assert!(!p.result().over_hard_cap);
        let soft = plan_write(
            U,
            Edit::Consolidate {
                content: &exact[..1536],
            },
            None,
            on(""),
        )
        .unwrap();
        assert!(!soft.result().over_soft_cap);
        let over_soft = plan_write(
            U,
            Edit::Consolidate {
                content: &exact[..1537],
            },
            None,
            on(""),
        )
        .unwrap();
        assert!(over_soft.result().over_soft_cap);
    }

    #[test]
    fn replace_rules() {
        assert_eq!(
            after(U, "", Edit::Replace { old: "a", new: "b" }),
            Err(StoreError::NothingToReplace { file: U })
        );
        assert_eq!(
            after(U, "abc", Edit::Replace { old: "z", new: "b" }),
            Err(StoreError::NotFound { file: U })
        );
        assert_eq!(
            after(
                U,
                "aaa",
                Edit::Replace {
                    old: "aa",
                    new: "b"
                }
            ),
            Ok("ba".into())
        );
        assert_eq!(
            after(
                U,
                "aaaa",
                Edit::Replace {
                    old: "aa",
                    new: "b"
                }
            ),
            Err(StoreError::NotUnique { file: U, count: 2 })
        );
        assert_eq!(
            after(U, "héllo", Edit::Replace { old: "", new: "b" }),
            Err(StoreError::NotUnique { file: U, count: 6 })
        );
        assert_eq!(
            after(U, "a x\r\n", Edit::Replace { old: " x", new: "" }),
            Ok("a\r\n".into())
        );
    }

    // A file can be over its cap on disk (a person's edit, an older version). Every
    // edit is held to the cap by the size it would leave, never by whether it grows
    // the file: a replace or deletion that shrinks it but stays over is refused too.
    #[test]
    fn a_file_already_over_its_cap_takes_only_edits_that_end_within_it() {
        let over = "x".repeat(4990) + "unique";
        assert_eq!(over.len(), 4996);
        let refused = |attempted| {
            Err(StoreError::HardCapExceeded {
                file: U,
                attempted,
                cap: 3072,
            })
        };
        assert_eq!(
            after(
                U,
                &over,
                Edit::Replace {
                    old: "unique",
                    new: "u"
                }
            ),
            refused(4991)
        );
        assert_eq!(
            after(
                U,
                &over,
                Edit::Replace {
                    old: "unique",
                    new: ""
                }
            ),
            refused(4990)
        );
        assert_eq!(after(U, &over, Edit::Add { entry: "e" }), refused(4999));
        assert_eq!(
            after(
                U,
                &over,
                Edit::Replace {
                    old: "unique",
                    new: "unique"
                }
            ),
            refused(4996)
        );
        // Shrinking to exactly the cap is allowed, and so is consolidating.
        let to_cap = "x".repeat(3072 - 6) + "unique";
        let shrunk = after(
            U,
            &(to_cap.clone() + "yy"),
            Edit::Replace {
                old: "uniqueyy",
                new: "unique",
            },
        );
        assert_eq!(shrunk, Ok(to_cap));
        assert_eq!(
            after(U, &over, Edit::Consolidate { content: "small" }),
            Ok("small".into())
        );
    }

    #[test]
    fn replace_on_invalid_utf8_names_offset() {
        let read = || Ok(b"ab\xfe".to_vec());
        assert_eq!(
            plan_write(M, Edit::Replace { old: "a", new: "" }, None, read),
            Err(StoreError::InvalidUtf8 { file: M, offset: 2 })
        );
    }

    #[test]
    fn consolidate_checks_cap_before_reading_and_takes_any_old_bytes() {
        let big = "x".repeat(4097);
        assert!(matches!(
            plan_write(M, Edit::Consolidate { content: &big }, None, never_read),
            Err(StoreError::HardCapExceeded {
                attempted: 4097,
                ..
            })
        ));
        let p = plan_write(M, Edit::Consolidate { content: "" }, None, || {
            Ok(vec![0xff])
        })
        .unwrap();
        assert_eq!(p.after, b"");
        assert_eq!(p.result().before_size_bytes, 1);
    }

    #[test]
    fn hashes_are_lowercase_sha256() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
