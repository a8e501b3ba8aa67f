//! The cross-process write lock: an exclusive-create lock file with a lease, and safe
//! breaking of a stale one (the protocol is in docs/reliability.md, "Concurrent writers").
//!
//! wasi:filesystem 0.2 has no locks, so everything here is built from operations every
//! host implements atomically: exclusive create, hard link, unlink and stat. A lock is
//! told from the next one by its owner's token, written in it: tokens are never reused,
//! where inode numbers are.
//!
//! Ages are judged on one clock at a time, never by comparing two: a file's date against
//! the date of a file this writer has just written (the filesystem's clock, which on an
//! SMB mount or a VM shared folder is the server's), or readings of this instance's
//! monotonic clock against each other. The caller's wall clock is never read: it may be
//! seconds off the file server's.

use alloc::string::String;
use alloc::vec::Vec;

use metis_memory_core::MemoryFile;
use metis_memory_core::StoreError;
use metis_memory_core::lock::{
    BREAK_LEASE_NANOS, INTENT_TEXT_BYTES, LEASE_NANOS, Landing, OWNER_TEXT_BYTES, WAIT_NANOS,
    aside_name, backoff_nanos, break_lock_name, intent_text, landing, lock_name, may_commit,
    owner_text, parse_intent, parse_owner, pending_lock_name, redate, stale_by_date, temp_name,
    watched_too_long,
};
use wasip2::clocks::monotonic_clock;
use wasip2::clocks::wall_clock::Datetime;
use wasip2::filesystem::types::{
    Descriptor, DescriptorFlags, DescriptorStat, DescriptorType, ErrorCode, OpenFlags, PathFlags,
};

use crate::errors::io_error;

/// The lock on one file, held from before the read until after the rename.
pub struct WriteLock<'a> {
    dir: &'a Descriptor,
    /// The lock file itself (linked from our pending file), to write the intent into;
    /// closed before the lock is released, so nothing of the write is left to trap on
    /// after its last trace is gone.
    fd: Option<Descriptor>,
    file: MemoryFile,
    /// Our owner token, which the lock file holds while the lock is ours.
    token: u64,
    /// See `Settings::read_only_mount`.
    read_only_mount: bool,
    /// The lock file's date (the filesystem's clock) once taken: the start of our lease
    /// as other writers see it, and the "now" against which our clean-up judges what
    /// others left (`None` where the filesystem keeps no dates).
    dated: Option<u64>,
    /// Monotonic time read just before the write that gave the lock its date: the start
    /// of our lease as we count it, never later than the start others count from.
    taken_mono: u64,
}

/// What one attempt to take the lock came to.
enum Attempt<'a> {
    Taken(WriteLock<'a>),
    /// Someone else holds it. `now` is the date of the pending lock file this attempt
    /// wrote (the filesystem's clock, just before the lock was looked at).
    Held {
        now: Option<u64>,
    },
}

impl<'a> WriteLock<'a> {
    /// Takes the lock on `file`, waiting up to `WAIT_NANOS`, breaking a stale lock on the
    /// way; `busy` if it stays held by a live writer.
    pub fn acquire(
        dir: &'a Descriptor,
        file: MemoryFile,
        token: u64,
        read_only_mount: bool,
    ) -> Result<Self, StoreError> {
        let name = lock_name(file);
        let deadline = monotonic_clock::now().saturating_add(WAIT_NANOS);
        let mut watches = Watches::default();
        for attempt in 0.. {
            let now = match Self::try_take(dir, file, &name, token, read_only_mount)? {
                Attempt::Taken(lock) => return Ok(lock),
                Attempt::Held { now } => now,
            };
            // Neither the lock nor the break lock is ever anything but a regular file
            // a writer made: anything else at either name would jam every write.
            for planted in [name.as_str(), break_lock_name(file).as_str()] {
                if let Some(what) = not_a_lock(dir, planted) {
                    return Err(StoreError::Io {
                        file,
                        message: alloc::format!(
                            ".metis/{planted} is {what}, not a lock file a writer made, so no write can take the lock; nothing was written: remove it"
                        ),
                    });
                }
            }
            break_if_stale(dir, file, token, &mut watches, now);
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
    /// atomically with its owner in it, and its modification time is this attempt's
    /// (written again if the link came late, so its lease runs from when it appeared).
    fn try_take(
        dir: &'a Descriptor,
        file: MemoryFile,
        name: &str,
        token: u64,
        read_only_mount: bool,
    ) -> Result<Attempt<'a>, StoreError> {
        let pending = pending_lock_name(file, token);
        let fd = create_exclusive(dir, &pending)
            .map_err(|c| io_error(file, "take the write lock", name, c, read_only_mount))?;
        let written = monotonic_clock::now();
        let placed = fd
            .write(owner_text(token).as_bytes(), 0)
            .and_then(|_| dir.link_at(PathFlags::empty(), &pending, dir, name))
            .map(|()| None)
            .or_else(|code| match code {
                // vfat/exFAT, some FUSE, SMB and VM shared folders refuse hard links.
                ErrorCode::NotPermitted
                | ErrorCode::CrossDevice
                | ErrorCode::Unsupported
                | ErrorCode::TooManyLinks => take_without_link(dir, name, token).map(Some),
                code => Err(code),
            });
        let attempt = match placed {
            Ok(lock_fd) => {
                let lock_fd = lock_fd.unwrap_or(fd);
                match date_lock(&lock_fd, token, written) {
                    Ok((dated, taken_mono)) => Ok(Attempt::Taken(WriteLock {
                        dir,
                        fd: Some(lock_fd),
                        file,
                        token,
                        read_only_mount,
                        dated,
                        taken_mono,
                    })),
                    // The lock is in place but we do not know when our lease started: give
                    // it back now (it was placed a moment ago, inside its lease) rather than
                    // leave it to block every writer until the lease ends.
                    Err(code) => {
                        let _ = dir.unlink_file_at(name);
                        Err(code)
                    }
                }
            }
            // A lock exists; or our pending file is gone because we stalled past a lease
            // after creating it and another writer cleaned it up: try again either way.
            // The pending file's date is the filesystem's "now" for judging the lock.
            Err(ErrorCode::Exist | ErrorCode::NoEntry) => Ok(Attempt::Held {
                now: fd.stat().ok().and_then(|stat| date(&stat)),
            }),
            Err(code) => Err(code),
        };
        let _ = dir.unlink_file_at(&pending);
        attempt.map_err(|c| io_error(file, "take the write lock", name, c, read_only_mount))
    }

    /// Writes, after our owner text in the lock, the hash of the bytes we are about to
    /// rename into place: if this instance traps, `recover_after_trap` tells from it
    /// whether the write landed. Not synced: it matters only to this host, right after.
    pub fn record_intent(&self, after_hash: &str) -> Result<(), StoreError> {
        let fd = self.fd.as_ref().ok_or(ErrorCode::BadDescriptor);
        fd.and_then(|fd| fd.write(intent_text(after_hash).as_bytes(), OWNER_TEXT_BYTES))
            .map(drop)
            .map_err(|c| {
                io_error(
                    self.file,
                    "write to the lock",
                    &lock_name(self.file),
                    c,
                    self.read_only_mount,
                )
            })
    }

    /// Whether we still hold the lock with enough lease left to commit; checked right
    /// before the rename that makes a write visible.
    pub fn check_can_commit(&self) -> Result<(), StoreError> {
        match (self.is_ours(), self.inside_lease()) {
            (true, true) => Ok(()),
            // Another writer has the lock: it broke ours, or took it after a breaker.
            (false, _) => Err(StoreError::Busy { file: self.file }),
            // No one else is involved: our own write was too slow to finish in time.
            (true, false) => Err(StoreError::Io {
                file: self.file,
                message: "the write took longer than its lock's lease (a slow disk?); \
                          nothing was written; try again"
                    .into(),
            }),
        }
    }

    /// Renews the lease of a lock held across a host's own work (a `write-hold`): a new
    /// owner token written over the old one, which gives the lock a new date and shows a
    /// waiter watching the owner a new one, so neither takes it for a dead writer's. One
    /// write of the whole owner text, in place: a reader sees the old owner or the new.
    pub fn renew(&mut self) -> Result<(), StoreError> {
        if !self.is_ours() {
            return Err(StoreError::Busy { file: self.file });
        }
        let token = wasip2::random::random::get_random_u64();
        let fd = self.fd.as_ref().ok_or(ErrorCode::BadDescriptor);
        fd.and_then(|fd| fd.write(owner_text(token).as_bytes(), 0))
            .map_err(|c| {
                io_error(
                    self.file,
                    "renew",
                    &lock_name(self.file),
                    c,
                    self.read_only_mount,
                )
            })?;
        self.token = token;
        self.taken_mono = monotonic_clock::now();
        Ok(())
    }

    /// Whether enough of our lease is left to commit, on our monotonic clock.
    fn inside_lease(&self) -> bool {
        may_commit(self.taken_mono, monotonic_clock::now())
    }

    /// The lock file's date once taken (the filesystem's clock): a moment ago, as the
    /// filesystem counts time.
    pub fn dated(&self) -> Option<u64> {
        self.dated
    }

    /// Whether the lock file holds our token.
    fn is_ours(&self) -> bool {
        read_owner(self.dir, &lock_name(self.file)) == Some(self.token)
    }
}

impl Drop for WriteLock<'_> {
    /// Releases the lock if it is still ours, even past its lease: moved aside and
    /// inspected first, so a breaker removing it at the same time is harmless.
    fn drop(&mut self) {
        drop(self.fd.take());
        if self.is_ours() {
            let name = lock_name(self.file);
            remove_if_owned(self.dir, self.file, &name, Some(self.token), self.token);
        }
    }
}

/// Dates the lock just placed: its date and the monotonic time our lease is counted from.
/// The lock's date is when its pending file was written (a link does not change it); if
/// the lock appeared well after that (the writer stalled), the owner text is written
/// again, the same bytes, so that the filesystem dates the lock now.
fn date_lock(lock: &Descriptor, token: u64, written: u64) -> Result<(Option<u64>, u64), ErrorCode> {
    let mut taken_mono = written;
    let now = monotonic_clock::now();
    if redate(written, now) {
        taken_mono = now;
        lock.write(owner_text(token).as_bytes(), 0)?;
    }
    Ok((date(&lock.stat()?), taken_mono))
}

/// Takes the lock where hard links are refused: the lock file itself is created (which
/// fails if a lock exists), then given our token. Between the two it has no owner; a
/// waiter treats an ownerless lock like any other, stale only by its date or its watch,
/// so what is lost is that a writer killed in that moment leaves a lock that costs a
/// lease and that the host cannot attribute to the trapped call.
fn take_without_link(dir: &Descriptor, name: &str, token: u64) -> Result<Descriptor, ErrorCode> {
    let lock = create_exclusive(dir, name)?;
    match lock.write(owner_text(token).as_bytes(), 0) {
        Ok(_) => Ok(lock),
        Err(code) => {
            let _ = dir.unlink_file_at(name);
            Err(code)
        }
    }
}

/// What a waiter has seen of one lock file: its owner, and since when on the monotonic
/// clock. A lock seen unchanged for longer than a lease is stale whatever its date says,
/// so a clock that stepped back cannot make a dead writer's lock last.
#[derive(Default)]
struct Watch(Option<(Option<u64>, u64)>);

impl Watch {
    /// Notes that `owner`'s lock is there; whether it has been, unchanged, for over `lease`.
    fn seen_longer_than(&mut self, owner: Option<u64>, lease: u64) -> bool {
        let now = monotonic_clock::now();
        match self.0 {
            Some((seen, since)) if seen == owner => watched_too_long(since, now, lease),
            _ => {
                self.0 = Some((owner, now));
                false
            }
        }
    }
}

/// A waiter's watches on the lock and on the break lock.
#[derive(Default)]
struct Watches {
    lock: Watch,
    breaker: Watch,
}

/// Removes the lock on `file` if its lease has expired, judged against `now`, the date of
/// a file we have just written. Breakers are serialised by the break lock, and re-check
/// under it that the lock still has the stale owner they saw, so a fresh lock taken
/// meanwhile (a new token) is never removed.
fn break_if_stale(
    dir: &Descriptor,
    file: MemoryFile,
    token: u64,
    watches: &mut Watches,
    now: Option<u64>,
) {
    let name = lock_name(file);
    let Some(owner) = stale_owner(dir, &name, LEASE_NANOS, &mut watches.lock, now) else {
        return;
    };
    let break_name = break_lock_name(file);
    match create_exclusive(dir, &break_name) {
        Ok(fd) => {
            // Our token in the break lock lets other waiters watch it too.
            let _ = fd.write(owner_text(token).as_bytes(), 0);
            remove_if_owned(dir, file, &name, owner, token);
            let _ = dir.unlink_file_at(&break_name);
        }
        // A breaker that died between its two unlinks leaves the break lock behind.
        Err(ErrorCode::Exist) => {
            let breaker = &mut watches.breaker;
            if stale_owner(dir, &break_name, BREAK_LEASE_NANOS, breaker, now).is_some() {
                let _ = dir.unlink_file_at(&break_name);
            }
        }
        Err(_) => {}
    }
}

/// Removes the lock file `name` if `owner` owns it. Checking and then unlinking by name
/// would remove whatever lock stands there by the time of the unlink (a stalled releaser
/// or breaker would remove the next holder's), so the lock is first moved aside to a name
/// of our own, atomically, and what was moved is inspected: removed if it is `owner`'s,
/// put back otherwise (unless a new lock was taken meanwhile; its holder then finds at
/// its commit check that the lock is not its own, and gets `busy`).
fn remove_if_owned(dir: &Descriptor, file: MemoryFile, name: &str, owner: Option<u64>, token: u64) {
    let aside = aside_name(file, token);
    if dir.rename_at(name, dir, &aside).is_err() {
        return;
    }
    settle(dir, &aside, name, owner);
}

/// Removes the lock moved to `aside`, putting it back at `name` first unless its owner is
/// `owner` (a lock taken at `name` meanwhile stays).
fn settle(dir: &Descriptor, aside: &str, name: &str, owner: Option<u64>) {
    if read_owner(dir, aside) != owner {
        let put_back = dir.link_at(PathFlags::empty(), aside, dir, name);
        if matches!(
            put_back,
            Err(ErrorCode::NotPermitted
                | ErrorCode::CrossDevice
                | ErrorCode::Unsupported
                | ErrorCode::TooManyLinks)
        ) {
            // No hard links: a rename puts it back, over a lock taken meanwhile if any.
            let _ = dir.rename_at(aside, dir, name);
            return;
        }
    }
    let _ = dir.unlink_file_at(aside);
}

/// Removes what a call with this instance's owner token left in `dir` (holding `files`) when its
/// instance trapped: its lock (moved aside and inspected first, put back if it turns out
/// to be another writer's), its pending lock and its temporary file. Anything else
/// planted at the lock's name is left where it is. Returns, per file, whether the call's
/// write landed, judged from the intent in its lock against the file's hash now
/// (`current_hash`: `None` if the file cannot be read).
pub fn recover_after_trap(
    dir: &Descriptor,
    files: &[MemoryFile],
    current_hash: impl Fn(MemoryFile) -> Option<String>,
    token: u64,
) -> Vec<(MemoryFile, Landing)> {
    let mut landings = Vec::new();
    for &file in files {
        let name = lock_name(file);
        // The call trapped while releasing its lock or breaking a stale one, both of
        // which move the lock to this call's aside name first: it may be another
        // writer's, which goes back.
        let aside = aside_name(file, token);
        let held = [name.as_str(), aside.as_str()]
            .into_iter()
            .find_map(|at| read_lock(dir, at).filter(|(owner, _)| *owner == token));
        let landed = match (held, current_hash(file)) {
            (Some((_, intent)), Some(current)) => landing(true, intent.as_deref(), &current),
            // Held, but the file cannot be read: what landed cannot be told.
            (Some(_), None) | (None, _) => Landing::Untraced,
        };
        landings.push((file, landed));
        if is_regular(dir, &aside) {
            settle(dir, &aside, &name, Some(token));
        }
        // Only a lock that is ours now: one that is not can never become ours, and moving
        // another writer's aside, even to put it back, could lose it to a third.
        if read_owner(dir, &name) == Some(token) {
            remove_if_owned(dir, file, &name, Some(token), token);
        }
        // The call trapped while breaking a stale lock: its break lock holds its token.
        let break_name = break_lock_name(file);
        if read_owner(dir, &break_name) == Some(token) {
            let _ = dir.unlink_file_at(&break_name);
        }
        let _ = dir.unlink_file_at(&pending_lock_name(file, token));
        let _ = dir.unlink_file_at(&temp_name(file, token));
    }
    landings
}

/// The owner of the lock file `name` and the intent written after it, if any, read
/// through one descriptor (see `open_lock`).
fn read_lock(dir: &Descriptor, name: &str) -> Option<(u64, Option<String>)> {
    let fd = open_lock(dir, name)?;
    let (content, _) = fd.read(OWNER_TEXT_BYTES, 0).ok()?;
    let owner = parse_owner(&content)?;
    let intent = fd
        .read(INTENT_TEXT_BYTES, OWNER_TEXT_BYTES)
        .ok()
        .and_then(|(content, _)| parse_intent(&content).map(String::from));
    Some((owner, intent))
}

fn is_regular(dir: &Descriptor, name: &str) -> bool {
    dir.stat_at(PathFlags::empty(), name)
        .is_ok_and(|stat| stat.type_ == DescriptorType::RegularFile)
}

/// What stands at the lock's name if it is not a regular file: no writer creates one (a
/// directory, a link or a special file was planted), so waiting for it to go is futile.
fn not_a_lock(dir: &Descriptor, name: &str) -> Option<&'static str> {
    let stat = dir.stat_at(PathFlags::empty(), name).ok()?;
    match stat.type_ {
        DescriptorType::RegularFile => None,
        DescriptorType::Directory => Some("a directory"),
        DescriptorType::SymbolicLink => Some("a symbolic link"),
        DescriptorType::Fifo => Some("a FIFO"),
        DescriptorType::Socket => Some("a socket"),
        DescriptorType::BlockDevice | DescriptorType::CharacterDevice => Some("a device"),
        _ => Some("a special file"),
    }
}

/// Whether the file `name` has outlived `lease_nanos` by its date, against `now`: the
/// date of a file we wrote before looking at this one (see `stale_by_date`).
pub fn is_stale(dir: &Descriptor, name: &str, lease_nanos: u64, now: Option<u64>) -> bool {
    let dated = dir
        .stat_at(PathFlags::empty(), name)
        .ok()
        .and_then(|stat| date(&stat));
    stale_by_date(dated, now, lease_nanos)
}

/// The owner of the lock file `name` (if its content names one) when the lock is stale:
/// dated more than a lease before (or ahead of) `now`, or watched unchanged for more
/// than a lease.
fn stale_owner(
    dir: &Descriptor,
    name: &str,
    lease_nanos: u64,
    watch: &mut Watch,
    now: Option<u64>,
) -> Option<Option<u64>> {
    dir.stat_at(PathFlags::empty(), name).ok()?;
    let owner = read_owner(dir, name);
    let watched = watch.seen_longer_than(owner, lease_nanos);
    (watched || is_stale(dir, name, lease_nanos, now)).then_some(owner)
}

/// The token in the lock file `name`, if it is a regular file holding one.
fn read_owner(dir: &Descriptor, name: &str) -> Option<u64> {
    let (content, _) = open_lock(dir, name)?.read(OWNER_TEXT_BYTES, 0).ok()?;
    parse_owner(&content)
}

/// The lock file `name` opened for reading, if it is a regular file. Never follows a
/// link, and never opens anything but a regular file (a FIFO would block the open).
fn open_lock(dir: &Descriptor, name: &str) -> Option<Descriptor> {
    let stat = dir.stat_at(PathFlags::empty(), name).ok()?;
    if stat.type_ != DescriptorType::RegularFile {
        return None;
    }
    let fd = dir
        .open_at(
            PathFlags::empty(),
            name,
            OpenFlags::empty(),
            DescriptorFlags::READ,
        )
        .ok()?;
    (fd.get_type().ok()? == DescriptorType::RegularFile).then_some(fd)
}

fn create_exclusive(dir: &Descriptor, name: &str) -> Result<Descriptor, ErrorCode> {
    dir.open_at(
        PathFlags::empty(),
        name,
        OpenFlags::CREATE | OpenFlags::EXCLUSIVE,
        DescriptorFlags::WRITE,
    )
}

/// A file's date (its modification time, on the filesystem's clock), in nanoseconds.
fn date(stat: &DescriptorStat) -> Option<u64> {
    stat.data_modification_timestamp.map(nanos)
}

fn nanos(t: Datetime) -> u64 {
    t.seconds
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::from(t.nanoseconds))
}
