"""The component, compiled once per process (or loaded from a compiled cache), one fresh,
limited instance per write, and for reads one kept between calls (see `KeptInstance`)."""

from __future__ import annotations

import functools
import os
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from wasmtime import Config, Engine, Store, WasiConfig, WasmtimeError
from wasmtime.component import Component, ExportIndex, Func, Instance, Linker

from . import _cache
from ._cache import file_size_limited
from ._types import Limits
from .errors import ComponentTrap, MemoryStoreError, MetisWorkspaceError

STORE = "metis:memory/store@0.3.0"
TOOLS = "metis:memory/tools@0.3.0"
GUEST_METIS_DIR = ".metis"
OWNER_ENV = "METIS_MEMORY_OWNER"
READ_ONLY_ENV = "METIS_MEMORY_READ_ONLY"
# Set when `.metis/` is on a read-only mount: wasmtime passes EROFS to the guest as `io`,
# and the component names the cause with this (`wit/types.wit`, `read-only`).
READ_ONLY_FS_ENV = "METIS_MEMORY_READ_ONLY_FS"
COMPONENT_FILE = "metis_memory.wasm"
# A kept instance may not grow past this (the Rust and Node hosts' bound), so that one
# large call does not hold its memory for the life of the store.
KEPT_MEMORY_BYTES = 8 << 20

T = TypeVar("T")


def component_bytes() -> bytes:
    return resources.files(__package__).joinpath(COMPONENT_FILE).read_bytes()


@dataclass
class Runtime:
    engine: Engine
    linker: Linker
    component: Component
    loaded_from: str  # "cache" or "compiled"
    exports: dict[tuple[str, str], ExportIndex]

    def export(self, interface: str, name: str) -> ExportIndex:
        key = (interface, name)
        if key not in self.exports:
            parent = self.component.get_export_index(interface)
            index = self.component.get_export_index(name, parent)
            if index is None:
                raise LookupError(f"the component does not export {interface}#{name}")
            self.exports[key] = index
        return self.exports[key]


_lock = threading.Lock()
_runtime: Runtime | None = None


def runtime() -> Runtime:
    """The process's runtime, built on first use."""
    global _runtime
    with _lock:
        if _runtime is None:
            _runtime = build_runtime()
        return _runtime


def build_runtime() -> Runtime:
    config = Config()
    config.consume_fuel = True
    # wasmtime writes the component's initial memory into a memfd on first use, which a
    # file-size limit (`ulimit -f`) turns into a failure of every call: under a limit it
    # is copied into each instance instead (which costs the call some fuel).
    config.memory_init_cow = not file_size_limited()
    engine = Engine(config)
    try:
        wasm = component_bytes()
    except OSError as e:
        raise ComponentTrap(f"cannot load the memory component: {e}") from e
    # The compiled-component cache (`_cache`): used only with this user's key, which
    # authenticates every entry, so that a planted file is never run.
    directory = _cache.cache_dir()
    key = _cache.user_key() if directory else None
    path = _cache.cache_path(directory, wasm) if directory and key else None
    component = _cache.load_cached(engine, path, key) if path and key else None
    loaded_from = "cache"
    if component is None:
        loaded_from = "compiled"
        try:
            component = Component(engine, wasm)
        except WasmtimeError as e:
            raise ComponentTrap(f"cannot load the memory component: {e}") from e
        if path and key:
            _cache.store_cached(path, component, key)
    linker = Linker(engine)
    linker.add_wasip2()
    return Runtime(engine, linker, component, loaded_from, {})


class Exports:
    """The exports of one instance: `exports(interface, name, *args)` calls one."""

    def __init__(self, runtime: Runtime, store: Store, instance: Instance) -> None:
        self._runtime, self._store, self._instance = runtime, store, instance
        # A Func names an export of this instance in this store, so it stays valid as
        # long as they do; a kept instance looks each one up once.
        self._funcs: dict[tuple[str, str], Func] = {}

    def __call__(self, interface: str, name: str, *args: Any) -> Any:
        func = self._funcs.get((interface, name))
        if func is None:
            func = self._instance.get_func(self._store, self._runtime.export(interface, name))
            if func is None:
                raise LookupError(f"the component does not export {interface}#{name}")
            self._funcs[(interface, name)] = func
        try:
            return func(self._store, *args)
        except WasmtimeError as e:
            raise ComponentTrap(f"the memory component trapped: {e}") from e

    def set_fuel(self, fuel: int) -> None:
        try:
            self._store.set_fuel(fuel)
        except WasmtimeError as e:
            raise ComponentTrap(f"the memory component trapped: {e}") from e

    def out_of_fuel(self) -> bool:
        try:
            return self._store.get_fuel() == 0
        except WasmtimeError:
            return False


def instantiate(
    *,
    metis_dir: str | None,
    read_only: bool,
    limits: Limits,
    memory_bytes: int,
    owner: int,
    read_only_fs: bool = False,
) -> Exports:
    """A fresh instance that sees `metis_dir` (when given) at guest path `.metis` and
    nothing else, with `limits.fuel`, memories of at most `memory_bytes`, and `owner` in
    its environment."""
    rt = runtime()
    # A WasiConfig is consumed by the store it is given to, so each instance needs its own
    # (the Linker, which holds no state of a call, is the runtime's).
    wasi = WasiConfig()
    # The component refuses every write of a read-only workspace itself, with
    # `read-only`, as under every host; the read-only pre-open is the sandbox's own guarantee.
    wasi.env = (
        [(OWNER_ENV, f"{owner:016x}")]
        + ([(READ_ONLY_ENV, "1")] if read_only else [])
        + ([(READ_ONLY_FS_ENV, "1")] if read_only_fs else [])
    )
    if metis_dir is not None:
        try:
            wasi.preopen_dir(metis_dir, GUEST_METIS_DIR, not read_only)
        except WasmtimeError as e:
            raise MetisWorkspaceError(f"cannot open {metis_dir}: {e}") from e
    store = Store(rt.engine)
    store.set_wasi(wasi)
    store.set_limits(memory_size=memory_bytes)
    try:
        store.set_fuel(limits.fuel)
        instance = rt.linker.instantiate(store, rt.component)
    except WasmtimeError as e:
        raise ComponentTrap(f"the memory component trapped: {e}") from e
    return Exports(rt, store, instance)


def with_instance(
    op: Callable[[Exports], T],
    *,
    metis_dir: Path | str | None,
    read_only: bool,
    limits: Limits,
    owner: int,
    read_only_fs: bool = False,
) -> T:
    """Runs `op` against a fresh instance that sees `metis_dir` (when given) at guest path
    `.metis` and nothing else, under `limits`, with `owner` in its environment."""
    exports = instantiate(
        metis_dir=None if metis_dir is None else str(metis_dir),
        read_only=read_only,
        limits=limits,
        memory_bytes=limits.memory_bytes,
        owner=owner,
        read_only_fs=read_only_fs,
    )
    return op(exports)


DirId = tuple[int, int]


@dataclass
class OpenedDir:
    """`.metis/` as the host opened it (`fd`, never through a link unless the store follows
    one), for pre-opening: `path` reaches exactly that directory (see `descriptor_path`),
    `id` is its device and inode."""

    fd: int
    path: str
    id: DirId
    # Whether `path` reaches the opened directory itself (`/proc/.../fd/N`), not its name,
    # which a link swapped in before the pre-open would redirect.
    exact: bool
    # Whether its filesystem is mounted read-only (see `READ_ONLY_FS_ENV`).
    read_only_fs: bool = False

    def close(self) -> None:
        os.close(self.fd)


@functools.cache
def _proc_fd() -> str | None:
    return next((d for d in ("/proc/thread-self/fd", "/proc/self/fd") if os.path.isdir(d)), None)


def on_read_only_mount(fd: int) -> bool:
    """Whether the filesystem `fd` is on is mounted read-only."""
    try:
        return bool(os.fstatvfs(fd).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def descriptor_path(fd: int) -> str | None:
    """A path that opens exactly what `fd` is, if the system has one: wasmtime pre-opens
    a directory by path, and a path can be swapped for another directory or a link
    between the moment it is checked and the moment it is opened; `/proc/thread-self/fd/N`
    cannot (`thread-self` is this thread's descriptor table, the one wasmtime opens the
    name from: `preopen_dir` opens it at once, on the calling thread)."""
    directory = _proc_fd()
    return None if directory is None else f"{directory}/{fd}"


@dataclass
class _Kept:
    exports: Exports
    # The `.metis/` directory it sees (device and inode), `None` for none.
    metis: DirId | None
    # False where `.metis/` was pre-opened by name (no `/proc`): a link swapped in for that
    # moment would be what it sees, under the checked directory's identity, for every
    # later read; such an instance serves one read only.
    keepable: bool = True


class KeptInstance:
    """An instance kept between the reads of one store, as an agent host reads memory on
    every model call and making and dropping an instance costs a good part of a read.
    Isolation is what a fresh instance gives: `.metis/` pre-opened read-only, fuel set
    afresh for every call, the instance dropped after any failure but a store refusal (a
    trapped instance is never entered again), its memory never grown past
    `KEPT_MEMORY_BYTES`, and used only while `.metis/` is the directory it opened; the
    guest keeps nothing between calls, so every call reads the files from disk. Only
    reads run on it: a write's instance carries its own owner token, by which the lock and
    temporary file of a write that trapped are found (`recover_after_trap`)."""

    def __init__(self) -> None:
        # Reentrant: a signal handler or finaliser reading memory on the thread that holds
        # it must not deadlock.
        self._lock = threading.RLock()
        self._kept: _Kept | None = None

    def run(
        self,
        metis: DirId | None,
        open_metis: Callable[[], OpenedDir | None],
        limits: Limits,
        op: Callable[[Exports], T],
    ) -> T:
        """Runs the read `op` on the kept instance if it was made for the `.metis/` that is
        there now (`metis`: its identity, `None` for none), else on one made now with
        `open_metis`; it is kept for the next read unless the call failed other than by a
        store refusal. A read that traps for want of memory on it runs again on a fresh
        instance."""
        # Taken out while in use: a read on another thread meanwhile makes its own.
        with self._lock:
            kept, self._kept = self._kept, None
        if kept is None or kept.metis != metis:
            kept = None  # the old one is dropped before its successor is made
            kept = self._make(open_metis, limits, min(limits.memory_bytes, KEPT_MEMORY_BYTES))
        try:
            kept.exports.set_fuel(limits.fuel)
            value = op(kept.exports)
        except MemoryStoreError:
            self._put_back(kept)
            raise
        except ComponentTrap:
            # wasmtime-py cannot tell how large an instance's memory grew, so a kept one
            # is limited to KEPT_MEMORY_BYTES instead, and a read that needed more (it
            # trapped with fuel left) runs again on a fresh instance with the whole limit,
            # not kept. A read changes nothing, so running it again is safe.
            if limits.memory_bytes <= KEPT_MEMORY_BYTES or kept.exports.out_of_fuel():
                raise
        else:
            self._put_back(kept)
            return value
        del kept  # the trapped instance, dropped before its successor is made
        fresh = self._make(open_metis, limits, limits.memory_bytes).exports
        fresh.set_fuel(limits.fuel)
        return op(fresh)

    @staticmethod
    def _make(
        open_metis: Callable[[], OpenedDir | None], limits: Limits, memory_bytes: int
    ) -> _Kept:
        """A read-only instance on the `.metis/` that `open_metis` opens (none if it
        returns `None`), its memory limited to `memory_bytes`."""
        opened = open_metis()
        try:
            exports = instantiate(
                metis_dir=None if opened is None else opened.path,
                read_only=True,
                limits=limits,
                memory_bytes=memory_bytes,
                owner=secrets.randbits(64),
            )
        finally:
            if opened is not None:
                opened.close()
        if opened is None:
            return _Kept(exports, None)
        return _Kept(exports, opened.id, keepable=opened.exact)

    def _put_back(self, kept: _Kept) -> None:
        with self._lock:
            if self._kept is None and kept.keepable:
                self._kept = kept


def recover_after_trap(metis: Path | str, owner: int) -> bool | None:
    """The component's `recover-after-trap`, on a fresh instance given the trapped call's
    `owner` token: it removes what that call left in `.metis/` (its lock, moved aside and
    inspected first and put back if it is another writer's; its pending lock; its temporary
    file) and nothing else. The host's own clean-up, so it runs under the default limits,
    not the caller's, which may be what the trapped call ran out of. Returns whether the
    trapped write landed (`None`: it left no trace to tell by)."""
    found = with_instance(
        lambda exports: exports(STORE, "recover-after-trap"),
        metis_dir=metis,
        read_only=False,
        limits=Limits(),
        owner=owner,
    )
    landing = str(found)
    return None if landing == "untraced" else landing == "written"
