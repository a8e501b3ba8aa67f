//! The compiled component, kept on disk so that a process does not compile it again.
//!
//! Compiling the component takes 0.1-0.2 s; loading a cache entry (copying it where
//! nothing can change it, checking its MAC, and handing wasmtime that copy) about a
//! millisecond, most of it hashing the entry. The policy, the
//! same in the Python package (`bindings/python/src/metis_memory/_cache.py`), is
//! docs/security.md's "The compiled-component cache":
//!
//! - an entry is named `component-{SHA-256 of the component}-{engine}.cwasm`, the engine
//!   part being here `rust-` and wasmtime's compatibility hash (its version and every
//!   setting the compiled code depends on);
//! - it lives in an absolute directory (`$METIS_MEMORY_CACHE_DIR`, else
//!   `$XDG_CACHE_HOME/metis-memory`, else `~/.cache/metis-memory`) of this user's that no
//!   one else can write, created 0700;
//! - it is a header, an HMAC-SHA256 and wasmtime's bytes ([`entry`]), the MAC under a
//!   per-user key kept outside every cache directory ([`key`]) and over the name as well
//!   as the bytes, so that neither a repository nor an environment variable can supply a
//!   file this process will run: a cache directory may be inside a checkout;
//! - it is copied where nothing can change it (a sealed memfd on Linux, [`sealed`]; else
//!   this process's memory), its MAC checked over that copy, and that copy deserialized,
//!   so nothing can change between the check and the use;
//! - it is written to a private temporary file, synced, and renamed into place, and
//!   compiled again (and replaced) whenever it is missing, not a regular file of this
//!   user's that no one else can write, larger than [`MAX_CACHE_BYTES`], of another
//!   format, of a wrong MAC, refused by wasmtime, or not linking.
//!
//! A cache that cannot be used (off, no usable directory or key, a file-size limit) never
//! fails a call: the component is then compiled in memory, as before.

mod entry;
mod key;
#[cfg(target_os = "linux")]
mod sealed;

use std::fs;
use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use wasmtime::component::Component;
use wasmtime::{Config, Engine};

/// Where the compiled component came from: what `status` and the benchmarks report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// Loaded from the cache file at this path.
    Cached(PathBuf),
    /// Compiled now and written to the cache file at `path`, because of `reason` (there
    /// was none yet, wasmtime refused it, it did not link, ...).
    Compiled {
        /// The cache file written.
        path: PathBuf,
        /// Why the file that was there (if any) was not used.
        reason: String,
    },
    /// Compiled in memory: the cache is off or unusable, for the reason given.
    Uncached(String),
}

/// `METIS_MEMORY_CACHE_DIR`: the cache directory (`off` turns the cache off).
pub const CACHE_DIR_ENV: &str = "METIS_MEMORY_CACHE_DIR";

/// Larger than any compiled form of the component: a bigger file is not ours.
const MAX_CACHE_BYTES: u64 = 256 << 20;

/// The engine, the component, what `link` made of it, and where it came from. A cache
/// entry that wasmtime loads but that does not link (another component under the same
/// name) is compiled again like any other unusable file.
pub(crate) fn load<T>(
    mut config: Config,
    wasm: &[u8],
    wasm_sha256: &str,
    link: impl Fn(&Engine, &Component) -> wasmtime::Result<T>,
) -> wasmtime::Result<(Engine, Component, T, Source)> {
    // Instances map the guest's initial memory copy-on-write from a file: the sealed memfd
    // an entry is loaded from, or, for a component compiled or read into memory, a memfd
    // image wasmtime writes on first use. A file-size limit (`ulimit -f`) makes memfd
    // writes fail, which would fail every call, so under one the initial memory is copied
    // at instantiation instead. (The setting is part of wasmtime's compatibility hash, so
    // the two kinds of entry have different names.)
    config.memory_init_cow(file_size_limit().is_none());
    let engine = Engine::new(&config)?;
    let reason = match cache_dir().and_then(|dir| Ok((dir, key::user_key()?))) {
        Ok((dir, key)) => {
            let name = file_name(&engine, wasm_sha256);
            let path = dir.join(&name);
            let reason = match load_file(&engine, &key, &path, &name) {
                Ok(component) => match link(&engine, &component) {
                    Ok(linked) => return Ok((engine, component, linked, Source::Cached(path))),
                    Err(e) => format!("the cache file did not link: {e}"),
                },
                Err(reason) => reason,
            };
            let bytes = engine.precompile_component(wasm)?;
            // SAFETY: these bytes are what this engine serialized a moment ago.
            let component = unsafe { Component::deserialize(&engine, &bytes)? };
            let linked = link(&engine, &component)?;
            match write_file(&key, &path, &name, &bytes) {
                Ok(()) => {
                    return Ok((engine, component, linked, Source::Compiled { path, reason }));
                }
                Err(e) => {
                    let reason = format!("cannot write {}: {e}", path.display());
                    return Ok((engine, component, linked, Source::Uncached(reason)));
                }
            }
        }
        Err(reason) => reason,
    };
    let component = Component::new(&engine, wasm)?;
    let linked = link(&engine, &component)?;
    Ok((engine, component, linked, Source::Uncached(reason)))
}

/// `$METIS_MEMORY_CACHE_DIR`, else `$XDG_CACHE_HOME/metis-memory`, else
/// `~/.cache/metis-memory`; created 0700 if missing, and used only if it is a directory
/// this user owns that no one else can write. A relative path is never used: it would
/// resolve inside whatever directory the process runs in, perhaps a cloned repository
/// whose committed files would then be loaded as compiled code. (A relative
/// `XDG_CACHE_HOME` is ignored, as the XDG base directory specification says; a
/// relative `METIS_MEMORY_CACHE_DIR` turns the cache off, since it was asked for.)
fn cache_dir() -> Result<PathBuf, String> {
    let absolute = |dir: std::ffi::OsString| Some(PathBuf::from(dir)).filter(|d| d.is_absolute());
    let dir = match std::env::var_os(CACHE_DIR_ENV) {
        Some(dir) if dir == "off" => return Err(format!("{CACHE_DIR_ENV}=off")),
        Some(dir) if !dir.is_empty() => absolute(dir.clone()).ok_or_else(|| {
            format!(
                "{CACHE_DIR_ENV}={} is not an absolute path",
                PathBuf::from(dir).display()
            )
        })?,
        _ => {
            let base = std::env::var_os("XDG_CACHE_HOME")
                .and_then(absolute)
                .or_else(|| {
                    std::env::var_os("HOME")
                        .and_then(absolute)
                        .map(|h| h.join(".cache"))
                })
                .ok_or("neither XDG_CACHE_HOME nor HOME is an absolute path")?;
            base.join("metis-memory")
        }
    };
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(&dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let meta = fs::symlink_metadata(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if !meta.is_dir() || !private(&meta) {
        return Err(format!(
            "{} is not a directory only this user can write",
            dir.display()
        ));
    }
    Ok(dir)
}

/// Owned by this user and writable by no one else.
fn private(meta: &fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions and cannot fail.
        meta.uid() == unsafe { libc::geteuid() } && meta.mode() & 0o022 == 0
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        true
    }
}

/// `component-{SHA-256 of the component}-rust-{engine}.cwasm`: the component and,
/// through wasmtime's compatibility hash, wasmtime's version and every setting the
/// compiled code depends on.
fn file_name(engine: &Engine, wasm_sha256: &str) -> String {
    // SipHash with fixed keys: the same engine settings give the same name in every
    // process of this build.
    let mut hasher = std::hash::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    format!(
        "component-{wasm_sha256}-rust-{:016x}.cwasm",
        hasher.finish()
    )
}

/// The compiled component in the entry at `path` (named `name`) if it is a regular file of
/// this user's that no one else can write, its MAC is right under `key`, and wasmtime
/// accepts it for this engine; otherwise why not. The file is opened (never through a
/// link) before it is checked, its bytes are copied where nothing can change them (a
/// sealed memfd on Linux, else this process's memory), and the bytes whose MAC was
/// checked are the bytes deserialized.
fn load_file(
    engine: &Engine,
    key: &[u8; 32],
    path: &Path,
    name: &str,
) -> Result<Component, String> {
    let file = match crate::opened::open_no_follow(path, false) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err("none yet".into()),
        Err(e) => return Err(format!("cannot open the cache file: {e}")),
    };
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() || !private(&meta) || meta.len() > MAX_CACHE_BYTES {
        return Err("the cache file is not a regular file only this user can write".into());
    }
    // A memfd is a file, whose writing a file-size limit would stop (with SIGXFSZ).
    #[cfg(target_os = "linux")]
    if file_size_limit().is_none() {
        match sealed::load(engine, key, name, &file, meta.len()) {
            Ok(component) => return Ok(component),
            Err(sealed::Failed::Refused(reason)) => return Err(reason),
            Err(sealed::Failed::Unavailable) => {}
        }
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_CACHE_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the cache file: {e}"))?;
    let payload = entry::open(key, name, &bytes)?;
    // SAFETY: wasmtime requires these bytes to be its own serialized output. Their MAC,
    // under this user's key, which no repository or variable can supply, says this library
    // (or the Python package, by the same policy) wrote them, under this name, so for this
    // component and engine; both write only what wasmtime serialized, and wasmtime checks
    // its header (version, engine settings) too. They are in this process's memory:
    // nothing can change them after the check.
    unsafe { Component::deserialize(engine, payload) }
        .map_err(|e| format!("wasmtime refused the cache file: {e}"))
}

/// Writes the entry `name` holding `bytes` at `path` atomically (a private temporary file,
/// synced, renamed into place).
fn write_file(key: &[u8; 32], path: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let entry = entry::seal(key, name, bytes);
    if let Some(limit) = file_size_limit()
        && entry.len() as u64 > limit
    {
        // Writing past the limit would raise SIGXFSZ, which ends a process that has not
        // ignored it: an optional cache must not cost the call.
        return Err(std::io::Error::other(format!(
            "the file size limit (ulimit -f, {limit} bytes) is below the compiled component's {} bytes",
            entry.len()
        )));
    }
    let dir = path.parent().expect("a cache file has a directory");
    let temp = dir.join(format!(".{name}.{:016x}.tmp", crate::token::owner_token()));
    let written = (|| -> std::io::Result<()> {
        let mut options = fs::File::options();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&temp)?;
        file.write_all(&entry)?;
        file.sync_all()?;
        fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written
}

/// The soft file size limit (`RLIMIT_FSIZE`) in bytes, if there is one.
pub(crate) fn file_size_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit only writes the struct it is given.
        if unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, &mut limit) } != 0
            || limit.rlim_cur == libc::RLIM_INFINITY
        {
            return None;
        }
        #[allow(clippy::unnecessary_cast)] // rlim_t is not u64 on every Unix
        Some(limit.rlim_cur as u64)
    }
    #[cfg(not(unix))]
    None
}
