//! Runs every case in `tests/conformance/` (the format is in its README) against the
//! real component, one test per case. What a case means, and what every step is checked
//! for, is the shared `conformance_format`; this file only runs a step through `Workspace`.

#[path = "../../core/tests/conformance_format/mod.rs"]
mod conformance_format;

use std::path::Path;

use conformance_format::{Runner, text};
use metis_memory::json::{error_json, tool_definition_json, tool_success_json, write_result_json};
use metis_memory::{Error, MemoryFile, Workspace};
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
            return match self.call_tool(tool, &input) {
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
