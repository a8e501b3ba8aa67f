//! Helpers shared by the integration tests: a temporary workspace and exact snapshots
//! of what is on disk. Every test drives the real component through wasmtime.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use metis_memory::{Error, MemoryFile, StoreError, Workspace};
use sha2::{Digest, Sha256};
use tempfile::TempDir;

pub const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// A fresh workspace in a temporary directory, removed when dropped.
pub struct TestWorkspace {
    _dir: TempDir,
    pub ws: Workspace,
}

impl TestWorkspace {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path());
        TestWorkspace { _dir: dir, ws }
    }

    pub fn root(&self) -> &Path {
        self.ws.root()
    }

    pub fn metis(&self) -> PathBuf {
        self.ws.metis_dir()
    }

    pub fn path(&self, file: MemoryFile) -> PathBuf {
        self.metis().join(file.file_name())
    }

    /// Puts `bytes` in the file directly, creating `.metis/` as needed.
    pub fn put(&self, file: MemoryFile, bytes: impl AsRef<[u8]>) {
        fs::create_dir_all(self.metis()).unwrap();
        fs::write(self.path(file), bytes).unwrap();
    }

    /// The file's bytes on disk, or `None` when it is missing.
    pub fn bytes(&self, file: MemoryFile) -> Option<Vec<u8>> {
        fs::read(self.path(file)).ok()
    }

    /// Every entry under the workspace, with its kind and bytes: equal snapshots mean
    /// nothing on disk changed.
    pub fn snapshot(&self) -> BTreeMap<PathBuf, String> {
        snapshot_of(self.root())
    }

    /// The names in `.metis/` (empty when it is missing).
    pub fn metis_names(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(self.metis())
            .map(|dir| {
                dir.map(|e| e.unwrap().file_name().into_string().unwrap())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }
}

/// Every entry under `root`, with its kind and bytes (links are not followed).
pub fn snapshot_of(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut entries = BTreeMap::new();
    snapshot_into(root, root, &mut entries);
    entries
}

fn snapshot_into(root: &Path, dir: &Path, entries: &mut BTreeMap<PathBuf, String>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let meta = fs::symlink_metadata(&path).unwrap();
        let rel = path.strip_prefix(root).unwrap().to_path_buf();
        let ft = meta.file_type();
        let described = if ft.is_symlink() {
            format!("symlink -> {}", fs::read_link(&path).unwrap().display())
        } else if ft.is_dir() {
            snapshot_into(root, &path, entries);
            "dir".to_owned()
        } else if ft.is_file() {
            format!("file {}", sha256_hex(&fs::read(&path).unwrap()))
        } else {
            "special".to_owned()
        };
        entries.insert(rel, described);
    }
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The store error inside `result`, failing the test on anything else.
#[track_caller]
pub fn store_error<T: std::fmt::Debug>(result: Result<T, Error>) -> (StoreError, String) {
    match result {
        Err(Error::Store { error, message }) => (error, message),
        other => panic!("expected a store error, got {other:?}"),
    }
}

/// One filesystem call the component made: its WIT name and the path it named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    pub function: &'static str,
    pub path: Option<String>,
    /// The destination of `link-at` and `rename-at`.
    pub to: Option<String>,
}

/// A fault hook that lets every call run and records it.
pub fn recorder() -> (metis_memory::faults::FaultHook, Arc<Mutex<Vec<Recorded>>>) {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&calls);
    let hook = metis_memory::faults::FaultHook::new(move |call| {
        log.lock().unwrap().push(Recorded {
            function: call.function,
            path: call.path.map(str::to_owned),
            to: call.to.map(str::to_owned),
        });
        None
    });
    (hook, calls)
}

/// Sets the modification time of `.metis/`'s lock and temporary files ten seconds back,
/// so the next writer treats them as a dead writer's at once instead of waiting out a
/// lease (the wait itself is tested in concurrency.rs). Returns their names.
pub fn age_leftovers(t: &TestWorkspace) -> Vec<String> {
    let leftovers: Vec<String> = t
        .metis_names()
        .into_iter()
        .filter(|n| n != "MEMORY.md" && n != "USER.md")
        .collect();
    for name in &leftovers {
        if let Ok(file) = fs::File::options().write(true).open(t.metis().join(name)) {
            file.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(10))
                .unwrap();
        }
    }
    leftovers
}

/// Runs the `metis-memory` CLI on `t`'s workspace with `args`, `stdin` as its input.
pub fn run_cli(t: &TestWorkspace, args: &[&str], stdin: &str) -> std::process::Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_metis-memory"))
        .arg("--workspace")
        .arg(t.root())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A CLI that refuses an input too large stops reading it: the rest meets a closed pipe.
    match child.stdin.take().unwrap().write_all(stdin.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        written => written.unwrap(),
    }
    child.wait_with_output().unwrap()
}

/// Runs the CLI on `t`'s workspace with `args`, the variables `env` set (and
/// `METIS_WORKSPACE` removed), `stdin` fed from another thread so a large input cannot
/// block on a full pipe while the CLI writes.
pub fn run_cli_with(
    t: &TestWorkspace,
    args: &[&str],
    env: &[(&str, &str)],
    stdin: Vec<u8>,
) -> std::process::Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_metis-memory"))
        .arg("--workspace")
        .arg(t.root())
        .args(args)
        .env_remove("METIS_WORKSPACE")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        // The CLI may stop reading an input it refuses: a closed pipe is expected.
        let _ = pipe.write_all(&stdin);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    out
}

/// A CLI run's stdout as text.
pub fn stdout(out: &std::process::Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// A CLI run's stderr as text.
pub fn stderr(out: &std::process::Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

/// A CLI run's stdout as JSON, or a failure that shows what it was instead.
pub fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(out)))
}

/// `command` kept from the machine's git configuration, with an identity to commit as
/// and the compiled-component cache off: for tests that drive real git.
pub fn git_sandboxed(command: &mut std::process::Command) -> &mut std::process::Command {
    command
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        .env("METIS_MEMORY_CACHE_DIR", "off")
        .env_remove("METIS_WORKSPACE")
}
