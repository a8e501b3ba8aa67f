//! `prompt --session FILE` and `call --session FILE`: a session kept in a file between
//! processes, so an agent driving the CLI from a shell is held to what its model saw as
//! every other surface is. The file holds the component's state as JSON and nothing else;
//! how it moves is the library's `Session` (the core decides).

use std::io::Write;
use std::path::Path;

use metis_memory::json::{session_from_json, session_json};
use metis_memory::{FileVersion, SessionState};

use super::Failure;
use super::writes::written_file;

/// The session in `path`.
pub fn load(path: &Path) -> Result<SessionState, Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| Failure::Cli {
        kind: "session",
        message: format!(
            "cannot read the session {}: {e} (`metis-memory prompt --session {}` starts one)",
            path.display(),
            path.display()
        ),
    })?;
    serde_json::from_str(&text)
        .ok()
        .and_then(|value| session_from_json(&value))
        .ok_or_else(|| Failure::Cli {
            kind: "session",
            message: format!(
                "{} is not a session written by `metis-memory prompt --session`",
                path.display()
            ),
        })
}

/// Writes `state` to `path` whole or not at all (a temporary file beside it, renamed),
/// readable by this user only: it says which versions of memory a model has seen.
pub fn save(path: &Path, state: &SessionState) -> Result<(), Failure> {
    let fail = |e: std::io::Error| Failure::Cli {
        kind: "session",
        message: format!("cannot write the session {}: {e}", path.display()),
    };
    let name = path.file_name().ok_or_else(|| {
        fail(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a file name",
        ))
    })?;
    let temp = path.with_file_name(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let mut options = std::fs::File::options();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options.open(&temp).and_then(|mut file| {
        file.write_all(session_json(state).to_string().as_bytes())?;
        file.write_all(b"\n")
    });
    match written.and_then(|()| std::fs::rename(&temp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&temp);
            Err(fail(e))
        }
    }
}

/// A `memory_consolidate` without a session must say which version of its file the model
/// saw: otherwise it could drop what another session wrote since, and report success.
pub fn require_seen(input: &str, seen: &[FileVersion]) -> Result<(), Failure> {
    match written_file(input) {
        Some(file) if !seen.iter().any(|version| version.file == file) => {
            Err(Failure::Usage(format!(
                "memory_consolidate rewrites all of {name}, so it must be held to the version the model saw: pass --session FILE (written by `metis-memory prompt --session FILE`) or --seen {name}=HASH (from `prompt --json`); --unheld writes it whatever changed since",
                name = file.file_name()
            )))
        }
        _ => Ok(()),
    }
}
