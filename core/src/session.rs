//! What the model of one conversation has seen of each memory file, so that a
//! `memory_consolidate` composed from an old version cannot drop what another session or
//! a person wrote since. Every host keeps one of these per conversation (the Rust
//! `Session`, the packages' sessions through the component, each MCP connection) and this
//! module is the only place that decides how it moves.

use alloc::string::String;
use alloc::vec::Vec;

use crate::scan::ScanPolicy;
use crate::tool_call::{CallOptions, ToolRefusal, ToolSuccess};
use crate::{MemoryFile, Operation, PromptSource, WriteResult};

/// The versions a model has seen, the files kept from it, and the versions refusals
/// showed it that it has not read yet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Session {
    /// `(file, sha256)`, one per file: a consolidate of a listed file is held to it.
    pub seen: Vec<(MemoryFile, String)>,
    /// Files the audit kept out of the model's context: no tool may write them.
    pub withheld: Vec<MemoryFile>,
    /// Versions shown in refusals of the current model response, taken in by
    /// [`next_response`](Self::next_response): the response's other tool calls were
    /// composed before the model read them.
    pub shown: Vec<(MemoryFile, String)>,
}

impl Session {
    /// A session that starts from a composed prompt.
    pub fn from_prompt(sources: &[PromptSource]) -> Session {
        let mut session = Session::default();
        session.saw_prompt(sources);
        session
    }

    /// The model was shown a composed prompt: each file in it (an empty one included,
    /// since the model saw that it holds nothing) is seen at the version read; a file the
    /// audit left out is withheld.
    pub fn saw_prompt(&mut self, sources: &[PromptSource]) {
        for source in sources {
            if !source.included && !source.findings.is_empty() {
                self.withhold(source.file);
            } else {
                self.saw(source.file, &source.sha256);
            }
        }
    }

    /// The model was shown `file` whole at version `sha256` (a resource read, a prompt).
    pub fn saw(&mut self, file: MemoryFile, sha256: &str) {
        self.withheld.retain(|f| *f != file);
        // What it sees now supersedes an older version a refusal showed it.
        self.shown.retain(|(f, _)| *f != file);
        set(&mut self.seen, file, sha256);
    }

    /// `file` was kept from the model: every tool write to it is refused.
    pub fn withhold(&mut self, file: MemoryFile) {
        self.seen.retain(|(f, _)| *f != file);
        self.shown.retain(|(f, _)| *f != file);
        if !self.withheld.contains(&file) {
            self.withheld.push(file);
        }
    }

    /// The version of `file` the model is held to, if any.
    pub fn version(&self, file: MemoryFile) -> Option<&str> {
        self.seen
            .iter()
            .find(|(f, _)| *f == file)
            .map(|(_, hash)| hash.as_str())
    }

    /// The options a tool call runs under in this session.
    pub fn options(&self, scan: ScanPolicy, user_file: MemoryFile) -> CallOptions {
        CallOptions {
            scan,
            seen: self.seen.clone(),
            withheld: self.withheld.clone(),
            user_file,
        }
    }

    /// Takes in a write the model made. A write on the version it had seen moves it to
    /// the new version (it knows its own edit), and so does a consolidate of a file not
    /// held yet (it wrote all of it); a write on another version leaves it where it was,
    /// since the model has not seen what changed in between.
    pub fn wrote(&mut self, operation: Operation, result: &WriteResult) {
        match self.version(result.file) {
            Some(held) if held.eq_ignore_ascii_case(&result.before_hash) => {
                set(&mut self.seen, result.file, &result.after_hash);
            }
            Some(_) => {}
            None if operation == Operation::Consolidate => {
                set(&mut self.seen, result.file, &result.after_hash);
            }
            None => {}
        }
    }

    /// Takes in a refusal: a version it showed the model in full is seen from the next
    /// response on.
    pub fn refused(&mut self, refusal: &ToolRefusal) {
        if let Some((file, sha256)) = &refusal.shown {
            self.shown.retain(|(f, _)| f != file);
            self.shown.push((*file, sha256.clone()));
        }
    }

    /// Takes in a tool call's outcome: [`wrote`](Self::wrote) or
    /// [`refused`](Self::refused).
    pub fn observe(&mut self, outcome: &Result<ToolSuccess, ToolRefusal>) {
        match outcome {
            Ok(success) => self.wrote(success.operation, &success.result),
            Err(refusal) => self.refused(refusal),
        }
    }

    /// The model is asked again without a freshly composed prompt: what refusals showed
    /// it is now seen.
    pub fn next_response(&mut self) {
        for (file, sha256) in core::mem::take(&mut self.shown) {
            self.saw(file, &sha256);
        }
    }
}

fn set(versions: &mut Vec<(MemoryFile, String)>, file: MemoryFile, sha256: &str) {
    match versions.iter_mut().find(|(f, _)| *f == file) {
        Some((_, held)) => *held = sha256.into(),
        None => versions.push((file, sha256.into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::AuditFinding;
    use crate::sha256_hex;
    use crate::tool_call::run_tool_call;
    use crate::tool_call::tests::on;
    use std::prelude::rust_2024::*;

    fn source(file: MemoryFile, text: &str, included: bool, flagged: bool) -> PromptSource {
        PromptSource {
            file,
            sha256: sha256_hex(text.as_bytes()),
            size_bytes: text.len() as u64,
            included,
            findings: if flagged {
                vec![AuditFinding {
                    line: 1,
                    rule: "r".into(),
                    detail: "d".into(),
                }]
            } else {
                Vec::new()
            },
        }
    }

    /// One tool call in `session` against a file holding `current`.
    fn call(session: &mut Session, input: &str, current: &str) -> Result<ToolSuccess, ToolRefusal> {
        let outcome = run_tool_call(
            "memory_consolidate",
            input.into(),
            &session.options(ScanPolicy::ALL, MemoryFile::User),
            on(current),
        );
        session.observe(&outcome);
        outcome
    }

    const KEEP_A: &str = r#"{"file":"MEMORY.md","content":"- a\n"}"#;

    #[test]
    fn a_stale_consolidate_is_refused_and_the_shown_version_counts_from_the_next_response() {
        let mut session = Session::from_prompt(&[source(MemoryFile::Memory, "- a\n", true, false)]);
        let now = "- a\n- b from another session\n";
        let refusal = call(&mut session, KEEP_A, now).unwrap_err();
        assert!(refusal.message.contains("- b from another session"));
        // Another call of the same response was composed before the refusal was read.
        assert!(call(&mut session, KEEP_A, now).is_err());
        session.next_response();
        assert_eq!(
            session.version(MemoryFile::Memory),
            Some(sha256_hex(now.as_bytes()).as_str())
        );
        let done = call(
            &mut session,
            r#"{"file":"MEMORY.md","content":"- a, b\n"}"#,
            now,
        )
        .unwrap();
        assert_eq!(
            session.version(MemoryFile::Memory),
            Some(done.result.after_hash.as_str())
        );
    }

    #[test]
    fn own_writes_advance_and_others_do_not() {
        let mut session = Session::from_prompt(&[source(MemoryFile::Memory, "- a\n", true, false)]);
        let ours = call(
            &mut session,
            r#"{"file":"MEMORY.md","content":"- c\n"}"#,
            "- a\n",
        )
        .unwrap();
        assert_eq!(
            session.version(MemoryFile::Memory),
            Some(ours.result.after_hash.as_str())
        );
        // A write on a version the model never saw leaves it where it was.
        let mut result = ours.result.clone();
        result.before_hash = sha256_hex(b"other");
        result.after_hash = sha256_hex(b"later");
        session.wrote(Operation::Add, &result);
        assert_eq!(
            session.version(MemoryFile::Memory),
            Some(ours.result.after_hash.as_str())
        );
        // A consolidate of a file not held yet holds it: the model wrote all of it.
        let mut fresh = Session::default();
        let done = call(&mut fresh, KEEP_A, "- x\n").unwrap();
        assert_eq!(
            fresh.version(MemoryFile::Memory),
            Some(done.result.after_hash.as_str())
        );
        // An add to a file not held does not.
        let mut fresh = Session::default();
        fresh.wrote(Operation::Add, &done.result);
        assert_eq!(fresh.version(MemoryFile::Memory), None);
    }

    #[test]
    fn a_file_the_audit_left_out_is_withheld_until_the_model_sees_it() {
        let sources = [
            source(MemoryFile::User, "", false, false),
            source(MemoryFile::Memory, "bad\n", false, true),
        ];
        let mut session = Session::from_prompt(&sources);
        assert_eq!(session.withheld, vec![MemoryFile::Memory]);
        // The empty USER.md was seen: it holds nothing.
        assert_eq!(
            session.version(MemoryFile::User),
            Some(sha256_hex(b"").as_str())
        );
        let refusal = call(&mut session, KEEP_A, "bad\n").unwrap_err();
        assert!(
            refusal.message.contains("left out of your context"),
            "{}",
            refusal.message
        );
        // Reported (included with findings) counts as seen.
        session.saw_prompt(&[source(MemoryFile::Memory, "bad\n", true, true)]);
        assert!(session.withheld.is_empty());
        assert_eq!(
            session.version(MemoryFile::Memory),
            Some(sha256_hex(b"bad\n").as_str())
        );
    }

    #[test]
    fn seeing_a_file_supersedes_a_pending_refusal() {
        let mut session = Session::from_prompt(&[source(MemoryFile::Memory, "- a\n", true, false)]);
        call(&mut session, KEEP_A, "- a\n- b\n").unwrap_err();
        session.saw(MemoryFile::Memory, &sha256_hex(b"- newest\n"));
        session.next_response();
        assert_eq!(
            session.version(MemoryFile::Memory),
            Some(sha256_hex(b"- newest\n").as_str())
        );
        session.withhold(MemoryFile::Memory);
        assert_eq!(session.version(MemoryFile::Memory), None);
        assert_eq!(session.withheld, vec![MemoryFile::Memory]);
    }

    /// Refusals that showed two files, then one file withheld: each file's shown version
    /// is its own, the other's is kept (seen from the next response on).
    #[test]
    fn each_files_shown_version_is_kept_apart() {
        let refusal = |file, hash: &str| ToolRefusal {
            message: "changed".into(),
            shown: Some((file, hash.into())),
        };
        let mut session = Session::default();
        session.refused(&refusal(MemoryFile::User, "u1"));
        session.refused(&refusal(MemoryFile::Memory, "m1"));
        session.refused(&refusal(MemoryFile::Memory, "m2"));
        session.next_response();
        assert_eq!(session.version(MemoryFile::User), Some("u1"));
        assert_eq!(session.version(MemoryFile::Memory), Some("m2"));
        let mut session = Session::default();
        session.refused(&refusal(MemoryFile::User, "u1"));
        session.refused(&refusal(MemoryFile::Memory, "m1"));
        session.withhold(MemoryFile::User);
        session.next_response();
        assert_eq!(session.version(MemoryFile::Memory), Some("m1"));
        assert_eq!(session.version(MemoryFile::User), None);
    }
}
