use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::audit::{AuditFinding, AuditPolicy};
use crate::text::{decode_utf8, python_rstrip, python_strip};
use crate::{MemoryFile, StoreError, sha256_hex};

/// One memory file as prompt composition read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptSource {
    pub file: MemoryFile,
    /// SHA-256 of the exact bytes read: what a consolidate based on this prompt expects.
    pub sha256: String,
    pub size_bytes: u64,
    /// Whether the file's section is in the prompt.
    pub included: bool,
    pub findings: Vec<AuditFinding>,
}

/// A composed system prompt and the versions of the files it was composed from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComposedPrompt {
    pub text: String,
    /// USER.md, then MEMORY.md.
    pub sources: Vec<PromptSource>,
}

/// The prompt's files, in its order.
const PROMPT_ORDER: [MemoryFile; 2] = [MemoryFile::User, MemoryFile::Memory];

/// [`assemble_system_prompt`] from the files `read` yields (each read once, USER.md first,
/// as the reference reads them), with the hash of what was read and the audit's findings
/// handled by `policy`.
pub fn compose_system_prompt(
    base: &str,
    mut read: impl FnMut(MemoryFile) -> Result<Vec<u8>, StoreError>,
    policy: AuditPolicy,
) -> Result<ComposedPrompt, StoreError> {
    let mut texts: Vec<String> = Vec::with_capacity(2);
    let mut sources = Vec::with_capacity(2);
    for file in PROMPT_ORDER {
        let bytes = read(file)?;
        let text = decode_utf8(file, &bytes)?;
        let findings = policy.findings(text);
        let left_out = policy.keeps_out(&findings);
        if left_out && policy == AuditPolicy::Refuse {
            return Err(StoreError::Flagged { file, findings });
        }
        sources.push(PromptSource {
            file,
            sha256: sha256_hex(&bytes),
            size_bytes: bytes.len() as u64,
            included: !left_out && !python_strip(text).is_empty(),
            findings,
        });
        texts.push(if left_out {
            String::new()
        } else {
            text.to_owned()
        });
    }
    Ok(ComposedPrompt {
        text: assemble_system_prompt(base, &texts[0], &texts[1]),
        sources,
    })
}

/// The system prompt: `base` (trailing whitespace removed), then the USER.md section, then
/// the MEMORY.md section, each left out when empty after stripping, joined by a blank line.
pub fn assemble_system_prompt(base: &str, user_md: &str, memory_md: &str) -> String {
    let user = python_strip(user_md);
    let memory = python_strip(memory_md);
    let mut parts: Vec<String> = Vec::with_capacity(3);
    let base = python_rstrip(base);
    if !base.is_empty() {
        parts.push(base.to_owned());
    }
    if !user.is_empty() {
        parts.push(format!("## User context (USER.md)\n{user}"));
    }
    if !memory.is_empty() {
        parts.push(format!("## Workspace memory (MEMORY.md)\n{memory}"));
    }
    parts.join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::prelude::rust_2024::*;

    #[test]
    fn omits_empty_sections() {
        assert_eq!(assemble_system_prompt("base \n", " \n", ""), "base");
        assert_eq!(
            assemble_system_prompt("", "likes tea\n", ""),
            "## User context (USER.md)\nlikes tea"
        );
    }

    #[test]
    fn both_sections_in_order() {
        assert_eq!(
            assemble_system_prompt("  You are helpful.\n", "- tea\n", "- rust\n"),
            "  You are helpful.\n\n## User context (USER.md)\n- tea\n\n## Workspace memory (MEMORY.md)\n- rust"
        );
    }
}
