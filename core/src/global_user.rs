//! Which file a tool call's `USER.md` is, with global user memory in each of its modes:
//! one rule for every host, so the CLI, the MCP server and the Python and Node packages
//! cannot disagree on whether the agent reached the person's own file. Hosts only supply
//! the fact the rule needs (whether the workspace's `.metis/` is the person's own
//! directory, the same device and inode), which the component sees for itself.

use crate::MemoryFile;

/// Global user memory as the host turned it on: who writes the person's own USER.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GlobalUserMode {
    /// The agent reads it; the person writes it.
    Read,
    /// The agent's `USER.md` facts go to it.
    Write,
}

/// What a tool call's `USER.md` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserFile {
    /// This file: the workspace's, or the person's own.
    File(MemoryFile),
    /// None: the only `USER.md` there is the person's own, which the agent may not write.
    Refused,
}

/// The file a tool call's `USER.md` is, with global user memory `mode` (`None`: off) and
/// `global_is_workspace` saying whether the workspace's `.metis/` is the person's own
/// directory (a workspace at home, at the parent of `--global-user-dir`, or a `.metis`
/// linked to it).
///
/// Off, nothing about the person's own directory is known, so a workspace is only a
/// workspace, wherever it is. Under `read` the promise is that the agent never writes the
/// person's file: where the workspace's USER.md is that file, there is no USER.md the
/// agent may write, and saying so beats writing somewhere the person would not look.
/// Under `write` the two are one file, held as the workspace's, which the prompt shows.
pub const fn tool_user_file(mode: Option<GlobalUserMode>, global_is_workspace: bool) -> UserFile {
    match (mode, global_is_workspace) {
        (None, _) | (Some(GlobalUserMode::Read), false) | (Some(GlobalUserMode::Write), true) => {
            UserFile::File(MemoryFile::User)
        }
        (Some(GlobalUserMode::Write), false) => UserFile::File(MemoryFile::GlobalUser),
        (Some(GlobalUserMode::Read), true) => UserFile::Refused,
    }
}

/// The tool error of a `USER.md` write under [`UserFile::Refused`]: why, and what the
/// model can do instead (the person can write it, or change where the agent runs).
pub const READ_ONLY_USER_FILE: &str = "USER.md was not written: this workspace's .metis/ is the user's own memory directory (global user memory), whose USER.md every workspace's prompt includes, and the user lets the agent read it but not write it. Tell the user the fact so they can add it themselves, or keep what concerns this work in MEMORY.md; to let the agent write it, the user can turn on global user memory's write mode (--global-user write), or run the agent in a project rather than in this directory.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_never_writes_the_persons_file_under_read() {
        use GlobalUserMode::{Read, Write};
        use UserFile::{File, Refused};
        let cases = [
            (None, false, File(MemoryFile::User)),
            (None, true, File(MemoryFile::User)),
            (Some(Read), false, File(MemoryFile::User)),
            (Some(Read), true, Refused),
            (Some(Write), false, File(MemoryFile::GlobalUser)),
            (Some(Write), true, File(MemoryFile::User)),
        ];
        for (mode, at_home, expected) in cases {
            assert_eq!(
                tool_user_file(mode, at_home),
                expected,
                "{mode:?} {at_home}"
            );
        }
    }
}
