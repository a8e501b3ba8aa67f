//! The per-user key that authenticates compiled-component cache entries
//! (docs/security.md, "The compiled-component cache"): found through the password
//! database, never through `$HOME` or `$XDG_*`; created 0600 in a 0700 directory when
//! missing; and not used (the cache is off, every call still works) when it is a link,
//! readable or writable by others, someone else's, not 32 bytes, or in a directory others
//! can write.
//!
//! The key lives in this user's real home. Each test runs the CLI in a private mount
//! namespace (`unshare -m`) with a directory of its own mounted over the key's directory,
//! so the real key is neither seen nor touched; where the machine gives no mount
//! namespace, the tests say so and pass.

use crate::common;

use std::ffi::CStr;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::TestWorkspace;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_metis-memory");

/// Under the home directory the password database gives this user, the directory that
/// holds the key's directory (`metis-memory/`), and the key's name there.
const STATE_DIR: &str = ".local/state";
const KEY_DIR: &str = "metis-memory";
const KEY_FILE: &str = "cache-key";

/// This user's home directory, from the password database (not `$HOME`).
fn passwd_home() -> PathBuf {
    // SAFETY: getpwuid returns a pointer to static storage or null; it is read at once,
    // on a single thread's behalf (tests that call it do not race other getpw* calls).
    unsafe {
        let entry = libc::getpwuid(libc::geteuid());
        assert!(!entry.is_null(), "this user has no password entry");
        PathBuf::from(CStr::from_ptr((*entry).pw_dir).to_str().unwrap())
    }
}

/// Whether this machine gives a mount namespace in which bind mounts can be made.
fn mount_namespaces() -> bool {
    let ok = Command::new("unshare")
        .args(["-m", "sh", "-c", "mount -t tmpfs none /mnt"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: this machine gives no mount namespace (`unshare -m` with mounts)");
    }
    ok
}

/// The CLI, in a mount namespace where `state` is mounted over this user's
/// `~/.local/state` (so the key is `state/metis-memory/cache-key`), with the cache in
/// `cache`, `$HOME` and `$XDG_*` pointing elsewhere.
fn cli(t: &TestWorkspace, state: &Path, cache: &Path, args: &[&str]) -> Output {
    let real = passwd_home().join(STATE_DIR);
    // The mount point must exist: the library makes the same directories (0700) on first
    // use.
    let mut builder = fs::DirBuilder::new();
    std::os::unix::fs::DirBuilderExt::mode(builder.recursive(true), 0o700);
    builder.create(&real).unwrap();
    let decoy = t.root().join("decoy-home");
    fs::create_dir_all(&decoy).unwrap();
    Command::new("unshare")
        .args([
            "-m",
            "sh",
            "-c",
            r#"mount --bind "$1" "$2" && shift 2 && exec "$@""#,
            "sh",
        ])
        .arg(state)
        .arg(&real)
        .arg(BIN)
        .arg("--workspace")
        .arg(t.root())
        .args(args)
        .env("METIS_MEMORY_CACHE_DIR", cache)
        .env("HOME", &decoy)
        .env("XDG_STATE_HOME", decoy.join("state"))
        .env("XDG_CONFIG_HOME", decoy.join("config"))
        .env("XDG_DATA_HOME", decoy.join("data"))
        .env_remove("METIS_WORKSPACE")
        .output()
        .unwrap()
}

/// `status --json`'s `component`: (source, reason).
fn component(t: &TestWorkspace, state: &Path, cache: &Path) -> (String, String) {
    let out = cli(t, state, cache, &["--json", "status"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = |key: &str| {
        status["component"][key]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    (text("source"), text("reason"))
}

/// A write and a read work, however the component was loaded.
fn works(t: &TestWorkspace, state: &Path, cache: &Path) {
    let out = cli(t, state, cache, &["add", "MEMORY.md", "- still works"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = cli(t, state, cache, &["read", "MEMORY.md"]);
    assert!(String::from_utf8_lossy(&out.stdout).ends_with("- still works\n"));
}

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
}

fn private_dir(path: &Path) {
    fs::create_dir_all(path).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o700)).unwrap();
}

fn cache_files(dir: &Path) -> Vec<PathBuf> {
    fs::read_dir(dir)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default()
}

#[test]
fn a_missing_key_is_made_private_where_the_password_database_says_not_where_home_says() {
    if !mount_namespaces() {
        return;
    }
    let t = TestWorkspace::new();
    // `~/.local/state` with no `metis-memory/` in it yet.
    let state = t.root().join("state");
    fs::create_dir(&state).unwrap();
    fs::set_permissions(&state, fs::Permissions::from_mode(0o755)).unwrap();
    let cache = t.root().join("cache");
    assert_eq!(component(&t, &state, &cache).0, "compiled");
    let key_dir = state.join(KEY_DIR);
    assert_eq!(mode(&key_dir), 0o700);
    let key = key_dir.join(KEY_FILE);
    let meta = fs::symlink_metadata(&key).expect("the key was made");
    assert!(meta.is_file());
    assert_eq!(meta.len(), 32);
    assert_eq!(mode(&key), 0o600);
    // SAFETY: geteuid cannot fail.
    assert_eq!(meta.uid(), unsafe { libc::geteuid() });
    let first = fs::read(&key).unwrap();
    assert_ne!(first, [0; 32]);
    assert_eq!(
        cache_files(&key_dir),
        std::slice::from_ref(&key),
        "no temporary file left"
    );
    assert!(
        fs::read_dir(t.root().join("decoy-home"))
            .unwrap()
            .next()
            .is_none(),
        "nothing was made under $HOME or $XDG_*"
    );
    // The next process uses the same key, and so loads the entry.
    assert_eq!(component(&t, &state, &cache).0, "cached");
    assert_eq!(fs::read(&key).unwrap(), first);
    works(&t, &state, &cache);
}

/// Makes an unusable key in the key's directory it is given.
type MakeKey = Box<dyn Fn(&Path)>;

/// Each unusable key turns the cache off: the component is compiled in memory, nothing is
/// written to the cache directory, the key is left as it is, and every call works.
#[test]
fn a_key_that_is_a_link_shared_someone_elses_or_the_wrong_size_is_not_used() {
    if !mount_namespaces() {
        return;
    }
    let t = TestWorkspace::new();
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    const GOOD: [u8; 32] = [7; 32];
    let mut cases: Vec<(&str, MakeKey)> = vec![
        (
            "a link to a private key file",
            Box::new(|dir: &Path| {
                let target = dir.parent().unwrap().join("key-elsewhere");
                fs::write(&target, GOOD).unwrap();
                fs::set_permissions(&target, fs::Permissions::from_mode(0o600)).unwrap();
                std::os::unix::fs::symlink(&target, dir.join(KEY_FILE)).unwrap();
            }),
        ),
        (
            "readable by others (0644)",
            Box::new(|dir| key(dir, &GOOD, 0o644)),
        ),
        (
            "readable by the group (0640)",
            Box::new(|dir| key(dir, &GOOD, 0o640)),
        ),
        (
            "writable by the group (0620)",
            Box::new(|dir| key(dir, &GOOD, 0o620)),
        ),
        ("empty", Box::new(|dir| key(dir, b"", 0o600))),
        ("too short", Box::new(|dir| key(dir, &GOOD[..16], 0o600))),
        (
            "in a directory others can write",
            Box::new(|dir| {
                key(dir, &GOOD, 0o600);
                fs::set_permissions(dir, fs::Permissions::from_mode(0o777)).unwrap();
            }),
        ),
        (
            "a directory, not a file",
            Box::new(|dir| fs::create_dir(dir.join(KEY_FILE)).unwrap()),
        ),
    ];
    if root {
        cases.push((
            "someone else's (uid 65534)",
            Box::new(|dir| {
                key(dir, &GOOD, 0o600);
                std::os::unix::fs::chown(dir.join(KEY_FILE), Some(65534), Some(65534)).unwrap();
            }),
        ));
    } else {
        eprintln!("not run: a key owned by someone else (needs root to chown)");
    }
    for (i, (what, make)) in cases.iter().enumerate() {
        let state = t.root().join(format!("state-{i}"));
        let key_dir = state.join(KEY_DIR);
        private_dir(&key_dir);
        make(&key_dir);
        let before = common::snapshot_of(&state);
        let cache = t.root().join(format!("cache-{i}"));
        let (how, why) = component(&t, &state, &cache);
        assert_eq!(how, "uncached", "a key {what}: {why}");
        assert!(why.contains("key"), "a key {what}: {why}");
        works(&t, &state, &cache);
        assert!(
            cache_files(&cache).is_empty(),
            "a key {what}: something was written to the cache"
        );
        assert_eq!(
            common::snapshot_of(&state),
            before,
            "a key {what}: the key directory was changed"
        );
    }
}

fn key(dir: &Path, bytes: &[u8], mode: u32) {
    let path = dir.join(KEY_FILE);
    fs::write(&path, bytes).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
}
