use std::fmt;

use crate::StoreError;

/// Why a call on a [`Workspace`](crate::Workspace) failed. Nothing on disk changed, except
/// in one case of [`Error::Trap`], which says so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The store refused the operation. `message` is the store's own text for it (the
    /// exact text an agent should see).
    Store { error: StoreError, message: String },
    /// A tool call changed nothing: its input was invalid, the tool is unknown, or the
    /// store refused the write. `message` is the text for the model.
    Tool(crate::ToolError),
    /// The component trapped: it ran out of fuel or memory, or hit a bug (a guest panic
    /// traps). The file holds its old bytes, or its new ones if the trap came after the
    /// rename that makes a write visible (in its last steps: the directory sync, releasing
    /// the lock); never a mix, and no lock or temporary file of the call is left. Read the
    /// file to know which. The next call runs on a fresh instance.
    Trap(String),
    /// The workspace's `.metis/` could not be pre-opened or created (for example, it is a
    /// regular file, or the workspace is not writable).
    Workspace(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Store { message, .. } => f.write_str(message),
            Error::Tool(error) => f.write_str(&error.message),
            Error::Trap(message) => write!(f, "the memory component trapped: {message}"),
            Error::Workspace(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for Error {}
