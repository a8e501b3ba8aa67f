//! The embedding: limits, traps as typed errors, and the atomic replace (CONTRACT §8.1).

mod common;

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
    // The same workspace value with enough fuel, and the starved one for a cheap call.
    assert_eq!(t.ws.read(M).unwrap(), "kept\n");
    t.ws.add_entry(M, "next").unwrap();
    assert_eq!(t.bytes(M).unwrap(), b"kept\nnext\n");
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
