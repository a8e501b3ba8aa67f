//! The memory store's decisions, without I/O.
//!
//! Everything the store decides (the new bytes of a file, whether a cap is hit, which
//! error wins, every text an agent sees) is computed here from plain values, so it is
//! unit-tested natively. The component in `guest/` only adds the WASI reads and the
//! atomic write around these functions.

#![no_std]

extern crate alloc;
#[cfg(test)]
extern crate std;

pub mod audit;
mod edit;
mod error;
mod file;
pub mod git;
pub mod global_user;
mod json;
pub mod lock;
pub mod merge;
mod prompt;
mod refusal;
pub mod session;
mod text;
pub mod tool_call;
mod tools;

pub use edit::{Edit, PlannedWrite, WriteResult, plan_write, sha256_hex};
pub use error::{StoreError, changed_content, is_sha256_hex};
pub use file::{GLOBAL_USER_NAME, MemoryFile};
/// The poisoning scan: its own crate (`scan/`), below the core.
pub use metis_memory_scan as scan;
pub use prompt::{
    ComposedPrompt, PromptLayout, PromptSource, assemble_system_prompt, compose_strict,
    compose_system_prompt, not_text_note,
};
pub use refusal::scan_refusal;
pub use text::{decode_utf8, into_text, python_strip};
pub use tools::{
    MemoryEvent, Operation, TOOL_DEFINITIONS, ToolCall, ToolDefinition, events, parse_tool_call,
    success_text,
};
