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

pub(crate) use complain;

pub mod locate;
pub mod mcp;
mod status;

use metis_memory::{
    AuditFinding, ComponentSource, ComposedPrompt, Error, MemoryFile, ToolDefinition, ToolError,
    ToolSuccess, Workspace, WriteResult,
};
use serde_json::{Value, json};

use metis_memory::json::{
    audit_finding_json, composed_prompt_json, error_json, tool_definition_json, tool_error_json,
    tool_success_json, write_result_json,
};
use status::FileStatus;

pub struct Output {
    pub json: bool,
    /// How the workspace was chosen, for `status`.
    pub located: locate::How,
}

impl Output {
    fn print_json(&self, value: Value) {
        say!("{value:#}\n");
    }

    pub fn content(&self, file: MemoryFile, text: &str) {
        if self.json {
            self.print_json(json!({ "file": file.file_name(), "content": text }));
        } else {
            // Exactly the file's bytes, so `read` can be piped or redirected losslessly.
            say!("{text}");
        }
    }

    pub fn exists(&self, file: MemoryFile, exists: bool) {
        if self.json {
            self.print_json(json!({ "file": file.file_name(), "exists": exists }));
        } else {
            say!("{exists}\n");
        }
    }

    pub fn size(&self, file: MemoryFile, size_bytes: u64) {
        if self.json {
            self.print_json(json!({ "file": file.file_name(), "size_bytes": size_bytes }));
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
                    source.file.file_name(),
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

    /// Every finding of `metis-memory audit`; whether there were none.
    pub fn audit(&self, found: &[(MemoryFile, Vec<AuditFinding>)]) -> bool {
        let clean = found.iter().all(|(_, findings)| findings.is_empty());
        if self.json {
            let findings: Vec<Value> = found
                .iter()
                .flat_map(|(file, findings)| {
                    findings.iter().map(|finding| {
                        let mut value = audit_finding_json(finding);
                        value["file"] = file.file_name().into();
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
                    file.file_name(),
                    finding.line,
                    finding.rule,
                    finding.detail
                );
            }
        }
        let names: Vec<&str> = found.iter().map(|(file, _)| file.file_name()).collect();
        let count: usize = found.iter().map(|(_, findings)| findings.len()).sum();
        if clean {
            say!("{}: no findings\n", names.join(", "));
        } else {
            complain!(
                "{count} finding{} in {}: review the lines above (a person's edit or a pull may have brought them in)",
                if count == 1 { "" } else { "s" },
                names.join(", ")
            );
        }
        clean
    }

    pub fn write(&self, ws: &Workspace, result: &WriteResult) -> Result<(), Error> {
        if self.json {
            self.print_json(write_result_json(result));
            return Ok(());
        }
        let file = result.file;
        say!(
            "{}: {} -> {} bytes (soft cap {}, hard cap {})\n",
            file.file_name(),
            result.before_size_bytes,
            result.after_size_bytes,
            ws.soft_cap(file)?,
            ws.hard_cap(file)?,
        );
        say!("sha256 {} -> {}\n", result.before_hash, result.after_hash);
        if result.over_soft_cap {
            say!("over the soft cap: consolidate this file soon\n");
        }
        Ok(())
    }

    pub fn status(&self, ws: &Workspace) -> Result<(), Error> {
        let rows = MemoryFile::ALL
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
                "files": rows.iter().map(FileStatus::json).collect::<Vec<_>>(),
                "component": { "source": source, "path": path, "reason": reason },
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
        say!(
            "workspace: {} (from {})\n",
            ws.root().display(),
            self.located.name()
        );
        for row in &rows {
            say!("{}\n", row.line());
        }
        let (path, reason) = (path.unwrap_or_default(), reason.unwrap_or_default());
        match source {
            "cached" => say!("component: compiled, loaded from {path}\n"),
            "compiled" => say!("component: compiled now ({reason}), kept in {path}\n"),
            _ => say!("component: compiled in memory ({reason})\n"),
        }
        Ok(())
    }

    /// The definitions as a JSON array ready for an LLM API (schemas as JSON objects).
    pub fn tool_definitions(&self, tools: &[ToolDefinition]) {
        let tools = tools.iter().map(tool_definition_json).collect();
        self.print_json(Value::Array(tools));
    }

    /// A tool call that wrote; always JSON, as a host would log or forward it.
    pub fn tool_success(&self, success: &ToolSuccess) {
        self.print_json(tool_success_json(success));
    }

    /// A refused tool call: its text on stderr, and the outcome as JSON on stdout.
    pub fn tool_refusal(&self, refused: &ToolError) {
        complain!("{}", refused.message);
        self.print_json(tool_error_json(refused));
    }

    pub fn error(&self, error: &Error) {
        complain!("{error}");
        if self.json {
            self.print_json(json!({ "error": error_json(error) }));
        }
    }
}
