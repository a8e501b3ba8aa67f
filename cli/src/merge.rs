//! `metis-memory merge`: git's merge driver for `.metis/MEMORY.md` and `.metis/USER.md`.
//!
//! Memory is committed, so two sessions on two branches each adding an entry is the common
//! case, and git's line merge makes it a conflict. This merges by entry, as the core
//! decides (`metis_memory_core::merge`), holds the result to the file's hard cap and the
//! memory audit, and writes it where git asks (`%A`). Anything it cannot merge as text (a
//! side that is not UTF-8, another file) is left to git's own line merge, `git
//! merge-file`, which is what git would have done without this driver.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use metis_memory_core::MemoryFile;
use metis_memory_core::merge::{Markers, Verdict, merge_file, whole_verdict};

/// What git passes the driver (`%O %A %B`, `%P`, `%L`).
pub struct MergeArgs {
    pub base: PathBuf,
    pub ours: PathBuf,
    pub theirs: PathBuf,
    pub path: Option<PathBuf>,
    pub marker_size: usize,
}

/// The exit status that makes git abandon the merge: git (2.42 and later) takes a driver
/// that exits above 128 as failed, not as a conflict, and leaves the work tree as it was
/// (a rebase or cherry-pick stops there). Any error that leaves no trustworthy result
/// exits with it; an exit of 1 to 128 would make git keep whatever `%A` holds.
pub const ABANDON: u8 = 129;

/// Exit 0 when the merge stands (git then stages it), 1 when it is a conflict: markers in
/// the file, or a whole merge that may not stand, with the reason on stderr; [`ABANDON`]
/// when it cannot merge (a side it cannot read, a result it cannot write), `%A` untouched.
/// The result is written beside `%A` and renamed over it, so `%A` is the old bytes or the
/// whole result, never a file cut short.
pub fn run(args: &MergeArgs) -> ExitCode {
    // A file-size limit (`ulimit -f`) must fail a write, not kill the driver before it
    // can remove what it wrote beside `%A`.
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to ignore has no preconditions.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    match merge(args) {
        Ok(code) => code,
        Err(message) => {
            complain!("metis-memory merge: {message}; the merge is abandoned, nothing written");
            ExitCode::from(ABANDON)
        }
    }
}

fn merge(args: &MergeArgs) -> Result<ExitCode, String> {
    let named = args.path.as_deref().unwrap_or(&args.ours);
    let file = named
        .file_name()
        .and_then(|name| MemoryFile::from_name(&name.to_string_lossy()));
    let read = |path: &Path| {
        std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    };
    let (base, ours, theirs) = (read(&args.base)?, read(&args.ours)?, read(&args.theirs)?);
    let markers = Markers {
        size: args.marker_size,
        ..Markers::default()
    };
    let merged =
        file.and_then(|file| Some((file, merge_file(file, &base, &ours, &theirs, markers)?)));
    let Some((file, merged)) = merged else {
        return line_merge(args, file, named, &ours);
    };
    replace(&args.ours, merged.text.as_bytes())?;
    Ok(match merged.reason(file) {
        None => ExitCode::SUCCESS,
        Some(reason) => {
            complain!("metis-memory merge: {}: {reason}", named.display());
            if matches!(merged.verdict, Verdict::Flagged(_)) {
                complain!(
                    "metis-memory merge: the file holds the merged text; `metis-memory audit` lists the findings"
                );
            }
            ExitCode::from(1)
        }
    })
}

/// git's own line merge, as git would have made it without this driver, made on a copy of
/// `%A` beside it and renamed into place; held to the memory rules when it stands (a
/// memory file whose merge went to git, for a byte that is not UTF-8, must not bring in
/// what the audit flags).
fn line_merge(
    args: &MergeArgs,
    file: Option<MemoryFile>,
    named: &Path,
    ours: &[u8],
) -> Result<ExitCode, String> {
    let copy = Beside::write(&args.ours, ours)?;
    let status = std::process::Command::new("git")
        .arg("merge-file")
        .arg(format!("--marker-size={}", args.marker_size))
        .args(["-L", "ours", "-L", "base", "-L", "theirs"])
        .arg(copy.path())
        .arg(&args.base)
        .arg(&args.theirs)
        .status()
        .map_err(|e| format!("cannot run git merge-file: {e}"))?;
    // merge-file exits with the number of conflicts (capped at 127), or above that when it
    // failed: then its result is not one.
    let conflicts = match status.code() {
        Some(0) => false,
        Some(1..=127) => true,
        _ => return Err(format!("git merge-file failed ({status})")),
    };
    let text = std::fs::read(copy.path())
        .map_err(|e| format!("cannot read git's merge of {}: {e}", named.display()))?;
    copy.rename_over(&args.ours)?;
    if conflicts {
        return Ok(ExitCode::from(1));
    }
    let Some(file) = file else {
        return Ok(ExitCode::SUCCESS);
    };
    Ok(match whole_verdict(file, &text).reason(file) {
        None => ExitCode::SUCCESS,
        Some(reason) => {
            complain!("metis-memory merge: {}: {reason}", named.display());
            ExitCode::from(1)
        }
    })
}

/// `%A` made `bytes`: written beside it, synced and renamed over it.
fn replace(target: &Path, bytes: &[u8]) -> Result<(), String> {
    Beside::write(target, bytes)?.rename_over(target)
}

/// A file beside `%A` (same directory, so the rename cannot cross a filesystem), removed
/// unless it was renamed into place.
struct Beside {
    path: PathBuf,
    renamed: bool,
}

impl Beside {
    fn write(target: &Path, bytes: &[u8]) -> Result<Beside, String> {
        use std::io::Write as _;
        let name = target
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let path = target.with_file_name(format!(".{name}.metis-merge.{}", std::process::id()));
        let beside = Beside {
            path,
            renamed: false,
        };
        let fail =
            |e: std::io::Error| format!("cannot write the merge beside {}: {e}", target.display());
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&beside.path)
            .map_err(fail)?;
        out.write_all(bytes)
            .and_then(|()| out.sync_all())
            .map_err(fail)?;
        Ok(beside)
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn rename_over(mut self, target: &Path) -> Result<(), String> {
        std::fs::rename(&self.path, target)
            .map_err(|e| format!("cannot put the merge in place of {}: {e}", target.display()))?;
        self.renamed = true;
        Ok(())
    }
}

impl Drop for Beside {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
