//! A repository ships `.metis/.USER.md.lock -> /dev/zero`. When a call traps,
//! the host cleans up after it, inspecting the lock files; following that link and
//! reading without bound took 4 to 6 GB in seconds. This test runs alone in its own
//! binary with the process's data segment limited (RLIMIT_DATA, which wasmtime's
//! reservations do not count), so a host that reads through the link aborts here
//! instead of exhausting the machine.

mod common;

use std::fs;
use std::os::unix::fs::symlink;

use common::TestWorkspace;
use metis_memory::{Error, Limits, MemoryFile};

#[test]
fn cleaning_up_after_a_trap_reads_no_planted_link() {
    let limit = libc::rlimit {
        rlim_cur: 512 << 20,
        rlim_max: 512 << 20,
    };
    // SAFETY: setrlimit with a valid, initialised struct.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_DATA, &limit) }, 0);

    let t = TestWorkspace::new();
    fs::create_dir_all(t.metis()).unwrap();
    for name in [".USER.md.lock", ".MEMORY.md.lock"] {
        symlink("/dev/zero", t.metis().join(name)).unwrap();
    }
    // Too little fuel for anything: every call traps, and the host cleans up.
    let starved = t.ws.clone().with_limits(Limits {
        fuel: 1_000,
        ..Limits::default()
    });
    for _ in 0..3 {
        assert!(matches!(
            starved.add_entry(MemoryFile::Memory, "x"),
            Err(Error::Trap { .. })
        ));
        assert!(matches!(
            starved.call_tool("memory_add", r#"{"file":"USER.md","entry":"x"}"#),
            Err(Error::Trap { .. })
        ));
    }
    // The planted links are where they were, still links.
    for name in [".USER.md.lock", ".MEMORY.md.lock"] {
        let path = t.metis().join(name);
        assert!(
            fs::symlink_metadata(&path)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            fs::read_link(&path).unwrap(),
            std::path::Path::new("/dev/zero")
        );
    }
}
