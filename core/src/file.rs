use core::fmt;

/// What texts call the user's own USER.md (the specification's location for it).
pub const GLOBAL_USER_NAME: &str = "~/.metis/USER.md";

/// One memory file: the workspace's two, or the person's own USER.md shared by every
/// workspace (global user memory, when the host turns it on).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryFile {
    /// `MEMORY.md`: workspace facts.
    Memory,
    /// `USER.md`: facts about the user, in this workspace.
    User,
    /// `~/.metis/USER.md`: facts about the user, composed ahead of every workspace's.
    GlobalUser,
}

impl MemoryFile {
    /// The workspace's two files, in the order status listings show them.
    pub const ALL: [MemoryFile; 2] = [MemoryFile::Memory, MemoryFile::User];

    /// The file's name inside its `.metis/` directory (the workspace's, or the user's
    /// own for [`MemoryFile::GlobalUser`]).
    pub const fn file_name(self) -> &'static str {
        match self {
            MemoryFile::Memory => "MEMORY.md",
            MemoryFile::User | MemoryFile::GlobalUser => "USER.md",
        }
    }

    /// The name texts give the file: its file name in the workspace, `~/.metis/USER.md`
    /// for the user's own, so a model and a person can tell the two USER.md apart.
    pub const fn name(self) -> &'static str {
        match self {
            MemoryFile::GlobalUser => GLOBAL_USER_NAME,
            file => file.file_name(),
        }
    }

    /// The workspace file called `name` (`MEMORY.md` or `USER.md`, exactly): what a
    /// tool call's `file` names.
    pub fn from_name(name: &str) -> Option<MemoryFile> {
        MemoryFile::ALL
            .into_iter()
            .find(|file| file.file_name() == name)
    }

    /// Above this many bytes a write succeeds but is flagged over the soft cap.
    pub const fn soft_cap(self) -> u64 {
        match self {
            MemoryFile::Memory => 2048,
            MemoryFile::User | MemoryFile::GlobalUser => 1536,
        }
    }

    /// A write may leave the file at this many bytes, never more.
    pub const fn hard_cap(self) -> u64 {
        match self {
            MemoryFile::Memory => 4096,
            MemoryFile::User | MemoryFile::GlobalUser => 3072,
        }
    }

    /// The most bytes of the file the store reads: four times its hard cap. A file over
    /// its hard cap (written by hand) is still read, so an edit can shrink it; one over
    /// this was not made by the store and is `too-large` for everything that reads it.
    pub const fn read_limit(self) -> u64 {
        4 * self.hard_cap()
    }
}

impl fmt::Display for MemoryFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
