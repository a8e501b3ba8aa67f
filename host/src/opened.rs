//! Opening a path once and then naming what was opened, not the path again.
//!
//! wasmtime takes paths (a pre-opened directory, a compiled file to map), and a path can
//! be swapped for a symbolic link between the moment it is checked and the moment it is
//! opened. So the host opens it itself, never through a link, checks the open
//! descriptor, and hands wasmtime `/proc/thread-self/fd/N`: on Linux that name reaches exactly
//! the file or directory already open, whatever the path leads to by then. Elsewhere
//! (or without `/proc`) the path is all there is, and the window remains.

use std::fs::{File, Metadata};
use std::io;
use std::path::{Path, PathBuf};

use crate::Error;

/// A directory as the host opened it for pre-opening (a workspace's `.metis/`, the
/// user's own): `path` reaches exactly the directory `_held` is (see [`descriptor_path`]),
/// `id` is its device and inode.
pub(crate) struct OpenedDir {
    pub path: PathBuf,
    pub id: (u64, u64),
    /// Whether its filesystem is mounted read-only (passed to the guest, see
    /// `runtime::READ_ONLY_FS_ENV`).
    pub read_only_fs: bool,
    /// Held open while the instance is made, so that `path` stays valid.
    pub _held: File,
}

impl OpenedDir {
    /// `file`, opened from `dir` (by [`open`]), once `check` accepts its metadata: the
    /// checks are of what was opened, not of whatever `dir` names by now.
    pub(crate) fn checked(
        dir: &Path,
        file: File,
        check: impl FnOnce(&Metadata) -> Result<(), Error>,
    ) -> Result<OpenedDir, Error> {
        let meta = file
            .metadata()
            .map_err(|e| Error::Workspace(format!("cannot access {}: {e}", dir.display())))?;
        check(&meta)?;
        Ok(OpenedDir {
            path: descriptor_path(&file).unwrap_or_else(|| dir.to_owned()),
            id: identity(&meta),
            read_only_fs: on_read_only_mount(&file),
            _held: file,
        })
    }
}

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

/// Which directory `meta` is: a kept instance is only used on the `.metis/` it opened.
pub(crate) fn identity(meta: &Metadata) -> (u64, u64) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (meta.dev(), meta.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        (0, 0)
    }
}

/// Whether `file`'s filesystem is mounted read-only.
fn on_read_only_mount(file: &File) -> bool {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        let mut info = std::mem::MaybeUninit::<libc::statvfs>::uninit();
        // SAFETY: fstatvfs only writes the struct it is given, and `file` is open.
        if unsafe { libc::fstatvfs(file.as_raw_fd(), info.as_mut_ptr()) } != 0 {
            return false;
        }
        // SAFETY: fstatvfs succeeded, so it filled the struct.
        let info = unsafe { info.assume_init() };
        info.f_flag & libc::ST_RDONLY != 0
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        false
    }
}
