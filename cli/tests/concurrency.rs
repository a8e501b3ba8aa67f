//! CONTRACT §8.4: concurrent writers lose nothing; the lock's busy and stale cases.

use crate::common;

use std::collections::HashMap;
use std::fs;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use common::{EMPTY_SHA256, TestWorkspace, recorder, sha256_hex, store_error};
use metis_memory::faults::{ErrorCode, Fault, FaultHook};
use metis_memory::{Error, MemoryFile};
use serde_json::Value;

const M: MemoryFile = MemoryFile::Memory;
const BIN: &str = env!("CARGO_BIN_EXE_metis-memory");
const LOCK: &str = ".MEMORY.md.lock";
/// The lock's lease (core::lock::LEASE_NANOS).
const LEASE: Duration = Duration::from_secs(3);

/// Plants a lock file as another writer would leave it, taken at `taken`.
fn plant(t: &TestWorkspace, name: &str, taken: SystemTime) {
    fs::create_dir_all(t.metis()).unwrap();
    let path = t.metis().join(name);
    fs::write(&path, "0123456789abcdef\n").unwrap();
    let file = fs::File::options().write(true).open(&path).unwrap();
    file.set_modified(taken).unwrap();
}

/// A lock taken just now, by a writer that is (as far as its lease can tell) alive.
fn live() -> SystemTime {
    SystemTime::now()
}

/// A hook that hands the lock to a new live writer before each of this writer's attempts
/// to take it: a stream of writers each holding it briefly, so the lock is never stale.
fn a_new_holder_before_each_attempt(metis: PathBuf) -> FaultHook {
    let next = AtomicU64::new(1);
    FaultHook::new(move |call| {
        if call.function == "link-at" && call.to == Some(LOCK) {
            let token = next.fetch_add(1, Ordering::SeqCst);
            let fresh = metis.join("next-holder");
            fs::write(&fresh, format!("{token:016x}\n")).unwrap();
            fs::rename(&fresh, metis.join(LOCK)).unwrap();
        }
        None
    })
}

fn ago(age: Duration) -> SystemTime {
    SystemTime::now() - age
}

#[test]
fn concurrent_writer_processes_lose_no_entry() {
    const WRITERS: usize = 4;
    const ADDS: usize = 15;
    let t = TestWorkspace::new();
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let root = t.root().to_owned();
            thread::spawn(move || {
                (0..ADDS)
                    .map(|i| {
                        let tag = format!("writer{w}-entry{i:02}");
                        let out = Command::new(BIN)
                            .arg("--workspace")
                            .arg(&root)
                            .args(["--json", "add", "MEMORY.md", &tag])
                            .output()
                            .unwrap();
                        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
                        (tag, out.status.success(), json)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();

    // Every success names the state it was based on; no two may share one (that would be
    // a lost update), and following them from the empty file must give the final file.
    let mut next: HashMap<String, (String, String)> = HashMap::new();
    let mut busy = 0;
    for writer in writers {
        for (tag, ok, json) in writer.join().unwrap() {
            if !ok {
                assert_eq!(json["error"]["kind"], "busy", "{json}");
                busy += 1;
                continue;
            }
            let before = json["before_hash"].as_str().unwrap().to_owned();
            let after = json["after_hash"].as_str().unwrap().to_owned();
            let previous = next.insert(before.clone(), (tag.clone(), after));
            assert!(
                previous.is_none(),
                "two writes were based on state {before}"
            );
        }
    }
    let successes = next.len();
    let mut hash = EMPTY_SHA256.to_owned();
    let mut order = Vec::new();
    while let Some((tag, after)) = next.remove(&hash) {
        order.push(tag);
        hash = after;
    }
    assert!(next.is_empty(), "writes off the hash chain: {next:?}");
    let final_bytes = t.bytes(M).unwrap();
    assert_eq!(hash, sha256_hex(&final_bytes));
    let lines: Vec<&str> = std::str::from_utf8(&final_bytes).unwrap().lines().collect();
    assert_eq!(lines, order);
    assert_eq!(successes + busy, WRITERS * ADDS);
    // A writer waits up to 5 s for a lock held for milliseconds: none may give up.
    assert_eq!(busy, 0, "writers gave up with busy");
    assert_eq!(
        t.metis_names(),
        ["MEMORY.md"],
        "no lock or temporary file left"
    );
    eprintln!("{WRITERS} writer processes, {successes} adds landed in chain order, {busy} busy");
}

#[test]
fn a_live_lock_makes_a_writer_busy_and_changes_nothing() {
    let t = TestWorkspace::new();
    t.put(M, "kept\n");
    plant(&t, LOCK, live());
    let busy_writer =
        t.ws.clone()
            .with_fault_hook(a_new_holder_before_each_attempt(t.metis()));
    let started = Instant::now();
    let (error, message) = store_error(busy_writer.add_entry(M, "blocked"));
    assert_eq!(error.kind(), "busy");
    assert_eq!(
        message,
        "MEMORY.md is being written by another process; try again"
    );
    // It gave up after waiting its 5 s, not at once.
    assert!(started.elapsed() >= Duration::from_secs(5) - Duration::from_millis(50));
    assert_eq!(t.bytes(M).unwrap(), b"kept\n");
    assert_eq!(t.metis_names(), [LOCK, "MEMORY.md"], "nothing else left");
}

#[test]
fn a_lock_left_by_a_killed_writer_is_recovered_after_its_lease() {
    let t = TestWorkspace::new();
    t.put(M, "kept\n");
    plant(&t, LOCK, SystemTime::now());
    let started = Instant::now();
    t.ws.add_entry(M, "after the lease").unwrap();
    // File timestamps come from a coarse kernel clock that may lag by a tick or two.
    let earliest = LEASE - Duration::from_millis(50);
    assert!(
        started.elapsed() >= earliest,
        "the lock was broken before its lease ran out"
    );
    assert_eq!(t.bytes(M).unwrap(), b"kept\nafter the lease\n");
    assert_eq!(t.metis_names(), ["MEMORY.md"]);
}

#[test]
fn an_expired_lock_is_broken_at_once() {
    let t = TestWorkspace::new();
    // The component is compiled and linked with the hook before the clock starts.
    t.ws.clone().with_fault_hook(recorder().0).read(M).unwrap();
    plant(&t, LOCK, ago(LEASE * 3));
    let (hook, log) = recorder();
    let started = Instant::now();
    t.ws.clone()
        .with_fault_hook(hook)
        .add_entry(M, "x")
        .unwrap();
    let elapsed = started.elapsed();
    assert_eq!(t.metis_names(), ["MEMORY.md"]);
    // One attempt finds the expired lock, the breaker removes it, the next attempt takes
    // the lock: no waiting for a lease that is long gone.
    let attempts = log
        .lock()
        .unwrap()
        .iter()
        .filter(|call| call.function == "link-at" && call.to.as_deref() == Some(LOCK))
        .count();
    assert_eq!(attempts, 2, "attempts to take the lock");
    assert!(elapsed < LEASE / 2, "breaking took {elapsed:?}");
}

// Contention made certain: writer A holds the lock and is held (by the fault hook) just
// before its rename until writer B has tried to take the lock and failed. B must wait for
// A and then write on top of A's write; giving up with `busy`, or writing from the state
// before A's, would both fail here.
#[test]
fn a_writer_that_finds_the_lock_held_waits_for_it() {
    let t = TestWorkspace::new();
    t.put(M, "first\n");
    let (holding_tx, holding_rx) = mpsc::channel::<()>();
    let (tried_tx, tried_rx) = mpsc::channel::<()>();
    let tried_rx = Mutex::new(tried_rx);
    let a = t.ws.clone().with_fault_hook(FaultHook::new(move |call| {
        if call.function != "rename-at" || call.to != Some("MEMORY.md") {
            return None;
        }
        holding_tx.send(()).unwrap();
        // A stalled holder; if B never shows up, trap rather than hang the test.
        let waited = tried_rx
            .lock()
            .unwrap()
            .recv_timeout(Duration::from_secs(60));
        waited.err().map(|_| Fault::Trap)
    }));
    let writer_a = thread::spawn(move || a.add_entry(M, "from A"));
    holding_rx.recv().unwrap();

    let saw_attempt = Mutex::new(false);
    let tried_tx = Mutex::new(Some(tried_tx));
    let b = t.ws.clone().with_fault_hook(FaultHook::new(move |call| {
        let mut saw = saw_attempt.lock().unwrap();
        if *saw {
            // The call after B's first attempt: that attempt has failed, since A still
            // holds the lock. Let A go on.
            if let Some(tx) = tried_tx.lock().unwrap().take() {
                tx.send(()).unwrap();
            }
        }
        *saw |= call.function == "link-at" && call.to == Some(LOCK);
        None
    }));
    let from_b = b.add_entry(M, "from B").expect("B waits for the lock");
    let from_a = writer_a.join().unwrap().expect("A commits");
    assert_eq!(from_b.before_hash, from_a.after_hash, "B wrote on top of A");
    assert_eq!(t.bytes(M).unwrap(), b"first\nfrom A\nfrom B\n");
    assert_eq!(t.metis_names(), ["MEMORY.md"]);
}

#[test]
fn a_break_lock_left_by_a_killed_breaker_is_recovered() {
    let t = TestWorkspace::new();
    plant(&t, LOCK, ago(LEASE * 3));
    plant(&t, ".MEMORY.md.lock.break", ago(LEASE * 3));
    t.ws.add_entry(M, "x").unwrap();
    assert_eq!(t.metis_names(), ["MEMORY.md"]);
}

#[test]
fn a_lock_on_one_file_does_not_block_the_other() {
    let t = TestWorkspace::new();
    plant(&t, LOCK, live());
    // Were USER.md blocked by MEMORY.md's live lock, this would be `busy`.
    t.ws.add_entry(MemoryFile::User, "independent").unwrap();
    // Reads never wait for the lock either.
    assert_eq!(t.ws.read(M).unwrap(), "");
}

// A holder whose lock was taken from it while it stalled (its lease ran out, a breaker
// removed the lock, another writer took it) must not commit, and must not remove the new
// holder's lock when it lets go. The fault hook swaps the lock at the holder's temporary
// file sync, between writing its new bytes and checking that it may commit them.
#[test]
fn a_holder_whose_lock_was_replaced_neither_commits_nor_releases_it() {
    let t = TestWorkspace::new();
    t.put(M, "kept\n");
    let metis = t.metis();
    let swapped = AtomicBool::new(false);
    let hook = FaultHook::new(move |call| {
        if call.function == "sync" && !swapped.swap(true, Ordering::SeqCst) {
            // Renamed over the old lock, so both files exist at once and the new one
            // cannot reuse the old one's inode number. (A lock removed first and then
            // created anew may get the same inode on ext4, and the holder's identity
            // check, by device and inode, cannot tell them apart: the lock issue.)
            fs::write(metis.join("replacement"), "0123456789abcdef\n").unwrap();
            fs::rename(metis.join("replacement"), metis.join(LOCK)).unwrap();
        }
        None
    });
    let (error, _) = store_error(t.ws.clone().with_fault_hook(hook).add_entry(M, "late"));
    assert_eq!(error.kind(), "busy");
    assert_eq!(
        t.bytes(M).unwrap(),
        b"kept\n",
        "the deposed holder did not commit"
    );
    assert_eq!(
        fs::read_to_string(t.metis().join(LOCK)).unwrap(),
        "0123456789abcdef\n",
        "the new holder's lock is still in place"
    );
    assert_eq!(
        t.metis_names(),
        [LOCK, "MEMORY.md"],
        "no temporary file left"
    );
}

// After a trap the host removes the trapped call's own lock and temporary file, found by
// its owner token, and nothing else: here the lock belongs to another, live writer.
#[test]
fn a_trapped_call_leaves_another_writers_lock_alone() {
    let t = TestWorkspace::new();
    t.put(M, "kept\n");
    plant(&t, LOCK, live());
    let before = t.snapshot();
    let trap_first = FaultHook::new(|call| (call.index == 0).then_some(Fault::Trap));
    let outcome = t.ws.clone().with_fault_hook(trap_first).add_entry(M, "x");
    assert!(matches!(outcome, Err(Error::Trap { .. })), "{outcome:?}");
    assert_eq!(
        t.snapshot(),
        before,
        "the other writer's lock is still there"
    );
}

// A crash followed by the clock stepping back leaves a lock dated in the future. It must
// cost at most one lease: a lock dated more than a lease ahead is stale at once, and one
// dated less than that is stale once a waiter has watched it, unchanged, for a lease.
#[test]
fn a_lock_dated_in_the_future_costs_at_most_one_lease() {
    let t = TestWorkspace::new();
    t.ws.read(M).unwrap(); // the component is compiled before the clock starts
    plant(&t, LOCK, SystemTime::now() + Duration::from_secs(3600));
    let started = Instant::now();
    t.ws.add_entry(M, "an hour ahead").unwrap();
    assert!(
        started.elapsed() < LEASE / 2,
        "took {:?}",
        started.elapsed()
    );

    plant(&t, LOCK, SystemTime::now() + LEASE);
    let started = Instant::now();
    t.ws.add_entry(M, "a lease ahead").unwrap();
    let waited = started.elapsed();
    // Watched for a lease, then broken: before the 5 s wait would have given up.
    assert!(
        waited >= LEASE - Duration::from_millis(50),
        "took {waited:?}"
    );
    assert!(waited < Duration::from_secs(5), "took {waited:?}");
    assert_eq!(t.bytes(M).unwrap(), b"an hour ahead\na lease ahead\n");
    assert_eq!(t.metis_names(), ["MEMORY.md"]);
}

// The same for a break lock a dead breaker left dated in the future, in front of a stale
// lock: it may not stop the stale lock from being broken.
#[test]
fn a_break_lock_dated_in_the_future_does_not_block_breaking() {
    let t = TestWorkspace::new();
    plant(&t, LOCK, ago(LEASE * 3));
    plant(
        &t,
        ".MEMORY.md.lock.break",
        SystemTime::now() + Duration::from_secs(3600),
    );
    t.ws.add_entry(M, "x").unwrap();
    assert_eq!(t.metis_names(), ["MEMORY.md"]);
}

// A breaker killed after removing the stale lock but before removing its break lock
// leaves the break lock with no lock in front of it: no waiter ever looks at it, so the
// next writer's clean-up must.
#[test]
fn a_break_lock_left_without_a_lock_is_removed_by_the_next_writer() {
    let t = TestWorkspace::new();
    plant(&t, ".MEMORY.md.lock.break", ago(LEASE));
    t.ws.add_entry(M, "x").unwrap();
    assert_eq!(t.metis_names(), ["MEMORY.md"]);
}

// A lock is told from the next by its owner's token, not its inode number, which ext4
// hands to the next new file at once. Here the lock is rewritten in place (the same inode
// for certain) with another writer's token while the holder syncs: the holder must not
// commit, nor remove the other writer's lock.
#[test]
fn a_holder_whose_lock_file_was_reused_for_another_writer_does_not_commit() {
    let t = TestWorkspace::new();
    t.put(M, "kept\n");
    let metis = t.metis();
    let swapped = AtomicBool::new(false);
    let hook = FaultHook::new(move |call| {
        if call.function == "sync" && !swapped.swap(true, Ordering::SeqCst) {
            let lock = fs::File::options()
                .write(true)
                .truncate(true)
                .open(metis.join(LOCK))
                .unwrap();
            std::io::Write::write_all(&mut &lock, b"0123456789abcdef\n").unwrap();
        }
        None
    });
    let (error, _) = store_error(t.ws.clone().with_fault_hook(hook).add_entry(M, "late"));
    assert_eq!(error.kind(), "busy");
    assert_eq!(t.bytes(M).unwrap(), b"kept\n");
    assert_eq!(
        fs::read_to_string(t.metis().join(LOCK)).unwrap(),
        "0123456789abcdef\n"
    );
}

// A holder that stalls after its commit check, past its lease, finds its temporary file
// removed by the writer who broke its lock: nothing was written, and the truthful answer
// is `busy` (try again), not an I/O error.
#[test]
fn a_holder_whose_temporary_file_was_cleaned_up_reports_busy() {
    let t = TestWorkspace::new();
    t.put(M, "kept\n");
    let metis = t.metis();
    let hook = FaultHook::new(move |call| {
        if call.function == "rename-at" {
            fs::remove_file(metis.join(call.path.unwrap())).unwrap();
        }
        None
    });
    let (error, _) = store_error(t.ws.clone().with_fault_hook(hook).add_entry(M, "late"));
    assert_eq!(error.kind(), "busy");
    assert_eq!(t.bytes(M).unwrap(), b"kept\n");
    assert_eq!(t.metis_names(), ["MEMORY.md"]);
}

// A writer that stalls between creating its pending lock file and linking it, past a
// lease, finds the file removed as stale by another writer's clean-up: it tries again
// rather than failing with an I/O error.
#[test]
fn a_writer_whose_pending_lock_was_cleaned_up_tries_again() {
    let t = TestWorkspace::new();
    t.put(M, "kept\n");
    let metis = t.metis();
    let removed = AtomicBool::new(false);
    let hook = FaultHook::new(move |call| {
        if call.function == "link-at" && !removed.swap(true, Ordering::SeqCst) {
            fs::remove_file(metis.join(call.path.unwrap())).unwrap();
        }
        None
    });
    t.ws.clone()
        .with_fault_hook(hook)
        .add_entry(M, "second try")
        .unwrap();
    assert_eq!(t.bytes(M).unwrap(), b"kept\nsecond try\n");
    assert_eq!(t.metis_names(), ["MEMORY.md"]);
}

/// A hook that refuses every hard link with `code`, as vfat, exFAT, SMB mounts and VM
/// shared folders do, and otherwise lets calls run (and passes them to `then`).
fn no_hard_links(
    code: ErrorCode,
    then: impl Fn(&metis_memory::faults::WasiCall<'_>) -> Option<Fault> + Send + Sync + 'static,
) -> FaultHook {
    FaultHook::new(move |call| match call.function {
        "link-at" => Some(Fault::Fail(code)),
        _ => then(call),
    })
}

// Where hard links are refused (EPERM, EXDEV, EOPNOTSUPP, EMLINK) the lock is created
// directly: writes still work and leave nothing behind.
#[test]
fn writes_work_where_hard_links_are_refused() {
    let codes = [
        ErrorCode::NotPermitted,
        ErrorCode::CrossDevice,
        ErrorCode::Unsupported,
        ErrorCode::TooManyLinks,
    ];
    for code in codes {
        let t = TestWorkspace::new();
        let ws = t.ws.clone().with_fault_hook(no_hard_links(code, |_| None));
        ws.add_entry(M, "one").unwrap();
        ws.add_entry(M, "two").unwrap();
        assert_eq!(t.bytes(M).unwrap(), b"one\ntwo\n", "{code:?}");
        assert_eq!(t.metis_names(), ["MEMORY.md"], "{code:?}");
    }
}

// Without hard links the lock still excludes: writer A is held before its rename until
// writer B has found the lock taken; B must wait and write on top of A's write.
#[test]
fn without_hard_links_a_contended_writer_still_waits() {
    let t = TestWorkspace::new();
    t.put(M, "first\n");
    let (holding_tx, holding_rx) = mpsc::channel::<()>();
    let (tried_tx, tried_rx) = mpsc::channel::<()>();
    let tried_rx = Mutex::new(tried_rx);
    let a =
        t.ws.clone()
            .with_fault_hook(no_hard_links(ErrorCode::NotPermitted, move |call| {
                if call.function != "rename-at" || call.to != Some("MEMORY.md") {
                    return None;
                }
                holding_tx.send(()).unwrap();
                let waited = tried_rx
                    .lock()
                    .unwrap()
                    .recv_timeout(Duration::from_secs(60));
                waited.err().map(|_| Fault::Trap)
            }));
    let writer_a = thread::spawn(move || a.add_entry(M, "from A"));
    holding_rx.recv().unwrap();
    let tried_tx = Mutex::new(Some(tried_tx));
    let b =
        t.ws.clone()
            .with_fault_hook(no_hard_links(ErrorCode::NotPermitted, move |call| {
                // B looks at the lock's owner only after failing to create the lock itself.
                if call.function == "stat-at"
                    && call.path == Some(LOCK)
                    && let Some(tx) = tried_tx.lock().unwrap().take()
                {
                    tx.send(()).unwrap();
                }
                None
            }));
    let from_b = b.add_entry(M, "from B").expect("B waits for the lock");
    let from_a = writer_a.join().unwrap().expect("A commits");
    assert_eq!(from_b.before_hash, from_a.after_hash, "B wrote on top of A");
    assert_eq!(t.bytes(M).unwrap(), b"first\nfrom A\nfrom B\n");
    assert_eq!(t.metis_names(), ["MEMORY.md"]);
}

/// Puts a fresh lock owned by `token` in place, as a new holder taking it would: written
/// under another name and renamed over whatever stands there.
fn hand_lock_to(metis: &std::path::Path, token: &str) {
    let fresh = metis.join("new-holder");
    fs::write(&fresh, token).unwrap();
    fs::rename(&fresh, metis.join(LOCK)).unwrap();
}

const NEXT_HOLDER: &str = "00000000000000cc\n";

// Holder A checks at release that the lock is its own, then stalls; meanwhile its lease
// runs out, the lock is broken and B takes it (the hook does that at the moment A acts
// on the lock). A's late release must not remove B's live lock.
#[test]
fn a_stalled_release_does_not_remove_the_next_holders_lock() {
    let t = TestWorkspace::new();
    t.put(M, "kept\n");
    let metis = t.metis();
    let (committed, handed) = (AtomicBool::new(false), AtomicBool::new(false));
    let hook = FaultHook::new(move |call| {
        if call.function == "rename-at" && call.to == Some("MEMORY.md") {
            committed.store(true, Ordering::SeqCst);
        } else if committed.load(Ordering::SeqCst)
            && matches!(call.function, "rename-at" | "unlink-file-at")
            && call.path == Some(LOCK)
            && !handed.swap(true, Ordering::SeqCst)
        {
            hand_lock_to(&metis, NEXT_HOLDER);
        }
        None
    });
    t.ws.clone()
        .with_fault_hook(hook)
        .add_entry(M, "mine")
        .unwrap();
    assert_eq!(t.bytes(M).unwrap(), b"kept\nmine\n");
    assert_eq!(
        fs::read_to_string(t.metis().join(LOCK)).unwrap(),
        NEXT_HOLDER,
        "the next holder's lock is still in place"
    );
    assert_eq!(t.metis_names(), [LOCK, "MEMORY.md"], "nothing else left");
}

// A breaker re-checks under the break lock that the lock is the stale one, then stalls;
// meanwhile the stale lock is gone and C holds a fresh one (the hook does that at the
// moment the breaker acts on the lock). The breaker must not remove C's lock. (C never
// finishes here, so after watching C's lock for a lease the writer breaks it in turn.)
#[test]
fn a_stalled_breaker_does_not_remove_a_fresh_lock() {
    let t = TestWorkspace::new();
    plant(&t, LOCK, ago(LEASE * 3));
    let metis = t.metis();
    let handed = AtomicBool::new(false);
    let survived = Arc::new(Mutex::new(None));
    let seen = Arc::clone(&survived);
    let hook = FaultHook::new(move |call| {
        if matches!(call.function, "rename-at" | "unlink-file-at")
            && call.path == Some(LOCK)
            && !handed.swap(true, Ordering::SeqCst)
        {
            hand_lock_to(&metis, NEXT_HOLDER);
        }
        if call.function == "unlink-file-at"
            && call.path == Some(".MEMORY.md.lock.break")
            && seen.lock().unwrap().is_none()
        {
            let lock = fs::read_to_string(metis.join(LOCK)).ok();
            *seen.lock().unwrap() = Some(lock.as_deref() == Some(NEXT_HOLDER));
        }
        None
    });
    t.ws.clone()
        .with_fault_hook(hook)
        .add_entry(M, "x")
        .unwrap();
    assert_eq!(
        *survived.lock().unwrap(),
        Some(true),
        "C's lock was in place when the breaker let go of the break lock"
    );
    assert_eq!(t.metis_names(), ["MEMORY.md"]);
}

// A lone writer whose disk is slow (the fault hook stands in for a 2.5 s fsync, past the
// point where a holder may still commit) is told the truth: its own write was too slow,
// not "being written by another process"; and it does not leave its lock behind.
#[test]
fn a_lone_slow_writer_is_told_the_truth_and_leaves_no_lock() {
    let t = TestWorkspace::new();
    t.put(M, "kept\n");
    let slowed = AtomicBool::new(false);
    let slow_sync = FaultHook::new(move |call| {
        if call.function == "sync" && !slowed.swap(true, Ordering::SeqCst) {
            thread::sleep(Duration::from_millis(2500));
        }
        None
    });
    let (error, message) =
        store_error(t.ws.clone().with_fault_hook(slow_sync).add_entry(M, "slow"));
    assert_eq!(error.kind(), "io", "{message}");
    assert!(
        message.contains("took longer than its lock's lease"),
        "{message}"
    );
    assert_eq!(t.bytes(M).unwrap(), b"kept\n");
    assert_eq!(t.metis_names(), ["MEMORY.md"], "no lock left behind");
}

// The window that used to remain: a holder that passes its commit check and then stalls
// past its lease could rename its write in after the next holder had read the file, and
// the next holder's write then replaced it (both successes from the same state). The next
// holder now clears out leftovers before it reads, so the fault hook lands A's stalled
// rename at the latest moment it still can (as B's clean-up starts): B must then read,
// and keep, A's write.
#[test]
fn a_holder_stalled_before_its_rename_does_not_lose_its_write() {
    let t = TestWorkspace::new();
    t.put(M, "first\n");
    let (holding_tx, holding_rx) = mpsc::channel::<()>();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let (renamed_tx, renamed_rx) = mpsc::channel::<()>();
    let (go_rx, renamed_tx) = (Mutex::new(go_rx), Mutex::new(Some(renamed_tx)));
    let a_renamed = AtomicBool::new(false);
    let a = t.ws.clone().with_fault_hook(FaultHook::new(move |call| {
        if call.function == "rename-at" && call.to == Some("MEMORY.md") {
            holding_tx.send(()).unwrap();
            let go = go_rx.lock().unwrap().recv_timeout(Duration::from_secs(60));
            a_renamed.store(true, Ordering::SeqCst);
            return go.err().map(|_| Fault::Trap);
        }
        // The call after the rename: the rename has landed.
        if a_renamed.load(Ordering::SeqCst)
            && let Some(tx) = renamed_tx.lock().unwrap().take()
        {
            tx.send(()).unwrap();
        }
        None
    }));
    let writer_a = thread::spawn(move || a.add_entry(M, "from A"));
    holding_rx.recv().unwrap();

    let (go_tx, renamed_rx) = (Mutex::new(Some(go_tx)), Mutex::new(renamed_rx));
    let b = t.ws.clone().with_fault_hook(FaultHook::new(move |call| {
        // B holds the lock (A's, watched for a lease, was broken) and starts its clean-up:
        // the last moment A's stalled rename can land. Let it land now.
        if call.function == "read-directory"
            && let Some(go) = go_tx.lock().unwrap().take()
        {
            go.send(()).unwrap();
            let landed = renamed_rx
                .lock()
                .unwrap()
                .recv_timeout(Duration::from_secs(60));
            return landed.err().map(|_| Fault::Trap);
        }
        None
    }));
    let from_b = b.add_entry(M, "from B").unwrap();
    let from_a = writer_a.join().unwrap().unwrap();
    assert_eq!(from_b.before_hash, from_a.after_hash, "B wrote on top of A");
    assert_eq!(t.bytes(M).unwrap(), b"first\nfrom A\nfrom B\n");
    assert_eq!(t.metis_names(), ["MEMORY.md"]);
}
