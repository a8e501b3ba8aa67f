//! `.metis` swapped for a symbolic link while calls run. The host checks that `.metis`
//! is a directory and not a link, then pre-opens it for the component; a hostile process
//! (or repository tooling) exchanging the two between those moments would have the call
//! read and write wherever the link leads. The host opens `.metis` itself, never through
//! a link, and pre-opens exactly what it opened: no call may ever see the other side.

use crate::common;

use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use common::TestWorkspace;
use metis_memory::{Error, MemoryFile, Workspace};

/// Exchanges `a` and `b` atomically: both names exist throughout.
fn exchange(a: &CString, b: &CString) {
    // SAFETY: two valid NUL-terminated paths.
    let done = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    assert_eq!(done, 0, "{}", std::io::Error::last_os_error());
}

fn c_path(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).unwrap()
}

/// Exchanges `a` and `b` until `stop`; counts the exchanges.
fn keep_exchanging(a: &Path, b: &Path, stop: &AtomicBool, exchanges: &AtomicU64) {
    let (a, b) = (c_path(a), c_path(b));
    while !stop.load(Ordering::Relaxed) {
        exchange(&a, &b);
        exchanges.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn a_metis_exchanged_for_a_link_mid_call_is_never_read_or_written_through() {
    let t = TestWorkspace::new();
    t.put(MemoryFile::Memory, "- ours\n");
    let outside = t.root().join("other-project/.metis");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("MEMORY.md"), "- theirs\n").unwrap();
    let swap = t.root().join(".metis-swap");
    std::os::unix::fs::symlink(&outside, &swap).unwrap();
    let before_outside = common::snapshot_of(&outside);

    let stop = Arc::new(AtomicBool::new(false));
    let exchanges = Arc::new(AtomicU64::new(0));
    let swapper = {
        let (metis, stop, exchanges) = (t.metis(), stop.clone(), exchanges.clone());
        std::thread::spawn(move || keep_exchanging(&metis, &swap, &stop, &exchanges))
    };

    let (mut read, mut refused, mut written) = (0, 0, 0);
    // At least 20,000 calls, and on until both ways were taken often enough: on a busy
    // machine the exchanging thread may win most checks, and the race must still be run.
    for i in 0..400_000 {
        if i >= 20_000 && read > 100 && refused > 100 && written > 10 {
            break;
        }
        // A new workspace each time: every read makes its instance, as a one-shot
        // process does.
        let ws = Workspace::open(t.root());
        // Writes until a hundred have landed, well under MEMORY.md's hard cap.
        let outcome = if i % 10 == 0 && written < 100 {
            ws.add_entry(MemoryFile::Memory, &format!("- entry {i}"))
                .map(|_| written += 1)
        } else {
            ws.read(MemoryFile::Memory).map(|text| {
                assert!(
                    text.starts_with("- ours\n"),
                    "read through the link: {text:?}"
                );
                read += 1;
            })
        };
        match outcome {
            Ok(()) => {}
            // `.metis` was the link when it was checked: refused, as it should be.
            Err(Error::Workspace(message)) if message.contains("symbolic link") => refused += 1,
            Err(e) => panic!("{e:?}"),
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();

    assert_eq!(
        common::snapshot_of(&outside),
        before_outside,
        "nothing written outside"
    );
    let exchanges = exchanges.load(Ordering::Relaxed);
    // The race was run: calls went both ways, and `.metis` changed thousands of times.
    assert!(
        read > 100 && refused > 100 && written > 10,
        "{read} {refused} {written}"
    );
    assert!(exchanges > 10_000, "{exchanges}");
    if fs::symlink_metadata(t.metis()).unwrap().is_symlink() {
        exchange(&c_path(&t.metis()), &c_path(&t.root().join(".metis-swap")));
    }
    let ours = String::from_utf8(t.bytes(MemoryFile::Memory).unwrap()).unwrap();
    assert_eq!(ours.lines().count(), 1 + written, "{ours}");
}
