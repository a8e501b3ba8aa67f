//! Runs every case in `tests/conformance/` (the format is in its README) against the
//! real component, one test per case.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use libtest_mimic::{Arguments, Failed, Trial};
use metis_memory::json::{error_json, tool_definition_json, tool_success_json, write_result_json};
use metis_memory::{Error, MemoryFile, Workspace};
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
        !trials.is_empty(),
        "no conformance cases found in {}",
        dir.display()
    );
    libtest_mimic::run(&Arguments::from_args(), trials).exit();
}

fn run_case(case: &Value) -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let ws = Workspace::open(dir.path());
    let metis = ws.metis_dir();
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
        let actual = run_step(&ws, step);
        let after = snapshot(&metis);
        let at = format!("step {index} ({step})");
        if let Some(expected) = step.get("expect") {
            expect_match(expected, &actual, "")
                .map_err(|e| format!("{at}: {e}\n  got: {actual:#}"))?;
        }
        check_invariants(&actual, &before, &after).map_err(|e| format!("{at}: {e}"))?;
    }
    if let Some(expected) = case.get("final").and_then(Value::as_object) {
        check_final(expected, &snapshot(&metis))?;
    }
    Ok(())
}

/// `final` names every entry `.metis/` holds at the end, and nothing else may be there.
fn check_final(expected: &serde_json::Map<String, Value>, found: &Snapshot) -> Result<(), Failed> {
    let want_dir = expected
        .get("metis_dir")
        .is_none_or(|v| v.as_bool().expect("metis_dir is true or false"));
    let Some(entries) = found else {
        return match want_dir {
            false => Ok(()),
            true => Err("final: .metis/ does not exist".into()),
        };
    };
    if !want_dir {
        return Err(format!("final: .metis/ exists, holding {:?}", entries.keys()).into());
    }
    for (name, spec) in expected {
        if name == "metis_dir" {
            continue;
        }
        let want = match spec {
            Value::Null => None,
            spec if spec.get("directory").is_some() => Some(Entry::Directory),
            spec => Some(Entry::File(content(spec))),
        };
        let got = entries.get(name.as_str()).cloned();
        if got != want {
            return Err(format!(
                "final {name}: expected {}, found {}",
                show(&want),
                show(&got)
            )
            .into());
        }
    }
    if let Some(extra) = entries.keys().find(|name| !expected.contains_key(*name)) {
        return Err(format!("final: .metis/ holds {extra}, which the case does not name").into());
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

fn run_step(ws: &Workspace, step: &Value) -> Value {
    if let Some(tool) = step.get("tool").and_then(Value::as_str) {
        let input = match step.get("input") {
            Some(input) => input.to_string(),
            None => text(step, "input_text"),
        };
        return match ws.call_tool(tool, &input) {
            Ok(success) => json!({ "ok": tool_success_json(&success) }),
            Err(Error::Tool(e)) => {
                json!({ "error": { "message": e.message, "is_user_visible": e.is_user_visible } })
            }
            Err(other) => json!({ "error": error_json(&other) }),
        };
    }
    let op = step["op"].as_str().expect("a step has \"op\" or \"tool\"");
    let file = || MemoryFile::parse(step["file"].as_str().unwrap()).unwrap();
    let outcome: Result<Value, Error> = match op {
        "read" => ws.read(file()).map(Value::from),
        "exists" => ws.exists(file()).map(Value::from),
        "size-bytes" => ws.size_bytes(file()).map(Value::from),
        "soft-cap" => ws.soft_cap(file()).map(Value::from),
        "hard-cap" => ws.hard_cap(file()).map(Value::from),
        "add-entry" => ws
            .add_entry(file(), &text(step, "entry"))
            .map(|r| write_result_json(&r)),
        "replace" => ws
            .replace(file(), &text(step, "old"), &text(step, "new"))
            .map(|r| write_result_json(&r)),
        "consolidate" => ws
            .consolidate(file(), &text(step, "content"))
            .map(|r| write_result_json(&r)),
        "assemble-system-prompt" => ws
            .assemble_system_prompt(&text(step, "base"))
            .map(Value::from),
        "tool-definitions" => ws
            .tool_definitions()
            .map(|tools| tools.iter().map(tool_definition_json).collect()),
        other => panic!("unknown op {other}"),
    };
    match outcome {
        Ok(value) => json!({ "ok": value }),
        Err(error) => json!({ "error": error_json(&error) }),
    }
}

/// Every key of `expected` must match in `actual` (objects match partially, arrays
/// element by element); `message_starts_with` checks a prefix of `message`.
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
/// (not even whether `.metis/` exists), no call leaves anything in `.metis/` but the two
/// memory files (no temporary file, no lock), a write's hashes and sizes are those of the
/// bytes before and after, and its events repeat them.
fn check_invariants(actual: &Value, before: &Snapshot, after: &Snapshot) -> Result<(), String> {
    if actual.get("error").is_some() && before != after {
        return Err(format!(
            "a refused call changed .metis/: {before:?} became {after:?}"
        ));
    }
    let names = |snapshot: &Snapshot| -> Vec<String> {
        snapshot.iter().flat_map(|e| e.keys().cloned()).collect()
    };
    let (old_names, new_names) = (names(before), names(after));
    if let Some(name) = new_names
        .iter()
        .find(|n| !old_names.contains(n) && *n != "MEMORY.md" && *n != "USER.md")
    {
        return Err(format!("{name} left behind in .metis/"));
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
    let bytes = |snapshot: &Snapshot| match snapshot.as_ref().and_then(|e| e.get(file)) {
        Some(Entry::File(bytes)) => bytes.clone(),
        _ => Vec::new(),
    };
    let (old, new) = (bytes(before), bytes(after));
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
    if let Some(updated) = ok.get("events").and_then(|e| e.get(0)) {
        for (key, want) in &checks {
            if updated["payload"][*key] != *want {
                return Err(format!("memory.updated {key} does not match the write"));
            }
        }
    }
    Ok(())
}

/// What one entry of `.metis/` is.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Entry {
    File(Vec<u8>),
    Directory,
    Symlink(PathBuf),
    /// A FIFO, a socket, a device.
    Special,
}

/// `.metis/`'s entries, or `None` when it does not exist.
type Snapshot = Option<BTreeMap<String, Entry>>;

fn snapshot(metis: &Path) -> Snapshot {
    let entries = fs::read_dir(metis).ok()?;
    Some(
        entries
            .map(|e| {
                let e = e.unwrap();
                let kind = e.file_type().unwrap();
                let entry = if kind.is_symlink() {
                    Entry::Symlink(fs::read_link(e.path()).unwrap())
                } else if kind.is_dir() {
                    Entry::Directory
                } else if kind.is_file() {
                    Entry::File(fs::read(e.path()).unwrap())
                } else {
                    Entry::Special
                };
                (e.file_name().to_string_lossy().into_owned(), entry)
            })
            .collect(),
    )
}

fn show(entry: &Option<Entry>) -> String {
    match entry {
        None => "no entry".into(),
        Some(Entry::File(bytes)) => format!("{:?}", String::from_utf8_lossy(bytes)),
        Some(other) => format!("{other:?}"),
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
