//! The owner token: a number unique to one call, naming which lock file and which
//! temporary file are that call's, so a clean-up after a trap removes only its own.

/// A token unique to one call in this process, and unlikely to be another process's.
pub(crate) fn owner_token() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(CALLS.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    hasher.finish()
}
