//! Loading an entry's payload from a sealed memfd (Linux): the payload is copied by the
//! kernel (`sendfile`) out of the cache file into an anonymous memory file, which is then
//! sealed against every change (`F_SEAL_WRITE`, `F_SEAL_SHRINK`, `F_SEAL_GROW`,
//! `F_SEAL_SEAL`) before its MAC is checked, and wasmtime maps that same sealed file
//! (`Component::deserialize_file` of `/proc/thread-self/fd/N`). So the bytes checked are
//! the bytes run, as when they are read into memory, but without copying them twice
//! through user space, and the compiled code is file-backed: instances map the guest's
//! initial memory copy-on-write from it, with no memory image to write.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::FileExt;

use wasmtime::Engine;
use wasmtime::component::Component;

use super::entry;

/// Why the sealed path could not be taken (the caller then reads the entry into memory),
/// or why the entry is refused.
pub(super) enum Failed {
    /// memfd, sealing, mapping or `/proc` is not available: not the entry's fault.
    Unavailable,
    /// The entry itself is refused, for this reason.
    Refused(String),
}

/// The component in the cache file `file` (of `len` bytes, named `name`), through a
/// sealed memfd.
pub(super) fn load(
    engine: &Engine,
    key: &[u8; 32],
    name: &str,
    file: &File,
    len: u64,
) -> Result<Component, Failed> {
    let prefix_len = entry::PREFIX_BYTES as u64;
    if len <= prefix_len {
        // Nothing to map: read into memory, it is refused there with its reason.
        return Err(Failed::Unavailable);
    }
    let mut prefix = [0u8; entry::PREFIX_BYTES];
    file.read_exact_at(&mut prefix, 0)
        .map_err(|e| Failed::Refused(format!("cannot read the cache file: {e}")))?;
    entry::check_header(&prefix).map_err(Failed::Refused)?;
    let payload_len = usize::try_from(len - prefix_len).map_err(|_| Failed::Unavailable)?;

    // SAFETY: a NUL-terminated name and valid flags.
    let fd = unsafe {
        libc::memfd_create(
            c"metis-memory-cache-entry".as_ptr(),
            libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
        )
    };
    if fd < 0 {
        return Err(Failed::Unavailable);
    }
    // SAFETY: `fd` was just made and is owned by nothing else.
    let memfd = unsafe { File::from_raw_fd(fd) };

    let mut offset = prefix_len as libc::off_t;
    let mut left = payload_len;
    while left > 0 {
        // SAFETY: two valid descriptors and a valid offset pointer.
        let sent = unsafe {
            libc::sendfile(
                memfd.as_raw_fd(),
                file.as_raw_fd(),
                &mut offset,
                left.min(1 << 30),
            )
        };
        match sent {
            n if n > 0 => left -= n as usize,
            0 => return Err(Failed::Refused("the cache file shrank while read".into())),
            _ if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {}
            _ => return Err(Failed::Unavailable),
        }
    }
    let seals = libc::F_SEAL_WRITE | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL;
    // SAFETY: fcntl on a valid descriptor.
    if unsafe { libc::fcntl(memfd.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
        return Err(Failed::Unavailable);
    }

    // The MAC, over the sealed bytes (a read-only mapping: nothing is copied).
    // SAFETY: a fresh read-only shared mapping of `payload_len` bytes of a file that long.
    let map = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            payload_len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            memfd.as_raw_fd(),
            0,
        )
    };
    if map == libc::MAP_FAILED {
        return Err(Failed::Unavailable);
    }
    let checked = {
        // SAFETY: the mapping is `payload_len` readable bytes, of a sealed file (nothing
        // can change them), alive until the munmap below.
        let payload = unsafe { std::slice::from_raw_parts(map as *const u8, payload_len) };
        entry::check(key, name, &prefix, payload)
    };
    // SAFETY: the mapping made above, no longer borrowed.
    unsafe { libc::munmap(map, payload_len) };
    checked.map_err(Failed::Refused)?;

    let Some(path) = crate::opened::descriptor_path(&memfd) else {
        return Err(Failed::Unavailable);
    };
    // SAFETY: wasmtime requires the file to be its own serialized output, unchanged while
    // mapped. Its MAC, under this user's key, which no repository or variable can supply,
    // says this library (or the Python package, by the same policy) wrote it, under this
    // name, so for this component and engine; both write only what wasmtime serialized.
    // The file is sealed, so no one can change it, and wasmtime checks its header
    // (version, engine settings) too.
    unsafe { Component::deserialize_file(engine, &path) }
        .map_err(|e| Failed::Refused(format!("wasmtime refused the cache file: {e}")))
}
