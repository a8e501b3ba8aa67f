"""The first write into a workspace with no `.metis/` yet: a refused one removes the
`.metis/` it created while it is empty, and a writer that had found and opened that
directory meanwhile runs again in a new one instead of failing. The race is
made to happen every time: each side waits for the other at the step that matters."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from metis_memory import MemoryStore, MemoryStoreError
from metis_memory import store as store_module

PATIENCE = 30  # seconds: a side that never arrives fails the test instead of hanging


def race(root: Path) -> BaseException | None:
    """A refused first write creates `.metis/`; a valid one opens it; the refused one
    then removes it; the valid one goes on. Returns the valid write's failure, if any."""
    created, opened, removed = threading.Event(), threading.Event(), threading.Event()
    refuser, adder = MemoryStore(root), MemoryStore(root)

    create = refuser._create_metis_dir

    def create_then_wait() -> bool:
        made = create()
        created.set()
        assert opened.wait(PATIENCE)
        return made

    open_dir = adder._open_metis_dir
    first = [True]

    def open_then_wait() -> Any:
        found = open_dir()
        if first[0]:
            first[0] = False
            opened.set()
            assert removed.wait(PATIENCE)
        return found

    refuser._create_metis_dir = create_then_wait  # type: ignore[method-assign]
    adder._open_metis_dir = open_then_wait  # type: ignore[method-assign]
    failure: list[BaseException] = []

    def refuse() -> None:
        with pytest.raises(MemoryStoreError):
            refuser.add_entry("MEMORY.md", "   ")
        removed.set()

    def add() -> None:
        assert created.wait(PATIENCE)
        try:
            adder.add_entry("MEMORY.md", "- kept")
        except BaseException as e:  # noqa: BLE001 - the failure is the finding
            failure.append(e)

    threads = [threading.Thread(target=refuse), threading.Thread(target=add)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return failure[0] if failure else None


def test_a_refused_first_write_never_fails_a_writer_that_found_its_metis(tmp_path: Path) -> None:
    assert race(tmp_path) is None
    assert (tmp_path / ".metis" / "MEMORY.md").read_text() == "- kept\n"


def test_without_running_again_that_writer_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The race above does happen: without the retry, the valid write fails in it.
    monkeypatch.setattr(store_module, "_VANISHED_RETRIES", 0)
    assert race(tmp_path) is not None


def test_creating_metis_syncs_the_workspace_directory(tmp_path: Path) -> None:
    """`strace -y` names the directory each `fsync` was given: creating `.metis/` must sync
    the workspace directory that holds the new entry."""
    import os
    import shutil
    import subprocess
    import sys

    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("no strace on this machine")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    log = tmp_path / "strace.log"
    code = f"from metis_memory import MemoryStore; MemoryStore({str(workspace)!r}).add_entry('MEMORY.md', '- a')"
    traced = subprocess.run(
        [strace, "-f", "-y", "-e", "trace=fsync,fdatasync", "-o", str(log), sys.executable, "-c", code],
        env={**os.environ, "METIS_MEMORY_CACHE_DIR": "off"},
        capture_output=True,
        text=True,
    )
    if traced.returncode != 0 and "ptrace" in traced.stderr:
        pytest.skip(f"strace cannot trace here: {traced.stderr.strip()}")
    assert traced.returncode == 0, traced.stderr
    assert f"<{workspace.resolve()}>)" in log.read_text(), log.read_text()
