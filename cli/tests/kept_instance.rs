//! Reads run on an instance the workspace keeps between calls (runtime.rs,
//! `KeptInstance`); these show it isolates as a fresh instance would: it caches nothing,
//! follows a `.metis/` that was replaced, and is discarded after a trap.

use crate::common;

use std::fs;

use common::TestWorkspace;
use metis_memory::{Error, Limits, MemoryFile, Workspace};

const M: MemoryFile = MemoryFile::Memory;

#[test]
fn every_read_sees_the_disk_as_it_is_now() {
    let t = TestWorkspace::new();
    assert_eq!(t.ws.read(M).unwrap(), "");
    t.put(M, "- one\n");
    assert_eq!(t.ws.read(M).unwrap(), "- one\n");
    fs::write(t.path(M), "- two\n").unwrap();
    assert_eq!(t.ws.read(M).unwrap(), "- two\n");
    assert!(t.ws.assemble_system_prompt("").unwrap().contains("- two"));
    fs::remove_file(t.path(M)).unwrap();
    assert!(!t.ws.exists(M).unwrap());
}

#[test]
fn a_replaced_metis_directory_is_the_one_read() {
    let t = TestWorkspace::new();
    t.put(M, "- old directory\n");
    assert_eq!(t.ws.read(M).unwrap(), "- old directory\n");
    // The kept instance holds the old directory open; a new one is at the name now.
    fs::rename(t.metis(), t.root().join("old-metis")).unwrap();
    t.put(M, "- new directory\n");
    assert_eq!(t.ws.read(M).unwrap(), "- new directory\n");
    fs::remove_dir_all(t.metis()).unwrap();
    assert_eq!(t.ws.read(M).unwrap(), "");
}

#[test]
fn after_a_trap_in_a_read_the_next_read_works() {
    let t = TestWorkspace::new();
    t.put(M, "- small\n");
    // The least fuel a read of the small file needs, then a file that takes more.
    let reads_with = |fuel| {
        Workspace::open(t.root())
            .with_limits(Limits {
                fuel,
                ..Limits::default()
            })
            .read(M)
            .is_ok()
    };
    let (mut low, mut high) = (0u64, 10_000_000u64);
    while high - low > 1 {
        let middle = (low + high) / 2;
        if reads_with(middle) {
            high = middle
        } else {
            low = middle
        }
    }
    let ws = t.ws.clone().with_limits(Limits {
        fuel: high + high / 10,
        ..Limits::default()
    });
    assert_eq!(ws.read(M).unwrap(), "- small\n");
    t.put(
        M,
        "- a much longer file that costs more fuel to read and return\n".repeat(60),
    );
    assert!(matches!(ws.read(M), Err(Error::Trap { .. })));
    // A trapped instance cannot be entered again: had it been kept, this would fail.
    t.put(M, "- small\n");
    assert_eq!(ws.read(M).unwrap(), "- small\n");
}

#[test]
fn reads_from_many_threads_at_once_on_one_workspace() {
    let t = TestWorkspace::new();
    t.put(M, "- shared\n");
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..25 {
                    assert_eq!(t.ws.read(M).unwrap(), "- shared\n");
                }
            });
        }
    });
}
