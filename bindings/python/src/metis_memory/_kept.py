"""The instance a store keeps for its reads (see `KeptInstance`)."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from ._preopen import DirId, OpenedDir
from . import _runtime
from ._runtime import KEPT_MEMORY_BYTES, Exports
from ._types import Limits
from .errors import ComponentTrap, MemoryStoreError

T = TypeVar("T")

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
            # Through the module, so a test counting instances sees every one made.
            exports = _runtime.instantiate(
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
