//! Crash safety: a write interrupted at any point, by a trap or by SIGKILL, leaves the
//! file holding exactly the old bytes or exactly the new ones, and blocks no later write.

mod common;

use std::fs;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use common::{Recorded, TestWorkspace, age_leftovers, recorder, sha256_hex};
use libtest_mimic::{Arguments, Trial};
use metis_memory::faults::{ErrorCode, Fault, FaultHook};
use metis_memory::{Error, Limits, MemoryFile, Workspace};

const M: MemoryFile = MemoryFile::Memory;

fn with_fuel(t: &TestWorkspace, fuel: u64) -> metis_memory::Workspace {
    t.ws.clone().with_limits(Limits {
        fuel,
        ..Limits::default()
    })
}

// Interruption at every step: the same write under fuel budgets from 1 to what it needs,
// each trapping at a different point of the guest's work.
fn a_write_trapped_at_any_point_leaves_old_or_new_bytes_and_blocks_nothing() {
    const OLD: &[u8] = b"old line one\nold line two\n";
    const NEW: &[u8] = b"old line one\nold line two\nnew entry\n";
    let t = TestWorkspace::new();
    let attempt = |fuel: u64| {
        t.put(M, OLD);
        with_fuel(&t, fuel).add_entry(M, "new entry")
    };
    // The least fuel the whole write needs, by bisection.
    let (mut low, mut high) = (1u64, Limits::default().fuel);
    assert!(attempt(high).is_ok());
    while low < high {
        let mid = low + (high - low) / 2;
        if attempt(mid).is_ok() {
            high = mid
        } else {
            low = mid + 1
        }
    }
    let needed = low;

    const RUNS: u64 = 600;
    let budgets: Vec<u64> = if needed <= RUNS {
        (1..=needed).collect()
    } else {
        (1..=RUNS).map(|i| i * needed / RUNS).collect()
    };
    let (mut trapped, mut new_after_trap) = (0, 0);
    let (mut untraced, mut untraced_but_written) = (0, 0);
    for &fuel in &budgets {
        let outcome = attempt(fuel);
        let bytes = t.bytes(M).unwrap();
        match outcome {
            Ok(result) => {
                assert_eq!(bytes, NEW, "fuel {fuel}");
                assert_eq!(result.after_hash, sha256_hex(NEW));
            }
            Err(Error::Trap { written, .. }) => {
                trapped += 1;
                assert!(
                    bytes == OLD || bytes == NEW,
                    "fuel {fuel}: torn file {bytes:?}"
                );
                new_after_trap += usize::from(bytes == NEW);
                // What the trap says of the write is what is on disk, when it says.
                if let Some(written) = written {
                    assert_eq!(written, bytes == NEW, "fuel {fuel}: written={written}");
                } else {
                    untraced += 1;
                    untraced_but_written += usize::from(bytes == NEW);
                }
            }
            Err(other) => panic!("fuel {fuel}: unexpected {other:?}"),
        }
        // Nothing is left behind (no lock, no temporary file), so the next write on a
        // fresh instance goes through.
        assert_eq!(t.metis_names(), ["MEMORY.md"], "fuel {fuel}");
        t.ws.add_entry(M, "next").unwrap();
    }
    eprintln!(
        "a write needs {needed} fuel; {} budgets from 1 to {needed}: {trapped} trapped \
         ({new_after_trap} of them after the rename), every file old or new; the trap said \
         whether it was written for all but {untraced} ({untraced_but_written} of those after \
         the lock's release)",
        budgets.len()
    );
}

// Interruption between any two effects on disk. Fuel runs out only inside the guest's
// own code, never inside a host call, so the fuel sweep above cannot stop a write between,
// say, a truncate and the write that follows it. Here each kind of write runs once per
// filesystem call it makes, with that call trapped (the process is gone) or failed with an
// I/O error instead of running (the disk said no), and every outcome is checked.
fn a_write_interrupted_at_every_filesystem_call_leaves_old_or_new_bytes() {
    const OLD: &[u8] = b"old line one\nold line two\n";
    type Run = fn(&Workspace) -> Result<(), Error>;
    let writes: [(&str, Run, &[u8]); 4] = [
        (
            "add",
            |ws| ws.add_entry(M, "new entry").map(drop),
            b"old line one\nold line two\nnew entry\n",
        ),
        (
            "replace that shrinks",
            |ws| ws.replace(M, "old line two\n", "").map(drop),
            b"old line one\n",
        ),
        (
            "consolidate",
            |ws| ws.consolidate(M, "consolidated\n").map(drop),
            b"consolidated\n",
        ),
        (
            "memory_add tool",
            |ws| {
                let input = r#"{"file":"MEMORY.md","entry":"from a tool"}"#;
                ws.call_tool("memory_add", input).map(drop)
            },
            b"old line one\nold line two\nfrom a tool\n",
        ),
    ];
    for (name, run, new) in writes {
        sweep(name, OLD, new, run);
    }
}

fn sweep(name: &str, old: &[u8], new: &[u8], run: fn(&Workspace) -> Result<(), Error>) {
    let t = TestWorkspace::new();
    t.put(M, old);
    let (hook, log) = recorder();
    run(&t.ws.clone().with_fault_hook(hook)).unwrap();
    assert_eq!(t.bytes(M).unwrap(), new, "{name}");
    let calls: Vec<Recorded> = log.lock().unwrap().clone();
    let (synced, rename) = check_commit_order(name, &calls);

    let (mut trapped, mut failed, mut new_after_trap, mut tolerated) = (0, 0, 0, 0);
    let mut unsynced = 0;
    for (index, call) in calls.iter().enumerate() {
        let infallible = call.function.starts_with("drop-");
        let faults: &[Fault] = if infallible {
            &[Fault::Trap]
        } else {
            &[Fault::Trap, Fault::Fail(ErrorCode::Io)]
        };
        // The only failures a write may shrug off: listing and removing leftovers (a
        // pending lock file, stale files; the listing opens `.` under the preopen first),
        // and everything after the rename that made it visible (the directory sync, the
        // release of the lock).
        let may_tolerate = index > rename
            || matches!(call.function, "read-directory" | "read-directory-entry")
            || (call.function == "open-at" && call.path.as_deref() == Some("."))
            || (call.function == "unlink-file-at"
                && call
                    .path
                    .as_deref()
                    .is_some_and(|p| p.starts_with(".MEMORY.md.lock.")));
        // The commit check (reading the lock's owner, between the temporary file's sync
        // and the rename) failing means "the lock may not be ours": busy, not I/O. The
        // look at the file itself, that nothing outside the lock changed it, is I/O.
        let commit_check =
            synced < index && index < rename && call.path.as_deref() != Some("MEMORY.md");
        for &fault in faults {
            let at = format!(
                "{name}: {fault:?} at call {index} ({} {:?})",
                call.function, call.path
            );
            t.put(M, old);
            let index = index as u64;
            let hook = FaultHook::new(move |c| (c.index == index).then_some(fault));
            let outcome = run(&t.ws.clone().with_fault_hook(hook));
            let bytes = t.bytes(M).unwrap();
            match (fault, &outcome) {
                (Fault::Fail(_), Ok(())) => {
                    assert!(may_tolerate, "{at}: a failure was ignored");
                    assert_eq!(bytes, new, "{at}");
                    tolerated += 1;
                }
                (Fault::Trap, Err(Error::Trap { written, .. })) => {
                    trapped += 1;
                    assert!(bytes == old || bytes == new, "{at}: torn file {bytes:?}");
                    new_after_trap += usize::from(bytes == new);
                    // Every trap at a host call after the rename says the write was made,
                    // so a caller never retries it into a second copy; one that says
                    // nothing was written is right.
                    if bytes == new {
                        assert_eq!(*written, Some(true), "{at}: a landed write not reported");
                    }
                    if *written == Some(false) {
                        assert_eq!(bytes, old, "{at}");
                    }
                }
                // Failing the directory's sync after the rename: the write was made, and
                // the caller is told it is not durable, never that it succeeded.
                (Fault::Fail(_), Err(error)) if is_unsynced(error) => {
                    assert!(index as usize > rename, "{at}: unsynced before the rename");
                    assert_eq!(bytes, new, "{at}: an unsynced write is in place");
                    unsynced += 1;
                }
                (Fault::Fail(_), Err(error @ (Error::Store { .. } | Error::Tool(_)))) => {
                    failed += 1;
                    assert!(!may_tolerate, "{at}: a failure it may ignore failed it");
                    assert_eq!(bytes, old, "{at}: a refused write changed the file");
                    let expected = if commit_check {
                        "MEMORY.md is being written by another process"
                    } else {
                        "MEMORY.md: I/O error: "
                    };
                    let message = error.to_string();
                    assert!(message.starts_with(expected), "{at}: {message}");
                }
                _ => panic!("{at}: unexpected {outcome:?}"),
            }
            // A trapped call is cleaned up by the host, a failed one by the guest, except
            // for what the failed call itself was to remove (or, failing to identify the
            // lock as its own, left for its lease to expire).
            let leftovers = age_leftovers(&t);
            let may_leave = matches!(fault, Fault::Fail(_))
                && (call.function == "unlink-file-at" || index as usize > rename);
            assert!(
                leftovers.is_empty() || may_leave,
                "{at}: left behind {leftovers:?}"
            );
            // The next write, on a fresh instance without faults, goes through and
            // recovers whatever was left.
            t.ws.add_entry(M, "next").unwrap();
            assert_eq!(t.metis_names(), ["MEMORY.md"], "{at}");
        }
    }
    // The sweep reaches the directory's sync, and failing it is never acknowledged.
    assert!(
        unsynced > 0,
        "{name}: no failure of the directory sync was reported"
    );
    eprintln!(
        "{name}: {} filesystem calls, each trapped and each fallible one failed: {trapped} \
         traps ({new_after_trap} after the rename) left the old or new bytes, {failed} \
         failures left the old bytes, {unsynced} failed syncs of the directory reported \
         `unsynced` with the new bytes in place, {tolerated} tolerated failures wrote the new",
        calls.len()
    );
}

/// Whether `error` says the write was made but the directory could not be synced.
fn is_unsynced(error: &Error) -> bool {
    match error {
        Error::Store {
            error: metis_memory::StoreError::Unsynced(_),
            ..
        } => true,
        Error::Tool(refusal) => refusal.message.contains("could not be synced"),
        _ => false,
    }
}

/// The durable commit, in order: the temporary file is created, written and synced, the
/// lock is checked, the temporary file renamed over the target, the directory synced.
/// Returns the indexes of the temporary file's sync and of the rename.
fn check_commit_order(name: &str, calls: &[Recorded]) -> (usize, usize) {
    let is_temp = |c: &Recorded| c.path.as_deref().is_some_and(|p| p.ends_with(".tmp"));
    type Step<'a> = (&'a str, &'a dyn Fn(&Recorded) -> bool);
    let steps: [Step; 6] = [
        ("create the temporary file", &|c| {
            c.function == "open-at" && is_temp(c)
        }),
        ("write it", &|c| c.function == "write"),
        ("sync it", &|c| c.function == "sync"),
        ("read the lock's owner", &|c| {
            c.function == "open-at" && c.path.as_deref() == Some(".MEMORY.md.lock")
        }),
        ("rename it over the file", &|c| {
            c.function == "rename-at" && is_temp(c) && c.to.as_deref() == Some("MEMORY.md")
        }),
        ("sync the directory", &|c| c.function == "sync"),
    ];
    let mut at = 0;
    let (mut synced, mut rename) = (0, 0);
    for (step, matches) in steps {
        let found = calls[at..].iter().position(matches);
        let offset = found.unwrap_or_else(|| panic!("{name}: no call to {step}: {calls:?}"));
        at += offset + 1;
        match step {
            "sync it" => synced = at - 1,
            "rename it over the file" => rename = at - 1,
            _ => {}
        }
    }
    (synced, rename)
}

/// A small xorshift generator: kill moments need only be spread, not secret.
struct Rng(u64);

impl Rng {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound
    }
}

/// Runs this test binary as the crash writer (see `main`).
fn crash_writer() -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.arg(CRASH_WRITER);
    command
}

const CRASH_WRITER: &str = "--crash-writer";

/// State `i`'s content: sizes vary so a torn write would show.
fn content(i: u64) -> String {
    format!("state {i}\n").repeat(1 + (i % 97) as usize)
}

/// The writer that never stops: consolidates MEMORY.md to state FIRST, FIRST + 1, … in
/// a loop, printing `writing N` before each write and `done N HASH` after it.
fn run_crash_writer(workspace: &str, first: u64) {
    use std::io::Write;
    let ws = metis_memory::Workspace::open(workspace);
    let mut out = std::io::stdout().lock();
    ws.read(M).unwrap(); // compile the component before announcing readiness
    writeln!(out, "ready").unwrap();
    out.flush().unwrap();
    for i in first.. {
        writeln!(out, "writing {i}").unwrap();
        out.flush().unwrap();
        match ws.consolidate(M, &content(i)) {
            Ok(result) => writeln!(out, "done {i} {}", result.after_hash).unwrap(),
            Err(error) => writeln!(out, "failed {i} {error}").unwrap(),
        }
        out.flush().unwrap();
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some(CRASH_WRITER) {
        return run_crash_writer(&args[2], args[3].parse().unwrap());
    }
    let trials = vec![
        Trial::test(
            "a_write_trapped_at_any_point_leaves_old_or_new_bytes_and_blocks_nothing",
            || {
                a_write_trapped_at_any_point_leaves_old_or_new_bytes_and_blocks_nothing();
                Ok(())
            },
        ),
        Trial::test(
            "a_write_interrupted_at_every_filesystem_call_leaves_old_or_new_bytes",
            || {
                a_write_interrupted_at_every_filesystem_call_leaves_old_or_new_bytes();
                Ok(())
            },
        ),
        Trial::test(
            "a_writer_killed_at_random_moments_never_leaves_a_torn_file",
            || {
                a_writer_killed_at_random_moments_never_leaves_a_torn_file();
                Ok(())
            },
        ),
    ];
    libtest_mimic::run(&Arguments::from_args(), trials).exit();
}

// Process death: a process writing in a loop, killed with SIGKILL at random moments,
// 200 times. Every time, the file is a complete state: one the writer reported as done,
// or the one it had announced it was writing.
fn a_writer_killed_at_random_moments_never_leaves_a_torn_file() {
    const KILLS: u64 = 200;
    let t = TestWorkspace::new();
    t.put(M, content(0));
    let mut rng = Rng(SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1);
    let (mut first, mut done_total, mut mid_write) = (1u64, 0u64, 0u64);
    let mut complete = sha256_hex(content(0).as_bytes());
    for kill in 0..KILLS {
        let mut child = crash_writer()
            .arg(t.root())
            .arg(first.to_string())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
        assert_eq!(line, "ready\n");
        std::thread::sleep(Duration::from_micros(rng.below(30_000)));
        child.kill().unwrap();
        child.wait().unwrap();
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();

        let (mut writing, mut done) = (None, None);
        for line in rest.lines() {
            let words: Vec<&str> = line.split(' ').collect();
            match words[..] {
                ["writing", i] => writing = Some(i.parse::<u64>().unwrap()),
                ["done", i, hash] => {
                    assert_eq!(hash, sha256_hex(content(i.parse().unwrap()).as_bytes()));
                    done = Some(hash.to_owned());
                    done_total += 1;
                }
                // A refused write (say, `busy`) changed nothing; the file check below holds.
                ["failed", ..] => {}
                _ => panic!("kill {kill}: unexpected output {line:?}"),
            }
        }
        if let Some(hash) = done {
            complete = hash;
        }
        let on_disk = sha256_hex(&t.bytes(M).unwrap());
        let announced = writing.map(|i| sha256_hex(content(i).as_bytes()));
        assert!(
            on_disk == complete || Some(&on_disk) == announced.as_ref(),
            "kill {kill}: the file is neither the last reported state nor the announced one"
        );
        complete = on_disk;
        first = writing.map_or(first, |i| i + 1);

        // A killed writer's lock (and a pending lock file, if it died while taking it)
        // would block or clutter others until its lease runs out; let it run out now
        // rather than wait (the wait itself is tested in concurrency.rs).
        let leftovers: Vec<String> = t
            .metis_names()
            .into_iter()
            .filter(|n| n.starts_with(".MEMORY.md.lock") || n.ends_with(".tmp"))
            .collect();
        mid_write += u64::from(!leftovers.is_empty());
        for name in leftovers {
            if let Ok(file) = fs::File::options().write(true).open(t.metis().join(name)) {
                file.set_modified(SystemTime::now() - Duration::from_secs(10))
                    .unwrap();
            }
        }
    }
    // The loop must have tested something: writes completed between kills, and kills
    // that landed while a write was under way (in typical runs 2 to 7 writes complete per kill, and 80% of kills land mid-write;
    // the thresholds are a tenth of that, so a loaded machine does not fail them).
    assert!(
        done_total >= KILLS / 10,
        "only {done_total} writes completed"
    );
    assert!(
        mid_write >= KILLS / 10,
        "only {mid_write} kills landed mid-write"
    );
    // The next writer recovers: breaks a stale lock, removes leftover temporary files.
    t.ws.add_entry(M, "after the kills").unwrap();
    assert!(
        t.metis_names().iter().all(|n| n == "MEMORY.md"),
        "{:?}",
        t.metis_names()
    );
    eprintln!(
        "{KILLS} writer processes killed with SIGKILL after {done_total} completed writes: \
         {mid_write} died holding the lock, a pending lock or a temporary file; never a torn \
         file, and the next writer cleaned up after all of them"
    );
}
