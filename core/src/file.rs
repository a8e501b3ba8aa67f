use core::fmt;

/// One of the two memory files of a workspace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryFile {
    /// `MEMORY.md`: workspace facts.
    Memory,
    /// `USER.md`: facts about the user.
    User,
}

impl MemoryFile {
    /// Both files, in the order status listings show them.
    pub const ALL: [MemoryFile; 2] = [MemoryFile::Memory, MemoryFile::User];

    /// The file's name inside `.metis/`.
    pub const fn file_name(self) -> &'static str {
        match self {
            MemoryFile::Memory => "MEMORY.md",
            MemoryFile::User => "USER.md",
        }
    }

    /// The file called `name` (`MEMORY.md` or `USER.md`, exactly).
    pub fn from_name(name: &str) -> Option<MemoryFile> {
        MemoryFile::ALL
            .into_iter()
            .find(|file| file.file_name() == name)
    }

    /// Above this many bytes a write succeeds but is flagged over the soft cap.
    pub const fn soft_cap(self) -> u64 {
        match self {
            MemoryFile::Memory => 2048,
            MemoryFile::User => 1536,
        }
    }

    /// A write may leave the file at this many bytes, never more.
    pub const fn hard_cap(self) -> u64 {
        match self {
            MemoryFile::Memory => 4096,
            MemoryFile::User => 3072,
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
        f.write_str(self.file_name())
    }
}
