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
    by the first write if missing), kept as given: it must be an absolute path, or every
    call of the store is refused (`MetisWorkspaceError`), since a relative one (or one
    starting with an unexpanded `~`) would be found inside whatever directory the program
    runs in. It may be a symbolic link (the person's own dotfiles), but the link must be
    this user's own and its parent not writable by every user unless sticky, and like a
    workspace's `.metis/` the directory must be this user's and not writable by every user
    (unless the store is given `trust_foreign_metis=True`). With `agent_writes=False` (the
    default) the agent reads it and a tool call's `USER.md` is still the workspace's (the
    person edits their own file); with `True`, a tool call's `USER.md` is the user's own,
    so facts about the person follow them into every workspace."""

    dir: Path
    agent_writes: bool

    def __init__(self, dir: str | os.PathLike[str], agent_writes: bool = False) -> None:
        if not isinstance(agent_writes, bool):
            raise TypeError(f"GlobalUser.agent_writes must be a bool, got {agent_writes!r}")
        # As given (no `~` expanded, nothing made absolute): a relative one is refused by
        # every call (`checked_dir`), as the Rust host does; links are left as they are
        # (followed when it is opened).
        object.__setattr__(self, "dir", Path(dir))
        object.__setattr__(self, "agent_writes", agent_writes)

    @classmethod
    def in_home(cls, agent_writes: bool = False) -> GlobalUser | None:
        """`~/.metis/`: `$HOME/.metis`, or `None` when `HOME` is unset or not absolute."""
        home = os.environ.get("HOME")
        if not home or not os.path.isabs(home):
            return None
        return cls(Path(home) / ".metis", agent_writes)


def checked_dir(global_user: GlobalUser) -> Path:
    """The directory, if its path is absolute: a relative one (or one starting with an
    unexpanded `~`, as MCP configurations leave it) would resolve inside whatever directory
    the program runs in, a repository perhaps, so it is refused."""
    directory = global_user.dir
    if directory.is_absolute():
        return directory
    raise MetisWorkspaceError(
        f"the directory of your own USER.md must be an absolute path, not {directory}: a "
        "relative one would be found inside whatever directory this runs in"
    )


def existing(global_user: GlobalUser) -> DirId | None:
    """The directory's identity (device and inode) if it exists (`None` if not), for
    keeping an instance; an error when something else is there."""
    directory = checked_dir(global_user)
    try:
        info = os.stat(directory)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise MetisWorkspaceError(f"cannot access {directory}: {e}") from e
    if not stat.S_ISDIR(info.st_mode):
        raise MetisWorkspaceError(f"{directory} exists but is not a directory")
    return (info.st_dev, info.st_ino)


def open_dir(global_user: GlobalUser) -> _preopen.OpenedDir | None:
    """The directory opened for pre-opening (`None` if it does not exist), following a
    link, and checked as a workspace's `.metis/` is (`_trust.check_owner`), whatever the
    store trusts (`trust_foreign_metis` is about a workspace; whoever controls this
    directory reaches every workspace's prompt): the instance gets exactly the directory
    opened and checked here. Before it is opened, a link at its name must be this user's
    own, and its parent is checked as a workspace root is (`_trust.check_root`)."""
    directory = checked_dir(global_user)
    _check_link_owner(directory)
    if directory.parent != directory:
        _trust.check_root(directory.parent, _trust.OWN_MEMORY)
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(directory, flags)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise MetisWorkspaceError(f"cannot open {directory}: {e}") from e
    def check() -> None:
        _trust.check_owner(directory, fd, _trust.OWN_MEMORY)

    return _preopen.opened(fd, directory, check)


def create(global_user: GlobalUser) -> bool:
    """Makes sure the directory exists (mode 0700 when created here, its parents as
    needed); whether this call created it."""
    if existing(global_user) is not None:
        return False
    directory = checked_dir(global_user)
    try:
        _make_dirs(directory)
    except FileExistsError:
        pass
    except OSError as e:
        raise MetisWorkspaceError(f"cannot create {directory}: {e}") from e
    else:
        return True
    if existing(global_user) is not None:
        return False  # another writer created it first
    # Something that is no directory yet: a link to a missing one.
    try:
        target = os.readlink(directory)
    except OSError:
        target = ""
    raise MetisWorkspaceError(
        f"{directory} is a symbolic link to {target}, which does not exist: create that "
        "directory, or remove the link"
    )


def remove_if_empty(global_user: GlobalUser) -> None:
    """Removes the directory a failed call created (only if it is still empty: whatever
    another writer put there meanwhile stays)."""
    try:
        os.rmdir(global_user.dir)
    except OSError:
        pass


def _make_dirs(directory: Path) -> None:
    """`directory` and its missing parents, each with mode 0700 (as the Rust host's
    recursive `DirBuilder`); `FileExistsError` if `directory` itself is already there, or
    a parent is there but is no directory (a link to a missing one), as Rust's."""
    try:
        os.mkdir(directory, 0o700)
        return
    except FileNotFoundError:
        parent = directory.parent
        if parent == directory:
            raise
    try:
        _make_dirs(parent)
    except FileExistsError:
        if not parent.is_dir():
            raise
    os.mkdir(directory, 0o700)


def _check_link_owner(directory: Path) -> None:
    """A link at the directory's name must be this user's own: in a home every user can
    write (a service account's `/tmp`), another user could plant one leading to a
    directory of this user's that is not their memory."""
    if not hasattr(os, "geteuid"):
        return
    try:
        info = os.lstat(directory)
    except OSError:
        return
    euid = os.geteuid()
    if stat.S_ISLNK(info.st_mode) and info.st_uid != euid:
        raise MetisWorkspaceError(
            f"{directory} is a symbolic link made by uid {info.st_uid}, not by this user "
            f"(uid {euid}): another user could lead it anywhere, so it is not used "
            f"({_trust.OWN_MEMORY})"
        )
