use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::text::{python_rstrip, python_strip};

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
