//! Filesystem errors as a person can act on them: what could not be done to which entry
//! of `.metis/`, why in `strerror`'s words, and the store error kind a caller acts on.
//! Below both the filesystem layer (`fs`) and the lock (`lock`), which both report with it.

use alloc::format;
use alloc::string::String;

use metis_memory_core::{MemoryFile, StoreError};
use wasip2::filesystem::types::ErrorCode;

/// What the error codes a person may meet mean, in the words `strerror` uses; the WASI
/// name follows in parentheses, so either can be searched for.
const REASONS: &[(ErrorCode, &str)] = &[
    (ErrorCode::Access, "permission denied"),
    (ErrorCode::NotPermitted, "operation not permitted"),
    (ErrorCode::ReadOnly, "read-only file system"),
    (ErrorCode::InsufficientSpace, "no space left on device"),
    (ErrorCode::Quota, "disk quota exceeded"),
    (ErrorCode::FileTooLarge, "file too large"),
    (ErrorCode::Io, "input/output error"),
    (ErrorCode::NoEntry, "no such file or directory"),
    (ErrorCode::NotDirectory, "not a directory"),
    (ErrorCode::IsDirectory, "is a directory"),
    (ErrorCode::Exist, "file exists"),
    (ErrorCode::NameTooLong, "file name too long"),
    (ErrorCode::Busy, "device or resource busy"),
    (ErrorCode::TextFileBusy, "text file busy"),
    (ErrorCode::CrossDevice, "invalid cross-device link"),
    (ErrorCode::InsufficientMemory, "cannot allocate memory"),
    (ErrorCode::Loop, "too many levels of symbolic links"),
    (ErrorCode::Interrupted, "interrupted system call"),
];

/// The codes that mean this user may not write in `.metis/` (`read-only` is the mount,
/// whoever the user).
const PERMISSION: &[ErrorCode] = &[ErrorCode::Access, ErrorCode::NotPermitted];

/// `code` in words, then its WASI name: `input/output error (io)`.
pub(crate) fn io_reason(code: ErrorCode) -> String {
    format!("{} ({})", reason(code), code.name())
}

fn reason(code: ErrorCode) -> &'static str {
    REASONS
        .iter()
        .find(|(known, _)| *known == code)
        .map_or("error", |(_, reason)| reason)
}

/// An I/O failure, as a person can act on it: what could not be done to which entry of
/// `.metis/`, and why. `read_only_mount`: the host found `.metis/` on a read-only mount
/// (`settings`).
pub(crate) fn io_error(
    file: MemoryFile,
    action: &str,
    name: &str,
    code: ErrorCode,
    read_only_mount: bool,
) -> StoreError {
    // Some runtimes (wasmtime 48) have no WASI code for EROFS and pass it on as `io`; the
    // host then says the filesystem is mounted read-only, so every host names the cause.
    // Only where the call changes something: a read fails on a read-only mount for a
    // cause of its own, which `io` must not hide.
    let changes = !matches!(action, "stat" | "open" | "read");
    let code = if code == ErrorCode::Io && changes && read_only_mount {
        ErrorCode::ReadOnly
    } else {
        code
    };
    let reason = reason(code);
    let hint = if changes && PERMISSION.contains(&code) {
        "; check that this user may write in .metis/"
    } else {
        ""
    };
    let message = format!(
        "cannot {action} .metis/{name}: {reason} ({}){hint}",
        code.name()
    );
    // The causes a caller acts on differently get a kind of their own, the same under
    // every host; the rest are `io`.
    match code {
        ErrorCode::ReadOnly => StoreError::ReadOnly { file, message },
        ErrorCode::FileTooLarge => StoreError::FileTooLarge { file, message },
        ErrorCode::InsufficientSpace | ErrorCode::Quota => {
            StoreError::InsufficientSpace { file, message }
        }
        _ => StoreError::Io { file, message },
    }
}
