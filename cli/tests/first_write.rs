//! The first write into a workspace with no `.metis/` yet: a refused one
//! removes the `.metis/` it created only when empty, a writer that found that directory
//! meanwhile is not failed by it, and the new directory entry is synced before anything
//! is written into it.

use crate::common;

use std::sync::{Arc, Barrier};

use common::TestWorkspace;
use metis_memory::{MemoryFile, Workspace};

/// Valid adds racing a refused first write, round after round: none may fail. Before
/// the fix, the refused write's `rmdir` made some fail with `no-entry` or "removed as
/// the call began".
#[test]
fn a_refused_first_write_never_fails_a_concurrent_valid_one() {
    const ROUNDS: usize = 30;
    const ADDERS: usize = 4;
    let mut failures = Vec::new();
    for round in 0..ROUNDS {
        let t = TestWorkspace::new();
        let start = Arc::new(Barrier::new(ADDERS + 1));
        let refuser = {
            let ws = Workspace::open(t.root());
            let start = start.clone();
            std::thread::spawn(move || {
                start.wait();
                // Refused by the component after the host created `.metis/` for it.
                ws.add_entry(MemoryFile::Memory, "   ")
            })
        };
        let adders: Vec<_> = (0..ADDERS)
            .map(|n| {
                let ws = Workspace::open(t.root());
                let start = start.clone();
                std::thread::spawn(move || {
                    start.wait();
                    ws.add_entry(MemoryFile::Memory, &format!("- entry {n}"))
                })
            })
            .collect();
        assert!(refuser.join().unwrap().is_err());
        for (n, adder) in adders.into_iter().enumerate() {
            if let Err(e) = adder.join().unwrap() {
                failures.push(format!("round {round}, adder {n}: {e}"));
            }
        }
        if failures.is_empty() {
            let text = String::from_utf8(t.bytes(MemoryFile::Memory).unwrap()).unwrap();
            assert_eq!(text.lines().count(), ADDERS, "round {round}: {text:?}");
        }
    }
    assert!(
        failures.is_empty(),
        "{} failed: {failures:#?}",
        failures.len()
    );
}

/// `strace -y` names the directory each `fsync` was given: creating `.metis/` must sync
/// the workspace directory that holds the new entry.
#[test]
fn creating_metis_syncs_the_workspace_directory() {
    let t = TestWorkspace::new();
    let log = t.root().join("strace.log");
    let traced = std::process::Command::new("strace")
        .args(["-f", "-y", "-e", "trace=fsync,fdatasync", "-o"])
        .arg(&log)
        .arg(env!("CARGO_BIN_EXE_metis-memory"))
        .arg("--workspace")
        .arg(t.root())
        .args(["-q", "add", "MEMORY.md", "- a"])
        .env("METIS_MEMORY_CACHE_DIR", "off")
        .status();
    match traced {
        Ok(status) if status.success() => {}
        other => {
            eprintln!("skipped: strace cannot trace here ({other:?})");
            return;
        }
    }
    let trace = std::fs::read_to_string(&log).unwrap();
    let root = std::fs::canonicalize(t.root()).unwrap();
    let synced_root = trace
        .lines()
        .any(|line| line.contains(&format!("<{}>)", root.display())));
    assert!(synced_root, "no fsync of {}:\n{trace}", root.display());
}

/// A tool call refused in a session, or with none, is a failed first write like a
/// store call's: the `.metis/` it created is removed, and a session's refusal still
/// returns the session it moved to.
#[test]
fn a_refused_first_tool_call_leaves_no_metis_behind() {
    let too_big = format!(r#"{{"file":"MEMORY.md","entry":"{}"}}"#, "x".repeat(5000));
    let t = TestWorkspace::new();
    let ws = Workspace::open(t.root());
    let mut session = ws.session();
    assert!(session.call_tool("memory_add", &too_big).is_err());
    assert!(
        !ws.metis_dir().exists(),
        "a refused session call left .metis/"
    );
    assert!(ws.call_tool("memory_add", &too_big).is_err());
    assert!(
        !ws.metis_dir().exists(),
        "a refused sessionless call left .metis/"
    );
    // A refusal that showed a version is kept in the session it returns.
    std::fs::create_dir(ws.metis_dir()).unwrap();
    std::fs::write(ws.metis_dir().join("MEMORY.md"), "- a\n").unwrap();
    let refused = session.call_tool(
        "memory_consolidate",
        r#"{"file":"MEMORY.md","content":"- b\n"}"#,
    );
    assert!(refused.is_err());
    assert_eq!(session.state().shown.len(), 1, "{:?}", session.state());
}
