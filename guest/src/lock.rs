//! The cross-process write lock: an exclusive-create lock file with a lease, and safe
//! breaking of a stale one (the protocol is in the README's "Concurrent writers").
//!
//! wasi:filesystem 0.2 has no locks, so everything here is built from operations every
//! host implements atomically: exclusive create, unlink, stat and file identity.

use alloc::format;

use metis_memory_core::MemoryFile;
use metis_memory_core::StoreError;
use metis_memory_core::lock::{
    BREAK_LEASE_NANOS, LEASE_NANOS, WAIT_NANOS, backoff_nanos, break_lock_name, lease_expired,
    lock_name, may_commit, pending_lock_name,
};
use wasip2::clocks::{monotonic_clock, wall_clock};
use wasip2::filesystem::types::{Descriptor, DescriptorFlags, ErrorCode, OpenFlags, PathFlags};

use crate::fs::io_error;

/// A file's identity (a hash of its device and inode): tells one lock file from the next.
type Identity = (u64, u64);

/// The lock on one file, held from before the read until after the rename.
pub struct WriteLock<'a> {
    dir: &'a Descriptor,
    file: MemoryFile,
    /// Which lock file is ours: a breaker may have replaced the one at our path.
    identity: Identity,
    /// Wall-clock time the lock file was created: the start of our lease.
    taken_nanos: u64,
}

impl<'a> WriteLock<'a> {
    /// Takes the lock on `file`, waiting up to `WAIT_NANOS`, breaking a stale lock on the
    /// way; `busy` if it stays held by a live writer.
    pub fn acquire(dir: &'a Descriptor, file: MemoryFile) -> Result<Self, StoreError> {
        let name = lock_name(file);
        let token = owner_token();
        let deadline = monotonic_clock::now().saturating_add(WAIT_NANOS);
        for attempt in 0.. {
            if let Some(lock) = Self::try_take(dir, file, &name, token)? {
                return Ok(lock);
            }
            break_if_stale(dir, file);
            if monotonic_clock::now() >= deadline {
                return Err(StoreError::Busy { file });
            }
            let jitter =
                0.5 + (wasip2::random::random::get_random_u64() >> 11) as f64 / (1u64 << 53) as f64;
            monotonic_clock::subscribe_duration(backoff_nanos(attempt, jitter)).block();
        }
        unreachable!("the loop returns")
    }

    /// One attempt: write our owner token to a pending file of our own, then hard-link
    /// it into place as the lock, which fails if a lock exists. The lock thus appears
    /// atomically with its owner in it, and its modification time is this attempt's.
    fn try_take(
        dir: &'a Descriptor,
        file: MemoryFile,
        name: &str,
        token: u64,
    ) -> Result<Option<Self>, StoreError> {
        let pending = pending_lock_name(file, token);
        let fd = create_exclusive(dir, &pending).map_err(|c| io_error(file, "create lock", c))?;
        let taken = fd
            .write(format!("{token:016x}\n").as_bytes(), 0)
            .and_then(|_| dir.link_at(PathFlags::empty(), &pending, dir, name));
        let lock = match taken {
            Ok(()) => {
                let held = fd
                    .metadata_hash()
                    .and_then(|hash| Ok(((hash.lower, hash.upper), fd.stat()?)));
                match held {
                    Ok((identity, stat)) => Ok(Some(WriteLock {
                        dir,
                        file,
                        identity,
                        taken_nanos: stat
                            .data_modification_timestamp
                            .map_or_else(wall_now, nanos),
                    })),
                    // The lock is in place but we cannot tell it from the next holder's:
                    // give it back now (it was linked a moment ago, far inside its lease)
                    // rather than leave it to block every writer until the lease ends.
                    Err(code) => {
                        let _ = dir.unlink_file_at(name);
                        Err(code)
                    }
                }
            }
            Err(ErrorCode::Exist) => Ok(None),
            Err(code) => Err(code),
        };
        let _ = dir.unlink_file_at(&pending);
        lock.map_err(|c| io_error(file, "take lock", c))
    }

    /// Whether we still hold the lock with enough lease left to commit; checked right
    /// before the rename that makes a write visible.
    pub fn check_can_commit(&self) -> Result<(), StoreError> {
        if may_commit(self.taken_nanos, wall_now()) && self.is_ours() {
            Ok(())
        } else {
            Err(StoreError::Busy { file: self.file })
        }
    }

    fn is_ours(&self) -> bool {
        self.dir
            .metadata_hash_at(PathFlags::empty(), &lock_name(self.file))
            .is_ok_and(|h| (h.lower, h.upper) == self.identity)
    }
}

impl Drop for WriteLock<'_> {
    /// Releases the lock if it is still ours and still well inside its lease (so no
    /// breaker can be removing it at the same time); otherwise it is left to expire.
    fn drop(&mut self) {
        if may_commit(self.taken_nanos, wall_now()) && self.is_ours() {
            let _ = self.dir.unlink_file_at(&lock_name(self.file));
        }
    }
}

/// Removes the lock on `file` if its lease has expired. Breakers are serialised by the
/// break lock, and re-check under it that the lock is still the stale one they saw, so a
/// fresh lock taken meanwhile is never removed.
fn break_if_stale(dir: &Descriptor, file: MemoryFile) {
    let name = lock_name(file);
    let Some(stale) = stale_identity(dir, &name, LEASE_NANOS) else {
        return;
    };
    let break_name = break_lock_name(file);
    match create_exclusive(dir, &break_name) {
        Ok(_) => {
            if stale_identity(dir, &name, LEASE_NANOS) == Some(stale) {
                let _ = dir.unlink_file_at(&name);
            }
            let _ = dir.unlink_file_at(&break_name);
        }
        // A breaker that died between its two unlinks leaves the break lock behind.
        Err(ErrorCode::Exist) => {
            if stale_identity(dir, &break_name, BREAK_LEASE_NANOS).is_some() {
                let _ = dir.unlink_file_at(&break_name);
            }
        }
        Err(_) => {}
    }
}

/// Whether the file `name` is older than `lease_nanos`.
pub fn is_stale(dir: &Descriptor, name: &str, lease_nanos: u64) -> bool {
    stale_identity(dir, name, lease_nanos).is_some()
}

/// The identity of the file `name` if it is older than `lease_nanos`.
fn stale_identity(dir: &Descriptor, name: &str, lease_nanos: u64) -> Option<Identity> {
    let hash = dir.metadata_hash_at(PathFlags::empty(), name).ok()?;
    let identity = (hash.lower, hash.upper);
    let stat = dir.stat_at(PathFlags::empty(), name).ok()?;
    let taken = nanos(stat.data_modification_timestamp?);
    lease_expired(taken, wall_now(), lease_nanos).then_some(identity)
}

/// This call's owner token: the host's (`METIS_MEMORY_OWNER`, hex), so that it can remove
/// this call's lock and temporary file if the instance traps; random otherwise.
pub fn owner_token() -> u64 {
    wasip2::cli::environment::get_environment()
        .into_iter()
        .find(|(name, _)| name == "METIS_MEMORY_OWNER")
        .and_then(|(_, hex)| u64::from_str_radix(&hex, 16).ok())
        .unwrap_or_else(wasip2::random::random::get_random_u64)
}

fn create_exclusive(dir: &Descriptor, name: &str) -> Result<Descriptor, ErrorCode> {
    dir.open_at(
        PathFlags::empty(),
        name,
        OpenFlags::CREATE | OpenFlags::EXCLUSIVE,
        DescriptorFlags::WRITE,
    )
}

fn nanos(t: wall_clock::Datetime) -> u64 {
    t.seconds
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::from(t.nanoseconds))
}

fn wall_now() -> u64 {
    nanos(wall_clock::now())
}
