"""`.metis/` (and, with global user memory on, the user's own `.metis/`) as the store
opened it, for pre-opening: the directory checked, then given to wasmtime through a path
that reaches exactly it (`/proc/thread-self/fd/N`), so a `.metis` swapped for a link
between the check and the pre-open is not what the instance sees."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass

from .errors import MetisWorkspaceError

DirId = tuple[int, int]


@dataclass
class OpenedDir:
    """`.metis/` as the host opened it (`fd`, never through a link unless the store follows
    one), for pre-opening: `path` reaches exactly that directory (see `descriptor_path`),
    `id` is its device and inode."""

    fd: int
    path: str
    id: DirId
    # Whether `path` reaches the opened directory itself (`/proc/.../fd/N`), not its name,
    # which a link swapped in before the pre-open would redirect.
    exact: bool
    # Whether its filesystem is mounted read-only (`store.settings.read-only-mount`).
    read_only_fs: bool = False

    def close(self) -> None:
        os.close(self.fd)


@functools.cache
def _proc_fd() -> str | None:
    return next((d for d in ("/proc/thread-self/fd", "/proc/self/fd") if os.path.isdir(d)), None)


def on_read_only_mount(fd: int) -> bool:
    """Whether the filesystem `fd` is on is mounted read-only."""
    try:
        return bool(os.fstatvfs(fd).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def descriptor_path(fd: int) -> str | None:
    """A path that opens exactly what `fd` is, if the system has one: wasmtime pre-opens
    a directory by path, and a path can be swapped for another directory or a link
    between the moment it is checked and the moment it is opened; `/proc/thread-self/fd/N`
    cannot (`thread-self` is this thread's descriptor table, the one wasmtime opens the
    name from: `preopen_dir` opens it at once, on the calling thread)."""
    directory = _proc_fd()
    return None if directory is None else f"{directory}/{fd}"


def opened(fd: int, path: str | os.PathLike[str], check: Callable[[], None]) -> OpenedDir:
    """`fd`, a directory just opened at `path`, as a pre-open once `check` (the trust
    rule, which raises `MetisWorkspaceError` with its whole message) passes; `fd` is
    closed if anything fails."""
    try:
        info = os.fstat(fd)
        check()
    # First: a MetisWorkspaceError is an OSError too, and its text is the whole message.
    except MetisWorkspaceError:
        os.close(fd)
        raise
    except OSError as e:
        os.close(fd)
        raise MetisWorkspaceError(f"cannot access {path}: {e}") from e
    exact = descriptor_path(fd)
    return OpenedDir(
        fd,
        exact or str(path),
        (info.st_dev, info.st_ino),
        exact is not None,
        on_read_only_mount(fd),
    )


@dataclass
class Preopens:
    """The directories an instance pre-opens: the workspace's `.metis/` (at guest path
    `.metis`), and the user's own with global user memory on (at `global-metis`); `None`
    for one that is not there."""

    metis: OpenedDir | None = None
    global_dir: OpenedDir | None = None

    def close(self) -> None:
        for opened in (self.metis, self.global_dir):
            if opened is not None:
                opened.close()
