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

/// Exit 0 when the merge stands (git then stages it), 1 when it is a conflict: markers in
/// the file, or a whole merge that may not stand, with the reason on stderr.
pub fn run(args: &MergeArgs) -> ExitCode {
    let named = args.path.as_deref().unwrap_or(&args.ours);
    let file = named
        .file_name()
        .and_then(|name| MemoryFile::from_name(&name.to_string_lossy()));
    let read = |path: &Path| std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()));
    let sides = (|| Ok::<_, String>((read(&args.base)?, read(&args.ours)?, read(&args.theirs)?)))();
    let (base, ours, theirs) = match sides {
        Ok(sides) => sides,
        Err(message) => {
            complain!("metis-memory merge: cannot read {message}");
            return ExitCode::from(2);
        }
    };
    let markers = Markers {
        size: args.marker_size,
        ..Markers::default()
    };
    let merged =
        file.and_then(|file| Some((file, merge_file(file, &base, &ours, &theirs, markers)?)));
    let Some((file, merged)) = merged else {
        let merged_by_git = line_merge(args);
        // git's merge is held to the same rules when it stands: a memory file whose merge
        // went to git (a byte that is not UTF-8) must not bring in what the audit flags.
        if merged_by_git != ExitCode::SUCCESS {
            return merged_by_git;
        }
        let Some(file) = file else {
            return merged_by_git;
        };
        let Ok(text) = std::fs::read(&args.ours) else {
            return ExitCode::from(1);
        };
        return match whole_verdict(file, &text).reason(file) {
            None => ExitCode::SUCCESS,
            Some(reason) => {
                complain!("metis-memory merge: {}: {reason}", named.display());
                ExitCode::from(1)
            }
        };
    };
    if let Err(e) = std::fs::write(&args.ours, &merged.text) {
        complain!(
            "metis-memory merge: cannot write {}: {e}",
            args.ours.display()
        );
        return ExitCode::from(2);
    }
    match merged.reason(file) {
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
    }
}

/// git's own line merge, in place, as git would have made it without this driver.
fn line_merge(args: &MergeArgs) -> ExitCode {
    let status = std::process::Command::new("git")
        .arg("merge-file")
        .arg(format!("--marker-size={}", args.marker_size))
        .args(["-L", "ours", "-L", "base", "-L", "theirs"])
        .arg(&args.ours)
        .arg(&args.base)
        .arg(&args.theirs)
        .status();
    match status {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        Ok(_) => ExitCode::from(1),
        Err(e) => {
            complain!("metis-memory merge: cannot run git merge-file: {e}");
            ExitCode::from(2)
        }
    }
}
