//! `edit FILE`: the person's editor on a temporary copy, saved as one scanned consolidate
//! of the file named, so the caps and the poisoning scan apply as to a model's write, and
//! held to the version copied, so a change made meanwhile is refused, never overwritten.
//! A refused edit's copy is kept and its path printed: the person's work is not lost.

use std::path::Path;
use std::process::Command;

use metis_memory::{Edit, Error, MemoryFile, ScanPolicy, StoreError, Workspace, WriteOptions};
use serde_json::json;

use super::scratch::Scratch;
use super::{Failure, Output, diff, input};

pub fn edit(
    ws: &Workspace,
    out: &Output,
    file: MemoryFile,
    want_diff: bool,
) -> Result<(), Failure> {
    let name = file.name();
    let original = ws.read(file)?;
    let mut scratch = Scratch::new("edit").map_err(|e| cannot("make a temporary copy", &e))?;
    // The copy has the file's own name, so the editor knows it for markdown.
    let copy = scratch.path().join(file.file_name());
    std::fs::write(&copy, &original).map_err(|e| cannot("write the temporary copy", &e))?;

    if let Err(message) = run_editor(&copy, out.json) {
        scratch.keep();
        return Err(kept(&copy, message));
    }
    let edited = std::fs::read(&copy).map_err(|e| cannot("read the edited copy", &e))?;
    if edited == original.as_bytes() {
        if out.json {
            out.print_json(json!({ "file": name, "changed": false }));
        } else if !out.quiet {
            say!("no changes to {name}; nothing written\n");
        }
        return Ok(());
    }
    let edited = match String::from_utf8(edited) {
        Ok(text) => text,
        Err(e) => {
            scratch.keep();
            let offset = e.utf8_error().valid_up_to();
            return Err(kept(
                &copy,
                format!(
                    "the edited {name} is not valid UTF-8 (first invalid byte at offset {offset}); nothing was written"
                ),
            ));
        }
    };
    if let Err(Failure::Usage(message)) =
        input::within_limit(&edited, &format!("the edited {name}"))
    {
        scratch.keep();
        return Err(kept(&copy, message));
    }

    // The store's own conditional consolidate of the file named, scanned as the tools'
    // writes are: a tool call would name `USER.md`, which global user memory may send to
    // the other USER.md.
    let copied = diff::sha256_hex(original.as_bytes());
    let options = WriteOptions {
        if_unchanged: Some(copied),
        scan: ScanPolicy::ALL,
    };
    match ws.write(file, &Edit::Consolidate(edited.clone()), &options) {
        Ok(result) => {
            let diff = want_diff.then(|| diff::of_write(&result, &original, &edited));
            out.write(ws, &result, diff)?;
            Ok(())
        }
        Err(Error::Store {
            error: StoreError::Changed(_),
            ..
        }) => {
            scratch.keep();
            Err(kept(
                &copy,
                format!(
                    "{name} changed while it was being edited (another session or a person wrote to it), so saving the edit would have dropped that change; nothing was written"
                ),
            ))
        }
        Err(Error::Store { message, .. }) => {
            scratch.keep();
            Err(kept(
                &copy,
                format!("{}; nothing was written", message.trim_end_matches('.')),
            ))
        }
        Err(other) => {
            scratch.keep();
            complain!("{}", kept_note(&copy));
            Err(other.into())
        }
    }
}

/// Runs `$VISUAL`, else `$EDITOR`, else `vi` on `path`, through the shell as git does, so
/// an editor given with its options (`code --wait`) works.
/// With `--json`, what the editor writes on stdout goes to stderr, so stdout holds only
/// the JSON.
fn run_editor(path: &Path, json: bool) -> Result<(), String> {
    let editor = ["VISUAL", "EDITOR"]
        .into_iter()
        .filter_map(std::env::var_os)
        .find(|value| !value.is_empty())
        .map_or_else(
            || "vi".to_owned(),
            |value| value.to_string_lossy().into_owned(),
        );
    let mut command = if cfg!(unix) {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(format!("{editor} \"$@\""))
            .arg(&editor);
        command
    } else {
        let mut words = editor.split_whitespace();
        let mut command = Command::new(words.next().unwrap_or("notepad"));
        command.args(words);
        command
    };
    if json {
        command.stdout(std::io::stderr());
    }
    match command.arg(path).status() {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!(
            "the editor ({editor}) exited with {status}; nothing was written"
        )),
        Err(e) => Err(format!(
            "cannot run the editor ({editor}): {e}; nothing was written"
        )),
    }
}

/// An edit refused or abandoned, the copy kept: exit 1, the reason and where the copy is.
fn kept(copy: &Path, reason: String) -> Failure {
    Failure::Cli {
        kind: "edit-refused",
        message: format!("{reason}\n{}", kept_note(copy)),
    }
}

fn kept_note(copy: &Path) -> String {
    format!(
        "your edited copy is kept at {} (nothing of it is lost: compare it with the file and edit again)",
        copy.display()
    )
}

fn cannot(what: &str, e: &std::io::Error) -> Failure {
    Failure::Cli {
        kind: "edit",
        message: format!("cannot {what}: {e}"),
    }
}
