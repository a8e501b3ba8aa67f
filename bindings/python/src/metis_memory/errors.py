"""Exceptions. A store refusal is a `ValueError` (as in the reference implementation)
whose text is the component's own (the `message` every `store-error` carries); a refusal
changed nothing on disk.
A `ComponentTrap` does not say whether a write landed (see there)."""

from __future__ import annotations

from typing import ClassVar

from ._types import AuditFinding, MemoryFile, WriteResult


class MemoryStoreError(ValueError):
    """The store refused the operation. `kind` is the WIT `store-error` case name."""

    kind: ClassVar[str] = "store-error"

    def __init__(self, message: str, file: MemoryFile | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = file


class MemoryHardCapExceeded(MemoryStoreError):
    """The write would leave the file larger than its hard cap."""

    kind = "hard-cap-exceeded"

    def __init__(
        self, file: MemoryFile, attempted_size: int, hard_cap: int, message: str | None = None
    ) -> None:
        super().__init__(
            message
            or f"{MemoryFile(file).value} write rejected: {attempted_size} bytes exceeds "
            f"hard cap {hard_cap}; consolidate before adding more",
            MemoryFile(file),
        )
        self.attempted_size = attempted_size
        self.hard_cap = hard_cap


class EmptyEntry(MemoryStoreError):
    """`add_entry` was given an entry that is empty once stripped."""

    kind = "empty-entry"


class NothingToReplace(MemoryStoreError):
    """`replace` on a missing or empty file."""

    kind = "nothing-to-replace"


class ReplaceSourceNotFound(MemoryStoreError):
    """`replace`'s `old_text` does not occur in the file."""

    kind = "not-found"


class ReplaceSourceNotUnique(MemoryStoreError):
    """`replace`'s `old_text` occurs `count` times; it must occur once."""

    kind = "not-unique"

    def __init__(self, message: str, file: MemoryFile | None, count: int) -> None:
        super().__init__(message, file)
        self.count = count


class InvalidUtf8(MemoryStoreError):
    """The file is not valid UTF-8; `offset` is its first invalid byte."""

    kind = "invalid-utf8"

    def __init__(self, message: str, file: MemoryFile, offset: int) -> None:
        super().__init__(message, file)
        self.offset = offset


class NotARegularFile(MemoryStoreError):
    """The path is a directory, link, special file, or a file with a second hard link."""

    kind = "not-a-regular-file"


class MemoryBusy(MemoryStoreError):
    """Another writer held the file's lock for too long."""

    kind = "busy"


class MemoryIOFailure(MemoryStoreError):
    """Any other filesystem failure, described in words."""

    kind = "io"


class MemoryReadOnly(MemoryStoreError):
    """The workspace was opened read-only, or its filesystem refused a write as
    read-only; nothing was written."""

    kind = "read-only"


class MemoryFileTooLarge(MemoryStoreError):
    """The filesystem refused a file's size (a file-size limit such as `ulimit -f`)."""

    kind = "file-too-large"


class MemoryInsufficientSpace(MemoryStoreError):
    """The filesystem, or the user's quota on it, is full."""

    kind = "insufficient-space"


class MemoryChanged(MemoryStoreError):
    """A conditional consolidate found the file changed since the caller read it."""

    kind = "changed"

    def __init__(
        self,
        message: str,
        file: MemoryFile,
        expected_hash: str,
        current_hash: str,
        current_content: str,
    ) -> None:
        super().__init__(message, file)
        self.expected_hash = expected_hash
        self.current_hash = current_hash
        self.current_content = current_content


class MemoryFlagged(MemoryStoreError):
    """Prompt composition under the `refuse` audit policy found something in `file`."""

    kind = "flagged"

    def __init__(self, message: str, file: MemoryFile, findings: tuple[AuditFinding, ...]) -> None:
        super().__init__(message, file)
        self.findings = findings


class MemoryTooLarge(MemoryStoreError):
    """The file is larger than the store reads (four times its hard cap)."""

    kind = "too-large"

    def __init__(self, message: str, file: MemoryFile, size_bytes: int, limit_bytes: int) -> None:
        super().__init__(message, file)
        self.size_bytes = size_bytes
        self.limit_bytes = limit_bytes


class MemoryUnsynced(MemoryStoreError):
    """The write was made (`result`: the file now holds its new bytes, and every reader
    sees them), but `.metis/` could not be synced after it, so a crash or power loss may
    undo it. Not a success, since it is not durable; not one to retry, since it is
    there: an add repeated would be made twice."""

    kind = "unsynced"

    def __init__(self, message: str, file: MemoryFile, result: WriteResult, reason: str) -> None:
        super().__init__(message, file)
        self.result = result
        self.reason = reason


class MemoryPoisoned(MemoryStoreError):
    """A scanned write (`workspace.write` with a scan) was refused by the memory poisoning scan:
    `rule` matched; the message says what and where. Nothing was written."""

    kind = "poisoned"

    def __init__(self, message: str, file: MemoryFile, rule: str) -> None:
        super().__init__(message, file)
        self.rule = rule


class ComponentTrap(RuntimeError):
    """The component ran out of fuel or memory, or hit a bug; the next call runs on a
    fresh instance. A read changed nothing. A write's file holds its old bytes, or its
    new ones if the trap came after the rename that makes the write visible (never a
    mix), and no lock or temporary file is left (the component's `recover-after-trap`).
    `written` says which: `True`, the write was made and a retry would make it again;
    `False`, nothing was written and a retry is safe; `None` for a read, or when the
    write left no trace to tell by (it trapped before taking the file's lock, or after
    releasing it): read the file to know."""

    written: bool | None = None


class MetisWorkspaceError(OSError):
    """The workspace's `.metis` could not be used: not a directory, a symbolic link the
    store was not told to follow, another user's (see `trust_foreign_metis`), or not
    creatable."""

    kind: ClassVar[str] = "workspace"
