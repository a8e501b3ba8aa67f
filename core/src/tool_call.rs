//! One tool call from input to outcome: validation, the seen version a consolidate must
//! still match, the poisoning scan on the new content, and the texts and events. The
//! component (and the native test shell) only supply the write.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::scan::{self, ScanPolicy};
use crate::{
    Edit, MemoryEvent, MemoryFile, Operation, StoreError, WriteResult, events, parse_tool_call,
    success_text,
};

/// How a tool call runs: the scan's parts and the file versions the model has seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallOptions {
    pub scan: ScanPolicy,
    /// `(file, sha256)`: a `memory_consolidate` of a listed file is made only if the
    /// file is still that version (the first listed, if a file is listed twice).
    pub seen: Vec<(MemoryFile, String)>,
}

impl CallOptions {
    /// The full scan and no seen versions: what `tools.call` does.
    pub fn scan_all() -> CallOptions {
        CallOptions {
            scan: ScanPolicy::ALL,
            seen: Vec::new(),
        }
    }

    fn seen(&self, file: MemoryFile) -> Option<&str> {
        self.seen
            .iter()
            .find(|(f, _)| *f == file)
            .map(|(_, hash)| hash.as_str())
    }
}

/// A tool call that wrote the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolSuccess {
    pub text: String,
    pub operation: Operation,
    pub result: WriteResult,
    pub events: Vec<MemoryEvent>,
}

/// A tool call that changed nothing: the text for the model, and the version of a file
/// the text showed it in full (a stale consolidate's current content).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolRefusal {
    pub message: String,
    pub shown: Option<(MemoryFile, String)>,
}

impl From<StoreError> for ToolRefusal {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Changed {
                file,
                current_hash,
                current_content,
                ..
            } => ToolRefusal {
                message: changed_text(file, &current_content),
                shown: Some((file, current_hash)),
            },
            other => ToolRefusal::says(other.to_string()),
        }
    }
}

impl ToolRefusal {
    fn says(message: String) -> ToolRefusal {
        ToolRefusal {
            message,
            shown: None,
        }
    }
}

/// The model's text for a consolidate refused because `file` changed since it saw it:
/// the current content (at most the hard cap of it), so its next attempt keeps what
/// another session or a person added.
pub fn changed_text(file: MemoryFile, current: &str) -> String {
    let cap = file.hard_cap() as usize;
    let (shown, rest) = if current.len() > cap {
        let mut end = cap;
        while !current.is_char_boundary(end) {
            end -= 1;
        }
        (&current[..end], current.len() - end)
    } else {
        (current, 0)
    };
    let mut body = String::from(shown);
    if rest > 0 {
        body.push_str(&format!("\n[… {rest} more bytes not shown]"));
    }
    if !body.is_empty() && !body.ends_with('\n') {
        body.push('\n');
    }
    format!(
        "{file} changed since you last saw it (another session or a person wrote to it), so this memory_consolidate would have dropped their changes; nothing was written. Its current content is below: call memory_consolidate again with content that keeps what should stay.\n--- {file} now ({} bytes) ---\n{body}--- end of {file} ---",
        current.len()
    )
}

/// The scan a write runs on the new content before replacing the file; it may refuse it.
pub type Vet<'a> = &'a dyn Fn(&str) -> Result<(), ToolRefusal>;

/// Runs the tool `name` with `input` (its JSON) under `options`. `write` is the store's
/// one write path: it plans the edit, gives the new content to the scan it is passed
/// (which may refuse it), and replaces the file.
pub fn run_tool_call(
    name: &str,
    input: String,
    options: &CallOptions,
    write: impl FnOnce(MemoryFile, Edit<'_>, Vet<'_>) -> Result<WriteResult, ToolRefusal>,
) -> Result<ToolSuccess, ToolRefusal> {
    let call = parse_tool_call(name, &input).map_err(ToolRefusal::says)?;
    // Free the raw input before the write: it may be as large as the host allows.
    drop(input);
    let operation = call.operation();
    let file = call.file();
    let edit = match (call.edit(), options.seen(file)) {
        (Edit::Consolidate { content }, Some(expected_hash)) => Edit::ConsolidateIfUnchanged {
            content,
            expected_hash,
        },
        (edit, _) => edit,
    };
    let vet = |content: &str| match scan::scan(content, options.scan) {
        Some(finding) => Err(ToolRefusal::says(finding.message(file))),
        None => Ok(()),
    };
    let result = write(file, edit, &vet)?;
    Ok(ToolSuccess {
        text: success_text(operation, &result),
        operation,
        events: events(operation, &result),
        result,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{plan_write, sha256_hex};
    use std::prelude::rust_2024::*;

    /// The write path over a file held in memory.
    fn on(
        current: &str,
    ) -> impl FnOnce(MemoryFile, Edit<'_>, Vet<'_>) -> Result<WriteResult, ToolRefusal> {
        let bytes = current.as_bytes().to_vec();
        move |file, edit, vet| {
            let planned = plan_write(file, edit, || Ok(bytes))?;
            vet(core::str::from_utf8(&planned.after).unwrap())?;
            Ok(planned.result())
        }
    }

    fn consolidate(content: &str) -> String {
        format!(r#"{{"file":"MEMORY.md","content":"{content}"}}"#)
    }

    fn seeing(hash: &str) -> CallOptions {
        CallOptions {
            seen: vec![
                (MemoryFile::User, sha256_hex(b"other")),
                (MemoryFile::Memory, hash.into()),
            ],
            ..CallOptions::scan_all()
        }
    }

    #[test]
    fn a_consolidate_of_the_seen_version_is_made() {
        let seen = sha256_hex(b"- a\n");
        let done = run_tool_call(
            "memory_consolidate",
            consolidate("- a, b\\n"),
            &seeing(&seen),
            on("- a\n"),
        )
        .unwrap();
        assert_eq!(done.result.before_hash, seen);
        // Either case of hex names the same version.
        let upper = seen.to_ascii_uppercase();
        assert!(
            run_tool_call(
                "memory_consolidate",
                consolidate("x"),
                &seeing(&upper),
                on("- a\n")
            )
            .is_ok()
        );
    }

    #[test]
    fn a_consolidate_of_another_version_shows_the_current_content() {
        let refusal = run_tool_call(
            "memory_consolidate",
            consolidate("- a\\n"),
            &seeing(&sha256_hex(b"- a\n")),
            on("- a\n- added by someone else\n"),
        )
        .unwrap_err();
        assert_eq!(
            refusal.shown,
            Some((
                MemoryFile::Memory,
                sha256_hex(b"- a\n- added by someone else\n")
            ))
        );
        assert!(
            refusal
                .message
                .starts_with("MEMORY.md changed since you last saw it")
        );
        assert!(refusal.message.ends_with(
            "--- MEMORY.md now (28 bytes) ---\n- a\n- added by someone else\n--- end of MEMORY.md ---"
        ));
    }

    #[test]
    fn only_consolidate_of_a_listed_file_is_conditional() {
        let stale = seeing(&sha256_hex(b"old"));
        let add = r#"{"file":"MEMORY.md","entry":"x"}"#.to_string();
        assert!(run_tool_call("memory_add", add, &stale, on("new\n")).is_ok());
        let replace = r#"{"file":"MEMORY.md","old":"new","new":"x"}"#.to_string();
        assert!(run_tool_call("memory_replace", replace, &stale, on("new\n")).is_ok());
        let user = r#"{"file":"USER.md","content":"x"}"#.to_string();
        let only_memory = CallOptions {
            seen: vec![(MemoryFile::Memory, sha256_hex(b"old"))],
            ..CallOptions::scan_all()
        };
        assert!(run_tool_call("memory_consolidate", user, &only_memory, on("new\n")).is_ok());
        assert!(
            run_tool_call(
                "memory_consolidate",
                consolidate("x"),
                &CallOptions::scan_all(),
                on("new\n")
            )
            .is_ok()
        );
    }

    #[test]
    fn the_size_check_comes_before_the_version_check() {
        let big = "x".repeat(5000);
        let refusal = run_tool_call(
            "memory_consolidate",
            consolidate(&big),
            &seeing(&sha256_hex(b"old")),
            on("new\n"),
        )
        .unwrap_err();
        assert_eq!(refusal.shown, None);
        assert!(
            refusal.message.contains("exceeds hard cap 4096"),
            "{}",
            refusal.message
        );
    }

    #[test]
    fn a_file_over_its_hard_cap_is_shown_up_to_the_cap() {
        let current = "é".repeat(3000);
        let text = changed_text(MemoryFile::User, &current);
        assert!(text.contains("--- USER.md now (6000 bytes) ---\n"));
        assert!(text.contains(&format!(
            "{}\n[… 2928 more bytes not shown]\n--- end of USER.md ---",
            "é".repeat(1536)
        )));
    }
}
