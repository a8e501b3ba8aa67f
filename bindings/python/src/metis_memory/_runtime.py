"""The component, compiled once per process (or loaded from a compiled cache), one fresh,
limited instance per write, and for reads one kept between calls (`_kept.KeptInstance`)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from wasmtime import Config, Engine, Store, WasiConfig, WasmtimeError
from wasmtime.component import (
    Component,
    EnumType,
    ExportIndex,
    FlagsType,
    Func,
    FuncType,
    Instance,
    Linker,
    ListType,
    OptionType,
    RecordType,
    ResourceAny,
    ResultType,
    TupleType,
    VariantType,
)

from . import _cache, _wit
from ._cache import file_size_limited
from ._types import Limits
from .errors import ComponentTrap, MetisWorkspaceError

STORE = "metis:memory/store@0.4.0"
TOOLS = "metis:memory/tools@0.4.0"
GUEST_METIS_DIR = ".metis"
# The guest path the user's own `.metis/` is pre-opened at, with global user memory on.
GUEST_GLOBAL_METIS_DIR = "global-metis"
COMPONENT_FILE = "metis_memory.wasm"
# A kept instance may not grow past this (the Rust and Node hosts' bound), so that one
# large call does not hold its memory for the life of the store.
KEPT_MEMORY_BYTES = 8 << 20

T = TypeVar("T")


@dataclass(frozen=True)
class Settings:
    """What a store's instances are told besides a call's own token and directories (the
    Rust host's `runtime::Settings`), through the `store.settings` record their
    `workspace` is made with: the same for every instance of one store, and part of what
    a kept instance is kept for."""

    read_only: bool = False
    # Global user memory: `None` when off, else whether the agent's `USER.md` tool writes
    # go to the user's own file (`write`) or the workspace's (`read`).
    global_user: bool | None = None
    prompt_budget: bool = False


def component_bytes() -> bytes:
    return resources.files(__package__).joinpath(COMPONENT_FILE).read_bytes()


@dataclass
class Runtime:
    engine: Engine
    linker: Linker
    component: Component
    loaded_from: str  # "cache" or "compiled"
    exports: dict[tuple[str, str], ExportIndex]
    # Each export's type, read once (see `kept_type`); `None` where it could not be kept.
    func_types: dict[tuple[str, str], FuncType | None] = field(default_factory=dict)

    def func_type(self, interface: str, name: str, func: Func, store: Store) -> FuncType | None:
        """The type of the export `interface#name` (`func`, in `store`), read once for every
        instance of the component: the same export has the same type in each."""
        key = (interface, name)
        if key not in self.func_types:
            self.func_types[key] = kept_type(func.type(store))
        return self.func_types[key]

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


# The types whose parts wasmtime-py reads afresh, through the C API, each time they are
# asked for: a record's fields, a variant's cases, a list's element... Calling a function
# asks for its type and every part of it again, while turning each argument and the result
# to and from wasmtime's values: hundreds of C calls for one call of the component, each
# dropping and taking the GIL back, a third of a read's time. `kept_type` reads them once.
_PARTS: dict[type, tuple[str, ...]] = {
    FuncType: ("params", "result"),
    RecordType: ("fields",),
    ListType: ("element",),
    TupleType: ("elements",),
    VariantType: ("cases",),
    EnumType: ("names",),
    OptionType: ("payload",),
    ResultType: ("ok", "err"),
    FlagsType: ("names",),
}
_kept_classes: dict[type, type] = {}


def kept_type(func_type: FuncType) -> FuncType | None:
    """`func_type` with every part of it read once and kept (`None` if that fails, so
    that the export is called as wasmtime-py calls it). Each type object becomes an
    instance of a subclass of its own class in which its parts are plain attributes: the
    same values the properties return, read once."""
    try:
        kept: FuncType = _kept(func_type)
        return kept
    except Exception:
        return None


def _kept(value: Any) -> Any:
    if isinstance(value, list):
        return [_kept(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_kept(v) for v in value)
    parts = _PARTS.get(type(value))
    if parts is None:
        return value
    read = {part: _kept(getattr(value, part)) for part in parts}
    cls = _kept_classes.get(type(value))
    if cls is None:
        # A class attribute that is not a descriptor yields to the instance's own value.
        cls = type(f"Kept{type(value).__name__}", (type(value),), dict.fromkeys(parts))
        _kept_classes[type(value)] = cls
    value.__class__ = cls
    vars(value).update(read)
    if hasattr(value, "_tagged"):
        # A variant, option or result asks whether its cases need tagging (each case's
        # Python classes, its payloads' too) on every value it converts: asked once.
        tagged = value._tagged()
        vars(value)["_tagged"] = lambda: tagged
    return value


class Exports:
    """The exports of one instance: `exports(interface, name, *args)` calls one, and
    `exports.method(name, *args)` a method of the instance's `store.workspace`."""

    def __init__(
        self, runtime: Runtime, store: Store, instance: Instance, settings: Any
    ) -> None:
        self._runtime, self._store, self._instance = runtime, store, instance
        # A Func names an export of this instance in this store, so it stays valid as
        # long as they do; a kept instance looks each one up once.
        self._funcs: dict[tuple[str, str], Func] = {}
        # The `store.settings` record the workspace is made with, and the workspace, made
        # on first use and kept as long as the instance (as the Rust host's `Instance`).
        self._settings = settings
        self._workspace: ResourceAny | None = None

    def __call__(self, interface: str, name: str, *args: Any) -> Any:
        func = self._funcs.get((interface, name))
        if func is None:
            func = self._instance.get_func(self._store, self._runtime.export(interface, name))
            if func is None:
                raise LookupError(f"the component does not export {interface}#{name}")
            func_type = self._runtime.func_type(interface, name, func, self._store)
            if func_type is not None:
                # Func.__call__ asks `self.type(store)` for the type it converts by.
                setattr(func, "type", lambda store: func_type)
            self._funcs[(interface, name)] = func
        try:
            return func(self._store, *args)
        except WasmtimeError as e:
            raise ComponentTrap(f"the memory component trapped: {e}") from e

    def workspace(self) -> ResourceAny:
        """The instance's `store.workspace`, made with its settings on first use."""
        if self._workspace is None:
            self._workspace = self(STORE, "[constructor]workspace", self._settings)
        return self._workspace

    def method(self, name: str, *args: Any) -> Any:
        """Calls the method `name` of the instance's `store.workspace`."""
        return self(STORE, f"[method]workspace.{name}", self.workspace(), *args)

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
    owner: int | None,
    read_only_fs: bool = False,
    global_dir: str | None = None,
    global_user: bool | None = None,
    prompt_budget: bool = False,
) -> Exports:
    """A fresh instance that sees `metis_dir` (when given) at guest path `.metis`,
    `global_dir` (when given) at `global-metis`, and nothing else, with `limits.fuel` and
    memories of at most `memory_bytes`, whose `workspace` is made with `owner` (`None`:
    random) and the settings (`global_user`: see `Settings`). The guest is given no
    environment: what it is told is that `store.settings` record."""
    rt = runtime()
    # A WasiConfig is consumed by the store it is given to, so each instance needs its own
    # (the Linker, which holds no state of a call, is the runtime's).
    wasi = WasiConfig()
    # The component refuses every write of a read-only workspace itself (`read-only` in
    # the settings), as under every host; the read-only pre-open is the sandbox's own
    # guarantee.
    settings = _wit.settings(
        read_only=read_only,
        read_only_mount=read_only_fs,
        global_user=global_user,
        prompt_budget=prompt_budget,
        owner=owner,
    )
    for directory, guest in ((metis_dir, GUEST_METIS_DIR), (global_dir, GUEST_GLOBAL_METIS_DIR)):
        if directory is not None:
            try:
                wasi.preopen_dir(directory, guest, not read_only)
            except WasmtimeError as e:
                raise MetisWorkspaceError(f"cannot open {directory}: {e}") from e
    store = Store(rt.engine)
    store.set_wasi(wasi)
    store.set_limits(memory_size=memory_bytes)
    try:
        store.set_fuel(limits.fuel)
        instance = rt.linker.instantiate(store, rt.component)
    except WasmtimeError as e:
        raise ComponentTrap(f"the memory component trapped: {e}") from e
    return Exports(rt, store, instance, settings)


def with_instance(
    op: Callable[[Exports], T],
    *,
    metis_dir: Path | str | None,
    read_only: bool,
    limits: Limits,
    owner: int | None,
    read_only_fs: bool = False,
    global_dir: Path | str | None = None,
    global_user: bool | None = None,
    prompt_budget: bool = False,
) -> T:
    """Runs `op` against a fresh instance that sees `metis_dir` (when given) at guest path
    `.metis`, `global_dir` (when given) at `global-metis`, and nothing else, under
    `limits`, its `workspace` made with `owner` and the settings."""
    exports = instantiate(
        metis_dir=None if metis_dir is None else str(metis_dir),
        read_only=read_only,
        limits=limits,
        memory_bytes=limits.memory_bytes,
        owner=owner,
        read_only_fs=read_only_fs,
        global_dir=None if global_dir is None else str(global_dir),
        global_user=global_user,
        prompt_budget=prompt_budget,
    )
    return op(exports)


def recover_after_trap(
    metis: Path | str | None,
    owner: int,
    *,
    global_dir: Path | str | None = None,
) -> bool | None:
    """The component's `recover-after-trap(owner)`, on a fresh instance that sees the
    directories the trapped call saw (`.metis/`, and the user's own with global user
    memory on): it removes what the write whose settings had `owner` left in them (its
    lock, moved aside and inspected first and put back if it is another writer's; its
    pending lock; its temporary file) and nothing else. The host's own clean-up, so it
    runs under the default limits, not the caller's, which may be what the trapped call
    ran out of. Returns whether the trapped write landed (`None`: it left no trace to
    tell by)."""
    found = with_instance(
        lambda exports: exports(STORE, "recover-after-trap", owner),
        metis_dir=metis,
        read_only=False,
        limits=Limits(),
        owner=None,
        global_dir=global_dir,
    )
    landing = str(found)
    return None if landing == "untraced" else landing == "written"
