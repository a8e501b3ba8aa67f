//! The cross-process write lock's names and timing (the protocol is in
//! docs/reliability.md, "Concurrent writers"; the guest's `lock.rs` carries it out).

use alloc::format;
use alloc::string::String;

use crate::MemoryFile;

/// How long a lock is good for, counted from its file's modification time. A writer
/// killed while holding it blocks others for at most this long.
pub const LEASE_NANOS: u64 = 3_000_000_000;
/// A holder commits only while this much of its lease is left, so a breaker (who waits
/// for the whole lease) can never remove a lock whose holder is about to commit.
pub const COMMIT_MARGIN_NANOS: u64 = 1_000_000_000;
/// How long a writer waits for the lock before giving up with `busy`. Longer than the
/// lease, so a lock left by a killed writer is always recovered within one wait.
pub const WAIT_NANOS: u64 = 5_000_000_000;
/// The lease of the short-lived lock that serialises breakers of a stale lock.
pub const BREAK_LEASE_NANOS: u64 = 1_000_000_000;

/// `.MEMORY.md.lock`: exists while a writer holds the lock for MEMORY.md.
pub fn lock_name(file: MemoryFile) -> String {
    format!(".{}.lock", file.file_name())
}

/// `.MEMORY.md.lock.{16 hex}`: a would-be holder's lock file, complete with its owner
/// token, before it is hard-linked into place as the lock (so the lock never exists
/// without its owner written in it).
pub fn pending_lock_name(file: MemoryFile, token: u64) -> String {
    format!(".{}.lock.{token:016x}", file.file_name())
}

/// `.MEMORY.md.lock.{16 hex}.aside`: where a releaser or breaker moves the lock to
/// inspect it, so that what it removes is exactly what it inspected.
pub fn aside_name(file: MemoryFile, token: u64) -> String {
    format!(".{}.lock.{token:016x}.aside", file.file_name())
}

/// Whether `name` is a lock moved aside for `file` (any releaser's or breaker's).
pub fn is_aside_of(file: MemoryFile, name: &str) -> bool {
    token_between(name, &format!(".{}.lock.", file.file_name()), ".aside")
}

/// `.MEMORY.md.lock.break`: held (briefly) by whoever removes a stale lock.
pub fn break_lock_name(file: MemoryFile) -> String {
    format!(".{}.lock.break", file.file_name())
}

/// `.MEMORY.md.{16 hex}.tmp`: a writer's temporary file.
pub fn temp_name(file: MemoryFile, random: u64) -> String {
    format!(".{}.{random:016x}.tmp", file.file_name())
}

/// Whether `name` is a temporary file of `file` (any writer's, any age).
pub fn is_temp_of(file: MemoryFile, name: &str) -> bool {
    token_between(name, &format!(".{}.", file.file_name()), ".tmp")
}

/// Whether `name` is a pending lock file of `file` (any would-be holder's, any age).
pub fn is_pending_lock_of(file: MemoryFile, name: &str) -> bool {
    token_between(name, &format!(".{}.lock.", file.file_name()), "")
}

fn token_between(name: &str, prefix: &str, suffix: &str) -> bool {
    name.strip_prefix(prefix)
        .and_then(|rest| rest.strip_suffix(suffix))
        .is_some_and(|hex| hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Whether a lock dated `taken_nanos` has expired at `now_nanos`. Both are on one clock,
/// the filesystem's: a lock's date (its modification time) against the date of a file
/// the judge has itself just written on the same filesystem, never against the judge's
/// own clock, which may be seconds off the file server's. A lock dated more than a lease
/// *ahead* of now has expired too: it was taken before the clock stepped back (an RTC
/// behind at boot, an NTP step), and no lease lasts longer than a lease, whatever the
/// clock did.
pub fn lease_expired(taken_nanos: u64, now_nanos: u64, lease_nanos: u64) -> bool {
    now_nanos > taken_nanos.saturating_add(lease_nanos)
        || taken_nanos > now_nanos.saturating_add(lease_nanos)
}

/// Whether a file dated `dated` (its modification time) has outlived `lease_nanos` when
/// a file the judge has just written is dated `now` ([`lease_expired`]); never when either
/// date is unknown (the filesystem keeps none): the judge then goes by watching instead
/// ([`watched_too_long`]).
pub fn stale_by_date(dated: Option<u64>, now: Option<u64>, lease_nanos: u64) -> bool {
    dated
        .zip(now)
        .is_some_and(|(dated, now)| lease_expired(dated, now, lease_nanos))
}

/// Whether a lock a waiter first saw at `first_seen_nanos` (monotonic clock), and has seen
/// unchanged since, has outlived a lease by `now_nanos`, whatever its date says.
pub fn watched_too_long(first_seen_nanos: u64, now_nanos: u64, lease_nanos: u64) -> bool {
    now_nanos.saturating_sub(first_seen_nanos) > lease_nanos
}

/// The content of a lock file: its owner's token, so that a lock is told from the next
/// one by something never reused (a file's inode number is, at once, on ext4).
pub fn owner_text(token: u64) -> String {
    format!("{token:016x}\n")
}

/// The longest owner text: what a read of a lock file asks for.
pub const OWNER_TEXT_BYTES: u64 = 17;

/// The token in a lock file's content, if it is an owner text.
pub fn parse_owner(content: &[u8]) -> Option<u64> {
    let hex = content.strip_suffix(b"\n")?;
    if hex.len() != 16 || !hex.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    u64::from_str_radix(core::str::from_utf8(hex).ok()?, 16).ok()
}

/// What the holder writes after its owner text once it knows the bytes it will rename
/// into place: their SHA-256. If its instance traps, the clean-up reads it to tell whether
/// the write landed (see [`landing`]). Readers of the owner read only the owner text.
pub fn intent_text(after_hash: &str) -> String {
    format!("{after_hash}\n")
}

/// How many bytes after the owner text hold the intent.
pub const INTENT_TEXT_BYTES: u64 = 65;

/// The after-hash in an intent text, if it is one.
pub fn parse_intent(content: &[u8]) -> Option<&str> {
    let hex = core::str::from_utf8(content.strip_suffix(b"\n")?).ok()?;
    crate::is_sha256_hex(hex).then_some(hex)
}

/// What a clean-up after a trap found of the trapped call's write to one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Landing {
    /// No trace of the call on the file: it never took the file's lock (it did not write
    /// it, or trapped before the lock: nothing written), or had released it (written).
    Untraced,
    /// The call held the lock and the file is not what it meant to write: nothing of it
    /// was written.
    NotWritten,
    /// The file holds exactly the bytes the call meant to write: it was written.
    Written,
}

/// The landing of a trapped call that `held` the file's lock (its own lock or its aside
/// was still there), with `intent` read from it, when the file's hash is now `current`.
pub fn landing(held: bool, intent: Option<&str>, current: &str) -> Landing {
    match (held, intent) {
        (false, _) => Landing::Untraced,
        (true, Some(after)) if after.eq_ignore_ascii_case(current) => Landing::Written,
        (true, _) => Landing::NotWritten,
    }
}

/// The landing of a trapped call from each file's: a call writes one file, so the one
/// with a trace of it tells; `Untraced` when neither has.
pub fn call_landing(files: &[Landing]) -> Landing {
    let traced = |wanted: Landing| files.contains(&wanted).then_some(wanted);
    traced(Landing::Written)
        .or_else(|| traced(Landing::NotWritten))
        .unwrap_or(Landing::Untraced)
}

/// Whether the holder of a lock taken at `taken_nanos` may still commit at `now_nanos`,
/// both on the holder's monotonic clock: `taken_nanos` is read before the write that
/// gave the lock its date, so the holder never counts less of its lease as gone than a
/// waiter judging by that date does (the filesystem's clock and the monotonic clock run
/// at the same rate; their readings are never compared).
pub fn may_commit(taken_nanos: u64, now_nanos: u64) -> bool {
    now_nanos < taken_nanos.saturating_add(LEASE_NANOS - COMMIT_MARGIN_NANOS)
}

/// Past this much time (monotonic) between writing the pending lock file, which dates it,
/// and the lock being in place, the holder dates the lock afresh: its lease runs from when
/// it appeared, not from when a stalled writer began to take it.
pub const REDATE_AFTER_NANOS: u64 = 100_000_000;

/// Whether a lock whose pending file was written at `written_nanos` and which was in
/// place at `placed_nanos` (both monotonic) is to be dated afresh.
pub fn redate(written_nanos: u64, placed_nanos: u64) -> bool {
    placed_nanos.saturating_sub(written_nanos) > REDATE_AFTER_NANOS
}

/// The pause before attempt `attempt` (0-based) to take a busy lock: 1 ms doubling to
/// 32 ms, scaled by `jitter` in [0.5, 1.5) so waiting writers do not move in step.
pub fn backoff_nanos(attempt: u32, jitter: f64) -> u64 {
    let base = 1_000_000u64 << attempt.min(5);
    (base as f64 * jitter.clamp(0.5, 1.5)) as u64
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_calls_landing_is_told_by_the_file_with_a_trace_of_it() {
        use Landing::*;
        assert_eq!(landing(false, Some("a"), "a"), Untraced);
        assert_eq!(landing(true, None, "a"), NotWritten);
        assert_eq!(landing(true, Some("A"), "a"), Written);
        assert_eq!(landing(true, Some("b"), "a"), NotWritten);
        assert_eq!(call_landing(&[Untraced, Written]), Written);
        assert_eq!(call_landing(&[NotWritten, Untraced]), NotWritten);
        assert_eq!(call_landing(&[Untraced, Untraced]), Untraced);
        assert_eq!(
            parse_intent(intent_text(&"f".repeat(64)).as_bytes()),
            Some("f".repeat(64).as_str())
        );
        assert_eq!(parse_intent(b"not a hash\n"), None);
    }

    use super::*;
    use std::prelude::rust_2024::*;

    #[test]
    fn names() {
        assert_eq!(lock_name(MemoryFile::User), ".USER.md.lock");
        assert_eq!(
            pending_lock_name(MemoryFile::User, 0xff),
            ".USER.md.lock.00000000000000ff"
        );
        assert_eq!(break_lock_name(MemoryFile::Memory), ".MEMORY.md.lock.break");
        let temp = temp_name(MemoryFile::Memory, 0xabc);
        assert_eq!(temp, ".MEMORY.md.0000000000000abc.tmp");
        assert!(is_temp_of(MemoryFile::Memory, &temp));
        assert!(!is_temp_of(MemoryFile::User, &temp));
        assert!(!is_temp_of(MemoryFile::Memory, ".MEMORY.md.lock"));
        assert!(!is_temp_of(MemoryFile::Memory, ".MEMORY.md.xyz.tmp"));
        let pending = pending_lock_name(MemoryFile::Memory, 7);
        assert!(is_pending_lock_of(MemoryFile::Memory, &pending));
        assert!(!is_pending_lock_of(MemoryFile::User, &pending));
        assert!(!is_pending_lock_of(
            MemoryFile::Memory,
            ".MEMORY.md.lock.break"
        ));
        assert!(!is_temp_of(MemoryFile::Memory, &pending));
        let aside = aside_name(MemoryFile::Memory, 0xabc);
        assert_eq!(aside, ".MEMORY.md.lock.0000000000000abc.aside");
        assert!(is_aside_of(MemoryFile::Memory, &aside));
        assert!(!is_aside_of(MemoryFile::User, &aside));
        assert!(!is_aside_of(MemoryFile::Memory, &pending));
        assert!(!is_pending_lock_of(MemoryFile::Memory, &aside));
        assert!(!is_temp_of(MemoryFile::Memory, &aside));
        assert!(!is_aside_of(
            MemoryFile::Memory,
            ".MEMORY.md.lock.abc.aside"
        ));
    }

    #[test]
    fn a_holder_stops_committing_well_before_breakers_may_break() {
        let taken = 10_000_000_000;
        assert!(may_commit(
            taken,
            taken + LEASE_NANOS - COMMIT_MARGIN_NANOS - 1
        ));
        assert!(!may_commit(
            taken,
            taken + LEASE_NANOS - COMMIT_MARGIN_NANOS
        ));
        assert!(!lease_expired(taken, taken + LEASE_NANOS, LEASE_NANOS));
        assert!(lease_expired(taken, taken + LEASE_NANOS + 1, LEASE_NANOS));
        const { assert!(WAIT_NANOS > LEASE_NANOS) };
    }

    #[test]
    fn a_lock_dated_in_the_future_expires_after_a_lease_too() {
        let now = 100_000_000_000;
        assert!(!lease_expired(now + LEASE_NANOS, now, LEASE_NANOS));
        assert!(lease_expired(now + LEASE_NANOS + 1, now, LEASE_NANOS));
        assert!(lease_expired(u64::MAX, now, LEASE_NANOS));
        assert!(!watched_too_long(now, now + LEASE_NANOS, LEASE_NANOS));
        assert!(watched_too_long(now, now + LEASE_NANOS + 1, LEASE_NANOS));
        assert!(!watched_too_long(now + 5, now, LEASE_NANOS));
    }

    #[test]
    fn ages_by_date_need_both_dates() {
        let now = 100_000_000_000;
        let old = now - LEASE_NANOS - 1;
        assert!(stale_by_date(Some(old), Some(now), LEASE_NANOS));
        assert!(!stale_by_date(
            Some(now - LEASE_NANOS),
            Some(now),
            LEASE_NANOS
        ));
        assert!(stale_by_date(
            Some(now + LEASE_NANOS + 1),
            Some(now),
            LEASE_NANOS
        ));
        // No date on either side: nothing is stale by date.
        assert!(!stale_by_date(None, Some(now), LEASE_NANOS));
        assert!(!stale_by_date(Some(old), None, LEASE_NANOS));
    }

    #[test]
    fn a_lock_placed_late_is_dated_afresh() {
        let written = 5_000_000_000;
        assert!(!redate(written, written));
        assert!(!redate(written, written + REDATE_AFTER_NANOS));
        assert!(redate(written, written + REDATE_AFTER_NANOS + 1));
        assert!(redate(written, written + 2_100_000_000));
        // A monotonic clock never runs back; if it seemed to, nothing is redated.
        assert!(!redate(written, 0));
        // Redating costs the holder at most this much of its lease otherwise.
        const { assert!(REDATE_AFTER_NANOS < COMMIT_MARGIN_NANOS / 4) };
    }

    #[test]
    fn owner_texts_round_trip_and_nothing_else_parses() {
        assert_eq!(owner_text(0xab), "00000000000000ab\n");
        assert_eq!(owner_text(u64::MAX).len() as u64, OWNER_TEXT_BYTES);
        for token in [0, 0xab, u64::MAX] {
            assert_eq!(parse_owner(owner_text(token).as_bytes()), Some(token));
        }
        for bad in [
            &b"00000000000000ab"[..],
            b"000000000000000ab\n",
            b"00000000000000g0\n",
            b"",
            b"\n",
            b"+0000000000000ab\n",
        ] {
            assert_eq!(parse_owner(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        assert_eq!(backoff_nanos(0, 1.0), 1_000_000);
        assert_eq!(backoff_nanos(3, 1.0), 8_000_000);
        assert_eq!(backoff_nanos(40, 1.0), 32_000_000);
        assert_eq!(backoff_nanos(0, 9.0), 1_500_000);
    }
}
