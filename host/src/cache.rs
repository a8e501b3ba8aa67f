//! The compiled component, kept on disk so that a process does not compile it again.
//!
//! Compiling the component takes 0.1-0.2 s; loading it compiled (an `mmap` of the file)
//! takes well under a millisecond, and a file-backed image also lets instances map the
//! guest's initial memory copy-on-write instead of copying it. The file is keyed by the
//! engine's compatibility hash (wasmtime's version and every setting the compiled code
//! depends on) and the component's SHA-256, lives in a directory only this user can
//! write, is written atomically, and is recompiled whenever it is missing, not this
//! user's, writable by others, or refused by wasmtime (another version, truncated,
//! garbage). A cache that cannot be used never fails a call: the component is then
//! compiled in memory, as before.

use std::fs;
use std::hash::{Hash, Hasher};
use std::io::Write;
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

/// The engine, the component, what `link` made of it, and where it came from. `config`
/// is everything but copy-on-write memory images, which need the compiled code in a
/// file. A cache file that wasmtime loads but that does not link (another component
/// under the same name) is compiled again like any other unusable file.
pub(crate) fn load<T>(
    mut config: Config,
    wasm: &[u8],
    wasm_sha256: &str,
    link: impl Fn(&Engine, &Component) -> wasmtime::Result<T>,
) -> wasmtime::Result<(Engine, Component, T, Source)> {
    let reason = match cache_dir() {
        Ok(dir) => {
            config.memory_init_cow(true);
            let engine = Engine::new(&config)?;
            let path = dir.join(file_name(&engine, wasm_sha256));
            let reason = match load_file(&engine, &path) {
                Ok(component) => match link(&engine, &component) {
                    Ok(linked) => return Ok((engine, component, linked, Source::Cached(path))),
                    Err(e) => format!("the cache file did not link: {e}"),
                },
                Err(reason) => reason,
            };
            match compile_to(&engine, wasm, &path) {
                Ok(component) => {
                    let linked = link(&engine, &component)?;
                    return Ok((engine, component, linked, Source::Compiled { path, reason }));
                }
                Err(e) => format!("cannot write {}: {e}", path.display()),
            }
        }
        Err(reason) => reason,
    };
    // Without a file to map, copy-on-write images would live in memfd files, which a
    // process under a file-size limit (`ulimit -f`) cannot write: copy the initial
    // memory at instantiation instead.
    config.memory_init_cow(false);
    let engine = Engine::new(&config)?;
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

fn file_name(engine: &Engine, wasm_sha256: &str) -> String {
    // SipHash with fixed keys: the same engine settings give the same name in every
    // process of this build.
    let mut hasher = std::hash::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    format!(
        "component-{}-{:016x}.cwasm",
        &wasm_sha256[..32],
        hasher.finish()
    )
}

/// The compiled component at `path` if it is a regular file of this user's that no one
/// else can write, and wasmtime accepts it for this engine; otherwise why not. The file
/// is opened (never through a link) before it is checked, and loaded through that same
/// descriptor, so what is loaded is what was checked.
fn load_file(engine: &Engine, path: &Path) -> Result<Component, String> {
    let file = match crate::opened::open_no_follow(path, false) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err("none yet".into()),
        Err(e) => return Err(format!("cannot open the cache file: {e}")),
    };
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() || !private(&meta) || meta.len() > MAX_CACHE_BYTES {
        return Err("the cache file is not a regular file only this user can write".into());
    }
    let by_descriptor = crate::opened::descriptor_path(&file);
    // SAFETY: wasmtime requires the file to be its own serialized output, unchanged while
    // mapped. It is only ever written here, atomically (a private temporary file renamed
    // into place, never modified after), in a directory only this user can write; and
    // wasmtime checks its header (version, engine settings) before using it.
    unsafe { Component::deserialize_file(engine, by_descriptor.as_deref().unwrap_or(path)) }
        .map_err(|e| format!("wasmtime refused the cache file: {e}"))
}

/// Compiles the component, writes it to `path` atomically, and loads it from there (so
/// that its memory image is backed by the file).
fn compile_to(engine: &Engine, wasm: &[u8], path: &Path) -> wasmtime::Result<Component> {
    let bytes = engine.precompile_component(wasm)?;
    if let Some(limit) = file_size_limit()
        && bytes.len() as u64 > limit
    {
        // Writing past the limit would raise SIGXFSZ, which ends a process that has not
        // ignored it: an optional cache must not cost the call.
        wasmtime::bail!(
            "the file size limit (ulimit -f, {limit} bytes) is below the compiled component's {} bytes",
            bytes.len()
        );
    }
    let dir = path.parent().expect("a cache file has a directory");
    let temp = dir.join(format!(
        ".{}.{:016x}.tmp",
        path.file_name().unwrap().to_string_lossy(),
        crate::runtime::owner_token()
    ));
    let written = (|| -> std::io::Result<()> {
        let mut options = fs::File::options();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&temp)?;
        file.write_all(&bytes)?;
        file.sync_all()?;
        fs::rename(&temp, path)
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&temp);
        return Err(e.into());
    }
    load_file(engine, path).map_err(|reason| wasmtime::format_err!("{reason}"))
}

/// The soft file size limit (`RLIMIT_FSIZE`) in bytes, if there is one.
fn file_size_limit() -> Option<u64> {
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
