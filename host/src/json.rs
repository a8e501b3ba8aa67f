//! JSON shapes with the spec's snake_case field names, shared by the CLI's `--json`
//! output, the MCP server and the conformance runner, so the Rust surfaces render results
//! the same way (the Python and Node packages have their own types).

use crate::{
    AuditFinding, ComposedPrompt, Error, FileVersion, MemoryEvent, StoreError, ToolDefinition,
    ToolError, ToolSuccess, WriteResult,
};
use serde_json::{Value, json};

/// A write result with the spec's snake_case field names.
pub fn write_result_json(r: &WriteResult) -> Value {
    json!({
        "file": r.file.name(),
        "before_hash": r.before_hash,
        "after_hash": r.after_hash,
        "before_size_bytes": r.before_size_bytes,
        "after_size_bytes": r.after_size_bytes,
        "over_soft_cap": r.over_soft_cap,
        "over_hard_cap": r.over_hard_cap,
    })
}

/// An error as `{"kind", "message", …}`: `kind` is the WIT case name (or `tool-error`,
/// `trap`, `workspace`) and the case's payload follows with snake_case names.
pub fn error_json(error: &Error) -> Value {
    let message = error.to_string();
    match error {
        Error::Store { error, .. } => {
            let mut value = json!({ "kind": error.kind(), "message": message });
            match error {
                StoreError::HardCapExceeded(info) => {
                    value["file"] = info.file.name().into();
                    value["attempted_bytes"] = info.attempted_bytes.into();
                    value["cap_bytes"] = info.cap_bytes.into();
                }
                StoreError::NotUnique(info) => value["count"] = info.count.into(),
                StoreError::InvalidUtf8(info) => {
                    value["file"] = info.file.name().into();
                    value["offset"] = info.offset.into();
                }
                StoreError::NotARegularFile(info) => value["file"] = info.file.name().into(),
                StoreError::Changed(info) => {
                    value["file"] = info.file.name().into();
                    value["expected_hash"] = info.expected_hash.as_str().into();
                    value["current_hash"] = info.current_hash.as_str().into();
                    value["current_content"] = info.current_content.as_str().into();
                }
                StoreError::TooLarge(info) => {
                    value["file"] = info.file.name().into();
                    value["size_bytes"] = info.size_bytes.into();
                    value["limit_bytes"] = info.limit_bytes.into();
                }
                StoreError::Unsynced(info) => {
                    value["file"] = info.result.file.name().into();
                    value["result"] = write_result_json(&info.result);
                    value["reason"] = info.reason.as_str().into();
                }
                StoreError::Poisoned(info) => {
                    value["file"] = info.file.name().into();
                    value["rule"] = info.rule.as_str().into();
                }
                StoreError::Flagged(info) => {
                    value["file"] = info.file.name().into();
                    value["findings"] = info.findings.iter().map(audit_finding_json).collect();
                }
                _ => {}
            }
            value
        }
        Error::Tool(_) => json!({ "kind": "tool-error", "message": message }),
        Error::Trap { written, .. } => {
            json!({ "kind": "trap", "message": message, "written": written })
        }
        Error::Workspace(_) => json!({ "kind": "workspace", "message": message }),
    }
}

/// A tool call's outcome as `{"is_error", "text", "result", "events"}`.
pub fn tool_success_json(success: &ToolSuccess) -> Value {
    let mut result = write_result_json(&success.result);
    result["operation"] = success.operation.name().into();
    json!({
        "is_error": false,
        "text": success.text,
        "result": result,
        "events": success.events.iter().map(event_json).collect::<Vec<_>>(),
    })
}

/// A refused tool call: the text for the model, no result, no events, and the version
/// of a file the text showed the model (`null` unless a stale consolidate was refused).
pub fn tool_error_json(error: &ToolError) -> Value {
    json!({
        "is_error": true,
        "text": error.message,
        "result": null,
        "events": [],
        "shown": error.shown.as_ref().map(file_version_json),
    })
}

/// A file version as `{"file", "sha256"}`.
pub fn file_version_json(version: &FileVersion) -> Value {
    json!({ "file": version.file.name(), "sha256": version.sha256 })
}

/// An audit finding as `{"line", "rule", "detail"}`.
pub fn audit_finding_json(finding: &AuditFinding) -> Value {
    json!({ "line": finding.line, "rule": finding.rule, "detail": finding.detail })
}

/// A composed prompt as `{"text", "sources": [{"file", "sha256", "size_bytes",
/// "included", "findings"}]}`.
pub fn composed_prompt_json(prompt: &ComposedPrompt) -> Value {
    json!({
        "text": prompt.text,
        "sources": prompt.sources.iter().map(|source| json!({
            "file": source.file.name(),
            "sha256": source.sha256,
            "size_bytes": source.size_bytes,
            "included": source.included,
            "findings": source.findings.iter().map(audit_finding_json).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// A composed prompt from [`composed_prompt_json`]'s shape; `None` if it is not that shape.
/// Its `session` is empty: a session is kept on its own ([`session_json`]).
pub fn composed_prompt_from_json(value: &Value) -> Option<ComposedPrompt> {
    let sources = value.get("sources")?.as_array()?;
    Some(ComposedPrompt {
        session: crate::SessionState::empty(),
        text: value.get("text")?.as_str()?.to_owned(),
        sources: sources
            .iter()
            .map(|source| {
                let sha256 = source.get("sha256")?.as_str()?;
                Some(crate::PromptSource {
                    file: crate::MemoryFile::parse(source.get("file")?.as_str()?)?,
                    sha256: metis_memory_core::is_sha256_hex(sha256).then(|| sha256.to_owned())?,
                    size_bytes: source.get("size_bytes")?.as_u64()?,
                    included: source.get("included")?.as_bool()?,
                    findings: source
                        .get("findings")?
                        .as_array()?
                        .iter()
                        .map(|finding| {
                            Some(AuditFinding {
                                line: u32::try_from(finding.get("line")?.as_u64()?).ok()?,
                                rule: finding.get("rule")?.as_str()?.to_owned(),
                                detail: finding.get("detail")?.as_str()?.to_owned(),
                            })
                        })
                        .collect::<Option<_>>()?,
                })
            })
            .collect::<Option<_>>()?,
    })
}

/// An event as `{"type", "payload"}`, with the spec's field names (§7).
pub fn event_json(event: &MemoryEvent) -> Value {
    match event {
        MemoryEvent::Updated(e) => json!({
            "type": "memory.updated",
            "payload": {
                "file": e.file.name(),
                "operation": e.operation.name(),
                "before_hash": e.before_hash,
                "after_hash": e.after_hash,
                "before_size_bytes": e.before_size_bytes,
                "after_size_bytes": e.after_size_bytes,
            },
        }),
        MemoryEvent::Eviction(e) => json!({
            "type": "memory.eviction",
            "payload": {
                "file": e.file.name(),
                "trigger": e.trigger.name(),
                "entries_evicted": e.entries_evicted,
                "size_before_bytes": e.size_before_bytes,
                "size_after_bytes": e.size_after_bytes,
            },
        }),
    }
}

/// A tool as an LLM API takes it: `{"name", "description", "input_schema"}`, with the
/// schema as a JSON object.
pub fn tool_definition_json(tool: &ToolDefinition) -> Value {
    json!({
        "name": tool.name,
        "description": tool.description,
        "input_schema": serde_json::from_str::<Value>(&tool.input_schema)
            .unwrap_or_else(|_| Value::String(tool.input_schema.clone())),
    })
}

/// A session's state as JSON (`{"seen": [{"file", "sha256"}], "withheld": [FILE],
/// "shown": [{"file", "sha256"}]}`), for a host that keeps it between processes.
pub fn session_json(state: &crate::SessionState) -> Value {
    let versions = |list: &[FileVersion]| -> Vec<Value> {
        list.iter()
            .map(|v| json!({ "file": v.file.name(), "sha256": v.sha256 }))
            .collect()
    };
    json!({
        "seen": versions(&state.seen),
        "withheld": state.withheld.iter().map(|f| f.name()).collect::<Vec<_>>(),
        "shown": versions(&state.shown),
        "own_writes": state.own_writes.iter().map(|w| json!({
            "file": w.file.name(),
            "before_sha256": w.before_sha256,
            "after_sha256": w.after_sha256,
        })).collect::<Vec<_>>(),
    })
}

/// A session's state from [`session_json`]'s shape; `None` if it is not that shape.
pub fn session_from_json(value: &Value) -> Option<crate::SessionState> {
    let file = |v: &Value| v.as_str().and_then(crate::MemoryFile::parse);
    let versions = |key: &str| -> Option<Vec<FileVersion>> {
        value
            .get(key)?
            .as_array()?
            .iter()
            .map(|v| {
                let sha256 = v.get("sha256")?.as_str()?;
                let file = file(v.get("file")?)?;
                metis_memory_core::is_sha256_hex(sha256).then(|| FileVersion {
                    file,
                    sha256: sha256.to_owned(),
                })
            })
            .collect()
    };
    Some(crate::SessionState {
        seen: versions("seen")?,
        withheld: value
            .get("withheld")?
            .as_array()?
            .iter()
            .map(file)
            .collect::<Option<_>>()?,
        shown: versions("shown")?,
        // Sessions written before own writes were kept have none.
        own_writes: match value.get("own_writes") {
            None => Vec::new(),
            Some(list) => list
                .as_array()?
                .iter()
                .map(|v| {
                    let hash = |key: &str| {
                        let hash = v.get(key)?.as_str()?;
                        metis_memory_core::is_sha256_hex(hash).then(|| hash.to_owned())
                    };
                    Some(crate::OwnWrite {
                        file: file(v.get("file")?)?,
                        before_sha256: hash("before_sha256")?,
                        after_sha256: hash("after_sha256")?,
                    })
                })
                .collect::<Option<_>>()?,
        },
    })
}
