//! `call --dry-run`: the call run for real, by the same component, on a copy of the
//! files (the user's own too, with global user memory on) in a temporary workspace, so what it prints is what the call would do; the
//! workspace itself is only read.

use metis_memory::{CallOptions, Error, GlobalUser, Workspace};
use serde_json::Value;

use super::scratch::Scratch;
use super::writes::written_file;
use super::{Failure, Output, diff};

pub fn call(
    ws: &Workspace,
    out: &Output,
    tool: &str,
    input: &str,
    options: &CallOptions,
) -> Result<(), Failure> {
    let scratch = Scratch::new("dry-run").map_err(|e| Failure::Cli {
        kind: "dry-run",
        message: format!("cannot make a temporary workspace for the dry run: {e}"),
    })?;
    // Each file's bytes as the component reads them (never a link followed by the
    // host), and only where it exists, so a missing file stays missing.
    let mut copy = Workspace::open(scratch.path());
    // At home the user's own `.metis/` is the workspace's, and so it is in the copy: the
    // component then treats the copy's USER.md as it treats the real one.
    if let Some(global) = ws.global_user() {
        let dir = if ws.global_is_workspace() {
            copy.metis_dir()
        } else {
            scratch.path().join("global-metis")
        };
        copy = copy.with_global_user(GlobalUser::at(dir).agent_writes(global.writes()));
    }
    let mut before = Vec::new();
    let target = written_file(ws, input);
    for file in ws.memory_files() {
        let text = match ws.read(file) {
            Ok(text) => text,
            // The call never reads the other file, so it is left out of the copy.
            Err(_) if target.is_some_and(|t| t != file) => continue,
            Err(e) => {
                return Err(Failure::Cli {
                    kind: "dry-run",
                    message: format!(
                        "a dry run copies {} as text, and it cannot be read as text ({e}), so the call cannot be tried on a copy; nothing was written",
                        file.name()
                    ),
                });
            }
        };
        if let (true, Some(path)) = (ws.exists(file)?, copy.file_path(file)) {
            let dir = path.parent().unwrap_or(scratch.path());
            std::fs::create_dir_all(dir)
                .and_then(|()| std::fs::write(&path, &text))
                .map_err(|e| Failure::Cli {
                    kind: "dry-run",
                    message: format!("cannot copy {} for the dry run: {e}", file.name()),
                })?;
        }
        before.push((file, text));
    }
    let dry_run: (&str, Value) = ("dry_run", true.into());
    let called = copy.call_tool_with_options(tool, input, options);
    match called.and_then(|called| called.result()) {
        Ok(success) => {
            let file = success.result.file;
            let old = before.iter().find(|(f, _)| *f == file).map(|(_, t)| t);
            let diff = diff::unified(file, old.map_or("", String::as_str), &copy.read(file)?);
            if out.json {
                out.tool_success(&success, &[dry_run, ("diff", diff.into())]);
            } else {
                // For a person: the change on stdout, what the model would be told on
                // stderr.
                say!("{diff}");
                complain!("dry run, nothing written: {}", success.text);
            }
            Ok(())
        }
        Err(Error::Tool(refused)) => {
            if out.json {
                out.tool_refusal(&refused, &[dry_run, ("diff", "".into())]);
            } else {
                complain!("dry run, refused: {}", refused.message);
            }
            Err(Failure::Refused)
        }
        Err(other) => Err(other.into()),
    }
}
