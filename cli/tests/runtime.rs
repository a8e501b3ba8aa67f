//! The embedding: limits, traps as typed errors, and the atomic replace (CONTRACT §8.1).

use crate::common;

use std::fs;
use std::os::unix::fs::MetadataExt;

use common::{TestWorkspace, sha256_hex, store_error};
use metis_memory::{Error, Limits, MemoryFile, Workspace, WriteResult};

const M: MemoryFile = MemoryFile::Memory;

#[test]
fn running_out_of_fuel_is_a_trap_error_and_the_next_call_works() {
    let t = TestWorkspace::new();
    t.ws.add_entry(M, "kept").unwrap();
    let before = t.snapshot();
    let starved = t.ws.clone().with_limits(Limits {
        fuel: 1_000,
        ..Limits::default()
    });
    match starved.add_entry(M, "never written") {
        Err(Error::Trap { message, .. }) => assert!(message.contains("fuel"), "{message}"),
        other => panic!("expected a trap, got {other:?}"),
    }
    assert_eq!(t.snapshot(), before);
    // The next call, with enough fuel, works.
    assert_eq!(t.ws.read(M).unwrap(), "kept\n");
    t.ws.add_entry(M, "next").unwrap();
    assert_eq!(t.bytes(M).unwrap(), b"kept\nnext\n");
}

/// A write that runs out of fuel while it holds its lock (the fault hook sees the guest
/// open its lock file before the trap) leaves nothing behind: the host's clean-up after the
/// trap (`recover-after-trap`) removes the lock and any temporary file. The 1,000 units of
/// the test above stop the call before it touches `.metis/`, so only this one would see
/// the clean-up go missing.
#[test]
fn running_out_of_fuel_while_holding_the_lock_leaves_nothing_behind() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use metis_memory::faults::FaultHook;

    let t = TestWorkspace::new();
    t.put(M, "kept\n");
    let before = t.snapshot();
    let locked = Arc::new(AtomicBool::new(false));
    let seen = locked.clone();
    let hook = FaultHook::new(move |call| {
        if call.path.is_some_and(|p| p.ends_with(".lock")) {
            seen.store(true, Ordering::SeqCst);
        }
        None
    });
    let hooked = t.ws.clone().with_fault_hook(hook);
    let add = |fuel: u64| {
        t.put(M, "kept\n");
        locked.store(false, Ordering::SeqCst);
        let limits = Limits {
            fuel,
            ..Limits::default()
        };
        hooked.clone().with_limits(limits).add_entry(M, "- more")
    };
    let (mut low, mut high) = (1u64, Limits::default().fuel);
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        if add(middle).is_ok() {
            high = middle;
        } else {
            low = middle;
        }
    }
    let mut held = 0;
    for fuel in (high / 2..high).rev().step_by((high / 100).max(1) as usize) {
        if let Err(Error::Trap { written, .. }) = add(fuel)
            && locked.load(Ordering::SeqCst)
        {
            held += 1;
            assert_eq!(t.metis_names(), ["MEMORY.md"], "fuel {fuel}: left behind");
            if written == Some(false) {
                assert_eq!(t.snapshot(), before, "fuel {fuel}");
            }
        }
    }
    assert!(held > 0, "no budget trapped while holding the lock");
}

#[test]
fn an_argument_larger_than_the_memory_limit_traps_without_touching_disk() {
    let t = TestWorkspace::new();
    t.ws.add_entry(M, "kept").unwrap();
    let before = t.snapshot();
    let small = t.ws.clone().with_limits(Limits {
        memory_bytes: 2 << 20,
        ..Limits::default()
    });
    let huge = "x".repeat(8 << 20);
    assert!(matches!(
        small.consolidate(M, &huge),
        Err(Error::Trap { .. })
    ));
    assert_eq!(t.snapshot(), before);
    // With the default limits the same input is simply over the hard cap.
    assert!(matches!(
        t.ws.consolidate(M, &huge),
        Err(Error::Store { .. })
    ));
    assert_eq!(t.ws.read(M).unwrap(), "kept\n");
}

#[test]
fn metis_being_a_regular_file_is_a_workspace_error() {
    let t = TestWorkspace::new();
    fs::write(t.metis(), "not a directory").unwrap();
    assert!(matches!(t.ws.read(M), Err(Error::Workspace(_))));
    assert!(matches!(t.ws.add_entry(M, "x"), Err(Error::Workspace(_))));
    assert_eq!(fs::read(t.metis()).unwrap(), b"not a directory");
}

#[test]
fn a_missing_workspace_is_not_created_by_a_write() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open(dir.path().join("does-not-exist"));
    assert_eq!(ws.read(M).unwrap(), "");
    assert!(matches!(ws.add_entry(M, "x"), Err(Error::Workspace(_))));
    assert!(!dir.path().join("does-not-exist").exists());
}

// CONTRACT §8.1: the new bytes go to a new file renamed over the old one, so the old
// inode (seen here through a descriptor opened before the write) keeps the old bytes
// intact; the reference's truncate-then-write would change them in place. (A hard link
// would show the same, but the store refuses a file with a second link.)
#[test]
fn writes_replace_the_file_atomically_by_rename() {
    let t = TestWorkspace::new();
    t.ws.add_entry(M, "old").unwrap();
    let mut old = fs::File::open(t.path(M)).unwrap();
    let old_inode = fs::metadata(t.path(M)).unwrap().ino();

    let r = t.ws.add_entry(M, "new").unwrap();
    let mut kept = String::new();
    std::io::Read::read_to_string(&mut old, &mut kept).unwrap();
    assert_eq!(kept, "old\n");
    assert_ne!(fs::metadata(t.path(M)).unwrap().ino(), old_inode);
    assert_eq!(r.after_hash, sha256_hex(&t.bytes(M).unwrap()));
    assert_eq!(
        t.metis_names(),
        ["MEMORY.md"],
        "no temporary file left behind"
    );
}

#[test]
fn no_temporary_file_is_left_after_rejected_writes() {
    let t = TestWorkspace::new();
    t.ws.add_entry(M, "x").unwrap();
    let kind = |result: Result<WriteResult, Error>| store_error(result).0.kind();
    assert_eq!(
        kind(t.ws.add_entry(M, &"y".repeat(5000))),
        "hard-cap-exceeded"
    );
    assert_eq!(kind(t.ws.replace(M, "absent", "z")), "not-found");
    assert_eq!(kind(t.ws.add_entry(M, "")), "empty-entry");
    assert_eq!(t.metis_names(), ["MEMORY.md"]);
    assert_eq!(t.bytes(M).unwrap(), b"x\n");
}

#[test]
fn the_embedded_component_is_a_wasm_component() {
    // The component-model layer of the binary format: magic, version 0x0d, layer 1.
    assert_eq!(&metis_memory::COMPONENT_WASM[..8], b"\0asm\x0d\0\x01\0");
}
