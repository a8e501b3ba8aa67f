//! The conformance format of `tests/conformance/` (its README describes it), for both Rust
//! runners: `cli/tests/conformance.rs` (the real component through `Workspace`) and
//! `core/tests/conformance.rs` (the core with a `std::fs` shell). A runner says only how to
//! run one step; everything else a case means is here, so the two cannot drift apart:
//! reading the suites, one test per case, `given`, `expect`, the checks every step obeys,
//! and the exhaustive `final`.
//!
//! Each runner includes this file with `#[path = "…"] mod conformance_format;`. It lives in
//! a directory as `mod.rs` because cargo makes a test target of every `tests/*.rs` and
//! `tests/*/main.rs`, and of nothing else. It uses only what both test targets have:
//! `std`, `serde_json`, `sha2`, `base64` and `libtest-mimic` (hence its own [`TempDir`]).

use std::collections::BTreeMap;
use std::fs;
use std::io::ErrorKind;
use std::os::unix::fs::FileTypeExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine as _;
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

/// How one runner runs a case's steps.
pub trait Runner: Sized + 'static {
    /// The workspace at `root`, whose `.metis/` is `root/.metis` (the cases' `given` is
    /// written there, and the checks read it directly).
    fn open(root: &Path) -> Self;

    /// Runs one step (`op` or `tool`, with its arguments; [`text`] decodes the text ones)
    /// and returns `{"ok": VALUE}` or `{"error": VALUE}` in the README's shapes.
    fn run_step(&self, step: &Value) -> Value;
}

/// Runs every case of every suite as one test named `suite::case name`, then exits with
/// libtest's status.
pub fn run_all_cases<R: Runner>() -> ! {
    // Both crates that include this file sit one directory below the workspace root.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/conformance");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut trials = Vec::new();
    for path in files {
        let suite: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        for case in suite["cases"].as_array().expect("a \"cases\" array") {
            let name = format!("{stem}::{}", case["name"].as_str().expect("a case name"));
            let case = case.clone();
            trials.push(Trial::test(name, move || run_case::<R>(&case)));
        }
    }
    // A floor, not the exact count, so adding a case needs no edit here; it catches a
    // wrong directory or a suite that stopped parsing into cases.
    assert!(
        trials.len() >= 80,
        "expected at least 80 conformance cases in {}, found {}",
        dir.display(),
        trials.len()
    );
    libtest_mimic::run(&Arguments::from_args(), trials).exit()
}

fn run_case<R: Runner>(case: &Value) -> Result<(), Failed> {
    let root = TempDir::new()?;
    let runner = R::open(&root.0);
    let metis = root.0.join(".metis");
    if let Some(given) = case.get("given").and_then(Value::as_object) {
        fs::create_dir(&metis)?;
        for (name, spec) in given {
            let path = metis.join(name);
            match spec.get("directory") {
                Some(_) => fs::create_dir(&path)?,
                None => fs::write(&path, content(spec))?,
            }
        }
    }
    for (index, step) in case["steps"]
        .as_array()
        .ok_or("no steps")?
        .iter()
        .enumerate()
    {
        let before = snapshot(&metis);
        let actual = runner.run_step(step);
        let after = snapshot(&metis);
        let at = format!("step {index} ({step})");
        if let Some(expected) = step.get("expect") {
            expect_match(expected, &actual, "")
                .map_err(|e| format!("{at}: {e}\n  got: {actual:#}"))?;
        }
        check_invariants(&actual, &before, &after).map_err(|e| format!("{at}: {e}"))?;
    }
    if let Some(expected) = case.get("final").and_then(Value::as_object) {
        check_final(expected, &snapshot(&metis)).map_err(|e| format!("final: {e}"))?;
    }
    Ok(())
}

/// A content spec: a string, `{"base64"}`, `{"repeat", "times"}`, or an array of specs.
fn content(spec: &Value) -> Vec<u8> {
    match spec {
        Value::String(text) => text.as_bytes().to_vec(),
        Value::Array(parts) => parts.iter().flat_map(content).collect(),
        Value::Object(o) if o.contains_key("base64") => base64::engine::general_purpose::STANDARD
            .decode(o["base64"].as_str().unwrap())
            .unwrap(),
        Value::Object(o) if o.contains_key("repeat") => {
            content(&o["repeat"]).repeat(o["times"].as_u64().unwrap() as usize)
        }
        other => panic!("not a content spec: {other}"),
    }
}

/// The step's text argument `key` (`entry`, `old`, `new`, `content`, `base`,
/// `input_text`), a content spec like any other.
pub fn text(step: &Value, key: &str) -> String {
    String::from_utf8(content(&step[key])).expect("text arguments are UTF-8")
}

/// Every key of `expected` must match in `actual` (objects match partially, arrays
/// element by element and of equal length); `message_starts_with` checks a prefix of
/// `message`.
fn expect_match(expected: &Value, actual: &Value, path: &str) -> Result<(), String> {
    match (expected, actual) {
        (Value::Object(want), Value::Object(got)) => {
            for (key, value) in want {
                if key == "message_starts_with" {
                    let message = got.get("message").and_then(Value::as_str).unwrap_or("");
                    if !message.starts_with(value.as_str().unwrap()) {
                        return Err(format!(
                            "{path}.message: {message:?} does not start with {value}"
                        ));
                    }
                    continue;
                }
                let got = got.get(key).ok_or(format!("{path}.{key}: missing"))?;
                expect_match(value, got, &format!("{path}.{key}"))?;
            }
            Ok(())
        }
        (Value::Array(want), Value::Array(got)) if want.len() == got.len() => want
            .iter()
            .zip(got)
            .enumerate()
            .try_for_each(|(i, (w, g))| expect_match(w, g, &format!("{path}[{i}]"))),
        _ if expected == actual => Ok(()),
        _ => Err(format!("{path}: expected {expected}, got {actual}")),
    }
}

/// The only entries a step may add to `.metis/`.
const MEMORY_FILES: [&str; 2] = ["MEMORY.md", "USER.md"];

/// The rules every step obeys, whatever the case says: a refused call changes nothing
/// (whether `.metis/` exists, every entry's name, kind and bytes); no entry other than
/// the two memory files ever appears (no temporary file, no lock); a write's hashes and
/// sizes are those of the bytes before and after, and its `memory.updated` event repeats
/// them.
fn check_invariants(actual: &Value, before: &Snapshot, after: &Snapshot) -> Result<(), String> {
    if actual.get("error").is_some() && before != after {
        return Err(format!(
            "a refused call changed .metis/: before {} (exists: {}), after {} (exists: {})",
            show(&before.entries),
            before.exists,
            show(&after.entries),
            after.exists
        ));
    }
    if let Some(name) = after
        .entries
        .keys()
        .find(|n| !before.entries.contains_key(*n) && !MEMORY_FILES.contains(&n.as_str()))
    {
        return Err(format!("new entry {name} left in .metis/"));
    }
    let ok = &actual["ok"];
    // A tool call's write result is under `result`, beside its `events`.
    let result = if ok.get("events").is_some() {
        &ok["result"]
    } else {
        ok
    };
    let Some(file) = result.get("before_hash").and(result["file"].as_str()) else {
        return Ok(());
    };
    let bytes = |snapshot: &Snapshot| match snapshot.entries.get(file) {
        Some(Entry::File(bytes)) => Ok(bytes.clone()),
        None => Ok(Vec::new()),
        Some(other) => Err(format!("{file} is {other:?} around a successful write")),
    };
    let (old, new) = (bytes(before)?, bytes(after)?);
    if !after.entries.contains_key(file) {
        return Err(format!("{file} does not exist after a successful write"));
    }
    let checks = [
        ("before_hash", json!(sha256_hex(&old))),
        ("after_hash", json!(sha256_hex(&new))),
        ("before_size_bytes", json!(old.len())),
        ("after_size_bytes", json!(new.len())),
    ];
    for (key, want) in &checks {
        if result[*key] != *want {
            return Err(format!(
                "{key} is {}, but the bytes on disk give {want}",
                result[*key]
            ));
        }
    }
    if let Some(events) = ok.get("events") {
        let updated = &events[0];
        if updated["type"] != "memory.updated" || updated["payload"]["file"] != file {
            return Err(format!("the first event is not memory.updated on {file}"));
        }
        for (key, want) in &checks {
            if updated["payload"][*key] != *want {
                return Err(format!("memory.updated {key} does not match the write"));
            }
        }
    }
    Ok(())
}

/// `final` is exhaustive: `.metis/` holds exactly the entries it names (`null` ones
/// absent, nothing unnamed), and exists unless `"metis_dir": false` says it must not.
fn check_final(expected: &Map<String, Value>, found: &Snapshot) -> Result<(), String> {
    let want_dir = match expected.get("metis_dir") {
        None => true,
        Some(want) => want.as_bool().ok_or("metis_dir is not a boolean")?,
    };
    if found.exists != want_dir {
        return Err(format!(
            ".metis/ exists: {}, expected {want_dir} (holding {})",
            found.exists,
            show(&found.entries)
        ));
    }
    let mut wanted = BTreeMap::new();
    for (name, spec) in expected {
        let want = match spec {
            _ if name == "metis_dir" => continue,
            Value::Null => continue,
            spec if spec.get("directory").is_some() => Entry::Dir,
            spec => Entry::File(content(spec)),
        };
        wanted.insert(name.clone(), want);
    }
    if wanted != found.entries {
        return Err(format!(
            ".metis/ holds {}, expected exactly {}",
            show(&found.entries),
            show(&wanted)
        ));
    }
    Ok(())
}

/// One entry of `.metis/`, by kind; a regular file with its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Entry {
    File(Vec<u8>),
    Dir,
    Symlink(PathBuf),
    Other(&'static str),
}

/// Whether `.metis/` exists, and its entries.
#[derive(Debug, PartialEq, Eq)]
struct Snapshot {
    exists: bool,
    entries: BTreeMap<String, Entry>,
}

fn snapshot(metis: &Path) -> Snapshot {
    let Ok(entries) = fs::read_dir(metis) else {
        // Something that is not a directory (a file, a dangling link) still counts as
        // existing: a refused call must not create or remove it either.
        return Snapshot {
            exists: fs::symlink_metadata(metis).is_ok(),
            entries: BTreeMap::new(),
        };
    };
    let entries = entries
        .map(|e| {
            let e = e.unwrap();
            let kind = e.file_type().unwrap();
            let entry = if kind.is_file() {
                Entry::File(fs::read(e.path()).unwrap())
            } else if kind.is_dir() {
                Entry::Dir
            } else if kind.is_symlink() {
                Entry::Symlink(fs::read_link(e.path()).unwrap())
            } else if kind.is_fifo() {
                Entry::Other("fifo")
            } else if kind.is_socket() {
                Entry::Other("socket")
            } else {
                Entry::Other("special file")
            };
            (e.file_name().to_string_lossy().into_owned(), entry)
        })
        .collect();
    Snapshot {
        exists: true,
        entries,
    }
}

fn show(entries: &BTreeMap<String, Entry>) -> String {
    let shown: Vec<String> = entries
        .iter()
        .map(|(name, entry)| match entry {
            Entry::File(bytes) if bytes.len() > 80 => format!(
                "{name}: {:?}… ({} bytes)",
                String::from_utf8_lossy(&bytes[..60]),
                bytes.len()
            ),
            Entry::File(bytes) => format!("{name}: {:?}", String::from_utf8_lossy(bytes)),
            Entry::Dir => format!("{name}: a directory"),
            Entry::Symlink(to) => format!("{name}: a symlink to {}", to.display()),
            Entry::Other(kind) => format!("{name}: a {kind}"),
        })
        .collect();
    format!("{{{}}}", shown.join(", "))
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A fresh directory under the system's temporary directory, removed on drop (the core
/// has no `tempfile` dependency, and this needs none).
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> std::io::Result<TempDir> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path =
                std::env::temp_dir().join(format!("metis-conformance-{}-{n}", std::process::id()));
            match fs::create_dir(&path) {
                Ok(()) => return Ok(TempDir(path)),
                Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}
