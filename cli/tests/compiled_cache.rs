//! The compiled-component cache (host/src/cache/), through the real CLI: the first
//! process compiles and keeps the result, the next ones load it; anything wrong with the
//! cache costs a compile, never a call. The attack the entries' MAC stops is in
//! `planted_cache.rs`, the key's checks in `cache_key.rs`.

use crate::common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::TestWorkspace;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_metis-memory");

/// Runs the CLI on `t` with the cache directory `cache` (`off`, or a path).
fn run(t: &TestWorkspace, cache: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .env(metis_memory::CACHE_DIR_ENV, cache)
        .arg("--workspace")
        .arg(t.root())
        .args(args)
        .output()
        .unwrap()
}

/// `status --json`'s account of the component: (source, path or reason).
fn source(t: &TestWorkspace, cache: &Path) -> (String, String) {
    let (how, path, reason) = component(t, cache);
    match how.as_str() {
        "uncached" => (how, reason),
        _ => (how, path),
    }
}

/// `status --json`'s `component`: (source, path, reason), `""` for a null.
fn component(t: &TestWorkspace, cache: &Path) -> (String, String, String) {
    let out = run(t, cache, &["--json", "status"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    let component = &status["component"];
    let text = |key: &str| component[key].as_str().unwrap_or_default().to_owned();
    (text("source"), text("path"), text("reason"))
}

fn cache_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
}

/// A write and a read work: the component, however it was loaded, runs.
fn works(t: &TestWorkspace, cache: &Path) {
    let out = run(t, cache, &["add", "MEMORY.md", "- still works"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(t, cache, &["read", "MEMORY.md"]);
    assert!(String::from_utf8_lossy(&out.stdout).ends_with("- still works\n"));
}

#[test]
fn the_first_process_compiles_and_keeps_it_privately_the_next_loads_it() {
    let t = TestWorkspace::new();
    let cache = t.root().join("cache");
    let (how, path) = source(&t, &cache);
    assert_eq!(how, "compiled");
    assert_eq!(cache_files(&cache), [PathBuf::from(&path)]);
    assert_eq!(mode(&cache), 0o700);
    assert_eq!(mode(Path::new(&path)), 0o600);
    assert_eq!(source(&t, &cache), ("cached".into(), path));
    works(&t, &cache);
}

#[test]
fn a_corrupt_or_truncated_cache_file_is_compiled_again() {
    let t = TestWorkspace::new();
    let cache = t.root().join("cache");
    let (_, path) = source(&t, &cache);
    let good = fs::read(&path).unwrap();
    for bad in [
        b"not a compiled component".to_vec(),
        good[..good.len() / 2].to_vec(),
        Vec::new(),
    ] {
        fs::write(&path, &bad).unwrap();
        assert_eq!(source(&t, &cache).0, "compiled");
        assert_eq!(fs::read(&path).unwrap(), good, "rewritten whole");
        works(&t, &cache);
    }
}

#[test]
fn a_cache_directory_others_can_write_is_not_used() {
    let t = TestWorkspace::new();
    let cache = t.root().join("cache");
    fs::create_dir(&cache).unwrap();
    fs::set_permissions(&cache, fs::Permissions::from_mode(0o777)).unwrap();
    let (how, why) = source(&t, &cache);
    assert_eq!(how, "uncached");
    assert!(why.contains("only this user can write"), "{why}");
    assert!(cache_files(&cache).is_empty());
    works(&t, &cache);
}

#[test]
fn a_cache_file_others_can_write_or_a_link_is_replaced_not_loaded() {
    let t = TestWorkspace::new();
    let cache = t.root().join("cache");
    let (_, path) = source(&t, &cache);
    fs::set_permissions(&path, fs::Permissions::from_mode(0o666)).unwrap();
    assert_eq!(source(&t, &cache).0, "compiled");
    assert_eq!(mode(Path::new(&path)), 0o600);

    let elsewhere = t.root().join("elsewhere.cwasm");
    fs::rename(&path, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
    assert_eq!(source(&t, &cache).0, "compiled");
    assert!(
        fs::symlink_metadata(&path).unwrap().is_file(),
        "the link was replaced"
    );
    assert!(elsewhere.exists());
}

#[test]
fn off_or_an_unusable_directory_compiles_in_memory_and_every_call_works() {
    let t = TestWorkspace::new();
    assert_eq!(source(&t, Path::new("off")).0, "uncached");
    works(&t, Path::new("off"));
    let not_a_dir = t.root().join("file");
    fs::write(&not_a_dir, "x").unwrap();
    let (how, why) = source(&t, &not_a_dir);
    assert_eq!(how, "uncached", "{why}");
    works(&t, &not_a_dir);
}

/// Under a file-size limit below the compiled component's size the cache cannot be
/// written, nor can copy-on-write images or entries be copied into memfd files: the
/// component is compiled in memory and copies its initial memory, and every call still
/// works, whether or not an entry made without a limit (for another engine setting, so
/// under another name) is there. SIGXFSZ keeps its default action (ending the process),
/// as in a user's shell: the cache must not try a write the limit forbids.
#[test]
fn under_a_file_size_limit_calls_work_with_or_without_a_cache_file() {
    let t = TestWorkspace::new();
    let limited = |cache: &Path, args: &[&str]| {
        let script = "ulimit -f 64; c=$1; ws=$2; shift 2; METIS_MEMORY_CACHE_DIR=$c exec \"$0\" --workspace \"$ws\" \"$@\"";
        Command::new("sh")
            .args(["-c", script, BIN])
            .arg(cache)
            .arg(t.root())
            .args(args)
            .output()
            .unwrap()
    };
    let empty = t.root().join("empty-cache");
    let out = limited(&empty, &["--json", "status"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["component"]["source"], "uncached", "{status}");
    assert!(
        status["component"]["reason"]
            .as_str()
            .unwrap()
            .contains("file size limit"),
        "{status}"
    );
    assert!(cache_files(&empty).is_empty(), "no partial file left");
    let out = limited(&empty, &["add", "MEMORY.md", "- under a limit"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let warm = t.root().join("warm-cache");
    assert_eq!(source(&t, &warm).0, "compiled");
    let out = limited(&warm, &["add", "MEMORY.md", "- from the cache"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        fs::read_to_string(t.metis().join("MEMORY.md")).unwrap(),
        "- under a limit\n- from the cache\n"
    );
}

/// Under a file-size limit above the entry's size, the entry is written, and the next
/// process loads it by reading it into memory (a sealed memfd is a file the limit would
/// stop): the path an entry takes where memfd files cannot be had.
#[test]
fn under_a_file_size_limit_an_entry_is_read_into_memory() {
    let t = TestWorkspace::new();
    let cache = t.root().join("cache");
    let limited = |args: &[&str]| {
        // 8192 blocks of 512 bytes: 4 MiB, above the compiled component's size.
        let script = "ulimit -f 8192; c=$1; ws=$2; shift 2; METIS_MEMORY_CACHE_DIR=$c exec \"$0\" --workspace \"$ws\" \"$@\"";
        Command::new("sh")
            .args(["-c", script, BIN])
            .arg(&cache)
            .arg(t.root())
            .args(args)
            .output()
            .unwrap()
    };
    let status = |out: Output| -> Value {
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let first = status(limited(&["--json", "status"]));
    assert_eq!(first["component"]["source"], "compiled", "{first}");
    let second = status(limited(&["--json", "status"]));
    assert_eq!(second["component"]["source"], "cached", "{second}");
    assert_eq!(second["component"]["path"], first["component"]["path"]);
    let out = limited(&["add", "MEMORY.md", "- under a limit"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = limited(&["read", "MEMORY.md"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "- under a limit\n");
}

/// A relative cache directory would resolve inside whatever directory the process runs
/// in, perhaps a cloned repository whose committed files would be loaded as compiled
/// code: a relative `METIS_MEMORY_CACHE_DIR` turns the cache off, a relative
/// `XDG_CACHE_HOME` is ignored (as the XDG specification says) in favour of `~/.cache`.
#[test]
fn a_relative_cache_directory_is_never_used() {
    let t = TestWorkspace::new();
    // A loadable compiled component, planted where the relative name leads.
    let (_, planted) = source(&t, &t.root().join("cache"));
    let status = |envs: &[(&str, &Path)]| -> Value {
        let mut command = Command::new(BIN);
        command
            .env_remove(metis_memory::CACHE_DIR_ENV)
            .current_dir(t.root())
            .args(["--json", "status"]);
        for (key, value) in envs {
            command.env(key, value);
        }
        let out = command.output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        serde_json::from_slice(&out.stdout).unwrap()
    };

    let explicit = status(&[(metis_memory::CACHE_DIR_ENV, Path::new("cache"))]);
    assert_eq!(explicit["component"]["source"], "uncached", "{explicit}");
    assert!(
        explicit["component"]["reason"]
            .as_str()
            .unwrap()
            .contains("not an absolute path"),
        "{explicit}"
    );

    let home = t.root().join("home");
    fs::create_dir(&home).unwrap();
    fs::create_dir_all(t.root().join("xdg/metis-memory")).unwrap();
    fs::copy(
        &planted,
        t.root()
            .join("xdg/metis-memory")
            .join(Path::new(&planted).file_name().unwrap()),
    )
    .unwrap();
    let xdg = status(&[("XDG_CACHE_HOME", Path::new("xdg")), ("HOME", &home)]);
    assert_eq!(xdg["component"]["source"], "compiled", "{xdg}");
    assert!(
        xdg["component"]["path"]
            .as_str()
            .unwrap()
            .starts_with(home.join(".cache/metis-memory").to_str().unwrap()),
        "{xdg}"
    );
}

/// This user's cache key (docs/security.md, "The compiled-component cache"), read from
/// where the library keeps it: `~/.local/state/metis-memory/cache-key` under the home
/// directory of the password database. The library has made it by now.
fn user_key() -> Vec<u8> {
    // SAFETY: getpwuid returns a pointer to static storage or null, read at once.
    let home = unsafe {
        let entry = libc::getpwuid(libc::geteuid());
        assert!(!entry.is_null());
        PathBuf::from(std::ffi::CStr::from_ptr((*entry).pw_dir).to_str().unwrap())
    };
    fs::read(home.join(".local/state/metis-memory/cache-key")).unwrap()
}

/// An entry as the library writes it: header, HMAC-SHA256 under `key` of the header, the
/// file name, a newline and the payload, then the payload.
fn seal(key: &[u8], name: &str, payload: &[u8]) -> Vec<u8> {
    use sha2::{Digest, Sha256};
    const HEADER: &[u8] = b"metis-memory cache entry v1\n";
    let mut block = [0u8; 64];
    block[..key.len()].copy_from_slice(key);
    let mut inner = Sha256::new();
    inner.update(block.map(|b| b ^ 0x36));
    inner.update(HEADER);
    inner.update(name.as_bytes());
    inner.update(b"\n");
    inner.update(payload);
    let mut outer = Sha256::new();
    outer.update(block.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    [HEADER, &outer.finalize()[..], payload].concat()
}

/// The component with no exports, compiled by an engine with the library's settings, so
/// that wasmtime accepts it.
fn another_component() -> Vec<u8> {
    let mut config = wasmtime::Config::new();
    config.consume_fuel(true).memory_init_cow(true);
    let engine = wasmtime::Engine::new(&config).unwrap();
    let empty_component = b"\0asm\x0d\x00\x01\x00";
    engine.precompile_component(empty_component).unwrap()
}

/// An entry of this user's with a right MAC that wasmtime accepts but that is another
/// component (which only a collision of the component's SHA-256 could give) does not link
/// against the store's world: it is compiled again, not an error.
#[test]
fn a_cache_file_holding_another_component_is_compiled_again() {
    let t = TestWorkspace::new();
    let cache = t.root().join("cache");
    let (_, path) = source(&t, &cache);
    let good = fs::read(&path).unwrap();
    let name = Path::new(&path).file_name().unwrap().to_str().unwrap();
    fs::write(&path, seal(&user_key(), name, &another_component())).unwrap();

    let (how, again, reason) = component(&t, &cache);
    assert_eq!((how.as_str(), again.as_str()), ("compiled", path.as_str()));
    assert!(reason.contains("did not link"), "{reason}");
    assert_eq!(fs::read(&path).unwrap(), good, "rewritten whole");
    works(&t, &cache);
}

/// The MAC binds the entry's name (the component's SHA-256 and the engine): an entry of
/// this user's made for another name, moved under this one, is compiled again; so is
/// wasmtime's bare output (no header, no MAC), as the cache held before it had a key, and
/// one sealed under another key.
#[test]
fn an_entry_moved_from_another_name_bare_or_under_another_key_is_compiled_again() {
    let t = TestWorkspace::new();
    let cache = t.root().join("cache");
    let (_, path) = source(&t, &cache);
    let good = fs::read(&path).unwrap();
    let name = Path::new(&path).file_name().unwrap().to_str().unwrap();
    let payload = &good[28 + 32..];
    // The same engine, another component's SHA-256.
    let other = name.replacen(&name["component-".len()..][..64], &"0".repeat(64), 1);
    assert_ne!(other, name);
    for (what, bytes) in [
        (
            "moved from another name",
            seal(&user_key(), &other, payload),
        ),
        ("bare", payload.to_vec()),
        ("under another key", seal(&[7u8; 32], name, payload)),
    ] {
        fs::write(&path, bytes).unwrap();
        let (how, _, reason) = component(&t, &cache);
        assert_eq!(how, "compiled", "{what}: {reason}");
        assert_eq!(fs::read(&path).unwrap(), good, "{what}: rewritten whole");
    }
    assert_eq!(component(&t, &cache).0, "cached");
}
