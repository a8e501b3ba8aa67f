//! The commands that write, each able to show the diff it made (`--diff`).

use metis_memory::{Edit, Error, MemoryFile, ToolSuccess, Workspace, WriteOptions, WriteResult};
use serde_json::{Value, json};

use super::{Failure, Output, diff, entries};

/// Runs `write` on `file` and prints its result and, with `want_diff`, the diff it made.
pub fn write(
    ws: &Workspace,
    out: &Output,
    file: MemoryFile,
    want_diff: bool,
    write: impl FnOnce() -> Result<WriteResult, Error>,
) -> Result<(), Failure> {
    // A file the store cannot read (not UTF-8) can still be consolidated: then there is
    // no diff, but the write goes ahead.
    let before = want_diff.then(|| ws.read(file).ok());
    let result = write()?;
    let diff = before.map(|before| changes(ws, &result, before.as_deref()));
    out.write(ws, &result, diff)?;
    Ok(())
}

/// `remove FILE N`: entry N of the version read, removed by a consolidate held to that
/// version, so a concurrent change makes it refuse instead of removing whatever line is
/// Nth by then; with `expect_hash` (the version the person listed), a file that is no
/// longer that version is refused before anything is written.
pub fn remove(
    ws: &Workspace,
    out: &Output,
    file: MemoryFile,
    number: u64,
    expect_hash: Option<String>,
    want_diff: bool,
) -> Result<(), Failure> {
    let text = ws.read(file)?;
    let read_hash = diff::sha256_hex(text.as_bytes());
    let listed = entries::entries(&text);
    let Some(entry) = usize::try_from(number)
        .ok()
        .and_then(|n| listed.get(n.wrapping_sub(1)))
    else {
        let count = match listed.len() {
            1 => "1 entry".to_owned(),
            n => format!("{n} entries"),
        };
        return Err(Failure::Cli {
            kind: "no-such-entry",
            message: format!(
                "{} has {count}, so there is no entry {number}; nothing was changed (`metis-memory list {}` numbers them)",
                file.name(),
                file.name()
            ),
        });
    };
    // The entry is found in the text read now, so the write is held to that text: a file
    // changed since HASH was listed is refused here, even if it changes back before the
    // write (A, B, A would otherwise write B minus an entry).
    if let Some(listed_hash) = expect_hash.filter(|hash| *hash != read_hash) {
        return Err(Failure::Cli {
            kind: "changed",
            message: format!(
                "{name} changed since it was listed (sha256 {listed_hash}, now {read_hash}), so entry {number} may be another line; nothing was removed (`metis-memory list {name}` numbers it again)",
                name = file.name()
            ),
        });
    }
    let kept = entries::without(&text, entry);
    let options = WriteOptions {
        if_unchanged: Some(read_hash),
        ..WriteOptions::default()
    };
    let result = ws.write(file, &Edit::Consolidate(kept.clone()), &options)?;
    let diff = want_diff.then(|| diff::of_write(&result, &text, &kept));
    if out.json {
        let mut value = metis_memory::json::write_result_json(&result);
        value["removed"] =
            json!({ "number": entry.number, "line": entry.line, "text": entry.text });
        if let Some(diff) = diff {
            value["diff"] = diff.into();
        }
        out.print_json(value);
        return Ok(());
    }
    if !out.quiet {
        say!(
            "removed entry {} (line {}) of {}: {}\n",
            entry.number,
            entry.line,
            file.name(),
            diff::visible(entry.text)
        );
    }
    out.write(ws, &result, diff)?;
    Ok(())
}

/// `call`: one tool call, printed as JSON with, for `--diff`, the diff it made.
pub fn call(
    ws: &Workspace,
    out: &Output,
    tool: &str,
    input: &str,
    want_diff: bool,
    run: impl FnOnce(&str, &str) -> Result<ToolSuccess, Error>,
) -> Result<(), Failure> {
    // Only the file the input names is read; if it names none, the call is refused.
    let before = want_diff.then(|| written_file(ws, input).and_then(|file| ws.read(file).ok()));
    match run(tool, input) {
        Ok(success) => {
            let mut extra: Vec<(&str, Value)> = Vec::new();
            if let Some(before) = before {
                let diff = changes(ws, &success.result, before.as_deref());
                if diff.is_none() {
                    out.diff(None);
                }
                extra.push(("diff", diff.into()));
            }
            out.tool_success(&success, &extra);
            Ok(())
        }
        Err(Error::Tool(refused)) => {
            let extra: Vec<(&str, Value)> = if want_diff {
                vec![("diff", "".into())]
            } else {
                Vec::new()
            };
            out.tool_refusal(&refused, &extra);
            Err(Failure::Refused)
        }
        Err(other) => Err(other.into()),
    }
}

/// The diff of the write `result`, from `before` (`None`: unreadable) and the file now.
fn changes(ws: &Workspace, result: &WriteResult, before: Option<&str>) -> Option<String> {
    let after = ws.read(result.file).ok()?;
    diff::of_write(result, before?, &after)
}

/// The file a tool call writes, if its input names one as the schema spells it and the
/// agent may write it (its `USER.md` is whichever the component's rule makes it, or none);
/// the component decides everything else about the input.
pub fn written_file(ws: &Workspace, input: &str) -> Option<MemoryFile> {
    let value: Value = serde_json::from_str(input).ok()?;
    let file = MemoryFile::ALL
        .into_iter()
        .find(|file| value.get("file").and_then(Value::as_str) == Some(file.file_name()))?;
    match file {
        MemoryFile::User => ws.tool_user_file(),
        file => Some(file),
    }
}
