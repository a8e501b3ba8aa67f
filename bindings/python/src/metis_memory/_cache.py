"""The compiled-component cache, by the policy the Rust host follows too (docs/security.md,
"The compiled-component cache"; `host/src/cache/`): the same directory, key, file format
and checks.

- An entry is named `component-{SHA-256 of the component}-{engine}.cwasm`; the engine part
  here is `py-wasmtime{version}-{settings}` (the Rust host's is `rust-` and wasmtime's
  compatibility hash).
- It lives in an absolute directory (`$METIS_MEMORY_CACHE_DIR`, else
  `$XDG_CACHE_HOME/metis-memory`, else `~/.cache/metis-memory`) of this user's that no one
  else can write, created 0700.
- It is `HEADER`, then HMAC-SHA256(key, HEADER + name + "\\n" + payload), then the payload
  (what wasmtime serialized). The key is this user's secret, kept outside every cache
  directory (`user_key`), so neither a repository nor an environment variable can supply a
  file this process will run: a cache directory may be inside a checkout.
- It is read whole, its MAC checked, and those same bytes deserialized.
- It is written to a private temporary file, synced and renamed into place, and compiled
  again (and replaced) whenever it is missing, not a regular file of this user's that no
  one else can write, too large, of another format, of a wrong MAC, or refused by wasmtime.

A cache that cannot be used turns itself off: the component is then compiled in memory."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
import tempfile
from importlib import metadata
from pathlib import Path

from wasmtime import Engine, WasmtimeError
from wasmtime.component import Component

CACHE_ENV = "METIS_MEMORY_CACHE_DIR"
# Engine settings the compiled code depends on: part of the entry's name.
ENGINE_TAG = "fuel"
MAX_CACHE_BYTES = 256 << 20
# The first bytes of every entry (the version of the format), then the MAC.
HEADER = b"metis-memory cache entry v1\n"
MAC_BYTES = 32
# The per-user key: `KEY_FILE` in `KEY_DIR` under the home directory of the password
# database, `KEY_BYTES` random bytes.
KEY_DIR = ".local/state/metis-memory"
KEY_FILE = "cache-key"
KEY_BYTES = 32


def cache_dir() -> Path | None:
    """Where compiled components are kept: `$METIS_MEMORY_CACHE_DIR` (`off` disables it),
    else `$XDG_CACHE_HOME/metis-memory`, else `~/.cache/metis-memory`. `None` when it is
    off, cannot be created, or is not a directory only this user can write.

    A relative path is never used: it would resolve inside whatever directory the process
    runs in. A relative `$METIS_MEMORY_CACHE_DIR` turns the cache off; a relative
    `$XDG_CACHE_HOME` is ignored, as the XDG base directory specification says. (An
    absolute one may still be inside a checkout: what makes an entry trusted is its MAC,
    not where it is.)"""
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
    private = stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid()
    return path if private and not info.st_mode & 0o022 else None


def file_size_limited() -> bool:
    """Whether this process runs under a file-size limit (`RLIMIT_FSIZE`)."""
    try:
        import resource
    except ImportError:  # not Unix
        return False
    return resource.getrlimit(resource.RLIMIT_FSIZE)[0] != resource.RLIM_INFINITY


def engine_name() -> str:
    """The engine part of an entry's name: wasmtime's version and the settings the
    compiled code depends on (fuel; copy-on-write memory images unless under a file-size
    limit)."""
    tag = f"{ENGINE_TAG}-nocow" if file_size_limited() else ENGINE_TAG
    return f"py-wasmtime{metadata.version('wasmtime')}-{tag}"


def cache_path(directory: Path, wasm: bytes) -> Path:
    """The entry for the component `wasm` under this engine, in `directory`."""
    digest = hashlib.sha256(wasm).hexdigest()
    return directory / f"component-{digest}-{engine_name()}.cwasm"


def home() -> Path | None:
    """This user's home directory, from the password database (never `$HOME`)."""
    try:
        import pwd
    except ImportError:  # not Unix
        return None
    try:
        directory = Path(pwd.getpwuid(os.geteuid()).pw_dir)
    except KeyError:
        return None
    return directory if directory.is_absolute() else None


def user_key() -> bytes | None:
    """This user's key (made if missing), or `None` when there is none to be had (then
    the cache is off).

    It is `~/.local/state/metis-memory/cache-key`, `~` being the password database's home
    directory, and is used only if its directory is a directory (not a link) of this
    user's that no one else can write, and it a regular file (not a link) of this user's
    that no one else can read or write, of `KEY_BYTES` bytes. A missing key is made from
    random bytes in a private temporary file (`O_EXCL`, 0600), synced, then hard-linked to
    its name, so it never exists half-written; a key that is there but wrong is left
    alone."""
    base = home()
    if base is None:
        return None
    directory = base / KEY_DIR
    try:
        # Made below the home directory (which must be there), every directory 0700.
        made = base
        for part in Path(KEY_DIR).parts:
            made = made / part
            try:
                os.mkdir(made, 0o700)
            except FileExistsError:
                pass
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
        dir_fd = os.open(directory, flags)
    except OSError:
        return None
    try:
        info = os.fstat(dir_fd)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
            return None
        try:
            return _read_key(dir_fd)
        except FileNotFoundError:
            pass
        if not _make_key(dir_fd):
            return None
        return _read_key(dir_fd)
    except OSError:
        return None
    finally:
        os.close(dir_fd)


def _read_key(dir_fd: int) -> bytes | None:
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    fd = os.open(KEY_FILE, flags, dir_fd=dir_fd)  # a link: OSError (ELOOP)
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_uid != os.geteuid()
            or info.st_mode & 0o077
            or info.st_size != KEY_BYTES
        ):
            return None
        key = f.read(KEY_BYTES + 1)
    return key if len(key) == KEY_BYTES else None


def _make_key(dir_fd: int) -> bool:
    """Makes the key unless another process made it first; whether there is one now."""
    if file_size_limited():
        import resource

        if resource.getrlimit(resource.RLIMIT_FSIZE)[0] < KEY_BYTES:
            return False
    temp = f".{KEY_FILE}.{secrets.token_hex(8)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temp, flags, 0o600, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(KEY_BYTES))
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(temp, KEY_FILE, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except FileExistsError:
            pass  # another process made it first: its key is the one
    finally:
        os.unlink(temp, dir_fd=dir_fd)
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    return True


def _mac(key: bytes, name: str, payload: bytes) -> bytes:
    message = hmac.new(key, HEADER, hashlib.sha256)
    message.update(name.encode())
    message.update(b"\n")
    message.update(payload)
    return message.digest()


def seal(key: bytes, name: str, payload: bytes) -> bytes:
    """The bytes of the entry named `name` holding `payload`, under `key`."""
    return HEADER + _mac(key, name, payload) + payload


def open_entry(key: bytes, name: str, data: bytes) -> bytes | None:
    """The payload of `data`, the bytes of the file named `name`, if its header is this
    format's and its MAC is right under `key`; else `None`."""
    if not data.startswith(HEADER) or len(data) < len(HEADER) + MAC_BYTES:
        return None
    tag = data[len(HEADER) : len(HEADER) + MAC_BYTES]
    payload = data[len(HEADER) + MAC_BYTES :]
    return payload if hmac.compare_digest(tag, _mac(key, name, payload)) else None


def load_cached(engine: Engine, path: Path, key: bytes) -> Component | None:
    """The compiled component in the entry at `path`, if it is a regular file of this
    user's, not writable by others, whose MAC under `key` is right and that wasmtime
    accepts; `None` otherwise (then it is recompiled). The bytes whose MAC was checked are
    the bytes deserialized."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_uid != os.geteuid()
            or info.st_mode & 0o022
            or info.st_size > MAX_CACHE_BYTES
        ):
            return None
        try:
            data = f.read(MAX_CACHE_BYTES + 1)
        except OSError:
            return None
    payload = open_entry(key, path.name, data)
    if payload is None:
        return None
    try:
        return Component.deserialize(engine, payload)
    except WasmtimeError:
        return None


def store_cached(path: Path, component: Component, key: bytes) -> None:
    """Writes the entry atomically (a private temporary file, synced, renamed into place);
    a failure only means the next process compiles again."""
    data = seal(key, path.name, bytes(component.serialize()))
    if file_size_limited():
        import resource

        if resource.getrlimit(resource.RLIMIT_FSIZE)[0] < len(data):
            return
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
