//! The `tools` interface: the core's validation, texts and events around the store's
//! write path.

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use metis_memory_core as core;

use crate::exports::metis::memory::tools::{
    EvictionTrigger, Guest, MemoryEvent, MemoryEviction, MemoryUpdated, Operation, ScanPolicy,
    ToolDefinition, ToolError, ToolSuccess,
};
use crate::{Component, write_file};

impl Guest for Component {
    fn definitions() -> Vec<ToolDefinition> {
        core::TOOL_DEFINITIONS
            .iter()
            .map(|tool| ToolDefinition {
                name: tool.name.into(),
                description: tool.description.into(),
                input_schema: tool.input_schema.into(),
            })
            .collect()
    }

    fn call(name: String, input: String) -> Result<ToolSuccess, ToolError> {
        call_scanned(&name, input, core::scan::ScanPolicy::ALL)
    }

    fn call_with_policy(
        name: String,
        input: String,
        policy: ScanPolicy,
    ) -> Result<ToolSuccess, ToolError> {
        let policy = core::scan::ScanPolicy {
            invisible_characters: policy.invisible_characters,
            injection_patterns: policy.injection_patterns,
        };
        call_scanned(&name, input, policy)
    }
}

/// A refused tool call's message: what the model is told.
struct Refusal(String);

impl From<core::StoreError> for Refusal {
    fn from(error: core::StoreError) -> Self {
        Refusal(error.to_string())
    }
}

fn call_scanned(
    name: &str,
    input: String,
    policy: core::scan::ScanPolicy,
) -> Result<ToolSuccess, ToolError> {
    let refused = |Refusal(message)| ToolError {
        message,
        is_user_visible: true,
    };
    let call = core::parse_tool_call(name, &input).map_err(|m| refused(Refusal(m)))?;
    // Free the raw input before the write: it may be as large as the host allows.
    drop(input);
    let operation = call.operation();
    let file = call.file();
    let vet = |content: &str| match core::scan::scan(content, policy) {
        Some(finding) => Err(Refusal(finding.message(file))),
        None => Ok(()),
    };
    let result = write_file(file, call.edit(), vet).map_err(refused)?;
    Ok(ToolSuccess {
        text: core::success_text(operation, &result),
        operation: operation.into(),
        events: core::events(operation, &result)
            .into_iter()
            .map(MemoryEvent::from)
            .collect(),
        result: result.into(),
    })
}

impl From<core::Operation> for Operation {
    fn from(operation: core::Operation) -> Self {
        match operation {
            core::Operation::Add => Operation::Add,
            core::Operation::Replace => Operation::Replace,
            core::Operation::Consolidate => Operation::Consolidate,
        }
    }
}

impl From<core::MemoryEvent> for MemoryEvent {
    fn from(event: core::MemoryEvent) -> Self {
        match event {
            core::MemoryEvent::Updated { operation, result } => {
                MemoryEvent::Updated(MemoryUpdated {
                    file: result.file.into(),
                    operation: operation.into(),
                    before_hash: result.before_hash,
                    after_hash: result.after_hash,
                    before_size_bytes: result.before_size_bytes,
                    after_size_bytes: result.after_size_bytes,
                })
            }
            core::MemoryEvent::Eviction {
                file,
                size_before_bytes,
                size_after_bytes,
            } => MemoryEvent::Eviction(MemoryEviction {
                file: file.into(),
                trigger: EvictionTrigger::SizeCapExceeded,
                entries_evicted: 0,
                size_before_bytes,
                size_after_bytes,
            }),
        }
    }
}
