"""Which instance a call runs on. Reads share one the store keeps (`_kept.KeptInstance`,
as the Rust host's); these show it isolates as a fresh instance would: every read sees the
disk as it is now, fuel is whole for every call, a trap or a read that needs more than
8 MiB leaves it behind, `.metis` is checked before every read and only read through an
instance made for the directory there now, and no two threads use it at once. Writes get
a fresh instance each."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from metis_memory import (
    ComponentTrap,
    InvalidUtf8,
    Limits,
    MemoryStore,
    MetisWorkspaceError,
    _kept,
    _preopen,
    _runtime,
)

M = "MEMORY.md"


class Workspace:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.metis = root / ".metis"

    def put(self, content: str | bytes, file: str = M) -> None:
        self.metis.mkdir(exist_ok=True)
        data = content.encode() if isinstance(content, str) else content
        (self.metis / file).write_bytes(data)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    return Workspace(root)


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[_runtime.Exports]]:
    """Every instance made while the test runs, in order."""
    instances: list[_runtime.Exports] = []
    instantiate = _runtime.instantiate

    def counted(**kwargs: Any) -> _runtime.Exports:
        exports = instantiate(**kwargs)
        instances.append(exports)
        return exports

    monkeypatch.setattr(_runtime, "instantiate", counted)
    yield instances


def test_reads_share_one_instance_and_every_write_gets_a_fresh_one(
    ws: Workspace, made: list[_runtime.Exports]
) -> None:
    ws.put("- one\n")
    store = MemoryStore(ws.root)
    store.read(M)
    assert len(made) == 1
    for _ in range(5):
        assert store.read(M) == "- one\n"
    assert store.exists(M) and store.size_bytes(M) == 6
    assert store.assemble_system_prompt("base").endswith("- one")
    assert "- one" in store.compose_system_prompt("base").text
    assert store.audit(M) == ()
    assert len(store.tool_definitions()) == 3
    assert len(made) == 1, "every read ran on the kept instance"
    for i in range(3):
        store.add_entry(M, f"- w{i}")
    store.call_tool("memory_add", {"file": M, "entry": "- by a tool"})
    assert len(made) == 5, "each write and tool call had an instance of its own"
    assert store.read(M) == "- one\n- w0\n- w1\n- w2\n- by a tool\n"
    assert len(made) == 5, "writes leave the kept instance to the reads"


def test_every_read_on_the_kept_instance_sees_the_disk_as_it_is_now(
    ws: Workspace, made: list[_runtime.Exports]
) -> None:
    ws.put("- one\n")
    store = MemoryStore(ws.root)
    assert store.read(M) == "- one\n"
    ws.put("- two\n")  # the same size: only the bytes tell
    assert store.read(M) == "- two\n"
    ws.put("- three, longer\n")
    assert store.size_bytes(M) == 16
    assert store.assemble_system_prompt("").endswith("- three, longer")
    ws.put("- prefers tea\n", "USER.md")
    assert "- prefers tea" in store.compose_system_prompt("").text
    (ws.metis / M).unlink()
    assert not store.exists(M)
    assert store.read(M) == ""
    assert len(made) == 1, "these reads ran on the kept instance"


def least_fuel_to_read(root: Path) -> int:
    """The least fuel a read of MEMORY.md needs, by bisection, each probe on a store (and
    so an instance) of its own."""
    low, high = 0, 100_000_000
    while high - low > 100:
        middle = (low + high) // 2
        try:
            MemoryStore(root, limits=Limits(fuel=middle)).read(M)
        except ComponentTrap:
            low = middle
        else:
            high = middle
    return high


def test_fuel_is_whole_for_every_read_and_running_out_drops_the_instance(
    ws: Workspace, made: list[_runtime.Exports]
) -> None:
    ws.put("- small\n")
    needed = least_fuel_to_read(ws.root)
    store = MemoryStore(ws.root, limits=Limits(fuel=needed + needed // 10))
    # Had the fuel not been set afresh, the second read would run on what the first left.
    for _ in range(4):
        assert store.read(M) == "- small\n"
    ws.put("- a much longer file that costs more fuel to read and return\n" * 60)
    with pytest.raises(ComponentTrap):
        store.read(M)
    ws.put("- small\n")
    before = len(made)
    for _ in range(3):
        assert store.read(M) == "- small\n"
    assert len(made) - before == 1, "the trapped instance was dropped, and its successor kept"


def test_a_read_beyond_the_memory_limit_traps_and_the_next_read_works(
    ws: Workspace, made: list[_runtime.Exports]
) -> None:
    ws.put("- one\n")
    store = MemoryStore(ws.root, limits=Limits(memory_bytes=4 << 20))
    assert store.read(M) == "- one\n"
    with pytest.raises(ComponentTrap):
        store.assemble_system_prompt("x" * (5 << 20))
    before = len(made)
    assert store.read(M) == "- one\n"
    assert store.read(M) == "- one\n"
    assert len(made) - before == 1, "the trapped instance was dropped, and its successor kept"


def test_a_refusal_keeps_the_instance_and_one_never_grows_past_8_mib(
    ws: Workspace, made: list[_runtime.Exports]
) -> None:
    ws.put("- one\n")
    store = MemoryStore(ws.root)
    store.read(M)
    ws.put(b"- \xff\n")
    with pytest.raises(InvalidUtf8):
        store.read(M)
    ws.put("- one\n")
    assert store.read(M) == "- one\n"
    assert len(made) == 1, "a store refusal leaves the instance fit to use"
    # The kept instance may not grow past 8 MiB: this read runs again on a fresh instance
    # with the whole limit (64 MiB), which is not kept either.
    base = "x" * (9 << 20)
    prompt = store.assemble_system_prompt(base)
    assert prompt.startswith(base) and prompt.endswith("- one")
    assert len(made) == 2
    assert store.read(M) == "- one\n"
    assert store.read(M) == "- one\n"
    assert len(made) == 3, "the next reads ran on an instance made for them"


def test_metis_replaced_by_a_symbolic_link_between_two_reads_is_refused_on_the_second(
    ws: Workspace, tmp_path: Path
) -> None:
    ws.put("- here\n")
    store = MemoryStore(ws.root)
    assert store.read(M) == "- here\n"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / M).write_text("- another project's memory\n")
    old = ws.root / "old-metis"
    ws.metis.rename(old)
    ws.metis.symlink_to(elsewhere)
    with pytest.raises(MetisWorkspaceError, match="is a symbolic link"):
        store.read(M)
    with pytest.raises(MetisWorkspaceError, match="is a symbolic link"):
        store.assemble_system_prompt("")
    # Followed on purpose, the link is read through an instance made for its target.
    followed = MemoryStore(ws.root, follow_metis_link=True)
    ws.metis.unlink()
    old.rename(ws.metis)
    assert followed.read(M) == "- here\n"
    ws.metis.rename(old)
    ws.metis.symlink_to(elsewhere)
    assert followed.read(M) == "- another project's memory\n"


def test_metis_created_replaced_or_removed_after_a_read_is_what_the_next_read_sees(
    ws: Workspace, made: list[_runtime.Exports]
) -> None:
    store = MemoryStore(ws.root)
    assert store.read(M) == ""
    ws.put("- created after the first read\n")
    assert store.read(M) == "- created after the first read\n"
    ws.metis.rename(ws.root / "old-metis")
    ws.put("- a new directory\n")
    assert store.read(M) == "- a new directory\n"
    shutil.rmtree(ws.metis)
    assert store.read(M) == ""
    assert not store.exists(M)
    assert len(made) == 4, "one instance for each .metis seen: none, created, replaced, gone"


@pytest.mark.skipif(_preopen.descriptor_path(0) is None, reason="no /proc: the window remains")
def test_the_kept_instance_holds_the_directory_that_was_checked_not_the_path(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`.metis` swapped for another directory just after it was opened: the instance still
    reads the one opened (the one it is kept for), and is not used for the other."""
    ws.put("- checked\n")
    store = MemoryStore(ws.root)
    swapped = ws.root / "swapped"
    swapped.mkdir()
    (swapped / M).write_text("- swapped in\n")
    checked = ws.root / "checked"
    open_metis = store._open_metis_dir

    def open_then_swap() -> _preopen.OpenedDir | None:
        opened = open_metis()
        ws.metis.rename(checked)
        swapped.rename(ws.metis)
        return opened

    monkeypatch.setattr(store, "_open_metis_dir", open_then_swap)
    assert store.read(M) == "- checked\n"
    monkeypatch.undo()
    ws.metis.rename(swapped)
    checked.rename(ws.metis)
    assert store.read(M) == "- checked\n"
    ws.metis.rename(checked)
    swapped.rename(ws.metis)
    assert store.read(M) == "- swapped in\n"


def test_threads_reading_one_store_never_share_an_instance_at_once(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws.put("- one\n")
    store = MemoryStore(ws.root)
    in_use: set[int] = set()
    guard = threading.Lock()
    call: Callable[..., Any] = _runtime.Exports.__call__

    def exclusive(self: _runtime.Exports, *args: Any) -> Any:
        with guard:
            if id(self) in in_use:
                # Refused before wasmtime is entered: a store used by two threads at once
                # is undefined behaviour.
                raise RuntimeError("an instance was entered by two threads at once")
            in_use.add(id(self))
        try:
            time.sleep(0.001)  # a window for another thread to take the same instance
            return call(self, *args)
        finally:
            with guard:
                in_use.discard(id(self))

    monkeypatch.setattr(_runtime.Exports, "__call__", exclusive)
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            for _ in range(20):
                assert store.read(M) == "- one\n"
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert os.listdir(ws.metis) == [M]


def test_a_link_swapped_in_before_a_write_is_not_written_through(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write pre-opens the `.metis/` it checked and opened, not the name: a link swapped
    in between (by another process) leads nowhere."""
    ws.put("- here\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / M).write_text("- another project's memory\n")
    store = MemoryStore(ws.root)
    with_instance = _runtime.with_instance

    def swap_then_run(op: Callable[[_runtime.Exports], Any], **kwargs: Any) -> Any:
        ws.metis.rename(ws.root / "checked")
        ws.metis.symlink_to(elsewhere)
        return with_instance(op, **kwargs)

    monkeypatch.setattr(_runtime, "with_instance", swap_then_run)
    store.add_entry(M, "- written")
    assert (elsewhere / M).read_text() == "- another project's memory\n"
    assert (ws.root / "checked" / M).read_text() == "- here\n- written\n"


def test_without_proc_an_instance_pre_opened_by_name_serves_one_read(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where no path reaches an open directory (no `/proc`), `.metis` is pre-opened by name,
    and a link swapped in for that moment would be read under the checked directory's
    identity; so the instance is not kept, and the next read sees the real `.metis/`."""
    ws.put("- checked\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / M).write_text("- elsewhere\n")
    monkeypatch.setattr(_preopen, "descriptor_path", lambda fd: None)
    instantiate = _runtime.instantiate

    def swapped_around(**kwargs: Any) -> _runtime.Exports:
        ws.metis.rename(ws.root / "checked")
        ws.metis.symlink_to(elsewhere)
        try:
            return instantiate(**kwargs)
        finally:
            ws.metis.unlink()
            (ws.root / "checked").rename(ws.metis)

    store = MemoryStore(ws.root)
    monkeypatch.setattr(_runtime, "instantiate", swapped_around)
    store.read(M)  # the window a name leaves open: this one read may see the link
    monkeypatch.setattr(_runtime, "instantiate", instantiate)
    assert store.read(M) == "- checked\n"


@pytest.mark.parametrize(
    "limits",
    [{"fuel": 0}, {"fuel": -1}, {"memory_bytes": -1}, {"memory_bytes": 0}, {"fuel": True}],
)
def test_a_limit_that_limits_nothing_is_refused(limits: dict[str, int]) -> None:
    """wasmtime-py takes a negative memory limit as none (and the kept instance's 8 MiB
    bound with it) and wraps negative fuel to nearly unlimited."""
    with pytest.raises(ValueError, match="must be a positive integer"):
        Limits(**limits)
