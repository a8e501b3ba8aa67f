//! Reads reuse the instance a workspace keeps, and one grown past 8 MiB is dropped: shown
//! by counting the instances the process makes (`faults::instances_made`). One test in a
//! binary of its own, since the count is the whole process's.

mod common;

use common::TestWorkspace;
use metis_memory::MemoryFile;
use metis_memory::faults::instances_made;

#[test]
fn reads_reuse_the_kept_instance_until_it_grows_past_8_mib() {
    let t = TestWorkspace::new();
    t.put(MemoryFile::Memory, "- kept\n");
    let start = instances_made();
    for _ in 0..20 {
        assert_eq!(t.ws.read(MemoryFile::Memory).unwrap(), "- kept\n");
        assert!(t.ws.assemble_system_prompt("").unwrap().contains("- kept"));
    }
    assert_eq!(
        instances_made() - start,
        1,
        "40 reads made more than one instance"
    );
    // A write runs on a fresh instance of its own, and leaves the kept one be.
    t.ws.add_entry(MemoryFile::Memory, "- more").unwrap();
    assert_eq!(t.ws.read(MemoryFile::Memory).unwrap(), "- kept\n- more\n");
    assert_eq!(instances_made() - start, 2);
    // A read whose instance grows past 8 MiB is answered, then its instance dropped.
    let base = "x".repeat(9 << 20);
    assert!(t.ws.assemble_system_prompt(&base).unwrap().len() > 9 << 20);
    assert_eq!(instances_made() - start, 2);
    for _ in 0..5 {
        t.ws.read(MemoryFile::Memory).unwrap();
    }
    assert_eq!(instances_made() - start, 3, "the grown instance was kept");
}
