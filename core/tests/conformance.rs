//! Runs every case in `tests/conformance/` (the format is in its README) natively through
//! `metis-memory-core`, one test per case, with a small `std::fs` shell standing in for the
//! component: the same decisions as the real thing, without a component rebuild, so
//! `scripts/mutants` can afford to run every case against every mutant.
//!
//! The shell does what `guest/` does around the core: a read is a stat that does not
//! follow links (anything but a regular file is `not-a-regular-file`, a missing file is
//! empty), a write is `plan_write`, the tools' scan on the new content, then a temporary
//! file renamed over the target; `.metis/` is created only by a write that succeeds. The
//! JSON shapes are `host/src/json.rs`'s, the error kinds the WIT case names. What a case
//! means, and what every step is checked for, is the shared `conformance_format`, the same
//! as `cli/tests/conformance.rs`'s.

#[path = "conformance_format/mod.rs"]
mod conformance_format;

use std::fs;
use std::io::{ErrorKind, Write as _};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use conformance_format::{Runner, text};
use metis_memory_core::audit::{AuditFinding, AuditPolicy, audit};
use metis_memory_core::tool_call::{
    CallOptions, ToolRefusal, ToolSuccess, WriteRefusal, run_tool_call,
};
use metis_memory_core::{
    ComposedPrompt, Edit, MemoryEvent, MemoryFile, PromptLayout, StoreError, TOOL_DEFINITIONS,
    WriteResult, assemble_system_prompt, compose_system_prompt, into_text, plan_write,
};
use serde_json::{Value, json};

fn main() {
    conformance_format::run_all_cases::<Shell>()
}

// ---------------------------------------------------------------------------------------
// The shell: what the guest and the host do around the core, with `std::fs`.

/// A workspace whose `.metis/` the shell reads and writes.
struct Shell {
    metis: PathBuf,
}

impl Shell {
    /// The file's bytes; empty when missing. Links are not followed, a file with another
    /// hard link is refused, and nothing over the read limit is read.
    fn read(&self, file: MemoryFile) -> Result<Vec<u8>, StoreError> {
        let path = self.metis.join(file.file_name());
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_file() && meta.nlink() <= 1 => {
                if meta.len() > file.read_limit() {
                    return Err(StoreError::TooLarge {
                        file,
                        size: meta.len(),
                    });
                }
                fs::read(&path).map_err(|e| io_error(file, "read", &e))
            }
            Ok(_) => Err(StoreError::NotARegularFile { file }),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(io_error(file, "stat", &e)),
        }
    }

    fn stat(&self, file: MemoryFile) -> Result<Option<u64>, StoreError> {
        match fs::symlink_metadata(self.metis.join(file.file_name())) {
            Ok(meta) if meta.file_type().is_file() && meta.nlink() <= 1 => Ok(Some(meta.len())),
            Ok(_) => Err(StoreError::NotARegularFile { file }),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_error(file, "stat", &e)),
        }
    }

    fn read_text(&self, file: MemoryFile) -> Result<String, StoreError> {
        into_text(file, self.read(file)?)
    }

    /// The one write path: the core's plan, `vet` on the old and new content, then an atomic
    /// replace (creating `.metis/` first if this is its first write).
    fn write<E: From<StoreError>>(
        &self,
        file: MemoryFile,
        edit: Edit<'_>,
        if_unchanged: Option<&str>,
        vet: impl FnOnce(&[u8], &str) -> Result<(), E>,
    ) -> Result<WriteResult, E> {
        let mut read = false;
        let planned = plan_write(file, edit, if_unchanged, || {
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
        vet(
            &planned.before,
            std::str::from_utf8(&planned.after).unwrap_or_default(),
        )?;
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

    /// A tool call as `tools.call-with-options` makes it.
    fn call_tool(
        &self,
        name: &str,
        input: &str,
        options: &CallOptions,
    ) -> Result<ToolSuccess, ToolRefusal> {
        run_tool_call(
            name,
            input.to_owned(),
            options,
            |file, edit, if_unchanged, vet| {
                self.write(file, edit, if_unchanged, |before, after| {
                    vet(before, after).map_err(WriteRefusal::Refused)
                })
            },
        )
    }
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

fn error_json(error: &StoreError) -> Value {
    let mut value = json!({ "kind": error.kind(), "message": error.to_string() });
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
        StoreError::Changed {
            file,
            expected_hash,
            current_hash,
            current,
        } => {
            value["file"] = file.file_name().into();
            value["expected_hash"] = expected_hash.as_str().into();
            value["current_hash"] = current_hash.as_str().into();
            value["current_content"] = metis_memory_core::changed_content(*file, current).into();
        }
        StoreError::TooLarge { file, size } => {
            value["file"] = file.file_name().into();
            value["size_bytes"] = (*size).into();
            value["limit_bytes"] = file.read_limit().into();
        }
        StoreError::Flagged { file, findings } => {
            value["file"] = file.file_name().into();
            value["findings"] = findings.iter().map(finding_json).collect();
        }
        _ => {}
    }
    value
}

fn finding_json(finding: &AuditFinding) -> Value {
    json!({ "line": finding.line, "rule": finding.rule, "detail": finding.detail })
}

fn composed_json(prompt: &ComposedPrompt) -> Value {
    json!({
        "text": prompt.text,
        "sources": prompt.sources.iter().map(|source| json!({
            "file": source.file.file_name(),
            "sha256": source.sha256,
            "size_bytes": source.size_bytes,
            "included": source.included,
            "findings": source.findings.iter().map(finding_json).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

fn audit_policy(name: &str) -> AuditPolicy {
    match name {
        "off" => AuditPolicy::Off,
        "report" => AuditPolicy::Report,
        "omit" => AuditPolicy::Omit,
        "refuse" => AuditPolicy::Refuse,
        other => panic!("unknown audit policy {other}"),
    }
}

/// A step's `seen` (`{"MEMORY.md": HASH, …}`) and `withheld` (`["MEMORY.md"]`) as call
/// options with the full scan.
fn call_options(step: &Value) -> CallOptions {
    let seen = step.get("seen").and_then(Value::as_object);
    let withheld = step.get("withheld").and_then(Value::as_array);
    CallOptions {
        withheld: withheld
            .into_iter()
            .flatten()
            .map(|file| MemoryFile::from_name(file.as_str().unwrap()).unwrap())
            .collect(),
        seen: seen
            .into_iter()
            .flatten()
            .map(|(file, hash)| {
                (
                    MemoryFile::from_name(file).unwrap(),
                    hash.as_str().unwrap().to_owned(),
                )
            })
            .collect(),
        ..CallOptions::scan_all()
    }
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
// The steps: each one through the shell, in the README's JSON shapes.

impl Runner for Shell {
    fn open(root: &Path) -> Self {
        Shell {
            metis: root.join(".metis"),
        }
    }

    fn run_step(&self, step: &Value) -> Value {
        if let Some(tool) = step.get("tool").and_then(Value::as_str) {
            let input = match step.get("input") {
                Some(input) => input.to_string(),
                None => text(step, "input_text"),
            };
            return match self.call_tool(tool, &input, &call_options(step)) {
                Ok(success) => json!({ "ok": tool_success_json(&success) }),
                Err(refusal) => json!({ "error": {
                    "message": refusal.message,
                    "is_user_visible": true,
                    "shown": refusal.shown.map(|(file, sha256)| json!({
                        "file": file.file_name(),
                        "sha256": sha256,
                    })),
                } }),
            };
        }
        let op = step["op"].as_str().expect("a step has \"op\" or \"tool\"");
        let file = || MemoryFile::from_name(step["file"].as_str().unwrap()).unwrap();
        let no_vet = |_: &[u8], _: &str| Ok::<(), StoreError>(());
        let outcome: Result<Value, StoreError> = match op {
            "read" => self.read_text(file()).map(Value::from),
            "exists" => self.stat(file()).map(|s| s.is_some().into()),
            "size-bytes" => self.stat(file()).map(|s| s.unwrap_or(0).into()),
            "soft-cap" => Ok(file().soft_cap().into()),
            "hard-cap" => Ok(file().hard_cap().into()),
            "add-entry" => self
                .write(
                    file(),
                    Edit::Add {
                        entry: &text(step, "entry"),
                    },
                    None,
                    no_vet,
                )
                .map(|r| write_result_json(&r)),
            "replace" => {
                let (old, new) = (text(step, "old"), text(step, "new"));
                self.write(
                    file(),
                    Edit::Replace {
                        old: &old,
                        new: &new,
                    },
                    None,
                    no_vet,
                )
                .map(|r| write_result_json(&r))
            }
            "consolidate" => self
                .write(
                    file(),
                    Edit::Consolidate {
                        content: &text(step, "content"),
                    },
                    None,
                    no_vet,
                )
                .map(|r| write_result_json(&r)),
            "consolidate-if-unchanged" => self
                .write(
                    file(),
                    Edit::Consolidate {
                        content: &text(step, "content"),
                    },
                    Some(step["expected_hash"].as_str().unwrap()),
                    no_vet,
                )
                .map(|r| write_result_json(&r)),
            "compose-system-prompt" => compose_system_prompt(
                &text(step, "base"),
                |file| self.read(file),
                audit_policy(step["audit"].as_str().unwrap_or("off")),
                PromptLayout::default(),
            )
            .map(|prompt| composed_json(&prompt)),
            "audit" => self
                .read_text(file())
                .map(|text| audit(&text).iter().map(finding_json).collect()),
            "assemble-system-prompt" => (|| {
                let user = self.read_text(MemoryFile::User)?;
                let memory = self.read_text(MemoryFile::Memory)?;
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
}
