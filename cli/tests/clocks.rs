//! Clocks the caller does not control: the lock's ages are judged on
//! the filesystem's clock alone, so a caller whose clock is off from the file server's
//! (an SMB mount or a VM shared folder stamps times on the server) neither fails its own
//! writes nor breaks another writer's live lock.
//!
//! Each process's clock is shifted by an `LD_PRELOAD` shim of `clock_gettime`, built here
//! with the system's C compiler: wasmtime-wasi's `wall-clock` is Rust's `SystemTime::now`,
//! which is `clock_gettime(CLOCK_REALTIME)` (never `gettimeofday` or `time`), while the
//! files' times come from the kernel, which the shim does not touch. So a shifted process
//! sees exactly what a caller sees on a file server whose clock is off from its own.

use crate::common;

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use common::{EMPTY_SHA256, TestWorkspace, sha256_hex, store_error};
use metis_memory::MemoryFile;
use metis_memory::faults::{ErrorCode, Fault, FaultHook};
use serde_json::Value;

const M: MemoryFile = MemoryFile::Memory;
const BIN: &str = env!("CARGO_BIN_EXE_metis-memory");
const LOCK: &str = ".MEMORY.md.lock";
/// The lock's lease (core::lock::LEASE_NANOS).
const LEASE: Duration = Duration::from_secs(3);
/// How far the shim shifts a process's wall clock, in nanoseconds (signed).
const SHIFT_VAR: &str = "METIS_TEST_CLOCK_SHIFT_NS";
const NANOS: i64 = 1_000_000_000;

const SHIM_C: &str = r#"
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

/* The shift, read once from the environment. */
static long long shift_ns(void) {
    static int read;
    static long long ns;
    if (!read) {
        const char *text = getenv("METIS_TEST_CLOCK_SHIFT_NS");
        ns = text ? atoll(text) : 0;
        read = 1;
    }
    return ns;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
    static int (*real)(clockid_t, struct timespec *);
    if (!real) {
        real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
    }
    int result = real(id, ts);
    if (result == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) {
        long long ns = shift_ns();
        ts->tv_sec += ns / 1000000000LL;
        ts->tv_nsec += ns % 1000000000LL;
        if (ts->tv_nsec >= 1000000000L) {
            ts->tv_nsec -= 1000000000L;
            ts->tv_sec += 1;
        } else if (ts->tv_nsec < 0) {
            ts->tv_nsec += 1000000000L;
            ts->tv_sec -= 1;
        }
    }
    return result;
}
"#;

/// The shim, built once per test run into a directory kept for the run; `None` (with a
/// message) where there is no C compiler or the shim does not shift this binary's clock.
fn shim() -> Option<&'static Path> {
    static SHIM: OnceLock<Option<PathBuf>> = OnceLock::new();
    SHIM.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        let source = dir.join("shift_clock.c");
        let lib = dir.join("libshift_clock.so");
        fs::write(&source, SHIM_C).unwrap();
        let built = Command::new("cc")
            .args(["-shared", "-fPIC", "-O2", "-o"])
            .arg(&lib)
            .arg(&source)
            .arg("-ldl")
            .output();
        match built {
            Ok(out) if out.status.success() => {}
            Ok(out) => {
                eprintln!(
                    "SKIPPED: cc could not build the clock shim: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                return None;
            }
            Err(error) => {
                eprintln!("SKIPPED: no C compiler (cc: {error}), so no clock shim");
                return None;
            }
        }
        check_the_shim_shifts_the_cli(&lib);
        Some(lib)
    })
    .as_deref()
}

/// The shim must shift what the CLI's process reads as the time (else every test here
/// would pass whatever the lock does): `status` gives a lock's age from the process's
/// clock, so a lock taken just now looks 60 s old to a process 60 s ahead.
fn check_the_shim_shifts_the_cli(lib: &Path) {
    let t = TestWorkspace::new();
    t.put(M, "x\n");
    fs::write(t.metis().join(LOCK), "0123456789abcdef\n").unwrap();
    let out = Command::new(BIN)
        .env("LD_PRELOAD", lib)
        .env(SHIFT_VAR, (60 * NANOS).to_string())
        .arg("--workspace")
        .arg(t.root())
        .args(["--json", "status"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let age = find_key(&json, "age_seconds").and_then(Value::as_f64);
    assert!(
        age.is_some_and(|age| (59.0..70.0).contains(&age)),
        "the shim does not shift the CLI's clock (status says the lock is {age:?} s old): {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

fn find_key<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    match value {
        Value::Object(map) => map
            .get(key)
            .or_else(|| map.values().find_map(|v| find_key(v, key))),
        Value::Array(items) => items.iter().find_map(|v| find_key(v, key)),
        _ => None,
    }
}

/// One `metis-memory add` process whose clock is `shift_ns` off the kernel's.
fn add(shim: &Path, root: &Path, shift_ns: i64, entry: &str) -> Output {
    Command::new(BIN)
        .env("LD_PRELOAD", shim)
        .env(SHIFT_VAR, shift_ns.to_string())
        .arg("--workspace")
        .arg(root)
        .args(["--json", "add", "MEMORY.md", entry])
        .output()
        .unwrap()
}

/// What an `add` process answered: its JSON, and the error's message if it failed.
fn outcome(out: &Output) -> (Value, Option<String>) {
    let json: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "not JSON: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let failure = (!out.status.success()).then(|| json["error"].to_string());
    (json, failure)
}

fn seconds(shift_ns: i64) -> f64 {
    shift_ns as f64 / NANOS as f64
}

// A lone writer whose clock is ahead of (or behind) the filesystem's: nothing else
// writes, so every write must succeed. On the code that judged the lease against the
// caller's clock, a writer 2.5 s ahead failed every write ("took longer than its lock's
// lease").
#[test]
fn a_lone_writer_off_the_filesystems_clock_writes() {
    let Some(shim) = shim() else { return };
    const ADDS: usize = 3;
    let shifts = [2_500_000_000, -2_500_000_000, 30 * NANOS, -30 * NANOS];
    let runs: Vec<_> = shifts
        .into_iter()
        .map(|shift| {
            thread::spawn(move || {
                let t = TestWorkspace::new();
                let failures: Vec<String> = (0..ADDS)
                    .filter_map(|i| outcome(&add(shim, t.root(), shift, &format!("entry {i}"))).1)
                    .collect();
                (shift, failures, t.bytes(M).unwrap_or_default())
            })
        })
        .collect();
    let mut failed = Vec::new();
    for run in runs {
        let (shift, failures, bytes) = run.join().unwrap();
        eprintln!(
            "clock {:+} s: {} of {ADDS} writes failed",
            seconds(shift),
            failures.len()
        );
        if failures.is_empty() {
            assert_eq!(bytes, b"entry 0\nentry 1\nentry 2\n", "{shift}");
        }
        failed.extend(
            failures
                .into_iter()
                .map(|f| format!("{:+} s: {f}", seconds(shift))),
        );
    }
    assert!(failed.is_empty(), "writes failed: {failed:#?}");
}

// Writers whose clocks are 4 s ahead of and behind the filesystem's, all on one file at
// once: none may fail (each waits up to 5 s for a lock held for milliseconds) and none
// may be lost. On the old code the writers ahead failed every write with a lease error,
// and those behind broke each other's live locks (their date was more than a lease ahead
// of the breaker's clock) and got `busy`.
#[test]
fn writers_off_the_filesystems_clock_lose_nothing_and_break_no_live_lock() {
    let Some(shim) = shim() else { return };
    const ADDS: usize = 10;
    let shifts = [
        -4 * NANOS,
        -4 * NANOS,
        -4 * NANOS,
        4 * NANOS,
        4 * NANOS,
        4 * NANOS,
    ];
    let t = TestWorkspace::new();
    let writers: Vec<_> = shifts
        .into_iter()
        .enumerate()
        .map(|(w, shift)| {
            let root = t.root().to_owned();
            thread::spawn(move || {
                (0..ADDS)
                    .map(|i| {
                        let tag = format!("writer{w}-entry{i:02}");
                        let (json, failure) = outcome(&add(shim, &root, shift, &tag));
                        (shift, tag, json, failure)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();

    // Every success names the state it was based on; no two may share one, and following
    // them from the empty file must give the final file, line for line.
    let mut next: HashMap<String, (String, String)> = HashMap::new();
    let mut failures: HashMap<String, Vec<String>> = HashMap::new();
    for writer in writers {
        for (shift, tag, json, failure) in writer.join().unwrap() {
            if let Some(failure) = failure {
                let kind = json["error"]["kind"].as_str().unwrap_or("?").to_owned();
                failures
                    .entry(format!("{kind} ({:+} s)", seconds(shift)))
                    .or_default()
                    .push(failure);
                continue;
            }
            let before = json["before_hash"].as_str().unwrap().to_owned();
            let after = json["after_hash"].as_str().unwrap().to_owned();
            let previous = next.insert(before.clone(), (tag, after));
            assert!(
                previous.is_none(),
                "two writes were based on state {before}"
            );
        }
    }
    let landed = next.len();
    let mut hash = EMPTY_SHA256.to_owned();
    let mut order = Vec::new();
    while let Some((tag, after)) = next.remove(&hash) {
        order.push(tag);
        hash = after;
    }
    assert!(next.is_empty(), "acknowledged writes lost: {next:?}");
    let bytes = t.bytes(M).unwrap_or_default();
    assert_eq!(hash, sha256_hex(&bytes));
    let lines: Vec<&str> = std::str::from_utf8(&bytes).unwrap().lines().collect();
    assert_eq!(
        lines, order,
        "the file is the acknowledged writes, in order"
    );
    let counts: Vec<String> = failures
        .iter()
        .map(|(kind, all)| format!("{} {kind}", all.len()))
        .collect();
    eprintln!(
        "{} writers at ±4 s: {landed} of {} writes landed, none lost; failed: {counts:?}",
        shifts.len(),
        shifts.len() * ADDS
    );
    assert!(failures.is_empty(), "writes failed: {failures:#?}");
    assert_eq!(
        t.metis_names(),
        ["MEMORY.md"],
        "no lock or temporary file left"
    );
}

// A lock taken just now by the filesystem's clock is live for a lease, whatever the
// waiter's clock says: a waiter may take it over only once it has watched it unchanged
// for a lease (its holder died), never at once. On the old code a waiter 4 s or more
// ahead took it for expired, and one 4 s or more behind for dated in the future, and
// broke it at once.
#[test]
fn a_live_lock_is_not_broken_by_a_waiter_off_the_filesystems_clock() {
    let Some(shim) = shim() else { return };
    let shifts = [4 * NANOS, 30 * NANOS, 3600 * NANOS, -4 * NANOS, -30 * NANOS];
    let runs: Vec<_> = shifts
        .into_iter()
        .map(|shift| {
            thread::spawn(move || {
                let t = TestWorkspace::new();
                t.put(M, "kept\n");
                // Dated by the filesystem: a writer that took the lock at this moment.
                fs::write(t.metis().join(LOCK), "0123456789abcdef\n").unwrap();
                let started = Instant::now();
                let out = add(shim, t.root(), shift, "after the holder");
                let waited = started.elapsed();
                let (_, failure) = outcome(&out);
                if failure.is_none() {
                    assert_eq!(t.bytes(M).unwrap(), b"kept\nafter the holder\n");
                }
                (shift, waited, failure)
            })
        })
        .collect();
    let (mut early, mut failed) = (Vec::new(), Vec::new());
    for run in runs {
        let (shift, waited, failure) = run.join().unwrap();
        eprintln!(
            "clock {:+} s: went past the live lock after {waited:.2?}: {}",
            seconds(shift),
            failure.as_deref().unwrap_or("written")
        );
        // File times come from a coarse kernel clock that may lag by a tick or two.
        if waited < LEASE - Duration::from_millis(50) {
            early.push((seconds(shift), waited));
        }
        failed.extend(failure.map(|f| (seconds(shift), f)));
    }
    assert!(
        early.is_empty(),
        "live locks broken before their lease: {early:?}"
    );
    assert!(failed.is_empty(), "writes failed: {failed:#?}");
}

// A writer stalled for 2.1 s between writing its pending lock file and linking it into
// place (a stopped process, a slow file server) holds a lock whose lease starts when it
// appeared, not when the pending file was written. Its write is well inside that lease
// and must succeed; and other writers, judging the lock by its date, must see it dated
// when it appeared (by the pending file's date, only 0.9 s of its lease would be left).
// The old code counted the lease from the pending file's date, failed the write with
// "took longer than its lock's lease (a slow disk?)", and left the lock dated 2.1 s early.
#[test]
fn a_writer_delayed_before_it_links_its_lock_still_writes() {
    let t = TestWorkspace::new();
    t.put(M, "kept\n");
    t.ws.read(M).unwrap(); // the component is compiled before anything is timed
    let metis = t.metis();
    let linked = Mutex::new(None::<SystemTime>);
    let dated = Arc::new(Mutex::new(None));
    let seen = Arc::clone(&dated);
    let hook = FaultHook::new(move |call| {
        let mut linked = linked.lock().unwrap();
        if call.function == "link-at" && call.to == Some(LOCK) && linked.is_none() {
            thread::sleep(Duration::from_millis(2100));
            *linked = Some(SystemTime::now());
        } else if let Some(at) = *linked
            && call.function == "open-at"
            && seen.lock().unwrap().is_none()
        {
            // The holder's first opening after taking the lock (its listing of
            // leftovers): how early is the lock dated, against when it was linked?
            let modified = fs::metadata(metis.join(LOCK)).unwrap().modified().unwrap();
            *seen.lock().unwrap() = Some(at.duration_since(modified).unwrap_or_default());
        }
        None
    });
    let written = t.ws.clone().with_fault_hook(hook).add_entry(M, "late link");
    let early = dated.lock().unwrap().take();
    eprintln!("delayed link: {written:?}; the lock was dated {early:?} before it appeared");
    assert!(written.is_ok(), "{written:?}");
    assert_eq!(t.bytes(M).unwrap(), b"kept\nlate link\n");
    assert_eq!(t.metis_names(), ["MEMORY.md"]);
    let early = early.expect("the lock was looked at");
    assert!(
        early < Duration::from_millis(500),
        "the lock was dated {early:?} before it appeared"
    );
}

// A lock placed late is dated afresh by writing its owner text again; if that write
// fails, the holder does not know when its lease started, so it gives the lock back at
// once and says so, rather than leave a lock that blocks every writer for a lease.
#[test]
fn a_lock_that_cannot_be_dated_afresh_is_given_back() {
    let t = TestWorkspace::new();
    t.put(M, "kept\n");
    let linked = AtomicBool::new(false);
    let hook = FaultHook::new(move |call| {
        if call.function == "link-at" && call.to == Some(LOCK) {
            // Past core::lock::REDATE_AFTER_NANOS (0.1 s): the lock is to be dated afresh.
            thread::sleep(Duration::from_millis(150));
            linked.store(true, Ordering::SeqCst);
        } else if call.function == "write" && linked.swap(false, Ordering::SeqCst) {
            return Some(Fault::Fail(ErrorCode::Io));
        }
        None
    });
    let (error, message) = store_error(t.ws.clone().with_fault_hook(hook).add_entry(M, "x"));
    assert_eq!(error.kind(), "io", "{message}");
    assert!(
        message.contains("cannot take the write lock .metis/.MEMORY.md.lock"),
        "{message}"
    );
    assert_eq!(t.bytes(M).unwrap(), b"kept\n");
    assert_eq!(t.metis_names(), ["MEMORY.md"], "no lock left behind");
}
