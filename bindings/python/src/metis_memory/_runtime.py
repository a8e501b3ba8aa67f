"""The component, compiled once per process (or loaded from a compiled cache), and one
fresh, limited instance per call."""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata, resources
from pathlib import Path
from typing import Any, TypeVar

from wasmtime import Config, Engine, Store, WasiConfig, WasmtimeError
from wasmtime.component import Component, ExportIndex, Instance, Linker

from ._types import Limits
from .errors import ComponentTrap, MetisWorkspaceError

STORE = "metis:memory/store@0.2.0"
TOOLS = "metis:memory/tools@0.2.0"
GUEST_METIS_DIR = ".metis"
OWNER_ENV = "METIS_MEMORY_OWNER"
CACHE_ENV = "METIS_MEMORY_CACHE_DIR"
COMPONENT_FILE = "metis_memory.wasm"
# Engine settings the compiled code depends on: part of the cache key.
ENGINE_TAG = "fuel"
MAGIC = b"metis-memory compiled component\n"
MAX_CACHE_BYTES = 256 << 20

T = TypeVar("T")


def component_bytes() -> bytes:
    return resources.files(__package__).joinpath(COMPONENT_FILE).read_bytes()


def cache_dir() -> Path | None:
    """Where compiled components are kept: `$METIS_MEMORY_CACHE_DIR` (`off` disables it),
    else `$XDG_CACHE_HOME/metis-memory`, else `~/.cache/metis-memory`. `None` when it is
    off, cannot be created, or is not a directory only this user can write.

    A relative path is never used: it would resolve inside whatever directory the process
    runs in, perhaps a cloned repository whose committed files would then be loaded as
    compiled code. A relative `$METIS_MEMORY_CACHE_DIR` turns the cache off; a relative
    `$XDG_CACHE_HOME` is ignored, as the XDG base directory specification says."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit == "off":
        return None
    if explicit:
        path = Path(explicit)
        if not path.is_absolute():
            return None
    else:
        xdg = Path(os.environ.get("XDG_CACHE_HOME") or ".")
        home = Path(os.environ.get("HOME") or ".")
        if xdg.is_absolute():
            base = xdg
        elif home.is_absolute():
            base = home / ".cache"
        else:
            return None
        path = base / "metis-memory"
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(path)
    except OSError:
        return None
    private = stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()
    return path if private and not info.st_mode & 0o022 else None


def cache_path(directory: Path, wasm: bytes) -> Path:
    version = metadata.version("wasmtime")
    digest = hashlib.sha256(wasm).hexdigest()
    return directory / f"component-wasmtime{version}-{ENGINE_TAG}-{digest}.cwasm"


def load_cached(engine: Engine, path: Path) -> Component | None:
    """The compiled component at `path`, if it is a regular file of this user's, not
    writable by others, whose checksum matches; `None` otherwise (then it is recompiled)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_uid != os.getuid()
            or info.st_mode & 0o022
            or info.st_size > MAX_CACHE_BYTES
        ):
            return None
        data = f.read(MAX_CACHE_BYTES + 1)
    header = len(MAGIC) + 65
    if not data.startswith(MAGIC) or len(data) < header:
        return None
    checksum, payload = data[len(MAGIC) : header - 1], data[header:]
    if hashlib.sha256(payload).hexdigest().encode() != checksum:
        return None
    try:
        return Component.deserialize(engine, payload)
    except WasmtimeError:
        return None


def store_cached(path: Path, component: Component) -> None:
    """Writes the compiled component atomically (a private temporary file, synced, renamed
    into place); a failure only means the next process compiles again."""
    payload = bytes(component.serialize())
    data = MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".cwasm")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


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
    engine = Engine(config)
    try:
        wasm = component_bytes()
    except OSError as e:
        raise ComponentTrap(f"cannot load the memory component: {e}") from e
    directory = cache_dir()
    path = cache_path(directory, wasm) if directory else None
    component = load_cached(engine, path) if path else None
    loaded_from = "cache"
    if component is None:
        loaded_from = "compiled"
        try:
            component = Component(engine, wasm)
        except WasmtimeError as e:
            raise ComponentTrap(f"cannot load the memory component: {e}") from e
        if path:
            store_cached(path, component)
    linker = Linker(engine)
    linker.add_wasip2()
    return Runtime(engine, linker, component, loaded_from, {})


class Exports:
    """The exports of one fresh instance: `exports(interface, name, *args)` calls one."""

    def __init__(self, runtime: Runtime, store: Store, instance: Instance) -> None:
        self._runtime, self._store, self._instance = runtime, store, instance

    def __call__(self, interface: str, name: str, *args: Any) -> Any:
        func = self._instance.get_func(self._store, self._runtime.export(interface, name))
        if func is None:
            raise LookupError(f"the component does not export {interface}#{name}")
        try:
            return func(self._store, *args)
        except WasmtimeError as e:
            raise ComponentTrap(f"the memory component trapped: {e}") from e


def with_instance(
    op: Callable[[Exports], T],
    *,
    metis_dir: Path | None,
    read_only: bool,
    limits: Limits,
    owner: int,
) -> T:
    """Runs `op` against a fresh instance that sees `metis_dir` (when given) at guest path
    `.metis` and nothing else, under `limits`, with `owner` in its environment."""
    rt = runtime()
    wasi = WasiConfig()
    wasi.env = [(OWNER_ENV, f"{owner:016x}")]
    if metis_dir is not None:
        try:
            wasi.preopen_dir(str(metis_dir), GUEST_METIS_DIR, not read_only)
        except WasmtimeError as e:
            raise MetisWorkspaceError(f"cannot open {metis_dir}: {e}") from e
    store = Store(rt.engine)
    store.set_wasi(wasi)
    store.set_limits(memory_size=limits.memory_bytes)
    try:
        store.set_fuel(limits.fuel)
        instance = rt.linker.instantiate(store, rt.component)
    except WasmtimeError as e:
        raise ComponentTrap(f"the memory component trapped: {e}") from e
    return op(Exports(rt, store, instance))


OWNER_TEXT_BYTES = 17
MEMORY_FILE_NAMES = ("MEMORY.md", "USER.md")


def lock_owner(path: Path) -> int | None:
    """The owner token in the lock file at `path`: only a regular file (never followed if
    it is a link, never blocking on a FIFO), and never more than a token's length read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        content = os.read(fd, OWNER_TEXT_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    hex_digits = content[:-1]
    if not content.endswith(b"\n") or len(hex_digits) != 16:
        return None
    if not all(c in b"0123456789abcdefABCDEF" for c in hex_digits):
        return None
    return int(hex_digits, 16)


def clean_up_after_trap(metis: Path, owner: int) -> None:
    """Removes what a trapped instance holding `owner` left: its lock (moved aside to this
    call's own name first, so what is removed is what was inspected; another writer's is
    put back), a lock it had itself moved aside when it trapped, its pending lock and its
    temporary file. Only regular files are touched: anything else at those names (a
    directory, a link, a FIFO) is left where it is."""
    token = f"{owner:016x}"
    for name in MEMORY_FILE_NAMES:
        lock = metis / f".{name}.lock"
        aside = metis / f".{name}.lock.{token}.aside"
        # The instance trapped while releasing or breaking a lock, which it moves aside first.
        if _is_regular(aside):
            _settle(aside, lock, owner)
        if _is_regular(lock):
            try:
                os.rename(lock, aside)
            except OSError:
                pass
            else:
                _settle(aside, lock, owner)
        _unlink(metis / f".{name}.lock.{token}")
        _unlink(metis / f".{name}.{token}.tmp")


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _settle(aside: Path, lock: Path, owner: int) -> None:
    """Removes the lock moved to `aside`; another writer's is put back first, unless a new
    lock was taken meanwhile."""
    if lock_owner(aside) != owner:
        try:
            os.link(aside, lock)
        except OSError:
            pass
    _unlink(aside)


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
