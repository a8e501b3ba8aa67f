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
    /// traps). The next call runs on a fresh instance. A read changed nothing. A write's
    /// file holds its old bytes, or its new ones if the trap came after the rename that
    /// makes it visible; never a mix, and no lock or temporary file of the call is left
    /// (the component's `recover-after-trap` removed them). `written` says which:
    /// `Some(false)`, nothing was written and a retry is safe; `Some(true)`, the write
    /// was made and a retry would make it again (an entry added twice); `None` for a
    /// read, or a write that left no trace to tell by (it trapped before taking the
    /// file's lock, so nothing was written, or after releasing it, so it was): read the
    /// file to know.
    Trap {
        message: String,
        written: Option<bool>,
    },
    /// The workspace's `.metis/` could not be pre-opened or created (for example, it is a
    /// regular file, or the workspace is not writable).
    Workspace(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Store { message, .. } => f.write_str(message),
            Error::Tool(error) => f.write_str(&error.message),
            Error::Trap { message, .. } => write!(f, "the memory component trapped: {message}"),
            Error::Workspace(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for Error {}

impl Error {
    /// A trap of a call that wrote nothing, or whose landing is not known.
    pub(crate) fn trap(message: String) -> Error {
        Error::Trap {
            message,
            written: None,
        }
    }
}
