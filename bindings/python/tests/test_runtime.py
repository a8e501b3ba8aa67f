"""The host's duties: fuel and memory limits, a trap that leaves the file whole, old or
new, and nothing else behind (its lock and temporary file cleaned up safely), and
concurrent writers."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from metis_memory import ComponentTrap, Limits, MemoryReadOnly, MemoryStore, _runtime
from support import snapshot

TOKEN = 0x0123456789ABCDEF


def test_running_out_of_fuel_is_a_trap_that_changes_nothing(tmp_path: Path) -> None:
    MemoryStore(tmp_path).add_entry("MEMORY.md", "fact")
    before = snapshot(tmp_path / ".metis")
    starved = MemoryStore(tmp_path, limits=Limits(fuel=10_000))
    with pytest.raises(ComponentTrap):
        starved.add_entry("MEMORY.md", "more")
    assert snapshot(tmp_path / ".metis") == before
    assert MemoryStore(tmp_path).add_entry("MEMORY.md", "more").before_size_bytes == 5


def test_an_argument_beyond_the_memory_limit_is_a_trap_and_the_next_call_works(
    tmp_path: Path,
) -> None:
    store = MemoryStore(tmp_path, limits=Limits(memory_bytes=4 << 20))
    with pytest.raises(ComponentTrap):
        store.consolidate("MEMORY.md", "x" * (8 << 20))
    assert not (tmp_path / ".metis").exists()
    assert store.add_entry("MEMORY.md", "fact").after_size_bytes == 5


def add_with_fuel(workspace: Path, fuel: int) -> bool:
    """Whether an add of `probe` succeeds with `fuel`; the file is put back afterwards."""
    try:
        MemoryStore(workspace, limits=Limits(fuel=fuel)).add_entry("MEMORY.md", "probe")
    except ComponentTrap:
        return False
    finally:
        MemoryStore(workspace).consolidate("MEMORY.md", "fact\n")
    return True


def test_a_trap_at_any_point_of_a_write_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    metis = tmp_path / ".metis"
    MemoryStore(tmp_path).consolidate("MEMORY.md", "fact\n")
    low, high = 0, 1_000_000_000  # the least fuel an add needs, by bisection
    while high - low > 100:
        middle = (low + high) // 2
        low, high = (low, middle) if add_with_fuel(tmp_path, middle) else (middle, high)
    fuels = [high * i // 60 for i in range(30, 60)]

    def sweep() -> set[str]:
        left: set[str] = set()
        for fuel in fuels:
            with pytest.raises(ComponentTrap) as trapped:
                MemoryStore(tmp_path, limits=Limits(fuel=fuel)).add_entry("MEMORY.md", "more")
            entries = snapshot(metis)[1]
            # When the trap says whether the write landed, it is what is on disk.
            if trapped.value.written is not None:
                assert trapped.value.written == (entries["MEMORY.md"][1] == b"fact\nmore\n"), fuel
                told.append(trapped.value.written)
            left |= set(entries) - {"MEMORY.md"}
            for name in set(entries) - {"MEMORY.md"}:  # so the next call need not wait
                (metis / name).unlink()
            # Whole or not at all: a trap after the rename (releasing the lock, returning)
            # leaves the write in place, complete.
            assert entries["MEMORY.md"][1] in (b"fact\n", b"fact\nmore\n"), fuel
            MemoryStore(tmp_path).consolidate("MEMORY.md", "fact\n")
        return left

    told: list[bool] = []
    assert sweep() == set()
    # The sweep reaches traps on both sides of the rename, and they say so.
    assert True in told and False in told, told
    # Without the clean-up, some of those traps leave the call's lock or temporary file:
    # so the sweep does reach the moments the clean-up is for.
    monkeypatch.setattr(_runtime, "recover_after_trap", lambda metis, owner, **settings: None)
    assert any(name.endswith(".lock") for name in sweep())


def owner_text(token: int) -> bytes:
    return f"{token:016x}\n".encode()


def test_the_guest_is_told_its_settings_and_given_no_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The component reads no environment variable (since 0.4.0 it does not even import
    `wasi:cli/environment`), and no instance is given one: a store's settings (read-only,
    global user memory, the prompt budget, a write's owner token) are the `store.settings`
    record each instance's `workspace` is made with."""
    rt = _runtime.runtime()
    imports = list(rt.component.type.imports(rt.engine))
    assert any(name.startswith("wasi:filesystem/") for name in imports), imports
    assert not any(name.startswith("wasi:cli/environment") for name in imports), imports
    given: list[object] = []

    class Recording(_runtime.WasiConfig):
        def inherit_env(self) -> None:
            given.append("inherited")

        @property
        def env(self) -> None:
            raise AttributeError("env")

        @env.setter
        def env(self, pairs: object) -> None:
            given.append(pairs)

    monkeypatch.setattr(_runtime, "WasiConfig", Recording)
    # What 0.3.0's guest read, set in this process: it reaches no instance.
    monkeypatch.setenv("METIS_MEMORY_READ_ONLY", "1")
    store = MemoryStore(tmp_path, prompt_budget=True)
    store.add_entry("MEMORY.md", "- fact")
    assert store.read("MEMORY.md") == "- fact\n"
    assert "bytes]" in store.assemble_system_prompt("base")
    with pytest.raises(MemoryReadOnly):
        MemoryStore(tmp_path, read_only=True).add_entry("MEMORY.md", "- refused")
    with pytest.raises(ComponentTrap) as trapped:
        MemoryStore(tmp_path, limits=Limits(fuel=10_000)).add_entry("MEMORY.md", "- more")
    assert trapped.value.written is not True
    assert given == []


def test_the_clean_up_removes_only_the_trapped_calls_own_entries(tmp_path: Path) -> None:
    metis = tmp_path / ".metis"
    metis.mkdir()
    (metis / ".MEMORY.md.lock").write_bytes(owner_text(TOKEN))
    (metis / ".USER.md.lock").write_bytes(owner_text(TOKEN + 1))
    (metis / f".MEMORY.md.{TOKEN:016x}.tmp").write_bytes(b"half")
    (metis / f".USER.md.lock.{TOKEN:016x}").write_bytes(owner_text(TOKEN))
    (metis / f".USER.md.{TOKEN + 1:016x}.tmp").write_bytes(b"another writer's")
    _runtime.recover_after_trap(metis, TOKEN)
    assert snapshot(metis)[1] == {
        ".USER.md.lock": ("file", owner_text(TOKEN + 1)),
        f".USER.md.{TOKEN + 1:016x}.tmp": ("file", b"another writer's"),
    }


def test_the_clean_up_settles_a_lock_the_trapped_call_had_moved_aside(tmp_path: Path) -> None:
    metis = tmp_path / ".metis"
    metis.mkdir()
    # Releasing its own lock, and breaking another writer's, when it trapped.
    (metis / f".MEMORY.md.lock.{TOKEN:016x}.aside").write_bytes(owner_text(TOKEN))
    (metis / f".USER.md.lock.{TOKEN:016x}.aside").write_bytes(owner_text(TOKEN + 1))
    _runtime.recover_after_trap(metis, TOKEN)
    assert snapshot(metis)[1] == {".USER.md.lock": ("file", owner_text(TOKEN + 1))}


@pytest.mark.parametrize("planted", ["directory", "link to a lock", "link to /dev/zero", "fifo"])
def test_the_clean_up_leaves_a_planted_entry_at_the_lock_name(tmp_path: Path, planted: str) -> None:
    metis = tmp_path / ".metis"
    metis.mkdir()
    lock = metis / ".USER.md.lock"
    outside = tmp_path / "outside"
    outside.write_bytes(owner_text(TOKEN))
    match planted:
        case "directory":
            lock.mkdir()
        case "link to a lock":
            lock.symlink_to(outside)
        case "link to /dev/zero":
            lock.symlink_to("/dev/zero")
        case "fifo":
            os.mkfifo(lock)
    before = snapshot(metis)
    _runtime.recover_after_trap(metis, TOKEN)
    assert snapshot(metis) == before
    assert outside.read_bytes() == owner_text(TOKEN)



def test_concurrent_writers_in_threads_lose_nothing(tmp_path: Path) -> None:
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            store = MemoryStore(tmp_path)
            for i in range(5):
                store.add_entry("MEMORY.md", f"writer {n} entry {i}")
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    lines = MemoryStore(tmp_path).read("MEMORY.md").splitlines()
    assert sorted(lines) == sorted(f"writer {n} entry {i}" for n in range(4) for i in range(5))
    assert set(os.listdir(tmp_path / ".metis")) == {"MEMORY.md"}


@pytest.mark.parametrize("existing", [True, False])
def test_a_write_syncs_the_file_then_the_directory_after_the_rename(
    tmp_path: Path, existing: bool
) -> None:
    """What the kernel saw (strace): the temporary file synced, put in place as MEMORY.md
    (renamed over it; linked, where there was no file, so that one created meanwhile is
    never replaced), then `.metis/` itself synced, which is what makes it durable."""
    log = tmp_path / "strace.log"
    workspace = tmp_path / "ws"
    (workspace / ".metis").mkdir(parents=True)
    if existing:
        (workspace / ".metis" / "MEMORY.md").write_text("- old\n")
    script = "import sys; from metis_memory import MemoryStore; MemoryStore(sys.argv[1]).add_entry('MEMORY.md', 'fact')"
    subprocess.run(
        ["strace", "-f", "-y", "-o", str(log), "-e",
         "trace=fsync,fdatasync,rename,renameat,renameat2,link,linkat",
         sys.executable, "-c", script, str(workspace)],
        check=True,
    )
    metis = str(workspace / ".metis")
    calls = [line for line in log.read_text().splitlines() if "(" in line]
    how = "rename" if existing else "link"
    renamed = [i for i, line in enumerate(calls) if how in line and '"MEMORY.md"' in line]
    assert len(renamed) == 1, calls
    before, after = calls[: renamed[0]], calls[renamed[0] + 1 :]
    assert any("sync(" in line and ".tmp>" in line for line in before), calls
    assert any("sync(" in line and f"<{metis}>)" in line for line in after), calls
