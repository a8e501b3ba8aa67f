//! Reading a file a repository ships (`.pre-commit-config.yaml`, a hook, `.gitattributes`)
//! as `status` and `init` do: a repository can commit a link to `/dev/zero` (read whole, it
//! grows without end) or hold a FIFO (opened plainly, it blocks for ever), so only a
//! regular file is read, never through a link, and only up to a limit.

use std::fs::File;
use std::io::Read as _;
use std::path::Path;

/// The most of a repository's file `status` and `init` read: far above any hook or
/// configuration a person writes, far below what would hurt.
pub const READ_AT_MOST: u64 = 1 << 20;

/// Why a file was not read, for the person.
pub type Refused = String;

/// The regular file at `path` opened for reading (`Ok(None)` when nothing is there),
/// never through a link and never waiting on a FIFO.
pub fn open(path: &Path) -> Result<Option<File>, Refused> {
    let shown = path.display();
    let mut options = File::options();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC,
    );
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(format!("{shown} is a symbolic link, which is not followed"));
        }
        Err(e) => return Err(format!("cannot read {shown}: {e}")),
    };
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "{shown} is not a regular file (a FIFO, a device or a directory), which is not read"
        ));
    }
    Ok(Some(file))
}

/// The bytes of `file`, if it holds no more than [`READ_AT_MOST`].
pub fn read_from(file: &File, path: &Path) -> Result<Vec<u8>, Refused> {
    let mut bytes = Vec::new();
    file.take(READ_AT_MOST + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() as u64 > READ_AT_MOST {
        return Err(format!(
            "{} is larger than {} bytes, which is not read",
            path.display(),
            READ_AT_MOST
        ));
    }
    Ok(bytes)
}

/// The bytes of the regular file at `path` (`Ok(None)` when nothing is there).
pub fn read(path: &Path) -> Result<Option<Vec<u8>>, Refused> {
    match open(path)? {
        Some(file) => read_from(&file, path).map(Some),
        None => Ok(None),
    }
}

/// Whether what is at `path` is absent or a regular file, looked at without following a
/// link or opening it: for files git will read (`.gitignore`, `.gitattributes`), which
/// must not be a FIFO or a device. A link is refused too: git before 2.32 follows one.
pub fn absent_or_regular(path: &Path) -> Result<(), Refused> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => Ok(()),
        Ok(meta) if meta.file_type().is_symlink() => {
            Err(format!("{} is a symbolic link", path.display()))
        }
        Ok(_) => Err(format!(
            "{} is not a regular file (a FIFO, a device or a directory)",
            path.display()
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("cannot look at {}: {e}", path.display())),
    }
}
