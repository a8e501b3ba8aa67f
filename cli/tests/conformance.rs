//! Runs every case in `tests/conformance/` (the format is in its README) against the
//! real component, one test per case. What a case means, and what every step is checked
//! for, is the shared `conformance_format`; this file only runs a step through `Workspace`.

#[path = "../../core/tests/conformance_format/mod.rs"]
mod conformance_format;

use std::path::Path;

use conformance_format::{Runner, text};
use metis_memory::json::{
    audit_finding_json, composed_prompt_json, error_json, file_version_json, tool_definition_json,
    tool_success_json, write_result_json,
};
use metis_memory::{
    AuditPolicy, CallOptions, ComposeOptions, Edit, Error, FileVersion, MemoryFile, ScanPolicy,
    SessionState, Workspace, WriteOptions,
};
use serde_json::{Value, json};

fn main() {
    conformance_format::run_all_cases::<Workspace>()
}

impl Runner for Workspace {
    fn open(root: &Path) -> Self {
        Workspace::open(root)
    }

    fn run_step(&self, step: &Value) -> Value {
        if let Some(tool) = step.get("tool").and_then(Value::as_str) {
            let input = match step.get("input") {
                Some(input) => input.to_string(),
                None => text(step, "input_text"),
            };
            // `call-with-options` (as `tools.call` with nothing listed): the contract's
            // cases pin the unheld calls, which hold only a file listed in `seen`.
            let seen = step.get("seen").and_then(Value::as_object);
            let withheld = step.get("withheld").and_then(Value::as_array);
            let outcome = {
                let session = SessionState {
                    seen: seen
                        .into_iter()
                        .flatten()
                        .map(|(file, hash)| FileVersion {
                            file: MemoryFile::parse(file).unwrap(),
                            sha256: hash.as_str().unwrap().to_owned(),
                        })
                        .collect(),
                    withheld: withheld
                        .into_iter()
                        .flatten()
                        .map(|file| MemoryFile::parse(file.as_str().unwrap()).unwrap())
                        .collect(),
                    ..SessionState::empty()
                };
                let options = CallOptions {
                    scan: ScanPolicy::ALL,
                    session,
                    hold_unseen: false,
                };
                self.call_tool_with_options(tool, &input, &options)
                    .and_then(|called| called.outcome.map_err(Error::Tool))
            };
            return match outcome {
                Ok(success) => json!({ "ok": tool_success_json(&success) }),
                Err(Error::Tool(e)) => json!({ "error": {
                    "message": e.message,
                    "is_user_visible": e.is_user_visible,
                    "shown": e.shown.as_ref().map(file_version_json),
                } }),
                Err(other) => json!({ "error": error_json(&other) }),
            };
        }
        let op = step["op"].as_str().expect("a step has \"op\" or \"tool\"");
        let file = || MemoryFile::parse(step["file"].as_str().unwrap()).unwrap();
        let outcome: Result<Value, Error> = match op {
            "read" => self.read(file()).map(Value::from),
            "exists" => self.exists(file()).map(Value::from),
            "size-bytes" => self.size_bytes(file()).map(Value::from),
            "soft-cap" => self.soft_cap(file()).map(Value::from),
            "hard-cap" => self.hard_cap(file()).map(Value::from),
            "add-entry" => self
                .add_entry(file(), &text(step, "entry"))
                .map(|r| write_result_json(&r)),
            "replace" => self
                .replace(file(), &text(step, "old"), &text(step, "new"))
                .map(|r| write_result_json(&r)),
            "consolidate" => self
                .consolidate(file(), &text(step, "content"))
                .map(|r| write_result_json(&r)),
            "consolidate-if-unchanged" => {
                let options = WriteOptions {
                    if_unchanged: Some(step["expected_hash"].as_str().unwrap().to_owned()),
                    ..WriteOptions::default()
                };
                let edit = Edit::Consolidate(text(step, "content"));
                self.write(file(), &edit, &options)
                    .map(|r| write_result_json(&r))
            }
            "compose-system-prompt" => {
                let options = ComposeOptions {
                    audit: AuditPolicy::parse(step["audit"].as_str().unwrap_or("off")).unwrap(),
                    strict: false,
                };
                self.compose(&text(step, "base"), options)
                    .map(|prompt| composed_prompt_json(&prompt))
            }
            "audit" => self
                .audit(file())
                .map(|findings| findings.iter().map(audit_finding_json).collect()),
            "assemble-system-prompt" => self
                .assemble_system_prompt(&text(step, "base"))
                .map(Value::from),
            "tool-definitions" => self
                .tool_definitions()
                .map(|tools| tools.iter().map(tool_definition_json).collect()),
            other => panic!("unknown op {other}"),
        };
        match outcome {
            Ok(value) => json!({ "ok": value }),
            Err(error) => json!({ "error": error_json(&error) }),
        }
    }
}
