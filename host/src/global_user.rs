//! Global user memory: the person's own USER.md, in their own `.metis/` directory
//! (`~/.metis/`, the specification's place for it), composed into every workspace's
//! prompt ahead of the workspace's USER.md, with its own cap, lock and audit. Off unless
//! the host turns it on ([`Workspace::with_global_user`](crate::Workspace::with_global_user)).

use std::fs::{self, DirBuilder};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::Error;
use crate::opened::{OpenedDir, identity};

/// Where the user's own USER.md is, and whether the agent writes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobalUser {
    dir: PathBuf,
    agent_writes: bool,
}

impl GlobalUser {
    /// The user's own memory in `dir` (a `.metis/` directory, created with mode 0700 by
    /// the first write if missing). The agent reads it; a tool call's `USER.md` is still
    /// the workspace's (see [`agent_writes`](Self::agent_writes)).
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        GlobalUser {
            dir: dir.into(),
            agent_writes: false,
        }
    }

    /// `~/.metis/`: `$HOME/.metis`, or `None` when `HOME` is unset or not absolute.
    pub fn in_home() -> Option<Self> {
        let home = PathBuf::from(std::env::var_os("HOME")?);
        home.is_absolute()
            .then(|| GlobalUser::at(home.join(".metis")))
    }

    /// The same, with the agent's `USER.md` tool writes going to the user's own file
    /// (`true`), so facts about the person follow them into every workspace, or to the
    /// workspace's (`false`, the default: the person edits their own file).
    pub fn agent_writes(mut self, agent_writes: bool) -> Self {
        self.agent_writes = agent_writes;
        self
    }

    /// The user's own `.metis/` directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether the agent's `USER.md` tool writes go to the user's own file.
    pub fn writes(&self) -> bool {
        self.agent_writes
    }

    /// The directory, if its path is absolute: a relative one (or one starting with an
    /// unexpanded `~`, as MCP configurations leave it) would resolve inside whatever
    /// directory the host runs in, a repository perhaps, so it is refused.
    fn checked_dir(&self) -> Result<&Path, Error> {
        if self.dir.is_absolute() {
            return Ok(&self.dir);
        }
        Err(Error::Workspace(format!(
            "the directory of your own USER.md must be an absolute path, not {}: a relative one would be found inside whatever directory this runs in",
            self.dir.display()
        )))
    }

    /// The directory's identity if it exists (`None` if not), for keeping an instance.
    pub(crate) fn existing(&self) -> Result<Option<(u64, u64)>, Error> {
        match fs::metadata(self.checked_dir()?) {
            Ok(meta) if meta.is_dir() => Ok(Some(identity(&meta))),
            Ok(_) => Err(Error::Workspace(format!(
                "{} exists but is not a directory",
                self.dir.display()
            ))),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::Workspace(format!(
                "cannot access {}: {e}",
                self.dir.display()
            ))),
        }
    }

    /// The directory opened for pre-opening, `None` if it does not exist. It may be a
    /// link (the person's own dotfiles), but like a workspace's `.metis/` it must be
    /// theirs and not writable by every user, whatever a workspace trusts: a workspace's
    /// `--trust-foreign-metis` is about that workspace, and whoever controls this
    /// directory reaches every workspace's prompt.
    pub(crate) fn open(&self) -> Result<Option<OpenedDir>, Error> {
        use crate::trust::OWN_MEMORY;
        let dir = self.checked_dir()?;
        check_link_owner(dir)?;
        if let Some(parent) = dir.parent() {
            crate::trust::check_root_saying(parent, OWN_MEMORY)?;
        }
        let file = match crate::opened::open(dir, true, true) {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(Error::Workspace(format!(
                    "cannot open {}: {e}",
                    dir.display()
                )));
            }
        };
        OpenedDir::checked(dir, file, |meta| {
            crate::trust::check_owner_saying(dir, meta, OWN_MEMORY)
        })
        .map(Some)
    }

    /// Makes sure the directory exists (mode 0700 when created here, its parents as
    /// needed). Returns whether this call created it.
    pub(crate) fn create(&self) -> Result<bool, Error> {
        if self.existing()?.is_some() {
            return Ok(false);
        }
        let mut builder = DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        match builder.create(self.checked_dir()?) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => match self.existing()? {
                Some(_) => Ok(false),
                // Something that is no directory yet: a link to a missing one.
                None => Err(Error::Workspace(format!(
                    "{} is a symbolic link to {}, which does not exist: create that directory, or remove the link",
                    self.dir.display(),
                    fs::read_link(&self.dir).unwrap_or_default().display()
                ))),
            },
            Err(e) => Err(Error::Workspace(format!(
                "cannot create {}: {e}",
                self.dir.display()
            ))),
        }
    }
}

/// A link at the directory's name must be this user's own: in a home every user can
/// write (a service account's `/tmp`), another user could plant one leading to a
/// directory of this user's that is not their memory.
fn check_link_owner(dir: &Path) -> Result<(), Error> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let Ok(meta) = fs::symlink_metadata(dir) else {
            return Ok(());
        };
        // SAFETY: geteuid has no preconditions and cannot fail.
        let euid = unsafe { libc::geteuid() };
        if meta.file_type().is_symlink() && meta.uid() != euid {
            return Err(Error::Workspace(format!(
                "{} is a symbolic link made by uid {}, not by this user (uid {euid}): another user could lead it anywhere, so it is not used ({})",
                dir.display(),
                meta.uid(),
                crate::trust::OWN_MEMORY
            )));
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}
