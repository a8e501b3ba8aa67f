"""Whether a workspace's `.metis/` may be used: git's `safe.directory` reasoning, the
same rule and words as the Rust host (`host/src/trust.rs`) and the Node package.

Memory goes into an agent's prompt and what the agent learns goes into memory, so a
`.metis/` another user controls is a way into this user's agent and out of it: one owned
by someone else (a `/tmp/.metis` another user made, found above `/tmp/project`), or one in
a directory every user can write without the sticky bit (anyone may replace it). Such a
`.metis/` is not used unless the person says they trust it. Group-writable directories are
allowed: the group is the owner's choice."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import MetisWorkspaceError

OPT_IN = "if you trust it, pass trust_foreign_metis=True to MemoryStore"

# The person's own `.metis/` (global user memory) reaches every workspace's prompt, so no
# opt-in reaches it: it is theirs to fix.
OWN_MEMORY = (
    "it is your own memory, which trust_foreign_metis=True does not reach: make it yours "
    "and private (chown, chmod 700), or give GlobalUser another directory"
)


def check_owner(metis: Path, fd: int, what_to_do: str = OPT_IN) -> None:
    """`.metis` (the opened directory `fd`) must be owned by this process's effective user,
    and not writable by every user; a refusal ends with `what_to_do`."""
    if not hasattr(os, "geteuid"):
        return
    info = os.fstat(fd)
    owner, euid = info.st_uid, os.geteuid()
    if owner != euid:
        raise MetisWorkspaceError(
            f"{metis} belongs to uid {owner}, not to this user (uid {euid}): another user "
            "could put entries into this agent's prompt and read what it adds, so it is not "
            f"used ({what_to_do})"
        )
    # Sticky or not: another user may still create a file that is missing in it.
    if info.st_mode & stat.S_IWOTH:
        raise MetisWorkspaceError(
            f"{metis} can be written by every user, so another user could put entries into "
            f"this agent's prompt: it is not used ({what_to_do})"
        )


def check_root(root: Path, what_to_do: str = OPT_IN) -> None:
    """The workspace root must not be writable by every user, unless sticky (as `/tmp`
    is: then only its owner may rename or remove `.metis`); a refusal ends with
    `what_to_do`."""
    try:
        mode = os.stat(root).st_mode
    except OSError:
        return  # a root that cannot be read fails the call on its own, with its reason
    if mode & stat.S_IWOTH and not mode & stat.S_ISVTX:
        raise MetisWorkspaceError(
            f"{root} can be written by every user and has no sticky bit, so another user "
            f"could replace .metis/ in it: it is not used ({what_to_do})"
        )
