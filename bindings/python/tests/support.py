"""What the tests share: the conformance format's contents and snapshots of `.metis/`."""

from __future__ import annotations

import base64
import os
import stat
from pathlib import Path
from typing import Any

Entry = tuple[str, Any]


def content(spec: Any) -> bytes:
    """A content spec: a string, `{"base64"}`, `{"repeat", "times"}`, or a list of specs."""
    if isinstance(spec, str):
        return spec.encode()
    if isinstance(spec, list):
        return b"".join(content(part) for part in spec)
    if "base64" in spec:
        return base64.b64decode(spec["base64"])
    if "repeat" in spec:
        return content(spec["repeat"]) * spec["times"]
    raise ValueError(f"not a content spec: {spec!r}")


def snapshot(metis: Path) -> tuple[bool, dict[str, Entry]]:
    """Whether `.metis` exists, and each entry's kind and, for a file, its bytes."""
    try:
        names = os.listdir(metis)
    except OSError:
        return os.path.lexists(metis), {}
    entries: dict[str, Entry] = {}
    for name in names:
        path = metis / name
        mode = os.lstat(path).st_mode
        if stat.S_ISREG(mode):
            entries[name] = ("file", path.read_bytes())
        elif stat.S_ISDIR(mode):
            entries[name] = ("directory", None)
        elif stat.S_ISLNK(mode):
            entries[name] = ("symlink", os.readlink(path))
        else:
            entries[name] = ("other", stat.S_IFMT(mode))
    return True, entries
