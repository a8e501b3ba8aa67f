//! Opening a path once and then naming what was opened, not the path again.
//!
//! wasmtime takes paths (a pre-opened directory, a compiled file to map), and a path can
//! be swapped for a symbolic link between the moment it is checked and the moment it is
//! opened. So the host opens it itself, never through a link, checks the open
//! descriptor, and hands wasmtime `/proc/thread-self/fd/N`: on Linux that name reaches exactly
//! the file or directory already open, whatever the path leads to by then. Elsewhere
//! (or without `/proc`) the path is all there is, and the window remains.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// Opens `path` read-only without following a final symbolic link (unless
/// `follow_link`), without blocking on a FIFO, and, for `directory`, only if it is one.
pub(crate) fn open(path: &Path, directory: bool, follow_link: bool) -> io::Result<File> {
    let mut options = std::fs::File::options();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
        if !follow_link {
            flags |= libc::O_NOFOLLOW;
        }
        if directory {
            flags |= libc::O_DIRECTORY;
        }
        options.custom_flags(flags);
    }
    #[cfg(not(unix))]
    let _ = (directory, follow_link);
    options.open(path)
}

/// [`open`] for a file that must not be a link.
pub(crate) fn open_no_follow(path: &Path, directory: bool) -> io::Result<File> {
    open(path, directory, false)
}

/// A path that opens exactly `file`, if the system has one (`/proc/thread-self/fd/N`).
pub(crate) fn descriptor_path(file: &File) -> Option<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        use std::sync::OnceLock;
        // `thread-self` is this thread's descriptor table, which is the one wasmtime
        // opens the name from (on this thread); `self` is the main thread's.
        static PROC_FD: OnceLock<Option<&str>> = OnceLock::new();
        let dir = PROC_FD.get_or_init(|| {
            ["/proc/thread-self/fd", "/proc/self/fd"]
                .into_iter()
                .find(|dir| Path::new(dir).is_dir())
        });
        dir.map(|dir| PathBuf::from(format!("{dir}/{}", file.as_raw_fd())))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        None
    }
}
