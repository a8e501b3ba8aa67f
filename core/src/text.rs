use alloc::string::String;
use alloc::vec::Vec;

use crate::{MemoryFile, StoreError};

/// Whether `c` is whitespace to Python's `str.strip()`: Unicode White_Space plus the
/// four information separators U+001C..U+001F, which Rust's `char::is_whitespace` omits.
fn is_python_whitespace(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `s` without leading and trailing whitespace, exactly as Python's `s.strip()`.
pub fn python_strip(s: &str) -> &str {
    s.trim_matches(is_python_whitespace)
}

/// `s` without trailing whitespace, exactly as Python's `s.rstrip()`.
pub(crate) fn python_rstrip(s: &str) -> &str {
    s.trim_end_matches(is_python_whitespace)
}

/// At most the first `chars` characters of `text`.
pub(crate) fn cut(text: &str, chars: usize) -> &str {
    text.char_indices()
        .nth(chars)
        .map_or(text, |(end, _)| &text[..end])
}

/// The file's bytes as text, or `InvalidUtf8` with the offset of the first bad byte.
pub fn decode_utf8(file: MemoryFile, bytes: &[u8]) -> Result<&str, StoreError> {
    core::str::from_utf8(bytes).map_err(|e| StoreError::InvalidUtf8 {
        file,
        offset: e.valid_up_to() as u64,
    })
}

/// The file's bytes as owned text (validated once, not copied), or `InvalidUtf8`.
pub fn into_text(file: MemoryFile, bytes: Vec<u8>) -> Result<String, StoreError> {
    String::from_utf8(bytes).map_err(|e| StoreError::InvalidUtf8 {
        file,
        offset: e.utf8_error().valid_up_to() as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::prelude::rust_2024::*;

    #[test]
    fn strips_python_whitespace_set() {
        assert_eq!(python_strip("\u{1c}\u{1d} x \u{1e}\u{1f}"), "x");
        assert_eq!(python_strip("\u{a0}\u{3000}\t\r\n x\u{85}\u{2028}"), "x");
        // Zero-width space is not whitespace to Python either.
        assert_eq!(python_strip("\u{200b}x"), "\u{200b}x");
        assert_eq!(python_rstrip("  x \n"), "  x");
    }

    #[test]
    fn utf8_offset_is_first_bad_byte() {
        let err = decode_utf8(MemoryFile::User, b"ok \xc3\xa9 \xff").unwrap_err();
        assert_eq!(
            into_text(MemoryFile::User, b"ok \xc3\xa9 \xff".to_vec()),
            Err(err.clone())
        );
        assert_eq!(
            err,
            StoreError::InvalidUtf8 {
                file: MemoryFile::User,
                offset: 6
            }
        );
    }
}
