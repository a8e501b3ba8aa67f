//! The embedded component, loaded once per process (compiled, or from the cache of
//! compiled components), and a limited instance per call: a fresh one for every write,
//! and for reads one kept between calls (see [`KeptInstance`]).

use std::sync::{Mutex, OnceLock, TryLockError};

use std::cell::Cell;
use std::ops::Deref;

use wasmtime::component::{Component, Linker, ResourceAny, ResourceTable};
use wasmtime::{Config, Engine, ResourceLimiter, Store};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::Error;
use crate::bindings::exports::metis::memory::store;
use crate::bindings::{Memory, MemoryPre};
use crate::cache::{self, Source};
use crate::opened::OpenedDir;
// Re-exported for the workspace, which takes its call-making pieces from here.
pub(crate) use crate::token::owner_token;

/// The component built from `guest/` by this crate's build script.
pub const COMPONENT_WASM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/metis_memory.wasm"));

/// The SHA-256 of [`COMPONENT_WASM`], computed at build time: part of the cache key.
pub const COMPONENT_SHA256: &str = env!("METIS_COMPONENT_SHA256");

/// The guest path the workspace's `.metis/` is pre-opened at (see `wit/world.wit`).
const GUEST_METIS_DIR: &str = ".metis";
/// The guest path the user's own `.metis/` is pre-opened at, with global user memory on.
const GUEST_GLOBAL_METIS_DIR: &str = "global-metis";

/// What a workspace's instances are told besides a call's own token and directories
/// (the component's `store.settings`): the same for every instance of one workspace, and
/// part of what a kept instance is kept for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Settings {
    pub read_only: bool,
    /// Global user memory: `None` when off, else whether the agent's `USER.md` writes
    /// go to the user's own file.
    pub global_user: Option<bool>,
    pub prompt_budget: bool,
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
    limits: MemoryLimit,
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

/// Caps an instance's linear memory at `max` bytes, and remembers how far it grew: a
/// kept instance that grew past [`KEPT_MEMORY_BYTES`] is discarded.
struct MemoryLimit {
    max: usize,
    grown_to: usize,
}

impl ResourceLimiter for MemoryLimit {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.max {
            return Ok(false);
        }
        self.grown_to = self.grown_to.max(desired);
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        _desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(true)
    }
}

struct Runtime {
    engine: Engine,
    /// Kept to link it again with the fault hook.
    #[cfg(feature = "fault-injection")]
    component: Component,
    pre: MemoryPre<Ctx>,
    source: Source,
}

/// Where this process's compiled component came from (the cache, a compile that filled
/// it, or a compile in memory and why), loading it first if need be.
pub fn component_source() -> Result<Source, Error> {
    Ok(runtime()?.source.clone())
}

fn runtime() -> Result<&'static Runtime, Error> {
    static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| build_runtime().map_err(|e| format!("{e:?}")))
        .as_ref()
        .map_err(|message| Error::trap(format!("cannot load the memory component: {message}")))
}

fn build_runtime() -> wasmtime::Result<Runtime> {
    let mut config = Config::new();
    config.consume_fuel(true);
    // No map from machine code back to wasm offsets: the component is stripped, so a
    // trap's backtrace names nothing either way, and a warm process loads (and
    // authenticates) a compiled entry 9% smaller.
    config.generate_address_map(false);
    let link = |engine: &Engine, component: &Component| {
        let mut linker = Linker::<Ctx>::new(engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
        MemoryPre::new(linker.instantiate_pre(component)?)
    };
    let (engine, component, pre, source) =
        cache::load(config, COMPONENT_WASM, COMPONENT_SHA256, link)?;
    #[cfg(not(feature = "fault-injection"))]
    let _ = component;
    Ok(Runtime {
        engine,
        #[cfg(feature = "fault-injection")]
        component,
        pre,
        source,
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
        .map_err(|message| Error::trap(format!("cannot link the fault hook: {message}")))
}

/// How one call's instance is set up.
pub(crate) struct Call<'a> {
    /// The workspace's `.metis/`, pre-opened as `.metis`; `None` pre-opens nothing.
    pub metis_dir: Option<&'a OpenedDir>,
    /// The user's own `.metis/` (global user memory), pre-opened as `global-metis`.
    pub global_dir: Option<&'a OpenedDir>,
    pub settings: Settings,
    pub limits: Limits,
    /// This call's owner token: the guest names its lock and temporary file after it, so
    /// the host can remove them if the instance traps (`recover-after-trap`).
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
    f: impl FnOnce(&mut Store<Ctx>, &Instance) -> wasmtime::Result<R>,
) -> Result<R, Error> {
    #[cfg(feature = "fault-injection")]
    let pre = match call.fault_hook {
        Some(_) => faulty_pre()?,
        None => &runtime()?.pre,
    };
    #[cfg(not(feature = "fault-injection"))]
    let pre = &runtime()?.pre;
    let (mut store, instance) = instantiate(pre, &call)?;
    f(&mut store, &instance).map_err(trap)
}

/// A fresh instance set up as `call` says, kept by the caller across calls (a
/// [`WriteHold`](crate::WriteHold)); no fault hook.
pub(crate) fn owned_instance(call: Call<'_>) -> Result<(Store<Ctx>, Instance), Error> {
    instantiate(&runtime()?.pre, &call)
}

pub(crate) fn trap(e: wasmtime::Error) -> Error {
    Error::trap(format!("{e:#}"))
}

fn instantiate(pre: &MemoryPre<Ctx>, call: &Call<'_>) -> Result<(Store<Ctx>, Instance), Error> {
    let runtime = runtime()?;
    let mut wasi = WasiCtxBuilder::new();
    let settings = call.settings;
    // Filesystem calls run on this thread: the call blocks on them anyway, and handing
    // each to a worker thread cost more than the call itself (before the preopen, which
    // takes the setting with it).
    wasi.allow_blocking_current_thread(true);
    let perms = if settings.read_only {
        FsPerms::ReadOnly
    } else {
        FsPerms::ReadWrite
    };
    let preopens = [
        (call.metis_dir, GUEST_METIS_DIR),
        (call.global_dir, GUEST_GLOBAL_METIS_DIR),
    ];
    for (dir, guest) in preopens {
        if let Some(dir) = dir {
            wasi.preopened_dir(&dir.path, guest, perms).map_err(|e| {
                Error::Workspace(format!("cannot open {}: {e}", dir.path.display()))
            })?;
        }
    }
    let ctx = Ctx {
        wasi: wasi.build(),
        table: ResourceTable::new(),
        limits: MemoryLimit {
            max: call.limits.memory_bytes,
            grown_to: 0,
        },
        #[cfg(feature = "fault-injection")]
        faults: crate::faults::FaultState::new(call.fault_hook.clone()),
    };
    let mut store = Store::new(&runtime.engine, ctx);
    store.limiter(|ctx| &mut ctx.limits);
    store.set_fuel(call.limits.fuel).map_err(trap)?;
    let memory = pre.instantiate(&mut store).map_err(trap)?;
    #[cfg(feature = "fault-injection")]
    crate::faults::count_instance();
    let instance = Instance {
        memory,
        settings: store::Settings {
            // The component refuses every write itself, with `read-only`, as under every
            // host; the read-only pre-open above is the sandbox's own guarantee.
            read_only: settings.read_only,
            // wasmtime-wasi passes EROFS on as `io`: the component names the cause.
            read_only_mount: call.metis_dir.is_some_and(|dir| dir.read_only_fs),
            global_user: settings.global_user.map(|writes| match writes {
                true => store::GlobalUserMode::Write,
                false => store::GlobalUserMode::Read,
            }),
            prompt_budget: settings.prompt_budget,
            owner: Some(call.owner),
        },
        workspace: Cell::new(None),
    };
    Ok((store, instance))
}

/// An instance, and its `store.workspace` made from the call's settings on first use (a
/// plain read needs none).
pub(crate) struct Instance {
    memory: Memory,
    settings: store::Settings,
    workspace: Cell<Option<ResourceAny>>,
}

impl Instance {
    /// The instance's `workspace`, for the calls that take the settings.
    pub(crate) fn workspace(&self, store: &mut Store<Ctx>) -> wasmtime::Result<ResourceAny> {
        if let Some(workspace) = self.workspace.get() {
            return Ok(workspace);
        }
        let workspace = self
            .memory
            .metis_memory_store()
            .workspace()
            .call_constructor(store, self.settings)?;
        self.workspace.set(Some(workspace));
        Ok(workspace)
    }
}

impl Deref for Instance {
    type Target = Memory;

    fn deref(&self) -> &Memory {
        &self.memory
    }
}

/// A kept instance grown past this is discarded after its call, so one large call does
/// not keep its memory for the life of the process.
pub(crate) const KEPT_MEMORY_BYTES: usize = 8 << 20;

/// An instance kept between read calls of one workspace, as an agent host reads memory on
/// every model call: instantiating costs more than the read itself. Isolation is what a
/// fresh instance gives: `.metis/` pre-opened read-only, fuel set afresh for every call,
/// the instance discarded after any trap, when it grew past [`KEPT_MEMORY_BYTES`], or when
/// `.metis/` is no longer the directory it was opened on; the guest keeps nothing between
/// calls (every call reads the files from disk).
#[derive(Default)]
pub(crate) struct KeptInstance(Mutex<Option<Kept>>);

struct Kept {
    store: Store<Ctx>,
    memory: Instance,
    /// The directories it sees and how it was set up.
    made_for: KeptFor,
    limits: Limits,
}

/// What a kept instance was made for: the `.metis/` directories it sees (device and
/// inode, `None` for none) and the workspace's settings. It is used only while all of
/// them are still what they were.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KeptFor {
    pub metis: Option<(u64, u64)>,
    pub global: Option<(u64, u64)>,
    pub settings: Settings,
}

/// The directories an instance pre-opens: the workspace's `.metis/`, and the user's own
/// with global user memory on.
#[derive(Default)]
pub(crate) struct Preopens {
    pub metis: Option<OpenedDir>,
    pub global: Option<OpenedDir>,
}

impl std::fmt::Debug for KeptInstance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeptInstance")
    }
}

impl Kept {
    /// A read-only instance on `dirs` under `limits`.
    fn new(dirs: Preopens, settings: Settings, limits: Limits) -> Result<Kept, Error> {
        let call = Call {
            metis_dir: dirs.metis.as_ref(),
            global_dir: dirs.global.as_ref(),
            settings: Settings {
                read_only: true,
                ..settings
            },
            limits,
            owner: owner_token(),
            #[cfg(feature = "fault-injection")]
            fault_hook: None,
        };
        let (store, memory) = instantiate(&runtime()?.pre, &call)?;
        Ok(Kept {
            store,
            memory,
            made_for: KeptFor {
                metis: dirs.metis.map(|dir| dir.id),
                global: dirs.global.map(|dir| dir.id),
                settings,
            },
            limits,
        })
    }
}

impl KeptInstance {
    /// Runs the read `f` on the kept instance if it was made for what is there now
    /// (`made_for`) and for `limits`; otherwise on an instance made now on the
    /// directories `open` opens, kept for the next read unless another thread is using
    /// the kept one.
    pub(crate) fn with<R>(
        &self,
        made_for: KeptFor,
        open: impl FnOnce() -> Result<Preopens, Error>,
        limits: Limits,
        f: impl FnOnce(&mut Store<Ctx>, &Instance) -> wasmtime::Result<R>,
    ) -> Result<R, Error> {
        let mut slot = match self.0.try_lock() {
            Ok(slot) => slot,
            Err(TryLockError::Poisoned(poisoned)) => {
                self.0.clear_poison();
                let mut slot = poisoned.into_inner();
                *slot = None;
                slot
            }
            Err(TryLockError::WouldBlock) => {
                let mut busy = Kept::new(open()?, made_for.settings, limits)?;
                return f(&mut busy.store, &busy.memory).map_err(trap);
            }
        };
        if !slot
            .as_ref()
            .is_some_and(|k| k.made_for == made_for && k.limits == limits)
        {
            *slot = None;
            *slot = Some(Kept::new(open()?, made_for.settings, limits)?);
        }
        let kept = slot.as_mut().expect("an instance was just made");
        kept.store.set_fuel(limits.fuel).map_err(trap)?;
        let outcome = f(&mut kept.store, &kept.memory);
        if outcome.is_err() || kept.store.data().limits.grown_to > KEPT_MEMORY_BYTES {
            *slot = None;
        }
        outcome.map_err(trap)
    }
}
