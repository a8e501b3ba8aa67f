//! The store's behaviour (spec §10.1 items 1 to 10, CONTRACT §1 to §4), through the real
//! component in wasmtime.

use crate::common;

use std::fs;
use std::os::unix::fs::PermissionsExt;

use common::{EMPTY_SHA256, TestWorkspace, recorder, sha256_hex, store_error};
use metis_memory::{CapExceeded, InvalidUtf8, MemoryFile, StoreError, Workspace};

const M: MemoryFile = MemoryFile::Memory;
const U: MemoryFile = MemoryFile::User;

// Spec 10.1 item 1, CONTRACT §2 and §7: reads of a fresh workspace.
#[test]
fn missing_files_read_as_empty_and_create_nothing() {
    let t = TestWorkspace::new();
    for file in MemoryFile::ALL {
        assert_eq!(t.ws.read(file).unwrap(), "");
        assert!(!t.ws.exists(file).unwrap());
        assert_eq!(t.ws.size_bytes(file).unwrap(), 0);
    }
    assert_eq!(t.ws.assemble_system_prompt("base").unwrap(), "base");
    assert!(!t.metis().exists(), "a read must not create .metis/");

    // An existing but empty .metis/ reads the same.
    fs::create_dir(t.metis()).unwrap();
    assert_eq!(t.ws.read(M).unwrap(), "");
    assert!(t.metis_names().is_empty());
}

#[test]
fn zero_byte_file_exists() {
    let t = TestWorkspace::new();
    t.put(U, "");
    assert!(t.ws.exists(U).unwrap());
    assert_eq!(t.ws.size_bytes(U).unwrap(), 0);
    assert_eq!(t.ws.read(U).unwrap(), "");
}

// Spec 10.1 item 2.
#[test]
fn metis_is_created_on_first_write_with_mode_0700() {
    let t = TestWorkspace::new();
    assert!(!t.metis().exists());
    t.ws.add_entry(M, "first").unwrap();
    let mode = fs::metadata(t.metis()).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    assert_eq!(t.bytes(M).unwrap(), b"first\n");
    assert_eq!(t.metis_names(), ["MEMORY.md"]);
}

// Spec 10.1 item 3, CONTRACT §3 add-entry.
#[test]
fn add_entry_newline_discipline() {
    let t = TestWorkspace::new();
    t.put(M, "no newline");
    t.ws.add_entry(M, "  second\n\n").unwrap();
    assert_eq!(t.bytes(M).unwrap(), b"no newline\nsecond\n");
    t.ws.add_entry(M, "multi\nline").unwrap();
    t.ws.add_entry(M, "second").unwrap();
    assert_eq!(
        t.bytes(M).unwrap(),
        b"no newline\nsecond\nmulti\nline\nsecond\n"
    );
}

#[test]
fn add_entry_strips_the_python_whitespace_set() {
    let t = TestWorkspace::new();
    t.ws.add_entry(U, "\u{1c}\u{1d}\u{3000} tea \u{a0}\u{1e}\u{1f}\r\n")
        .unwrap();
    assert_eq!(t.bytes(U).unwrap(), "tea\n".as_bytes());
    // Zero-width space is not whitespace to Python: it is kept.
    t.ws.add_entry(U, "\u{200b}").unwrap();
    assert_eq!(t.bytes(U).unwrap(), "tea\n\u{200b}\n".as_bytes());
}

#[test]
fn add_entry_rejects_empty_entries_without_touching_disk() {
    let t = TestWorkspace::new();
    for entry in ["", "   ", "\n\t\r", "\u{1c}\u{1f}", "\u{2028}\u{3000}"] {
        let (error, message) = store_error(t.ws.add_entry(M, entry));
        assert_eq!(case(&error), "empty-entry");
        assert_eq!(message, "entry must be non-empty");
    }
    assert!(
        !t.metis().exists(),
        "a rejected first write leaves no .metis/"
    );
}

// Spec 10.1 item 4, CONTRACT §3 replace.
#[test]
fn replace_requires_a_unique_source() {
    let t = TestWorkspace::new();
    t.put(M, "alpha beta alpha\n");
    let before = t.snapshot();
    let (error, message) = store_error(t.ws.replace(M, "gamma", "x"));
    assert_eq!(case(&error), "not-found");
    assert_eq!(message, "replace source not found in MEMORY.md");
    let (error, message) = store_error(t.ws.replace(M, "alpha", "x"));
    assert_eq!(case(&error), "not-unique 2");
    assert_eq!(
        message,
        "replace source appears 2 times in MEMORY.md; must be unique"
    );
    assert_eq!(t.snapshot(), before);

    t.ws.replace(M, "beta", "BETA").unwrap();
    assert_eq!(t.bytes(M).unwrap(), b"alpha BETA alpha\n");
}

#[test]
fn replace_counts_non_overlapping_occurrences() {
    let t = TestWorkspace::new();
    t.put(U, "aaa");
    t.ws.replace(U, "aa", "b").unwrap();
    assert_eq!(t.bytes(U).unwrap(), b"ba");
    t.put(U, "aaaa");
    assert_eq!(
        case(&store_error(t.ws.replace(U, "aa", "b")).0),
        "not-unique 2"
    );
}

#[test]
fn replace_with_empty_old_counts_chars_plus_one() {
    let t = TestWorkspace::new();
    t.put(U, "héllo"); // 5 chars, 6 bytes
    let (error, message) = store_error(t.ws.replace(U, "", "x"));
    assert_eq!(case(&error), "not-unique 6");
    assert_eq!(
        message,
        "replace source appears 6 times in USER.md; must be unique"
    );
}

#[test]
fn replace_on_a_missing_or_empty_file_has_nothing_to_replace() {
    let t = TestWorkspace::new();
    let (error, message) = store_error(t.ws.replace(U, "x", "y"));
    assert_eq!(case(&error), "nothing-to-replace");
    assert_eq!(message, "USER.md is empty; nothing to replace");
    assert!(!t.metis().exists());
    t.put(U, "");
    assert_eq!(
        case(&store_error(t.ws.replace(U, "", "y")).0),
        "nothing-to-replace"
    );
    assert_eq!(t.bytes(U).unwrap(), b"");
}

#[test]
fn replace_deletes_and_never_strips() {
    let t = TestWorkspace::new();
    t.put(M, "keep\n  drop me \nkeep too\n");
    t.ws.replace(M, "  drop me \n", "").unwrap();
    assert_eq!(t.bytes(M).unwrap(), b"keep\nkeep too\n");
    t.ws.replace(M, "keep\n", " \tspaced\t \n").unwrap();
    assert_eq!(t.bytes(M).unwrap(), b" \tspaced\t \nkeep too\n");
}

// Spec 10.1 items 5 and 6, CONTRACT §1: boundaries in bytes.
#[test]
fn soft_cap_is_strictly_greater() {
    let t = TestWorkspace::new();
    let at = t.ws.consolidate(M, &"a".repeat(2048)).unwrap();
    assert!(!at.over_soft_cap);
    let over = t.ws.add_entry(M, "b").unwrap(); // 2048 + "\n" + "b\n"
    assert_eq!(over.after_size_bytes, 2051);
    assert!(over.over_soft_cap);
    assert!(!over.over_hard_cap);
    assert_eq!(t.bytes(M).unwrap().len(), 2051);

    assert!(
        !t.ws
            .consolidate(U, &"u".repeat(1536))
            .unwrap()
            .over_soft_cap
    );
    assert!(
        t.ws.consolidate(U, &"u".repeat(1537))
            .unwrap()
            .over_soft_cap
    );
}

#[test]
fn hard_cap_allows_exactly_the_cap_and_rejects_one_more() {
    let t = TestWorkspace::new();
    // 4094 bytes + "x\n" = exactly 4096.
    t.put(M, "a".repeat(4093) + "\n");
    let at = t.ws.add_entry(M, "x").unwrap();
    assert_eq!(at.after_size_bytes, 4096);
    assert!(at.over_soft_cap && !at.over_hard_cap);

    let before = t.snapshot();
    let (error, message) = store_error(t.ws.add_entry(M, "y"));
    assert_eq!(
        error,
        StoreError::HardCapExceeded(CapExceeded {
            file: M,
            message: "MEMORY.md write rejected: 4098 bytes exceeds hard cap 4096; consolidate before adding more".into(),
            attempted_bytes: 4098,
            cap_bytes: 4096
        })
    );
    assert_eq!(
        message,
        "MEMORY.md write rejected: 4098 bytes exceeds hard cap 4096; consolidate before adding more"
    );
    assert_eq!(t.snapshot(), before, "a rejected write changes nothing");

    assert_eq!(
        t.ws.consolidate(U, &"u".repeat(3072))
            .unwrap()
            .after_size_bytes,
        3072
    );
    let (error, _) = store_error(t.ws.consolidate(U, &"u".repeat(3073)));
    assert!(
        matches!(error, StoreError::HardCapExceeded(i) if i.attempted_bytes == 3073 && i.cap_bytes == 3072)
    );
    assert_eq!(t.bytes(U).unwrap().len(), 3072);
}

#[test]
fn rejected_first_write_creates_neither_file_nor_metis() {
    let t = TestWorkspace::new();
    let (error, _) = store_error(t.ws.consolidate(U, &"x".repeat(5000)));
    assert!(matches!(error, StoreError::HardCapExceeded(_)));
    assert!(!t.metis().exists());
    // With .metis/ present, the file is still not created.
    fs::create_dir(t.metis()).unwrap();
    store_error(t.ws.add_entry(U, &"x".repeat(3072)));
    assert!(t.metis_names().is_empty());
}

#[test]
fn sizes_are_utf8_bytes_not_chars() {
    let t = TestWorkspace::new();
    // "é" is 2 bytes, "🦀" 4: 1535 chars but 3070 bytes + "\n" = 3071.
    let entry = "é".repeat(1533) + "🦀";
    let r = t.ws.add_entry(U, &entry).unwrap();
    assert_eq!(r.after_size_bytes, 3071);
    assert_eq!(t.ws.size_bytes(U).unwrap(), 3071);
    let (error, _) = store_error(t.ws.add_entry(U, "é"));
    assert!(matches!(error, StoreError::HardCapExceeded(i) if i.attempted_bytes == 3074));
}

// Spec 10.1 item 7, CONTRACT §3.
#[test]
fn hashes_chain_and_match_the_bytes_on_disk() {
    let t = TestWorkspace::new();
    let first = t.ws.add_entry(M, "one").unwrap();
    assert_eq!(first.before_hash, EMPTY_SHA256);
    assert_eq!(first.before_size_bytes, 0);
    let second = t.ws.replace(M, "one", "two").unwrap();
    let third = t.ws.consolidate(M, "three\n").unwrap();
    assert_eq!(second.before_hash, first.after_hash);
    assert_eq!(third.before_hash, second.after_hash);
    assert_eq!(third.after_hash, sha256_hex(&t.bytes(M).unwrap()));
    assert_eq!(third.before_size_bytes, second.after_size_bytes);
    assert_eq!(third.after_size_bytes, 6);
}

// Spec 10.1 item 8, CONTRACT §3 consolidate.
#[test]
fn consolidate_to_empty_leaves_a_zero_byte_file() {
    let t = TestWorkspace::new();
    t.ws.add_entry(M, "something").unwrap();
    let r = t.ws.consolidate(M, "").unwrap();
    assert_eq!(r.after_hash, EMPTY_SHA256);
    assert_eq!(r.after_size_bytes, 0);
    assert!(t.ws.exists(M).unwrap());
    assert_eq!(t.bytes(M).unwrap(), b"");
}

#[test]
fn consolidate_stores_content_exactly() {
    let t = TestWorkspace::new();
    let content = "  leading\r\n\ttabs\u{1c}\n\n  ";
    t.ws.consolidate(U, content).unwrap();
    assert_eq!(t.bytes(U).unwrap(), content.as_bytes());
    assert_eq!(t.ws.read(U).unwrap(), content);
}

// CONTRACT §2 and §8.3: byte fidelity.
#[test]
fn crlf_is_kept_byte_for_byte() {
    let t = TestWorkspace::new();
    t.put(M, "one\r\ntwo\r\n");
    assert_eq!(t.ws.read(M).unwrap(), "one\r\ntwo\r\n");
    let size = t.ws.size_bytes(M).unwrap();
    let r = t.ws.add_entry(M, "three").unwrap();
    assert_eq!(r.before_size_bytes, size);
    assert_eq!(r.before_hash, sha256_hex(b"one\r\ntwo\r\n"));
    assert_eq!(t.bytes(M).unwrap(), b"one\r\ntwo\r\nthree\n");
    t.ws.replace(M, "two\r\n", "2\r\n").unwrap();
    assert_eq!(t.bytes(M).unwrap(), b"one\r\n2\r\nthree\n");
}

// CONTRACT §2: a file that is not UTF-8 is never rewritten lossily.
#[test]
fn invalid_utf8_is_a_typed_error_with_the_offset() {
    let t = TestWorkspace::new();
    let bad = b"caf\xc3\xa9 \xff\xfe tail\n".to_vec();
    t.put(U, &bad);
    let before = t.snapshot();
    let expected = StoreError::InvalidUtf8(InvalidUtf8 {
        file: U,
        message: "USER.md is not valid UTF-8 (first invalid byte at offset 6); only memory_consolidate can replace it".into(),
        offset: 6,
    });
    let (error, message) = store_error(t.ws.read(U));
    assert_eq!(error, expected);
    assert!(
        message.contains("USER.md") && message.contains("offset 6"),
        "{message}"
    );
    assert_eq!(store_error(t.ws.add_entry(U, "x")).0, expected);
    assert_eq!(store_error(t.ws.replace(U, "tail", "x")).0, expected);
    assert_eq!(store_error(t.ws.assemble_system_prompt("b")).0, expected);
    // Size and existence do not need the text.
    assert_eq!(t.ws.size_bytes(U).unwrap(), bad.len() as u64);
    assert!(t.ws.exists(U).unwrap());
    assert_eq!(t.snapshot(), before);
    assert_eq!(t.bytes(U).unwrap(), bad);

    // Only consolidate may replace it, and its before-hash is of the raw bytes.
    let r = t.ws.consolidate(U, "clean\n").unwrap();
    assert_eq!(r.before_hash, sha256_hex(&bad));
    assert_eq!(r.before_size_bytes, bad.len() as u64);
    assert_eq!(t.ws.read(U).unwrap(), "clean\n");
}

#[test]
fn a_directory_in_place_of_the_file_is_a_typed_error() {
    let t = TestWorkspace::new();
    fs::create_dir_all(t.path(M)).unwrap();
    fs::write(t.path(M).join("inner"), "inner").unwrap();
    let before = t.snapshot();
    let expected = "not-a-regular-file MEMORY.md";
    assert_eq!(case(&store_error(t.ws.read(M)).0), expected);
    assert_eq!(case(&store_error(t.ws.exists(M)).0), expected);
    assert_eq!(case(&store_error(t.ws.size_bytes(M)).0), expected);
    assert_eq!(case(&store_error(t.ws.add_entry(M, "x")).0), expected);
    assert_eq!(case(&store_error(t.ws.replace(M, "x", "y")).0), expected);
    let (error, message) = store_error(t.ws.consolidate(M, "x"));
    assert_eq!(case(&error), expected);
    assert!(
        message.starts_with("MEMORY.md is not a regular file"),
        "{message}"
    );
    assert_eq!(
        case(&store_error(t.ws.assemble_system_prompt("")).0),
        expected
    );
    assert_eq!(t.snapshot(), before);
    assert_eq!(
        t.metis_names(),
        ["MEMORY.md"],
        "no temporary file left behind"
    );
}

#[test]
fn a_fifo_is_a_typed_error_and_does_not_hang() {
    let t = TestWorkspace::new();
    fs::create_dir(t.metis()).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(t.path(U))
        .status()
        .unwrap();
    assert!(status.success());
    let expected = "not-a-regular-file USER.md";
    assert_eq!(case(&store_error(t.ws.read(U)).0), expected);
    assert_eq!(case(&store_error(t.ws.add_entry(U, "x")).0), expected);
    assert_eq!(case(&store_error(t.ws.consolidate(U, "x")).0), expected);
    assert_eq!(t.metis_names(), ["USER.md"]);
}

#[test]
fn a_symlink_leading_outside_is_not_followed() {
    let t = TestWorkspace::new();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.md");
    fs::write(&secret, "secret\n").unwrap();
    fs::create_dir(t.metis()).unwrap();
    std::os::unix::fs::symlink(&secret, t.path(M)).unwrap();
    let before = t.snapshot();
    let expected = "not-a-regular-file MEMORY.md";
    assert_eq!(case(&store_error(t.ws.read(M)).0), expected);
    assert_eq!(case(&store_error(t.ws.add_entry(M, "x")).0), expected);
    assert_eq!(case(&store_error(t.ws.consolidate(M, "x")).0), expected);
    assert_eq!(t.snapshot(), before);
    assert_eq!(fs::read(&secret).unwrap(), b"secret\n");
}

// CONTRACT §3 "order of checks".
#[test]
fn checks_run_in_the_reference_order() {
    let t = TestWorkspace::new();
    // add-entry: the empty entry is reported before the unreadable file.
    t.put(M, b"\xff");
    assert_eq!(case(&store_error(t.ws.add_entry(M, " ")).0), "empty-entry");
    // add-entry: the unreadable file before the hard cap.
    assert!(matches!(
        store_error(t.ws.add_entry(M, &"x".repeat(5000))).0,
        StoreError::InvalidUtf8(_)
    ));
    // replace: the unreadable file before the count.
    assert!(matches!(
        store_error(t.ws.replace(M, "zzz", "")).0,
        StoreError::InvalidUtf8(_)
    ));
    // replace: nothing to replace before not found.
    assert_eq!(
        case(&store_error(t.ws.replace(U, "zzz", "")).0),
        "nothing-to-replace"
    );
    // replace: the count before the hard cap.
    t.put(U, "ab ab");
    assert_eq!(
        case(&store_error(t.ws.replace(U, "ab", &"x".repeat(5000))).0),
        "not-unique 2"
    );
    // consolidate: the hard cap before the file is even looked at.
    fs::remove_file(t.path(M)).unwrap();
    fs::create_dir(t.path(M)).unwrap();
    assert!(matches!(
        store_error(t.ws.consolidate(M, &"x".repeat(4097))).0,
        StoreError::HardCapExceeded(_)
    ));
}

// Spec 10.1 items 9 and 10, CONTRACT §4.
#[test]
fn system_prompt_omits_empty_sections() {
    let t = TestWorkspace::new();
    assert_eq!(t.ws.assemble_system_prompt("Base.\n\n  ").unwrap(), "Base.");
    t.put(M, " \n\u{1c}\n");
    t.put(U, "");
    assert_eq!(t.ws.assemble_system_prompt("Base.").unwrap(), "Base.");
    t.put(M, "\n- uses cargo\n\n");
    assert_eq!(
        t.ws.assemble_system_prompt("Base.").unwrap(),
        "Base.\n\n## Workspace memory (MEMORY.md)\n- uses cargo"
    );
    assert_eq!(
        t.ws.assemble_system_prompt("").unwrap(),
        "## Workspace memory (MEMORY.md)\n- uses cargo"
    );
}

#[test]
fn system_prompt_includes_both_sections_in_order() {
    let t = TestWorkspace::new();
    t.ws.add_entry(M, "- uses cargo").unwrap();
    t.ws.add_entry(U, "- prefers tea").unwrap();
    assert_eq!(
        t.ws.assemble_system_prompt("  You help.  \n").unwrap(),
        "  You help.\n\n## User context (USER.md)\n- prefers tea\n\n## Workspace memory (MEMORY.md)\n- uses cargo"
    );
    assert_eq!(
        t.ws.assemble_system_prompt("").unwrap(),
        "## User context (USER.md)\n- prefers tea\n\n## Workspace memory (MEMORY.md)\n- uses cargo"
    );
}

#[test]
fn every_call_reads_fresh_from_disk() {
    let t = TestWorkspace::new();
    t.ws.add_entry(U, "old").unwrap();
    assert!(t.ws.assemble_system_prompt("").unwrap().ends_with("old"));
    fs::write(t.path(U), "edited by hand\n").unwrap();
    assert!(
        t.ws.assemble_system_prompt("")
            .unwrap()
            .ends_with("edited by hand")
    );
    assert_eq!(t.ws.read(U).unwrap(), "edited by hand\n");
    let r = t.ws.add_entry(U, "next").unwrap();
    assert_eq!(r.before_hash, sha256_hex(b"edited by hand\n"));
}

#[test]
fn caps_are_reported_per_file() {
    let t = TestWorkspace::new();
    assert_eq!(t.ws.soft_cap(M).unwrap(), 2048);
    assert_eq!(t.ws.hard_cap(M).unwrap(), 4096);
    assert_eq!(t.ws.soft_cap(U).unwrap(), 1536);
    assert_eq!(t.ws.hard_cap(U).unwrap(), 3072);
}

// CONTRACT §8.2: one read per operation. The reference reads the file twice (once to
// hash, once to edit), so its `before-hash` can describe other bytes than the edit used.
// Every filesystem call is recorded: each operation opens each file it needs exactly
// once, and reads it through that one descriptor.
#[test]
fn every_operation_reads_each_file_once() {
    let t = TestWorkspace::new();
    t.put(M, "alpha\nbeta\n".repeat(100));
    t.put(U, "likes tea\n");
    type Op = fn(&Workspace) -> Result<(), metis_memory::Error>;
    let ops: [(&str, Op, &[&str]); 6] = [
        ("read", |ws| ws.read(M).map(drop), &["MEMORY.md"]),
        (
            "add",
            |ws| ws.add_entry(M, "gamma").map(drop),
            &["MEMORY.md"],
        ),
        (
            "replace",
            |ws| ws.replace(M, "gamma", "delta").map(drop),
            &["MEMORY.md"],
        ),
        (
            "consolidate",
            |ws| ws.consolidate(U, "likes coffee\n").map(drop),
            &["USER.md"],
        ),
        (
            "prompt",
            |ws| ws.assemble_system_prompt("base").map(drop),
            &["USER.md", "MEMORY.md"],
        ),
        (
            "tool",
            |ws| {
                ws.call_tool("memory_add", r#"{"file":"MEMORY.md","entry":"epsilon"}"#)
                    .map(drop)
            },
            &["MEMORY.md"],
        ),
    ];
    for (name, op, files) in ops {
        let (hook, log) = recorder();
        op(&t.ws.clone().with_fault_hook(hook)).unwrap();
        let calls = log.lock().unwrap().clone();
        let opened: Vec<&str> = calls
            .iter()
            .filter(|c| c.function == "open-at")
            .filter_map(|c| c.path.as_deref())
            .filter(|path| MemoryFile::ALL.iter().any(|f| f.file_name() == *path))
            .collect();
        assert_eq!(opened, files, "{name}: memory files opened, in order");
        // Each opened file is read through once, in one read: it returns all its bytes
        // (far below the 64 KiB chunk), and a short read that completes the size the open
        // file had is its end, so no second read asks. The only other reads are of a
        // lock's owner, one per opening of a lock file (at its place, or moved aside to be
        // inspected before it is removed).
        let reads = calls.iter().filter(|c| c.function == "read").count();
        let lock_reads = calls
            .iter()
            .filter(|c| c.function == "open-at")
            .filter(|c| {
                let path = c.path.as_deref().unwrap_or_default();
                path.ends_with(".md.lock") || path.ends_with(".aside")
            })
            .count();
        assert_eq!(reads, files.len() + lock_reads, "{name}: reads");
        assert!(
            !calls.iter().any(|c| c.function.ends_with("-via-stream")),
            "{name}: no other way of reading: {calls:?}"
        );
    }
}

// The bytes an edit is based on are the bytes it read, not what an earlier `stat` saw:
// the fault hook grows the file between the guest's `stat-at` and its `open-at` (as a
// person's editor might, without the lock), and the result must describe the grown file.
#[test]
fn the_before_hash_and_size_are_of_the_bytes_read() {
    let t = TestWorkspace::new();
    t.put(M, "first\n");
    let path = t.path(M);
    let hook = metis_memory::faults::FaultHook::new(move |call| {
        if call.function == "open-at" && call.path == Some("MEMORY.md") {
            fs::write(&path, "first\ngrown meanwhile\n").unwrap();
        }
        None
    });
    let result =
        t.ws.clone()
            .with_fault_hook(hook)
            .add_entry(M, "mine")
            .unwrap();
    let grown = b"first\ngrown meanwhile\n";
    assert_eq!(result.before_size_bytes, grown.len() as u64);
    assert_eq!(result.before_hash, sha256_hex(grown));
    assert_eq!(t.bytes(M).unwrap(), b"first\ngrown meanwhile\nmine\n");
}

/// The rename that makes a write visible is made durable by syncing `.metis/` through a
/// descriptor of `.` opened under the preopen (some runtimes refuse `sync` on the preopen
/// itself): the recorded calls show the sync, after the rename.
#[test]
fn the_directory_is_synced_after_the_rename() {
    let t = TestWorkspace::new();
    t.put(MemoryFile::Memory, "- old\n");
    let (hook, calls) = recorder();
    t.ws.clone()
        .with_fault_hook(hook)
        .add_entry(MemoryFile::Memory, "x")
        .unwrap();
    let calls = calls.lock().unwrap();
    let renamed = calls
        .iter()
        .position(|c| c.function == "rename-at" && c.to.as_deref() == Some("MEMORY.md"))
        .expect("the rename");
    let after: Vec<(&str, Option<&str>)> = calls[renamed + 1..]
        .iter()
        .map(|c| (c.function, c.path.as_deref()))
        .collect();
    let opened = after
        .iter()
        .position(|c| *c == ("open-at", Some(".")))
        .unwrap_or_else(|| panic!("no descriptor of . opened after the rename: {after:?}"));
    assert!(
        after[opened + 1..].iter().any(|(f, _)| *f == "sync"),
        "no sync after opening .: {after:?}"
    );
}

/// The error's case, with the count or file that tells two of a case apart: the message
/// is checked on its own where it matters.
fn case(error: &StoreError) -> String {
    match error {
        StoreError::NotUnique(info) => format!("not-unique {}", info.count),
        StoreError::NotARegularFile(info) => format!("not-a-regular-file {}", info.file.name()),
        other => other.kind().to_owned(),
    }
}

/// `settings.read-only` refuses a hold on the writes as it refuses a write: `read-only`,
/// and no lock file left.
#[test]
fn a_read_only_workspace_refuses_to_hold_the_writes() {
    let t = TestWorkspace::new();
    t.put(M, "- a\n");
    let (error, message) = store_error(t.ws.clone().read_only().hold_writes().map(drop));
    assert!(matches!(error, StoreError::ReadOnly(_)), "{error:?}");
    assert!(message.contains("read-only"), "{message}");
    assert_eq!(t.metis_names(), ["MEMORY.md"]);
}

/// A prompt a session hands out carries the session as it stands after it: the one its
/// next tool call is held to, whether the prompt was composed, shown on top of what the
/// model saw, offered where it may never be seen, or a snapshot's frozen one again.
#[test]
fn a_sessions_prompt_carries_the_session_in_force() {
    use metis_memory::Session;
    let t = TestWorkspace::new();
    t.put(M, "- a\n");
    let mut snapshot = Session::new(t.ws.clone()).snapshot();
    snapshot.system_prompt("").unwrap();
    snapshot
        .call_tool("memory_add", r#"{"file":"MEMORY.md","entry":"- b"}"#)
        .unwrap();
    let again = snapshot.system_prompt("").unwrap();
    assert_eq!(&again.session, snapshot.state());

    let mut offered = Session::new(t.ws.clone());
    let prompt = offered.offer_prompt("").unwrap();
    assert_eq!(&prompt.session, offered.state());
    assert!(
        offered.state().seen.is_empty(),
        "an offered prompt counts as seen"
    );

    let mut shown = Session::new(t.ws.clone());
    let prompt = shown.show_prompt("").unwrap();
    assert_eq!(&prompt.session, shown.state());
}
