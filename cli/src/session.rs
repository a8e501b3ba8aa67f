//! `prompt --session FILE` and `call --session FILE`: a session kept in a file between
//! processes, so an agent driving the CLI from a shell is held to what its model saw as
//! every other surface is. The file holds the component's state as JSON and nothing else;
//! how it moves is the library's `Session` (the core decides).
//!
//! The file decides which consolidates go through, so it is trusted only as this user's
//! own: a regular file (never followed through a link), owned by this user and writable
//! by no one else, naming every memory file that is text as seen or withheld (as
//! `prompt --session` writes it). A session planted by someone else, in a shared
//! directory say, is refused.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use metis_memory::json::{
    composed_prompt_from_json, composed_prompt_json, session_from_json, session_json,
};
use metis_memory::{ComposedPrompt, FileVersion, Session, SessionState, Workspace};

use super::Failure;
use super::writes::written_file;

fn refused(message: String) -> Failure {
    Failure::Cli {
        kind: "session",
        message,
    }
}

/// The session files of one directory, held by one process at a time: a framework may run
/// a model response's tool calls as parallel `call --session` processes, and each must
/// take the session the one before it saved, never a copy read before that save (a
/// session file is replaced by a rename, so the lock is the directory's, not the
/// file's). Released when dropped, or when the process ends however it ends.
pub struct SessionLock {
    _dir: File,
}

/// Waits for, then holds, the lock of the directory that holds the session `path`.
pub fn lock(path: &Path) -> Result<SessionLock, Failure> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let fail = |e: std::io::Error| {
        refused(format!(
            "cannot lock the sessions in {} for {}: {e}",
            dir.display(),
            path.display()
        ))
    };
    let file = File::open(dir).map_err(fail)?;
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        // Bounded: a session's calls take milliseconds, and a directory another user
        // shares (a lock anyone may take) must not stall this one forever.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            // SAFETY: flock takes a descriptor this function owns for the call's length.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                break;
            }
            let e = std::io::Error::last_os_error();
            match e.kind() {
                std::io::ErrorKind::Interrupted => {}
                std::io::ErrorKind::WouldBlock if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                std::io::ErrorKind::WouldBlock => {
                    return Err(refused(format!(
                        "the sessions in {} stayed locked by another process for 10 s; try again (keep session files in a directory only you use)",
                        dir.display()
                    )));
                }
                _ => return Err(fail(e)),
            }
        }
    }
    Ok(SessionLock { _dir: file })
}

/// A session as its file holds it: the state, and for a snapshot session the base and
/// the prompt frozen for it.
pub struct Saved {
    pub state: SessionState,
    pub snapshot: Option<(String, ComposedPrompt)>,
}

impl Saved {
    /// The session taken up again on `ws`.
    pub fn resume(self, ws: &Workspace) -> Session {
        match self.snapshot {
            Some((base, prompt)) => Session::resume_snapshot(ws.clone(), self.state, base, prompt),
            None => Session::resume(ws.clone(), self.state),
        }
    }
}

/// Whether `path` holds a snapshot session (so `prompt --session` gives its prompt again
/// rather than starting over); `false` for a missing file.
/// (Only a regular file is read, and only as much as a session can hold; `load` makes
/// the checks that decide whether it is trusted.)
pub fn holds_snapshot(path: &Path) -> bool {
    const MOST: u64 = 1 << 20;
    let mut bytes = Vec::new();
    std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_file() && meta.len() <= MOST)
        && File::open(path)
            .and_then(|file| file.take(MOST).read_to_end(&mut bytes))
            .is_ok()
        && serde_json::from_slice::<serde_json::Value>(&bytes)
            .is_ok_and(|value| value.get("snapshot").is_some())
}

/// The session in `path` with its snapshot, if it is this user's own and whole.
pub fn load(ws: &Workspace, path: &Path) -> Result<Saved, Failure> {
    let shown = path.display();
    let file = crate::bounded::open(path)
        .map_err(|why| refused(format!("cannot read the session: {why}")))?
        .ok_or_else(|| {
            refused(format!(
                "there is no session {shown} (`metis-memory prompt --session {shown}` starts one)"
            ))
        })?;
    let meta = file
        .metadata()
        .map_err(|e| refused(format!("cannot read the session {shown}: {e}")))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        if meta.uid() != me || meta.mode() & 0o022 != 0 {
            return Err(refused(format!(
                "the session {shown} is not this user's own (owned by uid {}, mode {:o}): someone else could have written it, so it is refused; start one with `metis-memory prompt --session FILE` in a directory only you can write",
                meta.uid(),
                meta.mode() & 0o7777
            )));
        }
    }
    let bytes = crate::bounded::read_from(&file, path)
        .map_err(|why| refused(format!("cannot read the session: {why}")))?;
    let text = String::from_utf8(bytes).map_err(|_| {
        refused(format!(
            "{shown} is not a session written by `metis-memory prompt --session`"
        ))
    })?;
    let not_a_session = || {
        refused(format!(
            "{shown} is not a session written by `metis-memory prompt --session`"
        ))
    };
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|_| not_a_session())?;
    let state = session_from_json(&value).ok_or_else(not_a_session)?;
    let snapshot = match value.get("snapshot") {
        None => None,
        Some(snapshot) => {
            let base = snapshot.get("base").and_then(|b| b.as_str());
            let prompt = snapshot.get("prompt").and_then(composed_prompt_from_json);
            match (base, prompt) {
                (Some(base), Some(prompt)) => Some((base.to_owned(), prompt)),
                _ => return Err(not_a_session()),
            }
        }
    };
    // `prompt --session` names every file, seen or withheld, but one that is not text,
    // which composition leaves out (no model saw a version of it): a state that leaves
    // out another was not written by it.
    for file in ws.memory_files() {
        let named = state.seen.iter().any(|v| v.file == file) || state.withheld.contains(&file);
        let not_text = || {
            matches!(
                ws.read(file),
                Err(metis_memory::Error::Store {
                    error: metis_memory::StoreError::InvalidUtf8(_),
                    ..
                })
            )
        };
        if !named && !not_text() {
            return Err(refused(format!(
                "the session {shown} does not say what the model saw of {}: it was not written by `metis-memory prompt --session`",
                file.name()
            )));
        }
    }
    Ok(Saved { state, snapshot })
}

/// Writes `session` to `path` whole or not at all (a temporary file beside it, renamed),
/// readable by this user only: it says which versions of memory a model has seen.
pub fn save(path: &Path, session: &Session) -> Result<(), Failure> {
    Pending::create(path)?.commit(session)
}

/// A session file about to be written: its temporary file is made before the call that
/// moves the session, so a directory it cannot be written to is found before anything is
/// written to memory, not after.
pub struct Pending {
    path: PathBuf,
    temp: PathBuf,
    file: File,
    committed: bool,
}

/// A session file never committed (the call before it failed) leaves no temporary file.
impl Drop for Pending {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

impl Pending {
    pub fn create(path: &Path) -> Result<Pending, Failure> {
        let fail = |e: std::io::Error| {
            refused(format!("cannot write the session {}: {e}", path.display()))
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
        let mut options = File::options();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(&temp).map_err(fail)?;
        Ok(Pending {
            path: path.to_owned(),
            temp,
            file,
            committed: false,
        })
    }

    /// Writes `session` and renames it into place.
    pub fn commit(mut self, session: &Session) -> Result<(), Failure> {
        let mut value = session_json(session.state());
        if let Some((base, prompt)) = session.frozen() {
            value["snapshot"] = serde_json::json!({
                "base": base,
                "prompt": composed_prompt_json(prompt),
            });
        }
        let written = self
            .file
            .write_all(value.to_string().as_bytes())
            .and_then(|()| self.file.write_all(b"\n"))
            .and_then(|()| std::fs::rename(&self.temp, &self.path));
        // Renamed: nothing left to remove; failed: `drop` removes the temporary file.
        self.committed = written.is_ok();
        written.map_err(|e| {
            refused(format!(
                "cannot write the session {}: {e}",
                self.path.display()
            ))
        })
    }
}

/// A `memory_consolidate` without a session must say which version of its file the model
/// saw: otherwise it could drop what another session wrote since, and report success.
pub fn require_seen(ws: &Workspace, input: &str, seen: &[FileVersion]) -> Result<(), Failure> {
    match written_file(ws, input) {
        Some(file) if !seen.iter().any(|version| version.file == file) => {
            Err(Failure::Usage(format!(
                "memory_consolidate rewrites all of {name}, so it must be held to the version the model saw: pass --session FILE (written by `metis-memory prompt --session FILE`) or --seen {name}=HASH (from `prompt --json`); --unheld writes it whatever changed since",
                name = file.name()
            )))
        }
        _ => Ok(()),
    }
}
