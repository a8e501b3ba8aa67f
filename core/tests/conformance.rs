//! Runs every case in `tests/conformance/` (the format is in its README) natively through
//! `metis-memory-core`, one test per case, with a small `std::fs` shell standing in for the
//! component: the same decisions as the real thing, without a component rebuild, so
//! `scripts/mutants` can afford to run every case against every mutant.
//!
//! The shell does what `guest/` does around the core: a read is a stat that does not
//! follow links (anything but a regular file is `not-a-regular-file`, a missing file is
//! empty), a write is `plan_write`, the tools' scan on the new content, then a temporary
//! file renamed over the target; `.metis/` is created only by a write that succeeds. The
//! JSON shapes are `host/src/json.rs`'s, the error kinds the WIT case names.

use std::collections::BTreeMap;
use std::fs;
use std::io::{ErrorKind, Write as _};
use std::os::unix::fs::{DirBuilderExt, FileTypeExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine as _;
use libtest_mimic::{Arguments, Failed, Trial};
use metis_memory_core::scan::{self, ScanPolicy};
use metis_memory_core::{
    Edit, MemoryEvent, MemoryFile, Operation, StoreError, TOOL_DEFINITIONS, WriteResult,
    assemble_system_prompt, events, into_text, parse_tool_call, plan_write, success_text,
};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/conformance");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
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
            trials.push(Trial::test(name, move || run_case(&case)));
        }
    }
    assert!(
        trials.len() >= 80,
        "expected at least 80 conformance cases in {}, found {}",
        dir.display(),
        trials.len()
    );
    libtest_mimic::run(&Arguments::from_args(), trials).exit();
}

// ---------------------------------------------------------------------------------------
// The shell: what the guest and the host do around the core, with `std::fs`.

/// A workspace whose `.metis/` the shell reads and writes.
struct Shell {
    metis: PathBuf,
}

impl Shell {
    /// The file's bytes; empty when missing. Links are not followed.
    fn read(&self, file: MemoryFile) -> Result<Vec<u8>, StoreError> {
        let path = self.metis.join(file.file_name());
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_file() => {
                fs::read(&path).map_err(|e| io_error(file, "read", &e))
            }
            Ok(_) => Err(StoreError::NotARegularFile { file }),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(io_error(file, "stat", &e)),
        }
    }

    fn stat(&self, file: MemoryFile) -> Result<Option<u64>, StoreError> {
        match fs::symlink_metadata(self.metis.join(file.file_name())) {
            Ok(meta) if meta.file_type().is_file() => Ok(Some(meta.len())),
            Ok(_) => Err(StoreError::NotARegularFile { file }),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_error(file, "stat", &e)),
        }
    }

    fn read_text(&self, file: MemoryFile) -> Result<String, StoreError> {
        into_text(file, self.read(file)?)
    }

    /// The one write path: the core's plan, `vet` on the new content, then an atomic
    /// replace (creating `.metis/` first if this is its first write).
    fn write<E: From<StoreError>>(
        &self,
        file: MemoryFile,
        edit: Edit<'_>,
        vet: impl FnOnce(&str) -> Result<(), E>,
    ) -> Result<WriteResult, E> {
        let mut read = false;
        let planned = plan_write(file, edit, || {
            read = true;
            self.read(file)
        })?;
        if !read {
            return Err(StoreError::Io {
                file,
                message: "internal: a write was planned without reading the file".into(),
            }
            .into());
        }
        vet(std::str::from_utf8(&planned.after).unwrap_or_default())?;
        let result = planned.result();
        self.replace(file, &planned.after)?;
        Ok(result)
    }

    fn replace(&self, file: MemoryFile, bytes: &[u8]) -> Result<(), StoreError> {
        let created = match fs::DirBuilder::new().mode(0o700).create(&self.metis) {
            Ok(()) => true,
            Err(e) if e.kind() == ErrorKind::AlreadyExists => false,
            Err(e) => return Err(io_error(file, "create .metis", &e)),
        };
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let token = u64::from(std::process::id()) << 32 | NEXT.fetch_add(1, Ordering::Relaxed);
        let temp = self
            .metis
            .join(metis_memory_core::lock::temp_name(file, token));
        let outcome = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
            .map_err(|e| io_error(file, "write temporary file", &e))
            .and_then(|()| {
                fs::rename(&temp, self.metis.join(file.file_name())).map_err(|e| match e.kind() {
                    ErrorKind::IsADirectory => StoreError::NotARegularFile { file },
                    _ => io_error(file, "rename", &e),
                })
            });
        if outcome.is_err() {
            let _ = fs::remove_file(&temp);
            if created {
                let _ = fs::remove_dir(&self.metis);
            }
        }
        outcome
    }

    /// A tool call as `tools.call` makes it, with the full scan.
    fn call_tool(&self, name: &str, input: &str) -> Result<ToolSuccess, String> {
        let call = parse_tool_call(name, input)?;
        let operation = call.operation();
        let file = call.file();
        let vet = |content: &str| match scan::scan(content, ScanPolicy::ALL) {
            Some(finding) => Err(Refusal(finding.message(file))),
            None => Ok(()),
        };
        let result = self.write(file, call.edit(), vet).map_err(|Refusal(m)| m)?;
        Ok(ToolSuccess {
            text: success_text(operation, &result),
            events: events(operation, &result),
            operation,
            result,
        })
    }
}

struct Refusal(String);

impl From<StoreError> for Refusal {
    fn from(error: StoreError) -> Self {
        Refusal(error.to_string())
    }
}

struct ToolSuccess {
    text: String,
    operation: Operation,
    result: WriteResult,
    events: Vec<MemoryEvent>,
}

fn io_error(file: MemoryFile, action: &str, e: &std::io::Error) -> StoreError {
    StoreError::Io {
        file,
        message: format!("{action} failed: {e}"),
    }
}

// ---------------------------------------------------------------------------------------
// JSON shapes: `host/src/json.rs`'s field names, and the WIT case names as error kinds.

fn write_result_json(r: &WriteResult) -> Value {
    json!({
        "file": r.file.file_name(),
        "before_hash": r.before_hash,
        "after_hash": r.after_hash,
        "before_size_bytes": r.before_size_bytes,
        "after_size_bytes": r.after_size_bytes,
        "over_soft_cap": r.over_soft_cap,
        "over_hard_cap": r.over_hard_cap,
    })
}

fn error_kind(error: &StoreError) -> &'static str {
    match error {
        StoreError::HardCapExceeded { .. } => "hard-cap-exceeded",
        StoreError::EmptyEntry => "empty-entry",
        StoreError::NothingToReplace { .. } => "nothing-to-replace",
        StoreError::NotFound { .. } => "not-found",
        StoreError::NotUnique { .. } => "not-unique",
        StoreError::InvalidUtf8 { .. } => "invalid-utf8",
        StoreError::NotARegularFile { .. } => "not-a-regular-file",
        StoreError::Busy { .. } => "busy",
        StoreError::Io { .. } => "io",
    }
}

fn error_json(error: &StoreError) -> Value {
    let mut value = json!({ "kind": error_kind(error), "message": error.to_string() });
    match error {
        StoreError::HardCapExceeded {
            file,
            attempted,
            cap,
        } => {
            value["file"] = file.file_name().into();
            value["attempted_bytes"] = (*attempted).into();
            value["cap_bytes"] = (*cap).into();
        }
        StoreError::NotUnique { count, .. } => value["count"] = (*count).into(),
        StoreError::InvalidUtf8 { file, offset } => {
            value["file"] = file.file_name().into();
            value["offset"] = (*offset).into();
        }
        StoreError::NotARegularFile { file } => value["file"] = file.file_name().into(),
        _ => {}
    }
    value
}

fn tool_success_json(success: &ToolSuccess) -> Value {
    let mut result = write_result_json(&success.result);
    result["operation"] = success.operation.name().into();
    json!({
        "is_error": false,
        "text": success.text,
        "result": result,
        "events": success.events.iter().map(event_json).collect::<Vec<_>>(),
    })
}

fn event_json(event: &MemoryEvent) -> Value {
    match event {
        MemoryEvent::Updated { operation, result } => json!({
            "type": "memory.updated",
            "payload": {
                "file": result.file.file_name(),
                "operation": operation.name(),
                "before_hash": result.before_hash,
                "after_hash": result.after_hash,
                "before_size_bytes": result.before_size_bytes,
                "after_size_bytes": result.after_size_bytes,
            },
        }),
        MemoryEvent::Eviction {
            file,
            size_before_bytes,
            size_after_bytes,
        } => json!({
            "type": "memory.eviction",
            "payload": {
                "file": file.file_name(),
                "trigger": "size_cap_exceeded",
                "entries_evicted": 0,
                "size_before_bytes": size_before_bytes,
                "size_after_bytes": size_after_bytes,
            },
        }),
    }
}

fn tool_definitions_json() -> Value {
    TOOL_DEFINITIONS
        .iter()
        .map(|tool| {
            json!({
                "name": tool.name,
                "description": tool.description,
                "input_schema": serde_json::from_str::<Value>(tool.input_schema)
                    .unwrap_or_else(|_| Value::String(tool.input_schema.into())),
            })
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// The runner: as `host/tests/conformance.rs`, with `final` exhaustive.

fn run_case(case: &Value) -> Result<(), Failed> {
    let dir = TempDir::new()?;
    let shell = Shell {
        metis: dir.0.join(".metis"),
    };
    let metis = &shell.metis;
    if let Some(given) = case.get("given").and_then(Value::as_object) {
        fs::create_dir(metis)?;
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
        let before = snapshot(metis);
        let actual = run_step(&shell, step);
        let after = snapshot(metis);
        let at = format!("step {index} ({step})");
        if let Some(expected) = step.get("expect") {
            expect_match(expected, &actual, "")
                .map_err(|e| format!("{at}: {e}\n  got: {actual:#}"))?;
        }
        check_invariants(&actual, &before, &after).map_err(|e| format!("{at}: {e}"))?;
    }
    if let Some(expected) = case.get("final").and_then(Value::as_object) {
        check_final(expected, &snapshot(metis)).map_err(|e| format!("final: {e}"))?;
    }
    Ok(())
}

/// `final` is exhaustive: `.metis/` holds exactly the entries it names (`null` ones
/// absent, nothing unnamed), and exists unless `"metis_dir": false` says it must not.
fn check_final(expected: &serde_json::Map<String, Value>, found: &Snapshot) -> Result<(), String> {
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

fn text(step: &Value, key: &str) -> String {
    String::from_utf8(content(&step[key])).expect("text arguments are UTF-8")
}

fn run_step(shell: &Shell, step: &Value) -> Value {
    if let Some(tool) = step.get("tool").and_then(Value::as_str) {
        let input = match step.get("input") {
            Some(input) => input.to_string(),
            None => text(step, "input_text"),
        };
        return match shell.call_tool(tool, &input) {
            Ok(success) => json!({ "ok": tool_success_json(&success) }),
            Err(message) => json!({ "error": { "message": message, "is_user_visible": true } }),
        };
    }
    let op = step["op"].as_str().expect("a step has \"op\" or \"tool\"");
    let file = || MemoryFile::from_name(step["file"].as_str().unwrap()).unwrap();
    let no_vet = |_: &str| Ok::<(), StoreError>(());
    let outcome: Result<Value, StoreError> = match op {
        "read" => shell.read_text(file()).map(Value::from),
        "exists" => shell.stat(file()).map(|s| s.is_some().into()),
        "size-bytes" => shell.stat(file()).map(|s| s.unwrap_or(0).into()),
        "soft-cap" => Ok(file().soft_cap().into()),
        "hard-cap" => Ok(file().hard_cap().into()),
        "add-entry" => shell
            .write(
                file(),
                Edit::Add {
                    entry: &text(step, "entry"),
                },
                no_vet,
            )
            .map(|r| write_result_json(&r)),
        "replace" => {
            let (old, new) = (text(step, "old"), text(step, "new"));
            shell
                .write(
                    file(),
                    Edit::Replace {
                        old: &old,
                        new: &new,
                    },
                    no_vet,
                )
                .map(|r| write_result_json(&r))
        }
        "consolidate" => shell
            .write(
                file(),
                Edit::Consolidate {
                    content: &text(step, "content"),
                },
                no_vet,
            )
            .map(|r| write_result_json(&r)),
        "assemble-system-prompt" => (|| {
            let user = shell.read_text(MemoryFile::User)?;
            let memory = shell.read_text(MemoryFile::Memory)?;
            Ok(assemble_system_prompt(&text(step, "base"), &user, &memory).into())
        })(),
        "tool-definitions" => Ok(tool_definitions_json()),
        other => panic!("unknown op {other}"),
    };
    match outcome {
        Ok(value) => json!({ "ok": value }),
        Err(error) => json!({ "error": error_json(&error) }),
    }
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

/// The rules every step obeys, whatever the case says: a refused call changes nothing
/// (whether `.metis/` exists, every entry's name, kind and bytes); no entry other than
/// the two memory files ever appears; a write's hashes and sizes are those of the bytes
/// before and after, and its `memory.updated` event repeats them.
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
        .find(|n| !before.entries.contains_key(*n) && MemoryFile::from_name(n).is_none())
    {
        return Err(format!("new entry {name} left in .metis/"));
    }
    let ok = &actual["ok"];
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

/// A fresh directory under the system's temporary directory, removed on drop (core has
/// no `tempfile` dependency, and needs none for this).
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> std::io::Result<TempDir> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = std::env::temp_dir()
                .join(format!("metis-core-conformance-{}-{n}", std::process::id()));
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
