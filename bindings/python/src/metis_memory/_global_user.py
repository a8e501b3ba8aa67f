"""Global user memory: the person's own USER.md, in their own `.metis/` directory
(`~/.metis/`, the specification's place for it), composed into every workspace's prompt
ahead of the workspace's USER.md, with its own cap, lock and audit (`wit/world.wit`). Off
unless the host turns it on (`MemoryStore(..., global_user=GlobalUser(...))`), as in the
Rust host (`host/src/global_user.rs`): the same directory, the same checks."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from . import _preopen, _trust
from ._preopen import DirId
from .errors import MetisWorkspaceError


@dataclass(frozen=True, init=False)
class GlobalUser:
    """Where the user's own USER.md is, and whether the agent writes it.

    `dir` is the user's own `.metis/` directory (created with mode 0700, its parents too,
    by the first write if missing). It may be a symbolic link (the person's own dotfiles),
    but like a workspace's `.metis/` it must be this user's and not writable by every user
    (unless the store is given `trust_foreign_metis=True`). With `agent_writes=False` (the
    default) the agent reads it and a tool call's `USER.md` is still the workspace's (the
    person edits their own file); with `True`, a tool call's `USER.md` is the user's own,
    so facts about the person follow them into every workspace."""

    dir: Path
    agent_writes: bool

    def __init__(self, dir: str | os.PathLike[str], agent_writes: bool = False) -> None:
        if not isinstance(agent_writes, bool):
            raise TypeError(f"GlobalUser.agent_writes must be a bool, got {agent_writes!r}")
        # Absolute now, so that a later change of directory does not move it; links are
        # left as they are (followed when it is opened).
        object.__setattr__(self, "dir", Path(os.path.abspath(Path(dir).expanduser())))
        object.__setattr__(self, "agent_writes", agent_writes)

    @classmethod
    def in_home(cls, agent_writes: bool = False) -> GlobalUser | None:
        """`~/.metis/`: `$HOME/.metis`, or `None` when `HOME` is unset or not absolute."""
        home = os.environ.get("HOME")
        if not home or not os.path.isabs(home):
            return None
        return cls(Path(home) / ".metis", agent_writes)


def existing(global_user: GlobalUser) -> DirId | None:
    """The directory's identity (device and inode) if it exists (`None` if not), for
    keeping an instance; an error when something else is there."""
    directory = global_user.dir
    try:
        info = os.stat(directory)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise MetisWorkspaceError(f"cannot access {directory}: {e}") from e
    if not stat.S_ISDIR(info.st_mode):
        raise MetisWorkspaceError(f"{directory} exists but is not a directory")
    return (info.st_dev, info.st_ino)


def open_dir(global_user: GlobalUser, trust_foreign: bool) -> _preopen.OpenedDir | None:
    """The directory opened for pre-opening (`None` if it does not exist), following a
    link, and checked as a workspace's `.metis/` is (`_trust.check_owner`) unless
    `trust_foreign`: the instance gets exactly the directory opened and checked here."""
    directory = global_user.dir
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(directory, flags)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise MetisWorkspaceError(f"cannot open {directory}: {e}") from e
    try:
        info = os.fstat(fd)
        if not trust_foreign:
            _trust.check_owner(directory, fd)
    except OSError as e:
        os.close(fd)
        raise MetisWorkspaceError(f"cannot access {directory}: {e}") from e
    except MetisWorkspaceError:
        os.close(fd)
        raise
    exact = _preopen.descriptor_path(fd)
    return _preopen.OpenedDir(
        fd,
        exact or str(directory),
        (info.st_dev, info.st_ino),
        exact is not None,
        _preopen.on_read_only_mount(fd),
    )


def create(global_user: GlobalUser) -> bool:
    """Makes sure the directory exists (mode 0700 when created here, its parents as
    needed); whether this call created it."""
    if existing(global_user) is not None:
        return False
    directory = global_user.dir
    try:
        _make_dirs(directory)
    except FileExistsError:
        return False  # another writer created it first
    except OSError as e:
        raise MetisWorkspaceError(f"cannot create {directory}: {e}") from e
    return True


def remove_if_empty(global_user: GlobalUser) -> None:
    """Removes the directory a failed call created (only if it is still empty: whatever
    another writer put there meanwhile stays)."""
    try:
        os.rmdir(global_user.dir)
    except OSError:
        pass


def _make_dirs(directory: Path) -> None:
    """`directory` and its missing parents, each with mode 0700 (as the Rust host's
    recursive `DirBuilder`); `FileExistsError` if `directory` itself is already there."""
    try:
        os.mkdir(directory, 0o700)
    except FileNotFoundError:
        parent = directory.parent
        if parent == directory:
            raise
        try:
            _make_dirs(parent)
        except FileExistsError:
            pass
        os.mkdir(directory, 0o700)
