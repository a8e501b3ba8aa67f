//! Embedding the metis-memory component: a bounded, agent-curated memory store kept in a
//! workspace's `.metis/MEMORY.md` and `.metis/USER.md`.
//!
//! ```no_run
//! use metis_memory::{MemoryFile, Workspace};
//!
//! let ws = Workspace::open("path/to/workspace");
//! let result = ws.add_entry(MemoryFile::Memory, "builds with `cargo build`")?;
//! assert!(!result.over_hard_cap);
//! let prompt = ws.assemble_system_prompt("You are a careful assistant.")?;
//! # Ok::<(), metis_memory::Error>(())
//! ```
//!
//! Every call runs in an instance of the embedded component (compiled once, and kept
//! in a per-user cache across processes) under fuel and memory [`Limits`]: a fresh one for
//! each write, one the workspace keeps for reads; the component sees only `.metis/`.

mod cache;
mod error;
#[cfg(feature = "fault-injection")]
pub mod faults;
pub mod git_watch;
mod global_user;
mod hold;
#[cfg(feature = "json")]
pub mod json;
mod opened;
mod runtime;
mod session;
mod token;
mod trust;
mod workspace;

/// Types generated from `wit/`: the WIT is the API reference.
pub mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "memory",
        additional_derives: [PartialEq, Eq],
    });
}

pub use bindings::exports::metis::memory::store::{
    AuditPolicy, ComposeOptions, ComposedPrompt, Edit, PromptSource, Replacement, SessionUpdate,
    WriteOptions,
};
pub use bindings::exports::metis::memory::tools::{
    CallOptions, CallOutcome, EvictionTrigger, MemoryEvent, MemoryEviction, MemoryUpdated,
    Operation, ToolDefinition, ToolError, ToolSuccess,
};
/// The WIT `session` record: what a [`Session`]'s model has seen, as the component keeps it.
pub use bindings::metis::memory::types::Session as SessionState;
pub use bindings::metis::memory::types::{
    AuditFinding, CapExceeded, Changed, FileError, FileVersion, Flagged, InvalidUtf8, MemoryFile,
    NotUnique, OwnWrite, Poisoned, ScanPolicy, StoreError, TooLarge, Unsynced, WriteResult,
};

impl SessionState {
    /// The session of a model shown nothing yet: a consolidate of a file that is not empty
    /// is refused (with its content shown) until the model has been shown it.
    pub fn empty() -> SessionState {
        SessionState {
            seen: Vec::new(),
            withheld: Vec::new(),
            shown: Vec::new(),
            own_writes: Vec::new(),
        }
    }
}
pub use cache::{CACHE_DIR_ENV, Source as ComponentSource};
pub use error::Error;
pub use global_user::GlobalUser;
pub use hold::WriteHold;

/// The release's version: the WIT package's (`metis:memory@VERSION`), which the crates,
/// the CLI, the MCP server and the Python and Node packages all report.
pub const VERSION: &str = env!("METIS_VERSION");
pub use runtime::{COMPONENT_SHA256, COMPONENT_WASM, Limits, component_source};
pub use session::{Session, ShownFile};
pub use workspace::Workspace;

impl StoreError {
    /// The WIT case name, e.g. `hard-cap-exceeded`: a stable key for scripts and logs.
    pub fn kind(&self) -> &'static str {
        match self {
            StoreError::HardCapExceeded(_) => "hard-cap-exceeded",
            StoreError::EmptyEntry(_) => "empty-entry",
            StoreError::NothingToReplace(_) => "nothing-to-replace",
            StoreError::NotFound(_) => "not-found",
            StoreError::NotUnique(_) => "not-unique",
            StoreError::InvalidUtf8(_) => "invalid-utf8",
            StoreError::NotARegularFile(_) => "not-a-regular-file",
            StoreError::Busy(_) => "busy",
            StoreError::Io(_) => "io",
            StoreError::ReadOnly(_) => "read-only",
            StoreError::FileTooLarge(_) => "file-too-large",
            StoreError::InsufficientSpace(_) => "insufficient-space",
            StoreError::Changed(_) => "changed",
            StoreError::Flagged(_) => "flagged",
            StoreError::Poisoned(_) => "poisoned",
            StoreError::Unsynced(_) => "unsynced",
            StoreError::TooLarge(_) => "too-large",
        }
    }

    /// The component's text for it, as an agent or a person should see it.
    pub fn message(&self) -> &str {
        self.about().1
    }

    /// The file it is about.
    pub fn file(&self) -> MemoryFile {
        self.about().0
    }

    fn about(&self) -> (MemoryFile, &str) {
        match self {
            StoreError::EmptyEntry(e)
            | StoreError::NothingToReplace(e)
            | StoreError::NotFound(e)
            | StoreError::NotARegularFile(e)
            | StoreError::Busy(e)
            | StoreError::Io(e)
            | StoreError::ReadOnly(e)
            | StoreError::FileTooLarge(e)
            | StoreError::InsufficientSpace(e) => (e.file, &e.message),
            StoreError::HardCapExceeded(e) => (e.file, &e.message),
            StoreError::NotUnique(e) => (e.file, &e.message),
            StoreError::InvalidUtf8(e) => (e.file, &e.message),
            StoreError::Changed(e) => (e.file, &e.message),
            StoreError::Flagged(e) => (e.file, &e.message),
            StoreError::Poisoned(e) => (e.file, &e.message),
            StoreError::Unsynced(e) => (e.result.file, &e.message),
            StoreError::TooLarge(e) => (e.file, &e.message),
        }
    }
}

impl From<StoreError> for Error {
    fn from(error: StoreError) -> Error {
        Error::Store {
            message: error.message().to_owned(),
            error,
        }
    }
}

impl Default for ScanPolicy {
    /// Both parts of the memory poisoning scan on.
    fn default() -> Self {
        ScanPolicy::ALL
    }
}

impl ScanPolicy {
    /// Both parts of the memory poisoning scan on: what a tool call runs by default.
    pub const ALL: ScanPolicy = ScanPolicy {
        invisible_characters: true,
        injection_patterns: true,
    };
    /// No scan: a plain write's.
    pub const OFF: ScanPolicy = ScanPolicy {
        invisible_characters: false,
        injection_patterns: false,
    };
}

impl CallOptions {
    /// A call held to nothing, with `scan`: a `memory_consolidate` rewrites a file
    /// whatever it holds. For a caller that knows what it is doing (a person's own
    /// script, the conformance cases); a model's calls go through a [`Session`].
    pub fn unheld(scan: ScanPolicy) -> CallOptions {
        CallOptions {
            scan,
            session: SessionState::empty(),
            hold_unseen: false,
        }
    }
}

impl CallOutcome {
    /// The tool call's outcome alone, a refusal as [`Error::Tool`].
    pub fn result(self) -> Result<ToolSuccess, Error> {
        self.outcome.map_err(Error::Tool)
    }
}

impl Default for WriteOptions {
    /// The plain write: no version required, no scan.
    fn default() -> Self {
        WriteOptions {
            if_unchanged: None,
            scan: ScanPolicy::OFF,
        }
    }
}

impl AuditPolicy {
    /// The WIT case name: `off`, `report`, `omit`, `refuse`.
    pub fn name(self) -> &'static str {
        match self {
            AuditPolicy::Off => "off",
            AuditPolicy::Report => "report",
            AuditPolicy::Omit => "omit",
            AuditPolicy::Refuse => "refuse",
        }
    }

    /// The same policy in `metis-memory-core`'s terms.
    pub(crate) fn core(self) -> metis_memory_core::audit::AuditPolicy {
        match self {
            AuditPolicy::Off => metis_memory_core::audit::AuditPolicy::Off,
            AuditPolicy::Report => metis_memory_core::audit::AuditPolicy::Report,
            AuditPolicy::Omit => metis_memory_core::audit::AuditPolicy::Omit,
            AuditPolicy::Refuse => metis_memory_core::audit::AuditPolicy::Refuse,
        }
    }

    /// Parses a WIT case name.
    pub fn parse(name: &str) -> Option<AuditPolicy> {
        [
            AuditPolicy::Off,
            AuditPolicy::Report,
            AuditPolicy::Omit,
            AuditPolicy::Refuse,
        ]
        .into_iter()
        .find(|policy| policy.name() == name)
    }
}

impl Operation {
    /// The name events use: `add`, `replace`, `consolidate`.
    pub fn name(self) -> &'static str {
        let operation = match self {
            Operation::Add => metis_memory_core::Operation::Add,
            Operation::Replace => metis_memory_core::Operation::Replace,
            Operation::Consolidate => metis_memory_core::Operation::Consolidate,
        };
        operation.name()
    }
}

impl EvictionTrigger {
    /// The spec's name: `size_cap_exceeded` or `manual`.
    pub fn name(self) -> &'static str {
        match self {
            EvictionTrigger::SizeCapExceeded => "size_cap_exceeded",
            EvictionTrigger::Manual => "manual",
        }
    }
}

/// The README's Rust examples, compiled as doctests so they cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// The Rust examples of `docs/api.md` (embedding, tool calls), compiled the same way.
#[cfg(doctest)]
#[doc = include_str!("../../docs/api.md")]
pub struct ApiDocDoctests;

impl MemoryFile {
    /// The workspace's two files, in the order listings show them.
    pub const ALL: [MemoryFile; 2] = [MemoryFile::Memory, MemoryFile::User];

    /// The file's name inside its `.metis/` directory.
    pub fn file_name(self) -> &'static str {
        self.core().file_name()
    }

    /// The name texts give the file: `MEMORY.md`, `USER.md`, or `~/.metis/USER.md` for
    /// the user's own (global user memory).
    pub fn name(self) -> &'static str {
        self.core().name()
    }

    /// The same file in `metis-memory-core`'s terms (names and lock files).
    pub fn core(self) -> metis_memory_core::MemoryFile {
        match self {
            MemoryFile::Memory => metis_memory_core::MemoryFile::Memory,
            MemoryFile::User => metis_memory_core::MemoryFile::User,
            MemoryFile::GlobalUser => metis_memory_core::MemoryFile::GlobalUser,
        }
    }

    /// The file of `metis-memory-core`'s terms.
    pub fn from_core(file: metis_memory_core::MemoryFile) -> MemoryFile {
        match file {
            metis_memory_core::MemoryFile::Memory => MemoryFile::Memory,
            metis_memory_core::MemoryFile::User => MemoryFile::User,
            metis_memory_core::MemoryFile::GlobalUser => MemoryFile::GlobalUser,
        }
    }

    /// Parses `MEMORY.md`/`USER.md`, or `memory`/`user` in any case; `~/.metis/USER.md`
    /// (or `global-user`) is the user's own.
    pub fn parse(name: &str) -> Option<MemoryFile> {
        if name == MemoryFile::GlobalUser.name() || name.eq_ignore_ascii_case("global-user") {
            return Some(MemoryFile::GlobalUser);
        }
        MemoryFile::ALL.into_iter().find(|file| {
            name == file.file_name()
                || name.eq_ignore_ascii_case(file.file_name().trim_end_matches(".md"))
        })
    }
}
