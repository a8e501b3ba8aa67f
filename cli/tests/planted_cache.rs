//! A compiled component planted in a repository is never run.
//!
//! The attack, for real: a cache entry this user's CLI wrote is taken, its machine code
//! (the `.text` section of wasmtime's ELF artifact) replaced by x86-64 code that calls
//! `exit_group(42)`, and the result committed to a fake checkout under the predictable
//! name, in the two places a checkout can make the cache directory: `XDG_CACHE_HOME`
//! (`$PWD/.cache` in a CI job) and `METIS_MEMORY_CACHE_DIR` (`${PWD}/tools/cache` from an
//! env file). Files are given the modes `git clone` gives them (0644 in 0755 directories,
//! this user's). The real CLI then runs `audit`, `read` and `add` there: none may exit 42,
//! each must do its work, and the planted file must have been compiled afresh (replaced),
//! never loaded. Before cache entries carried a MAC under a per-user key, each of these
//! runs exited 42.

use crate::common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::TestWorkspace;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_metis-memory");

/// x86-64: `mov eax, 231; mov edi, 42; syscall` (exit_group(42)).
const EXIT_42: [u8; 12] = [
    0xb8, 0xe7, 0x00, 0x00, 0x00, 0xbf, 0x2a, 0x00, 0x00, 0x00, 0x0f, 0x05,
];

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The file and size of the ELF section `name` in the ELF image `elf` (ELF64, little-endian).
fn section(elf: &[u8], name: &str) -> Option<(usize, usize)> {
    let u16_at = |at: usize| u16::from_le_bytes(elf[at..at + 2].try_into().unwrap()) as usize;
    let u32_at = |at: usize| u32::from_le_bytes(elf[at..at + 4].try_into().unwrap()) as usize;
    let u64_at = |at: usize| u64::from_le_bytes(elf[at..at + 8].try_into().unwrap()) as usize;
    assert_eq!(&elf[..5], b"\x7fELF\x02", "an ELF64 image");
    let (shoff, shentsize, shnum, shstrndx) =
        (u64_at(0x28), u16_at(0x3a), u16_at(0x3c), u16_at(0x3e));
    let header = |i: usize| shoff + i * shentsize;
    let strtab = u64_at(header(shstrndx) + 24);
    (0..shnum).find_map(|i| {
        let h = header(i);
        let at = strtab + u32_at(h);
        let end = at + elf[at..].iter().position(|&b| b == 0)?;
        (&elf[at..end] == name.as_bytes()).then(|| (u64_at(h + 24), u64_at(h + 32)))
    })
}

/// A cache entry with its machine code replaced: every byte of `.text` a `nop`, then
/// `exit_group(42)` at its end, so a call into any function slides down to the exit. The
/// rest of the file (whatever header or check it carries) is kept as it is: without the
/// user's key, an attacker can do no better.
fn plant_exit_42(entry: &[u8]) -> Vec<u8> {
    let elf_at = entry
        .windows(4)
        .position(|w| w == b"\x7fELF")
        .expect("the cache entry holds wasmtime's ELF artifact");
    let mut planted = entry.to_vec();
    let elf = &mut planted[elf_at..];
    let (offset, size) = section(elf, ".text").expect("a .text section");
    assert!(size > EXIT_42.len());
    let text = &mut elf[offset..offset + size];
    text.fill(0x90);
    text[size - EXIT_42.len()..].copy_from_slice(&EXIT_42);
    planted
}

/// The CLI, under the file-size limit `limit` (in 512-byte blocks) if one is given.
fn command(limit: Option<u32>) -> Command {
    match limit {
        None => Command::new(BIN),
        Some(blocks) => {
            let mut command = Command::new("sh");
            let script = format!("ulimit -f {blocks}; exec \"$0\" \"$@\"");
            command.args(["-c", &script, BIN]);
            command
        }
    }
}

/// A real cache entry: (its file name, its bytes), as this user's CLI writes it.
fn real_entry(t: &TestWorkspace, limit: Option<u32>) -> (String, Vec<u8>) {
    let cache = t.root().join("own-cache");
    let out = command(limit)
        .env("METIS_MEMORY_CACHE_DIR", &cache)
        .args(["--workspace"])
        .arg(t.root())
        .args(["--json", "status"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    let path = PathBuf::from(status["component"]["path"].as_str().expect("a cache file"));
    let name = path.file_name().unwrap().to_str().unwrap().to_owned();
    (name, fs::read(&path).unwrap())
}

/// Writes `bytes` at `path` as a clone would: 0644, in 0755 directories, this user's.
fn commit(path: &Path, bytes: &[u8]) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut dir = path.parent().unwrap();
    while dir.file_name().is_some_and(|n| n != "checkout") {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o755)).unwrap();
        dir = dir.parent().unwrap();
    }
    fs::write(path, bytes).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o644)).unwrap();
}

/// The CLI run in `checkout` (the workspace) with `envs`, and no other cache setting.
fn cli(checkout: &Path, envs: &[(&str, &Path)], args: &[&str], limit: Option<u32>) -> Output {
    let mut command = command(limit);
    command
        .env_remove("METIS_MEMORY_CACHE_DIR")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("METIS_WORKSPACE")
        .current_dir(checkout)
        .arg("--workspace")
        .arg(checkout)
        .args(args);
    for (key, value) in envs {
        command.env(key, value);
    }
    command.output().unwrap()
}

#[test]
fn a_compiled_component_planted_in_a_checkout_is_never_run() {
    planted_in_a_checkout(None);
}

/// The same, where the entry is read into memory rather than copied into a sealed memfd
/// (which a file-size limit would stop): both ways of loading check the same MAC.
#[test]
fn a_compiled_component_planted_in_a_checkout_is_never_run_under_a_file_size_limit() {
    // 4 MiB: above the compiled component's size, so entries can still be written.
    planted_in_a_checkout(Some(8192));
}

fn planted_in_a_checkout(limit: Option<u32>) {
    if !cfg!(all(target_arch = "x86_64", target_os = "linux")) {
        eprintln!("skipped: the planted machine code is x86-64 Linux code (exit_group(42))");
        return;
    }
    let t = TestWorkspace::new();
    let (name, entry) = real_entry(&t, limit);
    let planted = plant_exit_42(&entry);
    assert_ne!(planted, entry);

    let checkout = t.root().join("checkout");
    commit(
        &checkout.join(".metis/MEMORY.md"),
        b"- the build uses cargo\n",
    );
    let places: [(&str, PathBuf, PathBuf); 2] = [
        (
            "XDG_CACHE_HOME",
            checkout.join(".cache"),
            checkout.join(".cache/metis-memory"),
        ),
        (
            "METIS_MEMORY_CACHE_DIR",
            checkout.join("tools/cache"),
            checkout.join("tools/cache"),
        ),
    ];
    // Every run is made and judged before the test fails, so that a failure lists them all.
    let mut ran_planted = Vec::new();
    for (variable, value, dir) in &places {
        let file = dir.join(&name);
        let envs = [(*variable, value.as_path())];
        for (args, expected) in [
            (&["audit"][..], None),
            (&["read", "MEMORY.md"][..], Some("- the build uses cargo\n")),
            (
                &["add", "MEMORY.md", "- tests run with cargo test"][..],
                None,
            ),
        ] {
            commit(&file, &planted);
            let out = cli(&checkout, &envs, args, limit);
            let run = format!("{variable}: metis-memory {}", args.join(" "));
            if out.status.code() == Some(42) {
                ran_planted.push(run);
                continue;
            }
            assert_eq!(out.status.code(), Some(0), "{run}: {}", stderr(&out));
            if let Some(expected) = expected {
                assert_eq!(String::from_utf8_lossy(&out.stdout), expected, "{run}");
            }
            assert_ne!(
                fs::read(&file).ok().as_deref(),
                Some(&planted[..]),
                "{run}: the planted file was left in place"
            );
        }
        fs::write(
            checkout.join(".metis/MEMORY.md"),
            "- the build uses cargo\n",
        )
        .unwrap();
        if !ran_planted.is_empty() {
            continue;
        }
        // What replaced it is an entry of this user's, which the next process loads.
        let out = cli(&checkout, &envs, &["--json", "status"], limit);
        let status: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            status["component"]["source"], "cached",
            "{variable}: {status}"
        );
    }
    assert!(
        ran_planted.is_empty(),
        "these runs executed the planted machine code (exit 42):\n{}",
        ran_planted.join("\n")
    );
}
