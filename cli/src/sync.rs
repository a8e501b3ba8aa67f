//! `metis-memory sync`: memory through git without losing a write. It fetches, commits the
//! memory files, merges the upstream branch (the merge driver merges the memory files by
//! entry) and pushes; the commit and the merge run under one store write hold, so an
//! agent's write waits for them (or is refused `busy`, retryable) and never lands while git
//! rewrites the file, nor between the commit and the merge (where it would be a local
//! change the merge refuses to overwrite). Fetching and pushing touch no work tree and run
//! without the hold, so agents wait only for local steps.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use metis_memory::git_watch::GitDir;
use metis_memory::{Workspace, WriteHold};
use metis_memory_core::git::GitState;

use crate::failure::Failure;
use crate::looking_git::drain;

/// How often a hold is renewed while git runs under it (its lease is 3 seconds).
const RENEW_EVERY: Duration = Duration::from_millis(500);
/// How often a running git is looked at.
const POLL: Duration = Duration::from_millis(10);
/// The longest a git command may run while agents' writes are held: one that runs longer
/// (a hook waiting for input, a signing prompt) is stopped, so that no write waits on it
/// for ever.
const HELD_AT_MOST: Duration = Duration::from_secs(120);
/// How many times a push another clone beat is fetched, merged and pushed again.
const PUSH_ATTEMPTS: u32 = 3;

/// What a sync did, for the person and for `--json`.
#[derive(Debug, Default)]
pub struct Synced {
    /// The memory files committed (paths from the repository's top).
    pub committed: Vec<String>,
    /// The upstream branch merged, e.g. `origin/main`.
    pub upstream: String,
    /// Whether the merge brought anything in.
    pub merged: bool,
    pub pushed: bool,
}

pub fn sync(ws: &Workspace, push: bool) -> Result<Synced, Failure> {
    let top = toplevel(ws.root())?;
    if let Some(GitState::AtWork(marker)) = GitDir::find(ws.root()).map(|git| git.state()) {
        return Err(refused(format!(
            "git is {} in this repository; finish it first, then sync",
            marker.doing
        )));
    }
    let upstream = git_text(&top, &["rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}"])
        .map_err(|_| {
            refused("this branch has no upstream to sync with: set one with `git branch --set-upstream-to=REMOTE/BRANCH`".into())
        })?;
    let mut synced = Synced {
        upstream,
        ..Synced::default()
    };
    for attempt in 1..=PUSH_ATTEMPTS {
        run(&top, &["fetch", "--quiet"], None)?;
        // The commit and the merge under one hold: an add between them would be a local
        // change the merge refuses to overwrite.
        let mut hold = hold_writes(ws)?;
        for file in commit_memory(ws, &top, hold.as_mut())? {
            if !synced.committed.contains(&file) {
                synced.committed.push(file);
            }
        }
        let before = git_text(&top, &["rev-parse", "HEAD"])?;
        run(
            &top,
            &["merge", "--no-edit", "--quiet", &synced.upstream],
            hold.as_mut(),
        )?;
        drop(hold);
        synced.merged |= git_text(&top, &["rev-parse", "HEAD"])? != before;
        if !push {
            return Ok(synced);
        }
        match run(&top, &["push", "--quiet"], None) {
            Ok(()) => {
                synced.pushed = true;
                return Ok(synced);
            }
            // Another clone pushed first: fetch and merge its work, then push again.
            Err(_) if attempt < PUSH_ATTEMPTS => continue,
            Err(failure) => return Err(failure),
        }
    }
    Ok(synced)
}

/// The store's write hold on the workspace; `None` where there is no `.metis/` (no
/// memory to hold, but the branch still syncs).
fn hold_writes(ws: &Workspace) -> Result<Option<WriteHold>, Failure> {
    match ws.hold_writes() {
        Ok(hold) => Ok(Some(hold)),
        Err(metis_memory::Error::Workspace(_)) if !ws.metis_dir().exists() => Ok(None),
        Err(error) => Err(error.into()),
    }
}

/// Commits the memory files that changed, under `hold`: what is committed is exactly
/// what is on disk, and nothing else staged is committed with it.
fn commit_memory(
    ws: &Workspace,
    top: &Path,
    mut hold: Option<&mut WriteHold>,
) -> Result<Vec<String>, Failure> {
    let mut changed = Vec::new();
    for file in ws.memory_files() {
        let Some(path) = ws.file_path(file) else {
            continue;
        };
        let relative = relative_to(top, &path);
        let ignored = Command::new("git")
            .args(["check-ignore", "-q", "--no-index", "--"])
            .arg(&relative)
            .current_dir(top)
            .status()
            .is_ok_and(|status| status.success());
        if ignored || !path.exists() && !tracked(top, &relative) {
            continue;
        }
        let status = git_text(top, &["status", "--porcelain", "--", &relative])?;
        if !status.is_empty() {
            changed.push(relative);
        }
    }
    if !changed.is_empty() {
        let mut add = vec!["add", "--"];
        add.extend(changed.iter().map(String::as_str));
        run(top, &add, hold.as_deref_mut())?;
        let mut commit = vec![
            "commit",
            "--quiet",
            "-m",
            "metis-memory sync",
            "--only",
            "--",
        ];
        commit.extend(changed.iter().map(String::as_str));
        run(top, &commit, hold)?;
    }
    Ok(changed)
}

fn tracked(top: &Path, relative: &str) -> bool {
    git_text(top, &["ls-files", "--", relative]).is_ok_and(|listed| !listed.is_empty())
}

fn relative_to(top: &Path, path: &Path) -> String {
    let path = std::fs::canonicalize(path.parent().unwrap_or(path))
        .map(|dir| dir.join(path.file_name().unwrap_or_default()))
        .unwrap_or_else(|_| path.to_owned());
    path.strip_prefix(top)
        .unwrap_or(&path)
        .to_string_lossy()
        .into_owned()
}

fn toplevel(root: &Path) -> Result<PathBuf, Failure> {
    let top = git_text(root, &["rev-parse", "--show-toplevel"])
        .map_err(|_| refused(format!("{} is not in a git repository", root.display())))?;
    Ok(std::fs::canonicalize(&top).unwrap_or_else(|_| PathBuf::from(top)))
}

/// Runs git, renewing `hold` while it runs; git's own output goes to stderr. A failure
/// says which command and what git said.
fn run(dir: &Path, args: &[&str], mut hold: Option<&mut WriteHold>) -> Result<(), Failure> {
    let mut child = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| refused(format!("cannot run git: {e}")))?;
    // Read as git writes: a git (or a hook) writing more than a pipe holds would
    // otherwise wait for us for ever, and we for it, holding every write.
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let started = Instant::now();
    let mut renewed = Instant::now();
    let mut lost = None;
    let mut stopped = false;
    loop {
        if child
            .try_wait()
            .map_err(|e| refused(format!("git {}: {e}", args[0])))?
            .is_some()
        {
            break;
        }
        if hold.is_some() && !stopped && started.elapsed() >= HELD_AT_MOST {
            let _ = child.kill();
            stopped = true;
        }
        if let Some(hold) = hold.as_deref_mut()
            && renewed.elapsed() >= RENEW_EVERY
        {
            lost = lost.or(hold.renew().err());
            renewed = Instant::now();
        }
        std::thread::sleep(POLL);
    }
    let status = child
        .wait()
        .map_err(|e| refused(format!("git {}: {e}", args[0])))?;
    let out = std::process::Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    };
    if stopped {
        return Err(refused(format!(
            "git {} ran over {} s while agents' writes were held, and was stopped; \
             check `git status` (a merge may be left to finish or abort)",
            args[0],
            HELD_AT_MOST.as_secs()
        )));
    }
    if let Some(error) = lost {
        return Err(refused(format!(
            "the store's write hold was lost while git {} ran ({error}); an agent's write may have \
             landed meanwhile: check `metis-memory recover`",
            args[0]
        )));
    }
    if out.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&out.stderr).trim().to_owned();
    let said = match said.is_empty() {
        true => String::from_utf8_lossy(&out.stdout).trim().to_owned(),
        false => said,
    };
    Err(Failure::Cli {
        kind: "git",
        message: format!("git {} failed: {said}", args[0]),
    })
}

fn git_text(dir: &Path, args: &[&str]) -> Result<String, Failure> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| refused(format!("cannot run git: {e}")))?;
    if !out.status.success() {
        return Err(Failure::Cli {
            kind: "git",
            message: format!(
                "git {} failed: {}",
                args[0],
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn refused(message: String) -> Failure {
    Failure::Cli {
        kind: "sync",
        message,
    }
}
