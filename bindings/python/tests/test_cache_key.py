"""The per-user key that authenticates cache entries (`_cache.user_key`; docs/security.md,
"The compiled-component cache"), the same file the Rust host uses: found through the
password database, never `$HOME` or `$XDG_*`; made 0600 in a 0700 directory when
missing; and not used (the cache is off, every call still works) when it is a link,
readable or writable by others, someone else's, not 32 bytes, or in a directory others
can write.

The key lives in this user's real home. Each process here runs in a private mount
namespace (`unshare -m`) with a directory of the test's mounted over `~/.local/state`, so
the real key is neither seen nor touched; where the machine gives no mount namespace, the
tests are skipped, saying so."""

from __future__ import annotations

import os
import pwd
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

SCRIPT = """
import sys, metis_memory
from metis_memory import _runtime
store = metis_memory.MemoryStore(sys.argv[1])
store.add_entry("MEMORY.md", "- still works")
assert store.read("MEMORY.md").endswith("- still works\\n")
print(_runtime.runtime().loaded_from)
"""


def passwd_home() -> Path:
    return Path(pwd.getpwuid(os.geteuid()).pw_dir)


@pytest.fixture(scope="module")
def namespaces() -> None:
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs none /mnt"], capture_output=True, check=False
    )
    if done.returncode != 0:
        pytest.skip("this machine gives no mount namespace (`unshare -m` with mounts)")


def start(state: Path, cache: Path, workspace: Path) -> str:
    """How a new process, with `state` mounted over `~/.local/state` and `$HOME` and
    `$XDG_*` pointing elsewhere, got its compiled component (`cache` or `compiled`); its
    write and read worked."""
    real = passwd_home() / ".local" / "state"
    # The mount point must exist: the package makes the same directories (0700) on first use.
    for directory in (real.parent, real):
        directory.mkdir(exist_ok=True, mode=0o700)
    decoy = workspace / "decoy-home"
    decoy.mkdir(exist_ok=True)
    env = dict(
        os.environ,
        METIS_MEMORY_CACHE_DIR=str(cache),
        HOME=str(decoy),
        XDG_STATE_HOME=str(decoy / "state"),
        XDG_CONFIG_HOME=str(decoy / "config"),
        XDG_DATA_HOME=str(decoy / "data"),
    )
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", 'mount --bind "$1" "$2" && shift 2 && exec "$@"', "sh"]
        + [str(state), str(real), sys.executable, "-c", SCRIPT, str(workspace)],
        cwd=workspace,
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def snapshot(root: Path) -> dict[str, tuple[int, int, bytes | str | None]]:
    found = {}
    for path in [root, *sorted(root.rglob("*"))]:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            content: bytes | str | None = os.readlink(path)
        elif stat.S_ISREG(info.st_mode):
            content = path.read_bytes()
        else:
            content = None
        found[str(path.relative_to(root))] = (info.st_mode, info.st_uid, content)
    return found


def test_the_key_is_found_through_the_password_database_not_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from metis_memory import _cache

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert _cache.home() == passwd_home()


def test_a_missing_key_is_made_private(namespaces: None, tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    cache = tmp_path / "cache"
    assert start(state, cache, tmp_path) == "compiled"
    key_dir = state / "metis-memory"
    key = key_dir / "cache-key"
    assert stat.S_IMODE(os.lstat(key_dir).st_mode) == 0o700
    info = os.lstat(key)
    assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600
    assert info.st_uid == os.geteuid() and info.st_size == 32
    assert [p.name for p in key_dir.iterdir()] == ["cache-key"], "a temporary file was left"
    assert not any((tmp_path / "decoy-home").iterdir()), "made under $HOME or $XDG_*"
    first = key.read_bytes()
    assert start(state, cache, tmp_path) == "cache"
    assert key.read_bytes() == first


def write_key(data: bytes, mode: int) -> Callable[[Path], None]:
    def make(key_dir: Path) -> None:
        (key_dir / "cache-key").write_bytes(data)
        (key_dir / "cache-key").chmod(mode)

    return make


def link_to_private_key(key_dir: Path) -> None:
    target = key_dir.parent / "key-elsewhere"
    target.write_bytes(bytes(32))
    target.chmod(0o600)
    (key_dir / "cache-key").symlink_to(target)


def in_a_directory_others_can_write(key_dir: Path) -> None:
    write_key(bytes(32), 0o600)(key_dir)
    key_dir.chmod(0o777)


def someone_elses(key_dir: Path) -> None:
    write_key(bytes(32), 0o600)(key_dir)
    os.chown(key_dir / "cache-key", 65534, 65534)


BAD_KEYS: list[tuple[str, Callable[[Path], None]]] = [
    ("a link to a private key file", link_to_private_key),
    ("readable by others (0644)", write_key(bytes(32), 0o644)),
    ("readable by the group (0640)", write_key(bytes(32), 0o640)),
    ("writable by the group (0620)", write_key(bytes(32), 0o620)),
    ("empty", write_key(b"", 0o600)),
    ("too short", write_key(bytes(16), 0o600)),
    ("in a directory others can write", in_a_directory_others_can_write),
    ("a directory", lambda key_dir: (key_dir / "cache-key").mkdir()),
    ("someone else's (uid 65534)", someone_elses),
]


@pytest.mark.parametrize("what, make", BAD_KEYS, ids=[what for what, _ in BAD_KEYS])
def test_an_unusable_key_turns_the_cache_off(
    namespaces: None, tmp_path: Path, what: str, make: Callable[[Path], None]
) -> None:
    if make is someone_elses and os.geteuid() != 0:
        pytest.skip("giving a file to someone else needs root")
    state = tmp_path / "state"
    key_dir = state / "metis-memory"
    key_dir.mkdir(parents=True, mode=0o700)
    make(key_dir)
    before = snapshot(state)
    cache = tmp_path / "cache"
    assert start(state, cache, tmp_path) == "compiled"
    assert start(state, cache, tmp_path) == "compiled", f"a key {what} was used"
    assert not list(cache.glob("*")), f"a key {what}: something was written to the cache"
    assert snapshot(state) == before, f"a key {what}: the key's directory was changed"
