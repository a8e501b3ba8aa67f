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

use metis_memory::{Error, MemoryFile, StoreError, Workspace, WriteResult};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

pub struct Output {
    pub json: bool,
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

    pub fn prompt(&self, prompt: &str) {
        if self.json {
            self.print_json(json!({ "prompt": prompt }));
        } else {
            say!("{prompt}\n");
        }
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
        if self.json {
            self.print_json(json!({
                "workspace": ws.root().display().to_string(),
                "files": rows.iter().map(FileStatus::json).collect::<Vec<_>>(),
            }));
            return Ok(());
        }
        say!("memory in {}\n", ws.metis_dir().display());
        for row in &rows {
            say!("{}\n", row.line());
        }
        Ok(())
    }

    pub fn error(&self, error: &Error) {
        complain!("{error}");
        if self.json {
            self.print_json(json!({ "error": error_json(error) }));
        }
    }
}

/// A write result with the spec's snake_case field names.
pub fn write_result_json(r: &WriteResult) -> Value {
    json!({
        "file": r.file.file_name(),
        "before_hash": r.before_hash,
        "after_hash": r.after_hash,
        "before_size_bytes": r.before_size_bytes,
        "after_size_bytes": r.after_size_bytes,
        "over_soft_cap": r.over_soft_cap,
        "over_hard_cap": r.over_hard_cap,
    })
}

fn error_json(error: &Error) -> Value {
    let message = error.to_string();
    match error {
        Error::Store { error, .. } => {
            let mut value = json!({ "kind": error.kind(), "message": message });
            match error {
                StoreError::HardCapExceeded(info) => {
                    value["file"] = info.file.file_name().into();
                    value["attempted_bytes"] = info.attempted_bytes.into();
                    value["cap_bytes"] = info.cap_bytes.into();
                }
                StoreError::NotUnique(count) => value["count"] = (*count).into(),
                StoreError::InvalidUtf8(info) => {
                    value["file"] = info.file.file_name().into();
                    value["offset"] = info.offset.into();
                }
                StoreError::NotARegularFile(file) => value["file"] = file.file_name().into(),
                _ => {}
            }
            value
        }
        Error::Trap { .. } => json!({ "kind": "trap", "message": message }),
        Error::Workspace(_) => json!({ "kind": "workspace", "message": message }),
    }
}

/// One line of `status`: a file against its caps.
struct FileStatus {
    file: MemoryFile,
    exists: bool,
    size_bytes: u64,
    soft_cap: u64,
    hard_cap: u64,
    /// SHA-256 of the content, or why it could not be read.
    sha256: Result<String, String>,
}

impl FileStatus {
    fn of(ws: &Workspace, file: MemoryFile) -> Result<FileStatus, Error> {
        let sha256 = match ws.read(file) {
            // Text the store returns is the file's exact bytes.
            Ok(text) => Ok(hex(&Sha256::digest(text.as_bytes()))),
            Err(Error::Store { message, .. }) => Err(message),
            Err(other) => return Err(other),
        };
        Ok(FileStatus {
            file,
            exists: ws.exists(file).unwrap_or(true),
            size_bytes: ws.size_bytes(file).unwrap_or(0),
            soft_cap: ws.soft_cap(file)?,
            hard_cap: ws.hard_cap(file)?,
            sha256,
        })
    }

    fn over_soft_cap(&self) -> bool {
        self.size_bytes > self.soft_cap
    }

    fn line(&self) -> String {
        let state = match (&self.sha256, self.exists) {
            (Err(reason), _) => format!("unreadable: {reason}"),
            (Ok(_), false) => "missing (reads as empty)".to_owned(),
            (Ok(hash), true) => {
                let flag = if self.size_bytes > self.hard_cap {
                    "OVER HARD CAP, consolidate"
                } else if self.over_soft_cap() {
                    "over soft cap, consolidate soon"
                } else {
                    "ok"
                };
                format!("{flag}  sha256 {}", &hash[..16])
            }
        };
        format!(
            "  {:<9}  {:>5} B  {}  {:>3}% of soft {:>4} B, hard {:>4} B  {state}",
            self.file.file_name(),
            self.size_bytes,
            bar(self.size_bytes, self.hard_cap),
            self.size_bytes * 100 / self.soft_cap,
            self.soft_cap,
            self.hard_cap,
        )
    }

    fn json(&self) -> Value {
        let mut value = json!({
            "file": self.file.file_name(),
            "exists": self.exists,
            "size_bytes": self.size_bytes,
            "soft_cap": self.soft_cap,
            "hard_cap": self.hard_cap,
            "over_soft_cap": self.over_soft_cap(),
            "over_hard_cap": self.size_bytes > self.hard_cap,
        });
        match &self.sha256 {
            Ok(hash) => value["sha256"] = hash.as_str().into(),
            Err(reason) => value["error"] = reason.as_str().into(),
        }
        value
    }
}

/// A 20-cell gauge of `size` against `hard_cap`, with `|` at the soft cap (half way).
fn bar(size: u64, hard_cap: u64) -> String {
    const CELLS: u64 = 20;
    let filled = (size * CELLS).div_ceil(hard_cap).min(CELLS);
    let mut gauge: String = (0..CELLS)
        .map(|i| if i < filled { '#' } else { '.' })
        .collect();
    gauge.insert(CELLS as usize / 2, '|');
    format!("[{gauge}]")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
