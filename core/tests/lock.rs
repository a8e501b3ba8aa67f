//! The lock and temporary file names, as another process sees them: a writer removes
//! every file it takes for a leftover temporary file or a stale pending lock, so only the
//! exact names the store writes (16 hex digits) may be taken for one.

use metis_memory_core::MemoryFile;
use metis_memory_core::lock::{is_pending_lock_of, is_temp_of, pending_lock_name, temp_name};

const M: MemoryFile = MemoryFile::Memory;

#[test]
fn only_sixteen_hex_digits_make_a_temporary_file() {
    assert!(is_temp_of(M, &temp_name(M, u64::MAX)));
    assert!(is_temp_of(M, ".MEMORY.md.0123456789abcdef.tmp"));
    // A person's files that merely look alike are never removed.
    for name in [
        ".MEMORY.md.cafe.tmp",
        ".MEMORY.md.0123456789abcdef0.tmp",
        ".MEMORY.md.0123456789abcdeg.tmp",
        ".MEMORY.md..tmp",
        "MEMORY.md.0123456789abcdef.tmp",
        ".MEMORY.md.0123456789abcdef.tmp.bak",
    ] {
        assert!(!is_temp_of(M, name), "{name}");
    }
}

#[test]
fn only_sixteen_hex_digits_make_a_pending_lock() {
    assert!(is_pending_lock_of(M, &pending_lock_name(M, 0)));
    for name in [
        ".MEMORY.md.lock",
        ".MEMORY.md.lock.ff",
        ".MEMORY.md.lock.0123456789abcdef0",
        ".MEMORY.md.lock.0123456789abcdez",
        ".MEMORY.md.lock.breakbreakbreakb",
    ] {
        assert!(!is_pending_lock_of(M, name), "{name}");
    }
}
