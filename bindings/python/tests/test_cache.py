"""The compiled component cache: a new process loads it instead of compiling, and a
missing, stale, corrupt or unsafe cache is ignored (the component is compiled again). The
policy it follows is `_cache`'s (the entry format and key: `test_cache_entry.py`,
`test_cache_key.py`; the attack the key stops: `test_planted_cache.py`)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
import sys, metis_memory
from metis_memory import _runtime
store = metis_memory.MemoryStore(sys.argv[1])
assert store.read("MEMORY.md") == ""
print(_runtime.runtime().loaded_from)
"""


def start(cache: Path | str, workspace: Path, **env: str) -> str:
    """How a new process got its compiled component: `cache` or `compiled`."""
    env = dict(os.environ, METIS_MEMORY_CACHE_DIR=str(cache), **env)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(workspace)],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return done.stdout.strip()


def cached_files(cache: Path) -> list[Path]:
    return sorted(cache.glob("*.cwasm"))


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def test_the_second_process_loads_the_compiled_component(cache: Path, tmp_path: Path) -> None:
    assert start(cache, tmp_path) == "compiled"
    [compiled] = cached_files(cache)
    assert stat.S_IMODE(compiled.stat().st_mode) == 0o600
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert "wasmtime48." in compiled.name
    assert start(cache, tmp_path) == "cache"
    assert [p.name for p in cache.iterdir()] == [compiled.name], "a temporary file was left"


def test_a_corrupt_or_truncated_cache_is_compiled_again(cache: Path, tmp_path: Path) -> None:
    start(cache, tmp_path)
    [compiled] = cached_files(cache)
    good = compiled.read_bytes()
    for bad in (good[: len(good) // 2], good[:-1] + bytes([good[-1] ^ 1]), b"", b"garbage"):
        compiled.write_bytes(bad)
        assert start(cache, tmp_path) == "compiled"
        assert compiled.read_bytes() == good, "the cache was not rewritten"


def test_an_entry_with_a_right_mac_that_is_not_a_compiled_component_is_compiled_again(
    cache: Path, tmp_path: Path
) -> None:
    from metis_memory import _cache

    start(cache, tmp_path)
    [compiled] = cached_files(cache)
    key = _cache.user_key()
    assert key is not None
    compiled.write_bytes(_cache.seal(key, compiled.name, b"\x7fELF not really"))
    assert start(cache, tmp_path) == "compiled"


def test_a_cache_for_another_component_or_wasmtime_is_not_used(cache: Path, tmp_path: Path) -> None:
    start(cache, tmp_path)
    [compiled] = cached_files(cache)
    stale = compiled.with_name(compiled.name.replace("wasmtime48.", "wasmtime47."))
    compiled.rename(stale)
    assert start(cache, tmp_path) == "compiled"
    assert len(cached_files(cache)) == 2


def test_a_cache_others_can_write_is_not_used(cache: Path, tmp_path: Path) -> None:
    start(cache, tmp_path)
    [compiled] = cached_files(cache)
    compiled.chmod(0o666)
    assert start(cache, tmp_path) == "compiled"
    compiled.unlink()
    cache.chmod(0o777)
    assert start(cache, tmp_path) == "compiled"
    assert cached_files(cache) == [], "written into a directory others can write"


def test_a_cache_file_that_is_a_link_is_not_followed(cache: Path, tmp_path: Path) -> None:
    start(cache, tmp_path)
    [compiled] = cached_files(cache)
    real = tmp_path / "elsewhere.cwasm"
    compiled.rename(real)
    compiled.symlink_to(real)
    assert start(cache, tmp_path) == "compiled"


def test_the_cache_can_be_turned_off(tmp_path: Path) -> None:
    assert start("off", tmp_path) == "compiled"
    assert start("off", tmp_path) == "compiled"


def test_a_relative_cache_directory_is_never_used(cache: Path, tmp_path: Path) -> None:
    """A relative directory would resolve inside the directory the process runs in, such
    as a cloned repository with a planted compiled file under the predictable name."""
    start(cache, tmp_path)
    [compiled] = cached_files(cache)
    # The same file where the relative names lead, from the process's directory.
    for planted in (tmp_path / "cache", tmp_path / "xdg" / "metis-memory"):
        planted.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not (planted / compiled.name).exists():
            (planted / compiled.name).write_bytes(compiled.read_bytes())
            (planted / compiled.name).chmod(0o600)
    assert start("cache", tmp_path) == "compiled"
    home = tmp_path / "home"
    assert start("", tmp_path, XDG_CACHE_HOME="xdg", HOME=str(home)) == "compiled"
    assert [p.name for p in cached_files(home / ".cache" / "metis-memory")] == [compiled.name]
