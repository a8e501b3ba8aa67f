//! The per-user secret key under which cache entries are authenticated (shared with the
//! Python package, `_cache.py`): 32 random bytes in `~/.local/state/metis-memory/cache-key`,
//! where `~` is this user's home directory as the password database gives it
//! (`getpwuid(geteuid())`), never `$HOME` or `$XDG_*`, which a repository's env file can
//! set. It is kept outside every cache directory, so nothing a checkout holds or names can
//! supply it.
//!
//! The key is used only if its directory is a directory (not a link) of this user's that
//! no one else can write, and the key a regular file (not a link) of this user's that no
//! one else can read or write, of exactly 32 bytes. A missing key is made: random bytes
//! in a private temporary file (`O_EXCL`, 0600), synced, then hard-linked to the name (so
//! the key never exists half-written, and of two processes making one, both end with the
//! one that was linked first). A key that cannot be had turns the cache off; it is never
//! replaced, since a key that is there but wrong says something is amiss.

/// Bytes of the key.
pub(crate) const KEY_BYTES: usize = 32;

/// The key's directory, under this user's home directory.
pub(crate) const KEY_DIR: &str = ".local/state/metis-memory";

/// The key's name in [`KEY_DIR`].
pub(crate) const KEY_FILE: &str = "cache-key";

/// This user's key, made if missing; or why there is none (then the cache is off).
pub(crate) fn user_key() -> Result<[u8; KEY_BYTES], String> {
    imp::user_key()
}

#[cfg(unix)]
mod imp {
    use std::ffi::{CStr, CString, OsStr};
    use std::fs::{self, File};
    use std::io::{self, Read, Write};
    use std::os::fd::{AsRawFd, FromRawFd};
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    use std::path::{Path, PathBuf};

    use super::{KEY_BYTES, KEY_DIR, KEY_FILE};

    /// This user's home directory, from the password database.
    pub(super) fn home() -> Result<PathBuf, String> {
        // SAFETY: geteuid has no preconditions and cannot fail.
        let uid = unsafe { libc::geteuid() };
        let mut buffer = vec![0 as libc::c_char; 1024];
        loop {
            // SAFETY: an all-zero passwd is a valid value (null pointers, zero ids).
            let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
            let mut found: *mut libc::passwd = std::ptr::null_mut();
            // SAFETY: getpwuid_r writes only into `entry` and `buffer` (of the length
            // given), and sets `found` to `&entry` or null.
            let error = unsafe {
                libc::getpwuid_r(
                    uid,
                    &mut entry,
                    buffer.as_mut_ptr(),
                    buffer.len(),
                    &mut found,
                )
            };
            if error == libc::ERANGE && buffer.len() < 1 << 20 {
                buffer.resize(buffer.len() * 2, 0);
                continue;
            }
            if error != 0 || found.is_null() || entry.pw_dir.is_null() {
                return Err(format!(
                    "user {uid} has no home directory in the password database"
                ));
            }
            // SAFETY: pw_dir points to a NUL-terminated string inside `buffer`.
            let dir = unsafe { CStr::from_ptr(entry.pw_dir) };
            let dir = PathBuf::from(OsStr::from_bytes(dir.to_bytes()));
            if !dir.is_absolute() {
                return Err(format!(
                    "the password database's home directory of user {uid} ({}) is not an absolute path",
                    dir.display()
                ));
            }
            return Ok(dir);
        }
    }

    pub(super) fn user_key() -> Result<[u8; KEY_BYTES], String> {
        let home = home()?;
        if !home.is_dir() {
            return Err(format!("the home directory {} is missing", home.display()));
        }
        let dir = home.join(KEY_DIR);
        let mut builder = fs::DirBuilder::new();
        std::os::unix::fs::DirBuilderExt::mode(builder.recursive(true), 0o700);
        builder.create(&dir).map_err(|e| {
            format!(
                "cannot create the cache key's directory {}: {e}",
                dir.display()
            )
        })?;
        let handle = crate::opened::open_no_follow(&dir, true).map_err(|e| {
            format!(
                "cannot open the cache key's directory {}: {e}",
                dir.display()
            )
        })?;
        let meta = handle.metadata().map_err(|e| e.to_string())?;
        // SAFETY: geteuid has no preconditions and cannot fail.
        if !meta.is_dir() || meta.uid() != unsafe { libc::geteuid() } || meta.mode() & 0o022 != 0 {
            return Err(format!(
                "the cache key's directory {} is not a directory only this user can write",
                dir.display()
            ));
        }
        let path = dir.join(KEY_FILE);
        match read(&handle, &path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                make(&handle, &path)?;
                read(&handle, &path)
            }
            found => found,
        }
        .map_err(|e| e.to_string())
    }

    /// The key `name` in the directory `dir`, if it is a regular file of this user's, no
    /// one else's to read or write, of [`KEY_BYTES`].
    fn read(dir: &File, path: &Path) -> io::Result<[u8; KEY_BYTES]> {
        let refuse = |why: &str| {
            io::Error::other(format!(
                "the cache key {} is not used: {why}",
                path.display()
            ))
        };
        let name = CString::new(KEY_FILE).expect("no NUL in the key's name");
        let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
        // SAFETY: openat is given a valid directory descriptor and a NUL-terminated name.
        let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags) };
        if fd < 0 {
            let e = io::Error::last_os_error();
            return Err(match e.raw_os_error() {
                Some(libc::ENOENT) => e,
                Some(libc::ELOOP) | Some(libc::EMLINK) => refuse("it is a symbolic link"),
                _ => refuse(&format!("cannot open it: {e}")),
            });
        }
        // SAFETY: `fd` was just opened and is owned by nothing else.
        let file = unsafe { File::from_raw_fd(fd) };
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(refuse("it is not a regular file"));
        }
        // SAFETY: geteuid has no preconditions and cannot fail.
        if meta.uid() != unsafe { libc::geteuid() } {
            return Err(refuse(&format!("it belongs to user {}", meta.uid())));
        }
        if meta.mode() & 0o077 != 0 {
            return Err(refuse(&format!(
                "others can read or write it (mode {:o}; it must be 0600)",
                meta.mode() & 0o777
            )));
        }
        let mut key = [0u8; KEY_BYTES];
        let mut bytes = Vec::with_capacity(KEY_BYTES + 1);
        (&file).take(KEY_BYTES as u64 + 1).read_to_end(&mut bytes)?;
        if bytes.len() != KEY_BYTES {
            return Err(refuse(&format!(
                "it holds {} bytes, not {KEY_BYTES}",
                bytes.len()
            )));
        }
        key.copy_from_slice(&bytes);
        Ok(key)
    }

    /// Makes the key `path` (in `dir`) unless another process made it first.
    fn make(dir: &File, path: &Path) -> Result<(), String> {
        let failed = |e: io::Error| format!("cannot make the cache key {}: {e}", path.display());
        if crate::cache::file_size_limit().is_some_and(|limit| limit < KEY_BYTES as u64) {
            return Err(failed(io::Error::other(
                "the file size limit (ulimit -f) is below it",
            )));
        }
        let mut key = [0u8; KEY_BYTES];
        File::open("/dev/urandom")
            .and_then(|mut random| random.read_exact(&mut key))
            .map_err(failed)?;
        let temp = CString::new(format!(
            ".{KEY_FILE}.{:016x}.tmp",
            crate::token::owner_token()
        ))
        .expect("no NUL in a temporary name");
        let flags =
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: openat is given a valid directory descriptor and a NUL-terminated name.
        let fd = unsafe { libc::openat(dir.as_raw_fd(), temp.as_ptr(), flags, 0o600) };
        if fd < 0 {
            return Err(failed(io::Error::last_os_error()));
        }
        let name = CString::new(KEY_FILE).expect("no NUL in the key's name");
        let linked = (|| {
            // SAFETY: `fd` was just opened and is owned by nothing else.
            let mut file = unsafe { File::from_raw_fd(fd) };
            file.write_all(&key)?;
            file.sync_all()?;
            // SAFETY: both names are NUL-terminated, in a valid directory descriptor.
            let linked = unsafe {
                libc::linkat(
                    dir.as_raw_fd(),
                    temp.as_ptr(),
                    dir.as_raw_fd(),
                    name.as_ptr(),
                    0,
                )
            };
            match linked {
                0 => Ok(()),
                _ => match io::Error::last_os_error() {
                    // Another process made it first: its key is the one.
                    e if e.raw_os_error() == Some(libc::EEXIST) => Ok(()),
                    e => Err(e),
                },
            }
        })();
        // SAFETY: a NUL-terminated name in a valid directory descriptor.
        unsafe { libc::unlinkat(dir.as_raw_fd(), temp.as_ptr(), 0) };
        linked.map_err(failed)?;
        let _ = dir.sync_all();
        Ok(())
    }
}

#[cfg(not(unix))]
mod imp {
    pub(super) fn user_key() -> Result<[u8; super::KEY_BYTES], String> {
        Err("no per-user cache key on this system".into())
    }
}
