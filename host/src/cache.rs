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
    /// Compiled now, then written to the cache file at this path.
    Compiled(PathBuf),
    /// Compiled in memory: the cache is off or unusable, for the reason given.
    Uncached(String),
}

/// `METIS_MEMORY_CACHE_DIR`: the cache directory (`off` turns the cache off).
pub const CACHE_DIR_ENV: &str = "METIS_MEMORY_CACHE_DIR";

/// Larger than any compiled form of the component: a bigger file is not ours.
const MAX_CACHE_BYTES: u64 = 256 << 20;

/// The engine, the component and where it came from. `config` is everything but
/// copy-on-write memory images, which need the compiled code in a file.
pub(crate) fn load(
    mut config: Config,
    wasm: &[u8],
    wasm_sha256: &str,
) -> wasmtime::Result<(Engine, Component, Source)> {
    let reason = match cache_dir() {
        Ok(dir) => {
            config.memory_init_cow(true);
            let engine = Engine::new(&config)?;
            let path = dir.join(file_name(&engine, wasm_sha256));
            if let Some(component) = load_file(&engine, &path) {
                return Ok((engine, component, Source::Cached(path)));
            }
            match compile_to(&engine, wasm, &path) {
                Ok(component) => return Ok((engine, component, Source::Compiled(path))),
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
    Ok((engine, component, Source::Uncached(reason)))
}

/// `$METIS_MEMORY_CACHE_DIR`, else `$XDG_CACHE_HOME/metis-memory`, else
/// `~/.cache/metis-memory`; created 0700 if missing, and used only if it is a directory
/// this user owns that no one else can write.
fn cache_dir() -> Result<PathBuf, String> {
    let dir = match std::env::var_os(CACHE_DIR_ENV) {
        Some(dir) if dir == "off" => return Err(format!("{CACHE_DIR_ENV}=off")),
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => {
            let base = std::env::var_os("XDG_CACHE_HOME")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
                .ok_or("neither XDG_CACHE_HOME nor HOME is set")?;
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
/// else can write, and wasmtime accepts it for this engine.
fn load_file(engine: &Engine, path: &Path) -> Option<Component> {
    let meta = fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || !private(&meta) || meta.len() > MAX_CACHE_BYTES {
        return None;
    }
    // SAFETY: wasmtime requires the file to be its own serialized output, unchanged while
    // mapped. It is only ever written here, atomically (a private temporary file renamed
    // into place, never modified after), in a directory only this user can write; and
    // wasmtime checks its header (version, engine settings) before using it.
    unsafe { Component::deserialize_file(engine, path) }.ok()
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
    load_file(engine, path).ok_or_else(|| wasmtime::format_err!("cannot load what was written"))
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
        Some(limit.rlim_cur as u64)
    }
    #[cfg(not(unix))]
    None
}
