//! A private temporary directory: `edit`'s copy of a file, `call --dry-run`'s workspace.

use std::path::{Path, PathBuf};

/// A new directory under the system's temporary directory, readable only by this user,
/// removed when dropped unless [`keep`](Scratch::keep) was called.
pub struct Scratch {
    path: PathBuf,
    keep: bool,
}

impl Scratch {
    pub fn new(purpose: &str) -> std::io::Result<Scratch> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static COUNT: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        loop {
            let name = format!(
                "metis-memory-{purpose}-{}-{nanos:08x}-{}",
                std::process::id(),
                COUNT.fetch_add(1, Ordering::Relaxed)
            );
            let path = std::env::temp_dir().join(name);
            // `create_dir` fails on anything already there: never a directory planted
            // in a shared /tmp under a guessed name.
            match private_dir(&path) {
                Ok(()) => return Ok(Scratch { path, keep: false }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Leaves the directory in place (a refused edit's copy, so nothing is lost).
    pub fn keep(&mut self) {
        self.keep = true;
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

#[cfg(unix)]
fn private_dir(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().mode(0o700).create(path)
}

#[cfg(not(unix))]
fn private_dir(path: &Path) -> std::io::Result<()> {
    std::fs::create_dir(path)
}
