//! How the CLI shows results: plain text for a person, `--json` for a script.
//!
//! Output goes through `say!`/`complain!`, which ignore write errors: a closed pipe
//! (`metis-memory read MEMORY.md | head -1`) must not turn a finished command into a panic.

macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout().lock(), $($arg)*);
    }};
}

macro_rules! complain {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

use metis_memory::{
    AuditFinding, ComponentSource, ComposedPrompt, Error, MemoryFile, StoreError, ToolDefinition,
    ToolError, ToolSuccess, Workspace, WriteResult,
};
use serde_json::{Value, json};

use crate::Failure;
use crate::status::FileStatus;
use metis_memory::json::{
    audit_finding_json, composed_prompt_json, error_json, tool_definition_json, tool_error_json,
    tool_success_json, write_result_json,
};

/// The shape `tools` prints the definitions in: the LLM API they are for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ToolFormat {
    /// `{"name", "description", "input_schema"}` (Anthropic's Messages API)
    Anthropic,
    /// `{"type": "function", "function": {"name", "description", "parameters"}}`
    /// (OpenAI's Chat Completions API)
    Openai,
}

pub struct Output {
    pub json: bool,
    /// `--quiet`: no success chatter (write summaries, "no findings", "no changes").
    pub quiet: bool,
    /// Whether `status` colours its states.
    pub color: bool,
    /// How the workspace was chosen, for `status`.
    pub located: crate::locate::How,
}

impl Output {
    pub(super) fn print_json(&self, value: Value) {
        say!("{value:#}\n");
    }

    pub fn content(&self, file: MemoryFile, text: &str) {
        if self.json {
            self.print_json(json!({ "file": file.name(), "content": text }));
        } else {
            // Exactly the file's bytes, so `read` can be piped or redirected losslessly.
            say!("{text}");
        }
    }

    pub fn exists(&self, file: MemoryFile, exists: bool) {
        if self.json {
            self.print_json(json!({ "file": file.name(), "exists": exists }));
        } else {
            say!("{exists}\n");
        }
    }

    pub fn size(&self, file: MemoryFile, size_bytes: u64) {
        if self.json {
            self.print_json(json!({ "file": file.name(), "size_bytes": size_bytes }));
        } else {
            say!("{size_bytes}\n");
        }
    }

    /// The prompt on stdout; with `--json`, its sources too. The audit's findings also
    /// go to stderr, so a person sees them whatever stdout is piped into.
    pub fn prompt(&self, prompt: &ComposedPrompt) {
        for source in &prompt.sources {
            let left_out = if source.included || source.findings.is_empty() {
                ""
            } else {
                " (left out of the prompt)"
            };
            for finding in &source.findings {
                complain!(
                    "{}:{}: [{}] {}{left_out}",
                    source.file.name(),
                    finding.line,
                    finding.rule,
                    finding.detail
                );
            }
        }
        if self.json {
            let sources = composed_prompt_json(prompt)["sources"].take();
            self.print_json(json!({ "prompt": prompt.text, "sources": sources }));
        } else {
            say!("{}\n", prompt.text);
        }
    }

    /// `update`'s text, or nothing when memory did not change; an error if it could not
    /// be written whole (the session must then not count it as shown).
    pub fn memory_update(&self, update: Option<&str>) -> Result<(), Failure> {
        use std::io::Write as _;
        let text = if self.json {
            format!("{}\n", json!({ "update": update }))
        } else {
            update.map(|text| format!("{text}\n")).unwrap_or_default()
        };
        let mut stdout = std::io::stdout().lock();
        stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
            .map_err(|e| Failure::Cli {
                kind: "update",
                message: format!("cannot print the update: {e}; the session was left as it was"),
            })
    }

    /// Every finding of `metis-memory audit`; whether there were none.
    pub fn audit(&self, found: &[(MemoryFile, Vec<AuditFinding>)]) -> bool {
        let clean = found.iter().all(|(_, findings)| findings.is_empty());
        if self.json {
            let findings: Vec<Value> = found
                .iter()
                .flat_map(|(file, findings)| {
                    findings.iter().map(|finding| {
                        let mut value = audit_finding_json(finding);
                        value["file"] = file.name().into();
                        value
                    })
                })
                .collect();
            self.print_json(json!({ "clean": clean, "findings": findings }));
            return clean;
        }
        for (file, findings) in found {
            for finding in findings {
                say!(
                    "{}:{}: [{}] {}\n",
                    file.name(),
                    finding.line,
                    finding.rule,
                    finding.detail
                );
            }
        }
        let names: Vec<&str> = found.iter().map(|(file, _)| file.name()).collect();
        let count: usize = found.iter().map(|(_, findings)| findings.len()).sum();
        if clean {
            if !self.quiet {
                say!("{}: no findings\n", names.join(", "));
            }
        } else {
            complain!(
                "{count} finding{} in {}: review the lines above (a person's edit or a pull may have brought them in)",
                if count == 1 { "" } else { "s" },
                names.join(", ")
            );
        }
        clean
    }

    /// A write's result and, when asked for, the diff it made (`None`: it cannot be told).
    pub fn write(
        &self,
        ws: &Workspace,
        result: &WriteResult,
        diff: Option<Option<String>>,
    ) -> Result<(), Error> {
        if self.json {
            let mut value = write_result_json(result);
            if let Some(diff) = diff {
                value["diff"] = diff.into();
            }
            self.print_json(value);
            return Ok(());
        }
        if !self.quiet {
            let file = result.file;
            say!(
                "{}: {} -> {} bytes (soft cap {}, hard cap {})\n",
                file.name(),
                result.before_size_bytes,
                result.after_size_bytes,
                ws.soft_cap(file)?,
                ws.hard_cap(file)?,
            );
            say!("sha256 {} -> {}\n", result.before_hash, result.after_hash);
            if result.over_soft_cap {
                say!("over the soft cap: consolidate this file soon\n");
            }
        }
        if let Some(diff) = diff {
            self.diff(diff.as_deref());
        }
        Ok(())
    }

    /// A diff after a write's summary; on stderr, why there is none.
    pub(super) fn diff(&self, diff: Option<&str>) {
        match diff {
            Some(diff) => say!("{diff}"),
            None => complain!(
                "no diff: the file could not be read as text before or after this write, or another writer changed it in between"
            ),
        }
    }

    /// `list`: one line per entry, `N  TEXT`; with `--json`, `{"file", "sha256",
    /// "entries": [{"number", "line", "text"}]}`.
    pub fn entries(&self, file: MemoryFile, text: &str, entries: &[crate::entries::Entry<'_>]) {
        if self.json {
            let listed: Vec<Value> = entries
                .iter()
                .map(|e| json!({ "number": e.number, "line": e.line, "text": e.text }))
                .collect();
            self.print_json(json!({
                "file": file.name(),
                "sha256": crate::diff::sha256_hex(text.as_bytes()),
                "entries": listed,
            }));
            return;
        }
        for entry in entries {
            say!(
                "{:>3}  {}\n",
                entry.number,
                crate::diff::visible(entry.text)
            );
        }
    }

    pub fn status(&self, ws: &Workspace) -> Result<(), Error> {
        let rows = ws
            .memory_files()
            .into_iter()
            .map(|file| FileStatus::of(ws, file))
            .collect::<Result<Vec<_>, _>>()?;
        let link = ws.metis_link_target();
        let (source, path, reason) = match metis_memory::component_source()? {
            ComponentSource::Cached(path) => ("cached", Some(path), None),
            ComponentSource::Compiled { path, reason } => ("compiled", Some(path), Some(reason)),
            ComponentSource::Uncached(reason) => ("uncached", None, Some(reason)),
        };
        let path = path.map(|path| path.display().to_string());
        if self.json {
            self.print_json(json!({
                "workspace": ws.root().display().to_string(),
                "workspace_from": self.located.key(),
                "metis_link": link.as_ref().map(|target| target.display().to_string()),
                "global_user": ws.global_user().map(|global| json!({
                    "dir": global.dir().display().to_string(),
                    "agent_writes": global.writes(),
                })),
                "files": rows.iter().map(FileStatus::json).collect::<Vec<_>>(),
                "component": { "source": source, "path": path, "reason": reason },
                "git": crate::init::inspect(ws.root(), false).as_deref().map(crate::init::json),
                "lost_adds": ws.lost_adds().len(),
            }));
            return Ok(());
        }
        match link {
            Some(target) => say!(
                "memory in {} -> {} (a symbolic link, followed because of --allow-metis-link)\n",
                ws.metis_dir().display(),
                target.display()
            ),
            None => say!("memory in {}\n", ws.metis_dir().display()),
        }
        if let Some(global) = ws.global_user() {
            // Where the component sends them (the core's rule), not what the flag alone says.
            let who = match (ws.tool_user_file(), ws.global_is_workspace()) {
                (None, _) => {
                    "it is this workspace's .metis/: the agent reads it, and its USER.md writes are refused"
                }
                (Some(MemoryFile::User), true) => {
                    "it is this workspace's .metis/: the agent's USER.md facts go there"
                }
                (Some(MemoryFile::User), false) => {
                    "the agent reads it; its USER.md facts go to the workspace"
                }
                (Some(_), _) => "the agent's USER.md facts go there",
            };
            say!("global user memory in {} ({who})\n", global.dir().display());
        }
        say!(
            "workspace: {} (from {})\n",
            ws.root().display(),
            self.located.name()
        );
        let width = rows
            .iter()
            .map(|row| row.file.name().len())
            .max()
            .unwrap_or(0);
        for row in &rows {
            say!("{}\n", row.line(self.color, width.max(9)));
        }
        let (path, reason) = (path.unwrap_or_default(), reason.unwrap_or_default());
        match source {
            "cached" => say!("component: compiled, loaded from {path}\n"),
            "compiled" => say!("component: compiled now ({reason}), kept in {path}\n"),
            _ => say!("component: compiled in memory ({reason})\n"),
        }
        if let Some(items) = crate::init::inspect(ws.root(), false) {
            say!("git:\n{}", crate::init::describe(&items));
        }
        match ws.lost_adds().len() {
            0 => {}
            1 => say!("1 acknowledged add is missing from its file: see metis-memory recover\n"),
            n => say!(
                "{n} acknowledged adds are missing from their files: see metis-memory recover\n"
            ),
        }
        Ok(())
    }

    /// What `sync` did.
    pub fn synced(&self, synced: &crate::sync::Synced) {
        if self.json {
            self.print_json(json!({
                "committed": synced.committed,
                "upstream": synced.upstream,
                "merged": synced.merged,
                "pushed": synced.pushed,
            }));
            return;
        }
        match synced.committed.as_slice() {
            [] => say!("memory: nothing to commit\n"),
            files => say!("memory: committed {}\n", files.join(", ")),
        }
        match synced.merged {
            true => say!("merged {}\n", synced.upstream),
            false => say!("{}: nothing new\n", synced.upstream),
        }
        if synced.pushed {
            say!("pushed\n");
        }
    }

    /// The acknowledged adds missing from their files, and what was done about them.
    pub fn lost_adds(&self, lost: &[metis_memory::git_watch::LostAdd], added: bool, forgot: bool) {
        if self.json {
            let lost: Vec<Value> = lost
                .iter()
                .map(|gone| {
                    json!({
                        "file": gone.file.name(),
                        "entry": gone.entry,
                        "acknowledged_at": gone.acknowledged_at,
                    })
                })
                .collect();
            self.print_json(json!({ "lost": lost, "added_again": added, "forgotten": forgot }));
            return;
        }
        if lost.is_empty() {
            say!("no acknowledged add is missing\n");
            return;
        }
        let done = match (added, forgot) {
            (true, _) => "added again",
            (_, true) => "forgotten",
            _ => "missing",
        };
        for gone in lost {
            say!(
                "{done}: {}: {}\n",
                gone.file.name(),
                gone.entry.replace('\n', "\n  ")
            );
        }
        if !added && !forgot {
            say!(
                "add them again with `metis-memory recover --add`, or drop them from this list with --forget\n"
            );
        }
    }

    /// What `init` found and did, and what it left for the person.
    pub fn init(&self, items: &[crate::init::Item]) {
        if self.json {
            self.print_json(json!({ "git": crate::init::json(items) }));
        } else {
            say!("{}", crate::init::describe(items));
        }
    }

    /// The definitions as a JSON array ready for an LLM API (schemas as JSON objects).
    pub fn tool_definitions(&self, tools: &[ToolDefinition], format: ToolFormat) {
        let tools = tools
            .iter()
            .map(tool_definition_json)
            .map(|mut tool| match format {
                ToolFormat::Anthropic => tool,
                ToolFormat::Openai => json!({
                    "type": "function",
                    "function": {
                        "name": tool["name"].take(),
                        "description": tool["description"].take(),
                        "parameters": tool["input_schema"].take(),
                    },
                }),
            })
            .collect();
        self.print_json(Value::Array(tools));
    }

    /// A tool call that wrote (or, in a dry run, would write); always JSON, as a host
    /// would log or forward it, with the diff when asked for.
    pub fn tool_success(&self, success: &ToolSuccess, extra: &[(&str, Value)]) {
        let mut value = tool_success_json(success);
        for (key, field) in extra {
            value[*key] = field.clone();
        }
        self.print_json(value);
    }

    /// A refused tool call: its text on stderr, and the outcome as JSON on stdout.
    pub fn tool_refusal(&self, refused: &ToolError, extra: &[(&str, Value)]) {
        complain!("{}", refused.message);
        let mut value = tool_error_json(refused);
        for (key, field) in extra {
            value[*key] = field.clone();
        }
        self.print_json(value);
    }

    pub fn error(&self, error: &Error) {
        if let Error::Trap {
            message: detail,
            written,
        } = error
        {
            // The trap's text is a wasm backtrace: of use to whoever debugs the guest
            // (kept in the JSON), not to the person who ran the command.
            let message = trap_message(detail, *written);
            complain!("error: {message}");
            if self.json {
                self.print_json(json!({ "error": {
                    "kind": "trap", "message": message, "detail": detail, "written": written,
                } }));
            }
            return;
        }
        complain!("{error}");
        let hint = hint(error);
        if let Some(hint) = &hint {
            complain!("{hint}");
        }
        if self.json {
            let mut value = error_json(error);
            if let Some(hint) = hint {
                value["hint"] = hint.into();
            }
            self.print_json(json!({ "error": value }));
        }
    }

    /// A refusal of the CLI's own (exit 1), e.g. `remove` of an entry that is not there.
    pub fn cli_error(&self, kind: &str, message: &str) {
        complain!("error: {message}");
        if self.json {
            self.print_json(json!({ "error": { "kind": kind, "message": message } }));
        }
    }
}

/// The CLI command that does what a store error's text says only a tool can do: the
/// store's texts are written for the model, which has tools, not commands.
fn hint(error: &Error) -> Option<String> {
    match error {
        Error::Store {
            error: StoreError::InvalidUtf8(info),
            ..
        } => {
            let name = info.file.name();
            Some(format!(
                "to replace it from the command line: metis-memory consolidate {name} CONTENT (or - to read it from stdin)"
            ))
        }
        // Only a person's write reaches here (a tool call's refusal is its outcome); the
        // text above is the one a model gets, and a person may overrule it.
        Error::Store {
            error: StoreError::Poisoned(_),
            ..
        } => Some(
            "this is your own write: if you mean it, run the command again with --no-scan".into(),
        ),
        _ => None,
    }
}

/// A trap as one line: what stopped the component and what that means for the file.
fn trap_message(detail: &str, written: Option<bool>) -> String {
    let last = detail.lines().last().unwrap_or(detail);
    let cause = last
        .rsplit_once("wasm trap: ")
        .map_or(last, |(_, cause)| cause)
        .trim();
    let landed = match written {
        Some(true) => "The write was made before it stopped: do not run it again",
        Some(false) => "Nothing was written",
        None => {
            "Nothing was written unless it stopped in a write's last steps: `metis-memory status` shows the files as they are"
        }
    };
    format!(
        "the memory component stopped before it finished this call ({cause}): it ran out of memory or fuel, or hit a bug. {landed}"
    )
}

#[cfg(test)]
mod tests {
    /// A trap as wasmtime reports it: the backtrace's last line names the cause.
    #[test]
    fn a_trap_is_told_by_its_cause_not_its_backtrace() {
        let detail = "error while executing at wasm backtrace:\n    0:   0x43c0 - <unknown>!<wasm function 36>\n    2:  0x1a883 - <unknown>!<wasm function 172>: wasm trap: all fuel consumed by WebAssembly";
        let message = super::trap_message(detail, None);
        assert!(
            message.starts_with(
                "the memory component stopped before it finished this call (all fuel consumed by WebAssembly): "
            ),
            "{message}"
        );
        assert!(!message.contains("0x43c0"), "{message}");
        assert!(message.ends_with("`metis-memory status` shows the files as they are"));
    }
}
