//! The `tools` interface: the core's tool call around the store's write path.

use alloc::string::String;
use alloc::vec::Vec;

use metis_memory_core as core;
use metis_memory_core::tool_call::{CallOptions as CoreCallOptions, ToolRefusal, WriteRefusal};

use crate::exports::metis::memory::store::WorkspaceBorrow;
use crate::exports::metis::memory::tools::{
    CallOptions, CallOutcome, EvictionTrigger, Guest, MemoryEvent, MemoryEviction, MemoryUpdated,
    Operation, ToolDefinition, ToolError, ToolSuccess,
};
use crate::fs::MetisDir;
use crate::metis::memory::types::{FileVersion, Session};
use crate::{Component, Held, Workspace, scan_policy, write_file};

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
        let workspace = Workspace::default();
        let dir = workspace.write_dirs();
        let options = CoreCallOptions {
            user_file: workspace.user_file(&dir),
            ..CoreCallOptions::scan_all()
        };
        let mut held = None;
        run_core(&workspace, &dir, &mut held, &name, input, &options)
            .map(success)
            .map_err(tool_error)
    }

    fn call_with_options(
        workspace: WorkspaceBorrow<'_>,
        name: String,
        input: String,
        options: CallOptions,
    ) -> CallOutcome {
        let workspace: &Workspace = workspace.get();
        let dir = workspace.write_dirs();
        let mut session = core::session::Session::from(options.session);
        let mut call = session.options(scan_policy(options.scan), workspace.user_file(&dir));
        call.hold_unseen = options.hold_unseen;
        let mut held = None;
        let outcome = run_core(workspace, &dir, &mut held, &name, input, &call);
        session.observe(&outcome);
        CallOutcome {
            outcome: outcome.map(success).map_err(tool_error),
            session: session.into(),
        }
    }

    fn next_response(session: Session) -> Session {
        let mut session = core::session::Session::from(session);
        session.next_response();
        session.into()
    }
}

/// The tool call, its write's lock left in `held` (see [`Held`]).
fn run_core<'d>(
    workspace: &Workspace,
    dir: &'d MetisDir,
    held: &mut Held<'d>,
    name: &str,
    input: String,
    options: &CoreCallOptions,
) -> Result<core::tool_call::ToolSuccess, ToolRefusal> {
    core::tool_call::run_tool_call(name, input, options, |file, edit, if_unchanged, vet| {
        write_file(
            workspace.settings(),
            dir,
            held,
            file,
            edit,
            if_unchanged,
            |before, after| vet(before, after).map_err(WriteRefusal::Refused),
        )
    })
}

fn tool_error(refusal: ToolRefusal) -> ToolError {
    ToolError {
        message: refusal.message,
        is_user_visible: true,
        shown: refusal.shown.map(|(file, sha256)| FileVersion {
            file: file.into(),
            sha256,
        }),
    }
}

fn success(done: core::tool_call::ToolSuccess) -> ToolSuccess {
    ToolSuccess {
        text: done.text,
        operation: done.operation.into(),
        events: done.events.into_iter().map(MemoryEvent::from).collect(),
        result: done.result.into(),
    }
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
