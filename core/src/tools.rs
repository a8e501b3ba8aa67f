//! The LLM tool layer: definitions, input validation against the schemas, result texts
//! and events (CONTRACT §5 and §6).

use crate::json::{self, Input, Value};
use crate::{Edit, MemoryFile, WriteResult};
use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

/// Which write a tool makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Add,
    Replace,
    Consolidate,
}

impl Operation {
    /// The name events use: `add`, `replace`, `consolidate`.
    pub fn name(self) -> &'static str {
        match self {
            Operation::Add => "add",
            Operation::Replace => "replace",
            Operation::Consolidate => "consolidate",
        }
    }
}

/// A tool as handed to an LLM API.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolDefinition {
    pub name: &'static str,
    pub description: &'static str,
    /// JSON Schema, as compact JSON text.
    pub input_schema: &'static str,
}

/// The reference's names, descriptions and schemas, exactly (CONTRACT §5).
pub const TOOL_DEFINITIONS: [ToolDefinition; 3] = [
    ToolDefinition {
        name: "memory_add",
        description: "Append a single entry to MEMORY.md (workspace facts the agent should remember) or USER.md (facts about the user). Use sparingly — both files are byte-budgeted (~2KB / ~1.5KB).",
        input_schema: r#"{"type":"object","properties":{"file":{"type":"string","enum":["MEMORY.md","USER.md"]},"entry":{"type":"string","minLength":1}},"required":["file","entry"],"additionalProperties":false}"#,
    },
    ToolDefinition {
        name: "memory_replace",
        description: "Replace a unique substring in MEMORY.md or USER.md. `old` must appear exactly once in the file.",
        input_schema: r#"{"type":"object","properties":{"file":{"type":"string","enum":["MEMORY.md","USER.md"]},"old":{"type":"string"},"new":{"type":"string"}},"required":["file","old","new"],"additionalProperties":false}"#,
    },
    ToolDefinition {
        name: "memory_consolidate",
        description: "Replace the entire content of MEMORY.md or USER.md with `content`. Use to compress the file when it's grown over its soft cap.",
        input_schema: r#"{"type":"object","properties":{"file":{"type":"string","enum":["MEMORY.md","USER.md"]},"content":{"type":"string"}},"required":["file","content"],"additionalProperties":false}"#,
    },
];

/// A validated tool call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolCall {
    Add {
        file: MemoryFile,
        entry: String,
    },
    Replace {
        file: MemoryFile,
        old: String,
        new: String,
    },
    Consolidate {
        file: MemoryFile,
        content: String,
    },
}

impl ToolCall {
    pub fn file(&self) -> MemoryFile {
        match self {
            ToolCall::Add { file, .. }
            | ToolCall::Replace { file, .. }
            | ToolCall::Consolidate { file, .. } => *file,
        }
    }

    pub fn operation(&self) -> Operation {
        match self {
            ToolCall::Add { .. } => Operation::Add,
            ToolCall::Replace { .. } => Operation::Replace,
            ToolCall::Consolidate { .. } => Operation::Consolidate,
        }
    }

    /// The store edit this call makes.
    pub fn edit(&self) -> Edit<'_> {
        match self {
            ToolCall::Add { entry, .. } => Edit::Add { entry },
            ToolCall::Replace { old, new, .. } => Edit::Replace { old, new },
            ToolCall::Consolidate { content, .. } => Edit::Consolidate { content },
        }
    }
}

/// The properties of each tool, in schema order: the `file` enum, then strings.
fn properties(tool: &str) -> Option<&'static [&'static str]> {
    match tool {
        "memory_add" => Some(&["file", "entry"]),
        "memory_replace" => Some(&["file", "old", "new"]),
        "memory_consolidate" => Some(&["file", "content"]),
        _ => None,
    }
}

/// How many unexpected properties a validation message names, so that an input with
/// thousands of keys cannot make a message larger than a model's context.
const UNEXPECTED_SHOWN: usize = 5;

/// Checks `input` (the tool call's JSON) against the tool's schema and returns the call,
/// or a message for the model naming every property that is wrong and how.
pub fn parse_tool_call(name: &str, input: &str) -> Result<ToolCall, String> {
    let Some(expected) = properties(name) else {
        let known: Vec<&str> = TOOL_DEFINITIONS.iter().map(|t| t.name).collect();
        return Err(format!(
            "unknown tool {}; the memory tools are {}",
            quoted(name),
            known.join(", ")
        ));
    };
    let invalid = |problem: String| format!("invalid input for {name}: {problem}");
    // One streaming pass that keeps only what validation needs: property names and string
    // values. Anything else is skipped as it is read, so memory stays bounded by the
    // input's size whatever its shape.
    let given = match json::parse(input) {
        Err(e) => return Err(invalid(format!("not valid JSON ({e})"))),
        Ok(Input::Other(kind)) => {
            return Err(invalid(format!("expected a JSON object, got {kind}")));
        }
        Ok(Input::Object(members)) => members,
    };

    let mut problems = Vec::new();
    let mut strings: Vec<&str> = Vec::with_capacity(expected.len());
    for &property in expected {
        let mut values = given.iter().filter(|(key, _)| key == property);
        match (values.next(), values.next()) {
            (None, _) => problems.push(format!("{} is required", quoted(property))),
            (Some(_), Some(_)) => {
                problems.push(format!("{} is given more than once", quoted(property)))
            }
            (Some((_, Value::String(text))), None) => {
                if property == "file" && MemoryFile::from_name(text).is_none() {
                    problems.push(format!(
                        "{} must be one of \"MEMORY.md\", \"USER.md\", got {}",
                        quoted(property),
                        quoted(text)
                    ));
                } else if property == "entry" && text.is_empty() {
                    problems.push(format!("{} must not be empty", quoted(property)));
                }
                strings.push(text);
            }
            (Some((_, Value::Other(kind))), None) => {
                problems.push(format!("{} must be a string, got {kind}", quoted(property)))
            }
        }
    }
    let unexpected: Vec<&str> = given
        .iter()
        .map(|(key, _)| key.as_str())
        .filter(|key| !expected.contains(key))
        .collect();
    for key in unexpected.iter().take(UNEXPECTED_SHOWN) {
        problems.push(format!(
            "{} is not allowed ({name} takes {})",
            quoted(key),
            expected.join(", ")
        ));
    }
    if unexpected.len() > UNEXPECTED_SHOWN {
        problems.push(format!(
            "and {} more properties are not allowed",
            unexpected.len() - UNEXPECTED_SHOWN
        ));
    }
    if !problems.is_empty() {
        return Err(invalid(problems.join("; ")));
    }

    let file = MemoryFile::from_name(strings[0]).expect("validated above");
    let text = |i: usize| strings[i].to_owned();
    Ok(match name {
        "memory_add" => ToolCall::Add {
            file,
            entry: text(1),
        },
        "memory_replace" => ToolCall::Replace {
            file,
            old: text(1),
            new: text(2),
        },
        _ => ToolCall::Consolidate {
            file,
            content: text(1),
        },
    })
}

/// The tool result text for a successful write (CONTRACT §5).
pub fn success_text(operation: Operation, result: &WriteResult) -> String {
    let file = result.file;
    let mut text = match operation {
        Operation::Add => format!(
            "appended to {file} ({} bytes total)",
            result.after_size_bytes
        ),
        Operation::Replace => format!(
            "replaced in {file} ({} bytes total)",
            result.after_size_bytes
        ),
        Operation::Consolidate => format!(
            "consolidated {file}: {} → {} bytes",
            result.before_size_bytes, result.after_size_bytes
        ),
    };
    if result.over_soft_cap {
        text.push_str(" — over soft cap; consider memory_consolidate");
    }
    text
}

/// An event the host should publish after a successful tool call (CONTRACT §6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemoryEvent {
    /// `memory.updated`.
    Updated {
        operation: Operation,
        result: WriteResult,
    },
    /// `memory.eviction` with trigger `size_cap_exceeded` and 0 entries evicted.
    Eviction {
        file: MemoryFile,
        size_before_bytes: u64,
        size_after_bytes: u64,
    },
}

/// `memory.updated` for every write, then `memory.eviction` when over the soft cap.
pub fn events(operation: Operation, result: &WriteResult) -> Vec<MemoryEvent> {
    let mut events = vec![MemoryEvent::Updated {
        operation,
        result: result.clone(),
    }];
    if result.over_soft_cap {
        events.push(MemoryEvent::Eviction {
            file: result.file,
            size_before_bytes: result.before_size_bytes,
            size_after_bytes: result.after_size_bytes,
        });
    }
    events
}

/// `text` as a JSON string for a message, cut short if long: error messages go to the
/// model and must stay small whatever the input.
fn quoted(text: &str) -> String {
    const MAX_CHARS: usize = 64;
    let (shown, cut) = match text.char_indices().nth(MAX_CHARS) {
        None => (text, false),
        Some((at, _)) => (&text[..at], true),
    };
    let mut quoted = json::quote(shown);
    if cut {
        quoted.push('…');
    }
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use std::format;
    use std::prelude::rust_2024::*;

    fn err(name: &str, input: &str) -> String {
        parse_tool_call(name, input).unwrap_err()
    }

    #[test]
    fn schemas_are_valid_json_objects() {
        for tool in TOOL_DEFINITIONS {
            let schema: Value = serde_json::from_str(tool.input_schema).unwrap();
            assert_eq!(schema["type"], "object");
            assert_eq!(schema["additionalProperties"], false);
            let props: Vec<&str> = properties(tool.name).unwrap().to_vec();
            let required: Vec<&str> = schema["required"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            assert_eq!(required, props);
        }
    }

    #[test]
    fn valid_calls_parse() {
        assert_eq!(
            parse_tool_call("memory_add", r#"{"entry":"x","file":"USER.md"}"#),
            Ok(ToolCall::Add {
                file: MemoryFile::User,
                entry: "x".into()
            })
        );
        assert_eq!(
            parse_tool_call(
                "memory_replace",
                r#"{"file":"MEMORY.md","old":"","new":""}"#
            ),
            Ok(ToolCall::Replace {
                file: MemoryFile::Memory,
                old: "".into(),
                new: "".into()
            })
        );
    }

    #[test]
    fn every_violation_is_named() {
        assert_eq!(
            err(
                "memory_add",
                r#"{"file":"MEMORY.md","entry":"x","extra":1}"#
            ),
            r#"invalid input for memory_add: "extra" is not allowed (memory_add takes file, entry)"#
        );
        // Thousands of unexpected keys name five of them, then a count.
        let many: String = (0..5000).map(|i| format!(r#","k{i}":0"#)).collect();
        let message = err(
            "memory_add",
            &format!(r#"{{"file":"USER.md","entry":"x"{many}}}"#),
        );
        assert!(message.ends_with(r#""k4" is not allowed (memory_add takes file, entry); and 4995 more properties are not allowed"#), "{message}");
        assert!(message.len() < 400, "{message}");
        // Exactly five are all named, with no count after them.
        let five: String = (0..5).map(|i| format!(r#","k{i}":0"#)).collect();
        let message = err(
            "memory_add",
            &format!(r#"{{"file":"USER.md","entry":"x"{five}}}"#),
        );
        assert!(
            message.ends_with(r#""k4" is not allowed (memory_add takes file, entry)"#),
            "{message}"
        );
        assert_eq!(
            err("memory_replace", r#"{"file":"NOTES.md","old":1}"#),
            r#"invalid input for memory_replace: "file" must be one of "MEMORY.md", "USER.md", got "NOTES.md"; "old" must be a string, got number; "new" is required"#
        );
        assert_eq!(
            err("memory_add", r#"{"file":"USER.md","entry":""}"#),
            r#"invalid input for memory_add: "entry" must not be empty"#
        );
        assert_eq!(
            err(
                "memory_consolidate",
                r#"{"file":"USER.md","file":"MEMORY.md","content":""}"#
            ),
            r#"invalid input for memory_consolidate: "file" is given more than once"#
        );
        assert_eq!(
            err("memory_add", "[1]"),
            "invalid input for memory_add: expected a JSON object, got array"
        );
        assert!(
            err("memory_add", "{").starts_with("invalid input for memory_add: not valid JSON (")
        );
        assert_eq!(
            err("memory_forget", "{}"),
            r#"unknown tool "memory_forget"; the memory tools are memory_add, memory_replace, memory_consolidate"#
        );
    }

    #[test]
    fn echoed_values_are_cut_short() {
        let long = "x".repeat(10_000);
        let message = err("memory_add", &format!(r#"{{"file":"{long}","entry":"e"}}"#));
        assert!(message.len() < 200, "{message}");
        assert!(message.ends_with("…"), "{message}");
    }

    #[test]
    fn deep_nesting_is_refused_without_overflowing() {
        let deep = "[".repeat(100_000);
        assert!(err("memory_add", &deep).contains("not valid JSON"));
    }

    #[test]
    fn texts_and_events() {
        let result = WriteResult {
            file: MemoryFile::User,
            before_hash: "a".into(),
            after_hash: "b".into(),
            before_size_bytes: 1600,
            after_size_bytes: 1537,
            over_soft_cap: true,
            over_hard_cap: false,
        };
        assert_eq!(
            success_text(Operation::Consolidate, &result),
            "consolidated USER.md: 1600 → 1537 bytes — over soft cap; consider memory_consolidate"
        );
        assert_eq!(events(Operation::Consolidate, &result).len(), 2);
        let calm = WriteResult {
            over_soft_cap: false,
            after_size_bytes: 12,
            ..result
        };
        assert_eq!(
            success_text(Operation::Add, &calm),
            "appended to USER.md (12 bytes total)"
        );
        assert_eq!(
            success_text(Operation::Replace, &calm),
            "replaced in USER.md (12 bytes total)"
        );
        assert_eq!(events(Operation::Add, &calm).len(), 1);
    }
}
