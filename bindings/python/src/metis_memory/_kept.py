"""The instance a store keeps for its reads (see `KeptInstance`)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from ._preopen import DirId, Preopens
from . import _runtime
from ._runtime import KEPT_MEMORY_BYTES, Exports, Settings
from ._types import Limits
from .errors import ComponentTrap, MemoryStoreError

T = TypeVar("T")


@dataclass(frozen=True)
class KeptFor:
    """What a kept instance was made for (the Rust host's `KeptFor`): the directories it
    sees (device and inode, `None` for none), the workspace's `.metis/` and, with global
    user memory on, the user's own, and the store's settings. It is used only while all
    of them are still what they were."""

    metis: DirId | None
    global_dir: DirId | None
    settings: Settings


@dataclass
class _Kept:
    exports: Exports
    made_for: KeptFor
    # False where a directory was pre-opened by name (no `/proc`): a link swapped in for
    # that moment would be what it sees, under the checked directory's identity, for every
    # later read; such an instance serves one read only.
    keepable: bool = True


class KeptInstance:
    """An instance kept between the reads of one store, as an agent host reads memory on
    every model call and making and dropping an instance costs a good part of a read.
    Isolation is what a fresh instance gives: `.metis/` pre-opened read-only, fuel set
    afresh for every call, the instance dropped after any failure but a store refusal (a
    trapped instance is never entered again), its memory never grown past
    `KEPT_MEMORY_BYTES`, and used only while `.metis/` (and the user's own, with global
    user memory on) is the directory it opened; the guest keeps nothing between calls, so
    every call reads the files from disk. Only reads run on it, through its `workspace`
    (made once, read-only, with the store's settings) where a call takes the settings: a
    write's instance carries its own owner token in its settings, by which the lock and
    temporary file of a write that trapped are found (`recover_after_trap`)."""

    def __init__(self) -> None:
        # Reentrant: a signal handler or finaliser reading memory on the thread that holds
        # it must not deadlock.
        self._lock = threading.RLock()
        self._kept: _Kept | None = None

    def run(
        self,
        made_for: KeptFor,
        open_dirs: Callable[[], Preopens],
        limits: Limits,
        op: Callable[[Exports], T],
    ) -> T:
        """Runs the read `op` on the kept instance if it was made for what is there now
        (`made_for`: the directories' identities, `None` for none, and the settings), else
        on one made now on the directories `open_dirs` opens; it is kept for the next read
        unless the call failed other than by a store refusal. A read that traps for want
        of memory on it runs again on a fresh instance."""
        # Taken out while in use: a read on another thread meanwhile makes its own.
        with self._lock:
            kept, self._kept = self._kept, None
        settings = made_for.settings
        if kept is None or kept.made_for != made_for:
            kept = None  # the old one is dropped before its successor is made
            kept = self._make(
                open_dirs, settings, limits, min(limits.memory_bytes, KEPT_MEMORY_BYTES)
            )
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
        fresh = self._make(open_dirs, settings, limits, limits.memory_bytes).exports
        fresh.set_fuel(limits.fuel)
        return op(fresh)

    @staticmethod
    def _make(
        open_dirs: Callable[[], Preopens], settings: Settings, limits: Limits, memory_bytes: int
    ) -> _Kept:
        """A read-only instance on the directories `open_dirs` opens (none for one it
        leaves `None`), told `settings`, its memory limited to `memory_bytes`."""
        dirs = open_dirs()
        metis, global_dir = dirs.metis, dirs.global_dir
        try:
            # Through the module, so a test counting instances sees every one made.
            exports = _runtime.instantiate(
                metis_dir=None if metis is None else metis.path,
                read_only=True,
                limits=limits,
                memory_bytes=memory_bytes,
                owner=None,  # reads only: no write to recover
                global_dir=None if global_dir is None else global_dir.path,
                global_user=settings.global_user,
                prompt_budget=settings.prompt_budget,
            )
        finally:
            dirs.close()
        made_for = KeptFor(
            metis=None if metis is None else metis.id,
            global_dir=None if global_dir is None else global_dir.id,
            settings=settings,
        )
        keepable = all(opened.exact for opened in (metis, global_dir) if opened is not None)
        return _Kept(exports, made_for, keepable=keepable)

    def _put_back(self, kept: _Kept) -> None:
        with self._lock:
            if self._kept is None and kept.keepable:
                self._kept = kept
