//! `status`: both files against their caps.

use metis_memory::{Error, MemoryFile, Workspace};

use super::color::{RED, YELLOW, paint};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::time::{SystemTime, UNIX_EPOCH};

/// One line of `status`: a file against its caps.
pub struct FileStatus {
    pub file: MemoryFile,
    exists: bool,
    size_bytes: u64,
    soft_cap: u64,
    hard_cap: u64,
    /// SHA-256 of the content, or why it could not be read.
    sha256: Result<String, String>,
    /// The file's write lock, if one is there.
    lock: Option<Lock>,
    /// How many findings the memory audit has in the file (`None` when it is unreadable).
    findings: Option<usize>,
}

/// A write lock present in `.metis/`: a writer at work, or one that died.
struct Lock {
    /// Seconds since the lock's date; negative when it is dated in the future (the clock
    /// stepped back since it was taken).
    age_seconds: f64,
    /// Whether its lease is over, so the next writer breaks it.
    stale: bool,
    /// What stands at a lock's name (the lock's or the break lock's) when it is not a
    /// regular file: planted, and every write fails until it is removed.
    planted: Option<(String, &'static str)>,
}

impl Lock {
    /// The lock on `file` in `ws`, judged by its date as writers judge it. The lock is
    /// looked at, never followed or read.
    fn of(ws: &Workspace, file: MemoryFile) -> Option<Lock> {
        let dir = ws.file_path(file)?.parent()?.to_owned();
        let file = file.core();
        let names = [
            metis_memory_core::lock::lock_name(file),
            metis_memory_core::lock::break_lock_name(file),
        ];
        let planted = names.iter().find_map(|name| {
            let meta = std::fs::symlink_metadata(dir.join(name)).ok()?;
            let kind = meta.file_type();
            let what = if kind.is_file() {
                return None;
            } else if kind.is_dir() {
                "a directory"
            } else if kind.is_symlink() {
                "a symbolic link"
            } else {
                "a special file"
            };
            Some((name.clone(), what))
        });
        let path = dir.join(&names[0]);
        let dated = match std::fs::symlink_metadata(path).and_then(|meta| meta.modified()) {
            Ok(dated) => dated,
            Err(_) if planted.is_some() => SystemTime::now(),
            Err(_) => return None,
        };
        let nanos = |t: SystemTime| {
            t.duration_since(UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        };
        let (taken, now) = (nanos(dated), nanos(SystemTime::now()));
        Some(Lock {
            age_seconds: (now as f64 - taken as f64) / 1e9,
            stale: metis_memory_core::lock::lease_expired(
                taken,
                now,
                metis_memory_core::lock::LEASE_NANOS,
            ),
            planted,
        })
    }

    fn describe(&self) -> String {
        if let Some((name, what)) = &self.planted {
            return format!(
                "{what} at .metis/{name}, not a lock a writer made: every write fails until it is removed"
            );
        }
        let when = if self.age_seconds < 0.0 {
            format!("lock dated {:.1} s in the future", -self.age_seconds)
        } else {
            format!("locked {:.1} s ago", self.age_seconds)
        };
        let verdict = if self.stale {
            "stale: the next write breaks it"
        } else {
            "a writer is at work"
        };
        format!("{when} ({verdict})")
    }
}

impl FileStatus {
    pub fn of(ws: &Workspace, file: MemoryFile) -> Result<FileStatus, Error> {
        let on_disk = ws
            .exists(file)
            .and_then(|exists| Ok((exists, ws.size_bytes(file)?)));
        // A store refusal is shown on the file's line; anything else fails the command.
        let (exists, size_bytes, sha256) = match (on_disk, ws.read(file)) {
            // Text the store returns is the file's exact bytes.
            (Ok((exists, size)), Ok(text)) => {
                (exists, size, Ok(hex(&Sha256::digest(text.as_bytes()))))
            }
            (Ok((exists, size)), Err(Error::Store { message, .. })) => (exists, size, Err(message)),
            // Something that is not a regular file is there: it exists, with no size.
            (Err(Error::Store { message, .. }), _) => (true, 0, Err(message)),
            (Err(other), _) | (_, Err(other)) => return Err(other),
        };
        // The file may change between the read and the audit: show what the audit says.
        let findings = match &sha256 {
            Ok(_) => ws.audit(file).ok().map(|findings| findings.len()),
            Err(_) => None,
        };
        Ok(FileStatus {
            findings,
            file,
            exists,
            size_bytes,
            soft_cap: ws.soft_cap(file)?,
            hard_cap: ws.hard_cap(file)?,
            sha256,
            lock: Lock::of(ws, file),
        })
    }

    fn over_soft_cap(&self) -> bool {
        self.size_bytes > self.soft_cap
    }

    /// The file's line, its name padded to `width`; `color`: its states that need action
    /// in red (now) or yellow (soon).
    pub fn line(&self, color: bool, width: usize) -> String {
        let state = match (&self.sha256, self.exists) {
            (Err(reason), _) => paint(color, RED, &format!("unreadable: {reason}")),
            (Ok(_), false) => "missing (reads as empty)".to_owned(),
            (Ok(hash), true) => {
                let flag = if self.size_bytes > self.hard_cap {
                    paint(color, RED, "OVER HARD CAP, consolidate")
                } else if self.over_soft_cap() {
                    paint(color, YELLOW, "over soft cap, consolidate soon")
                } else {
                    "ok".to_owned()
                };
                format!("{flag}  sha256 {}", &hash[..16])
            }
        };
        let audit = match self.findings {
            Some(0) | None => String::new(),
            Some(1) => format!(
                "  {}",
                paint(color, RED, "1 AUDIT FINDING (metis-memory audit)")
            ),
            Some(n) => format!(
                "  {}",
                paint(
                    color,
                    RED,
                    &format!("{n} AUDIT FINDINGS (metis-memory audit)")
                )
            ),
        };
        let lock = self
            .lock
            .as_ref()
            .map_or_else(String::new, |lock| format!("  {}", lock.describe()));
        format!(
            "  {:<width$}  {:>5} B  {}  {:>3}% of soft {:>4} B, hard {:>4} B  {state}{audit}{lock}",
            self.file.name(),
            self.size_bytes,
            bar(self.size_bytes, self.hard_cap),
            self.size_bytes * 100 / self.soft_cap,
            self.soft_cap,
            self.hard_cap,
        )
    }

    pub fn json(&self) -> Value {
        let mut value = json!({
            "file": self.file.name(),
            "exists": self.exists,
            "size_bytes": self.size_bytes,
            "soft_cap": self.soft_cap,
            "hard_cap": self.hard_cap,
            "over_soft_cap": self.over_soft_cap(),
            "over_hard_cap": self.size_bytes > self.hard_cap,
        });
        // Both keys always, one of them null: a script reads the same shape either way.
        let (sha256, error) = match &self.sha256 {
            Ok(hash) => (Some(hash.as_str()), None),
            Err(reason) => (None, Some(reason.as_str())),
        };
        value["sha256"] = sha256.into();
        value["error"] = error.into();
        value["audit_findings"] = self.findings.into();
        value["lock"] = self.lock.as_ref().map_or(
            Value::Null,
            |lock| {
                json!({
                    "age_seconds": lock.age_seconds,
                    "stale": lock.stale,
                    "planted": lock.planted.as_ref().map(|(name, what)| json!({ "name": name, "kind": what })),
                })
            },
        );
        value
    }
}

/// A 20-cell gauge of `size` against `hard_cap`, with `|` at the soft cap (half way).
fn bar(size: u64, hard_cap: u64) -> String {
    const CELLS: u64 = 20;
    let filled = (size * CELLS).div_ceil(hard_cap).min(CELLS);
    let mut gauge: String = (0..CELLS)
        .map(|i| if i < filled { '#' } else { '.' })
        .collect();
    gauge.insert(CELLS as usize / 2, '|');
    format!("[{gauge}]")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
