//! Whether a workspace's `.metis/` may be used: git's `safe.directory` reasoning.
//!
//! Memory goes into an agent's prompt and what the agent learns goes into memory, so a
//! `.metis/` that another user controls is a way into this user's agent and out of it:
//! one owned by someone else (a `/tmp/.metis` another user made, found by walking up from
//! `/tmp/project`), or one inside a directory every user can write without the sticky
//! bit (anyone may replace it). Such a `.metis/` is not used unless the person says they
//! trust it. Group-writable directories are allowed: the group is the owner's choice.
//! The Python and Node packages apply the same rule, with the same words.

use std::fs::Metadata;
use std::path::Path;

use crate::Error;

/// How each host says a person opts in, for the messages.
const OPT_IN: &str =
    "if you trust it, pass --trust-foreign-metis, or use Workspace::trust_foreign_metis";

/// What to do about the person's own `.metis/`: no opt-in reaches it, since whoever
/// controls it reaches every workspace's prompt, and it is theirs to fix.
pub(crate) const OWN_MEMORY: &str = "it is your own memory, which --trust-foreign-metis does not reach: make it yours and private (chown, chmod 700), or name another directory with --global-user-dir";

/// `.metis` (its metadata, from the opened directory) must be owned by this process's
/// effective user, and not writable by every user.
pub(crate) fn check_owner(metis: &Path, meta: &Metadata) -> Result<(), Error> {
    check_owner_saying(metis, meta, OPT_IN)
}

/// [`check_owner`], its refusal ending with `what_to_do`.
pub(crate) fn check_owner_saying(
    metis: &Path,
    meta: &Metadata,
    what_to_do: &str,
) -> Result<(), Error> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let euid = unsafe { libc::geteuid() };
        if meta.uid() != euid {
            return Err(Error::Workspace(format!(
                "{} belongs to uid {}, not to this user (uid {euid}): another user could put entries into this agent's prompt and read what it adds, so it is not used ({what_to_do})",
                metis.display(),
                meta.uid()
            )));
        }
        // Sticky or not: another user may still create a file that is missing in it.
        if meta.mode() & 0o002 != 0 {
            return Err(Error::Workspace(format!(
                "{} can be written by every user, so another user could put entries into this agent's prompt: it is not used ({what_to_do})",
                metis.display()
            )));
        }
    }
    #[cfg(not(unix))]
    let _ = (metis, meta);
    Ok(())
}

/// The workspace root must not be writable by every user, unless sticky (as `/tmp` is:
/// then only its owner may rename or remove `.metis`).
pub(crate) fn check_root(root: &Path) -> Result<(), Error> {
    check_root_saying(root, OPT_IN)
}

/// [`check_root`], its refusal ending with `what_to_do`.
pub(crate) fn check_root_saying(root: &Path, what_to_do: &str) -> Result<(), Error> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let Ok(meta) = std::fs::metadata(root) else {
            // A root that cannot be read fails the call on its own, with its reason.
            return Ok(());
        };
        let mode = meta.mode();
        if mode & 0o002 != 0 && mode & 0o1000 == 0 {
            return Err(Error::Workspace(format!(
                "{} can be written by every user and has no sticky bit, so another user could replace .metis/ in it: it is not used ({what_to_do})",
                root.display()
            )));
        }
    }
    #[cfg(not(unix))]
    let _ = root;
    Ok(())
}
