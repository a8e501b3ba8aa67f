//! The embedded component, compiled once per process, and one fresh, limited instance
//! per call.

use std::path::Path;
use std::sync::OnceLock;

use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Config, Engine, Store, StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::Error;
use crate::bindings::{Memory, MemoryPre};

/// The component built from `guest/` by this crate's build script.
pub const COMPONENT_WASM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/metis_memory.wasm"));

/// The guest path the workspace's `.metis/` is pre-opened at (see `wit/world.wit`).
const GUEST_METIS_DIR: &str = ".metis";

/// The guest names its lock and temporary file after this token, so the host can remove
/// them if the instance traps while holding them (see `Workspace::clean_up_after_trap`).
const OWNER_ENV: &str = "METIS_MEMORY_OWNER";

/// A token unique to one call: which lock file and temporary file are this call's.
pub(crate) fn owner_token() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(CALLS.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    hasher.finish()
}

/// The resources one call may use. A call that exceeds them traps and returns
/// [`Error::Trap`]; nothing on disk changes and the next call is unaffected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Wasm instructions (roughly) one call may execute.
    pub fuel: u64,
    /// Bytes of linear memory the instance may grow to.
    pub memory_bytes: usize,
}

impl Limits {
    /// The default linear memory limit: 64 MiB.
    pub const DEFAULT_MEMORY_BYTES: u64 = 64 << 20;
}

impl Default for Limits {
    /// A billion units of fuel and 64 MiB: a write at the hard cap uses well under 1% of
    /// either, yet a runaway guest stops within about a second.
    fn default() -> Self {
        Limits {
            fuel: 1_000_000_000,
            memory_bytes: Limits::DEFAULT_MEMORY_BYTES as usize,
        }
    }
}

pub(crate) struct Ctx {
    wasi: WasiCtx,
    table: ResourceTable,
    limits: StoreLimits,
    #[cfg(feature = "fault-injection")]
    faults: crate::faults::FaultState,
}

impl WasiView for Ctx {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

struct Runtime {
    engine: Engine,
    /// Kept to link it again with the fault hook.
    #[cfg(feature = "fault-injection")]
    component: Component,
    pre: MemoryPre<Ctx>,
}

fn runtime() -> Result<&'static Runtime, Error> {
    static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| build_runtime().map_err(|e| format!("{e:?}")))
        .as_ref()
        .map_err(|message| Error::Trap(format!("cannot load the memory component: {message}")))
}

fn build_runtime() -> wasmtime::Result<Runtime> {
    let mut config = Config::new();
    config.consume_fuel(true);
    // Copy-on-write memory images live in memfd files, which a process under a file-size
    // limit cannot write; the guest's heap image is small enough to copy at instantiation.
    config.memory_init_cow(false);
    let engine = Engine::new(&config)?;
    let component = Component::new(&engine, COMPONENT_WASM)?;
    let mut linker = Linker::<Ctx>::new(&engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
    let pre = MemoryPre::new(linker.instantiate_pre(&component)?)?;
    Ok(Runtime {
        engine,
        #[cfg(feature = "fault-injection")]
        component,
        pre,
    })
}

/// The same component linked with every `wasi:filesystem/types` call going through the
/// instance's fault hook (see `faults`). Built on first use, sharing the compiled code.
#[cfg(feature = "fault-injection")]
fn faulty_pre() -> Result<&'static MemoryPre<Ctx>, Error> {
    use crate::faults::{Faulty, FaultyFilesystem};
    use wasmtime_wasi::filesystem::WasiFilesystemCtxView;
    use wasmtime_wasi::p2::bindings::sync::filesystem::types;

    static FAULTY: OnceLock<Result<MemoryPre<Ctx>, String>> = OnceLock::new();
    let runtime = runtime()?;
    FAULTY
        .get_or_init(|| {
            let build = || -> wasmtime::Result<MemoryPre<Ctx>> {
                let mut linker = Linker::<Ctx>::new(&runtime.engine);
                wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
                linker.allow_shadowing(true);
                types::add_to_linker::<Ctx, Faulty>(&mut linker, |ctx| FaultyFilesystem {
                    inner: WasiFilesystemCtxView {
                        ctx: ctx.wasi.filesystem(),
                        table: &mut ctx.table,
                    },
                    state: &mut ctx.faults,
                })?;
                MemoryPre::new(linker.instantiate_pre(&runtime.component)?)
            };
            build().map_err(|e| format!("{e:?}"))
        })
        .as_ref()
        .map_err(|message| Error::Trap(format!("cannot link the fault hook: {message}")))
}

/// How one call's instance is set up.
pub(crate) struct Call<'a> {
    /// The workspace's `.metis/`, pre-opened as `.metis`; `None` pre-opens nothing.
    pub metis_dir: Option<&'a Path>,
    pub read_only: bool,
    pub limits: Limits,
    /// This call's owner token, passed to the guest in `METIS_MEMORY_OWNER`.
    pub owner: u64,
    #[cfg(feature = "fault-injection")]
    pub fault_hook: Option<crate::faults::FaultHook>,
}

/// Runs `f` against a fresh instance set up as `call` says.
///
/// A trap anywhere in `f` becomes [`Error::Trap`]. The guest is given no stdio: it is
/// `no_std` and imports none.
pub(crate) fn with_instance<R>(
    call: Call<'_>,
    f: impl FnOnce(&mut Store<Ctx>, &Memory) -> wasmtime::Result<R>,
) -> Result<R, Error> {
    let runtime = runtime()?;
    let mut wasi = WasiCtxBuilder::new();
    wasi.env(OWNER_ENV, format!("{:016x}", call.owner));
    if let Some(dir) = call.metis_dir {
        let perms = if call.read_only {
            FsPerms::ReadOnly
        } else {
            FsPerms::ReadWrite
        };
        wasi.preopened_dir(dir, GUEST_METIS_DIR, perms)
            .map_err(|e| Error::Workspace(format!("cannot open {}: {e}", dir.display())))?;
    }
    let ctx = Ctx {
        wasi: wasi.build(),
        table: ResourceTable::new(),
        limits: StoreLimitsBuilder::new()
            .memory_size(call.limits.memory_bytes)
            .build(),
        #[cfg(feature = "fault-injection")]
        faults: crate::faults::FaultState::new(call.fault_hook.clone()),
    };
    #[cfg(feature = "fault-injection")]
    let pre = match call.fault_hook {
        Some(_) => faulty_pre()?,
        None => &runtime.pre,
    };
    #[cfg(not(feature = "fault-injection"))]
    let pre = &runtime.pre;
    let mut store = Store::new(&runtime.engine, ctx);
    store.limiter(|ctx| &mut ctx.limits);
    let trap = |e: wasmtime::Error| Error::Trap(format!("{e:#}"));
    store.set_fuel(call.limits.fuel).map_err(trap)?;
    let instance = pre.instantiate(&mut store).map_err(trap)?;
    f(&mut store, &instance).map_err(trap)
}
