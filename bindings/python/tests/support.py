"""What the tests share: the conformance format's contents and snapshots of `.metis/`."""

from __future__ import annotations

import base64
import hashlib
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


def sha(text: str) -> str:
    """The SHA-256 of `text` as UTF-8, lowercase hex: a file version."""
    return hashlib.sha256(text.encode()).hexdigest()


def workspace(root: Path, **files: str) -> Path:
    """`root` with a `.metis/` holding `files` (`MEMORY="…"` is `.metis/MEMORY.md`)."""
    (root / ".metis").mkdir()
    for name, text in files.items():
        (root / ".metis" / f"{name}.md").write_text(text)
    return root


def on_disk(root: Path, file: Any = "MEMORY.md") -> str:
    """A memory file's text as it is on disk, read past the package (`file`: a name or a
    `MemoryFile`)."""
    return (root / ".metis" / getattr(file, "value", file)).read_text()


def consolidate(content: str, file: str = "MEMORY.md") -> dict[str, str]:
    """A `memory_consolidate` tool call's input."""
    return {"file": file, "content": content}
