//! Which workspace a command means, found as git finds its repository: `--workspace`,
//! else `$METIS_WORKSPACE`, else the nearest directory at or above the current one that
//! has a `.metis`, looking no higher than the repository's root (a directory with a
//! `.git`) or the filesystem the current directory is on; with none, the repository's
//! root, else the current directory. So `metis-memory add` run in `src/deep/` writes the
//! project's memory instead of starting a second `.metis/` there, and a workspace named
//! but missing is an error instead of an empty memory. The search stops below the home
//! directory and below the parent of the directory `--global-user-dir` names: `~/.metis`
//! (or that directory) is the person's own memory (global user memory's place), never the
//! workspace of a directory under it that has none, such as an unpacked download. Started
//! in that parent itself, it is the workspace, as the person asked; the component then
//! keeps the agent from writing the person's USER.md there under `--global-user read`.

use std::path::{Path, PathBuf};

/// The environment variable naming the workspace when `--workspace` is not given.
pub const WORKSPACE_ENV: &str = "METIS_WORKSPACE";

/// How the workspace was chosen, as `status` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// `--workspace DIR`.
    Flag,
    /// `$METIS_WORKSPACE`.
    Env,
    /// The nearest directory with a `.metis`, at or above the current one.
    Found,
    /// No `.metis` up to the repository's root: that root.
    RepositoryRoot,
    /// No `.metis` and no repository: the current directory.
    CurrentDirectory,
}

impl How {
    pub fn name(self) -> &'static str {
        match self {
            How::Flag => "--workspace",
            How::Env => WORKSPACE_ENV,
            How::Found => "the nearest .metis above the current directory",
            How::RepositoryRoot => "the repository's root (no .metis yet)",
            How::CurrentDirectory => "the current directory (no .metis, no repository)",
        }
    }

    /// The same, as one word for `--json`.
    pub fn key(self) -> &'static str {
        match self {
            How::Flag => "flag",
            How::Env => "env",
            How::Found => "found",
            How::RepositoryRoot => "repository-root",
            How::CurrentDirectory => "current-directory",
        }
    }
}

/// The workspace `flag` (the `--workspace` argument) and the environment mean, and how it
/// was chosen; an error when the one named does not exist or is not a directory.
/// `global_dir` is the person's own `.metis/` when named other than `~/.metis`.
pub fn locate(flag: Option<PathBuf>, global_dir: Option<&Path>) -> Result<(PathBuf, How), String> {
    let named = match flag {
        Some(dir) => Some((dir, How::Flag)),
        None => std::env::var_os(WORKSPACE_ENV)
            .filter(|dir| !dir.is_empty())
            .map(|dir| (PathBuf::from(dir), How::Env)),
    };
    if let Some((dir, how)) = named {
        return match std::fs::metadata(&dir) {
            Ok(meta) if meta.is_dir() => Ok((dir, how)),
            Ok(_) => Err(format!(
                "the workspace {} (from {}) is not a directory",
                dir.display(),
                how.name()
            )),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
                "the workspace {} (from {}) does not exist",
                dir.display(),
                how.name()
            )),
            Err(e) => Err(format!("cannot open the workspace {}: {e}", dir.display())),
        };
    }
    let here =
        std::env::current_dir().map_err(|e| format!("cannot tell the current directory: {e}"))?;
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|home| home.is_absolute());
    let global_dir = global_dir
        .filter(|dir| dir.is_absolute())
        .map(Path::to_path_buf)
        .or_else(|| home.as_ref().map(|home| home.join(".metis")));
    Ok(search_up(&here, home.as_deref(), global_dir.as_deref()))
}

/// The nearest directory at or above `start` with a `.metis`, stopping at a repository's
/// root, where another filesystem begins, or at the person's own memory (unless `start`
/// is where it is): `home`, the parent of `global_dir` (as named, and where a link at
/// its name leads), or a directory whose `.metis` is `global_dir`.
fn search_up(start: &Path, home: Option<&Path>, global_dir: Option<&Path>) -> (PathBuf, How) {
    let device = device_of(start);
    let global = global_dir.and_then(identity);
    let mut stops: Vec<(u64, u64)> = Vec::new();
    stops.extend(home.and_then(identity));
    if let Some(dir) = global_dir {
        stops.extend(dir.parent().and_then(identity));
        let real = std::fs::canonicalize(dir).ok();
        stops.extend(real.as_deref().and_then(Path::parent).and_then(identity));
    }
    let is_own_memory = |dir: &Path| {
        let id = identity(dir);
        home == Some(dir)
            || id.is_some_and(|id| stops.contains(&id))
            || global.is_some_and(|global| identity(&dir.join(".metis")) == Some(global))
    };
    for dir in start.ancestors() {
        if dir != start && device.is_some() && device_of(dir) != device {
            break;
        }
        if dir != start && is_own_memory(dir) {
            break;
        }
        // A `.metis` of any kind counts: a link or a file there is this workspace's,
        // refused later with the reason, never skipped for one higher up.
        if dir.join(".metis").symlink_metadata().is_ok() {
            return (dir.to_path_buf(), How::Found);
        }
        if dir.join(".git").symlink_metadata().is_ok() {
            return (dir.to_path_buf(), How::RepositoryRoot);
        }
    }
    (start.to_path_buf(), How::CurrentDirectory)
}

/// Which directory `dir` is (through links): its device and inode.
#[cfg(unix)]
fn identity(dir: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir)
        .ok()
        .map(|meta| (meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn identity(_dir: &Path) -> Option<(u64, u64)> {
    None
}

#[cfg(unix)]
fn device_of(dir: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir).ok().map(|meta| meta.dev())
}

#[cfg(not(unix))]
fn device_of(_dir: &Path) -> Option<u64> {
    None
}
