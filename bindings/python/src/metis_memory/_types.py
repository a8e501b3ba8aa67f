"""The values of the memory store and its tools, with the spec's (§4, §7) field names."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import ClassVar


class MemoryFile(StrEnum):
    """One of the memory files: the two in a workspace's `.metis/`, and the person's own
    USER.md shared by every workspace (`GLOBAL_USER`, as texts call it: `USER.md` in the
    `GlobalUser` directory; with global user memory off it reads as empty and every write
    to it fails with `MemoryIOFailure`)."""

    MEMORY = "MEMORY.md"
    USER = "USER.md"
    GLOBAL_USER = "~/.metis/USER.md"

    @classmethod
    def _missing_(cls, value: object) -> MemoryFile | None:
        # The short names the CLI takes (`memory`, `user`, `global-user`, in any case),
        # so that a name that works at the terminal works here: tests/surfaces/file_names.json.
        if not isinstance(value, str):
            return None
        return _SHORT_NAMES.get(value.lower())


_SHORT_NAMES = {
    "memory": MemoryFile.MEMORY,
    "user": MemoryFile.USER,
    "global-user": MemoryFile.GLOBAL_USER,
}


class AuditPolicy(StrEnum):
    """What `compose_system_prompt` does with a file in which the memory audit finds something."""

    OFF = "off"
    REPORT = "report"
    OMIT = "omit"
    REFUSE = "refuse"


class Operation(StrEnum):
    """The write a tool call made."""

    ADD = "add"
    REPLACE = "replace"
    CONSOLIDATE = "consolidate"


class EvictionTrigger(StrEnum):
    """What caused a `memory.eviction` event."""

    SIZE_CAP_EXCEEDED = "size_cap_exceeded"
    MANUAL = "manual"


@dataclass(frozen=True)
class Limits:
    """What one call may use; exceeding either is a `ComponentTrap` (after which a write
    may or may not have landed: see `ComponentTrap`)."""

    fuel: int = 1_000_000_000
    memory_bytes: int = 64 << 20

    def __post_init__(self) -> None:
        # wasmtime-py would take a negative memory limit as none, and wrap negative fuel
        # to nearly unlimited: a limit that limits nothing is refused, as in the Node host.
        for name in ("fuel", "memory_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"Limits.{name} must be a positive integer, got {value!r}")


@dataclass(frozen=True)
class WriteResult:
    """Returned by writes; carries hashes for `memory.updated` events."""

    file: MemoryFile
    before_hash: str
    after_hash: str
    before_size_bytes: int
    after_size_bytes: int
    over_soft_cap: bool
    over_hard_cap: bool


@dataclass(frozen=True)
class AuditFinding:
    """A rule of the poisoning scan that matches a line of a file on disk."""

    line: int
    rule: str
    detail: str


@dataclass(frozen=True)
class PromptSource:
    """One memory file as prompt composition read it."""

    file: MemoryFile
    sha256: str
    size_bytes: int
    included: bool
    findings: tuple[AuditFinding, ...]


@dataclass(frozen=True)
class ComposedPrompt:
    """A composed system prompt and the versions of the files it came from, in prompt
    order (`~/.metis/USER.md` with global user memory on, then USER.md, then MEMORY.md)."""

    text: str
    sources: tuple[PromptSource, ...]


@dataclass(frozen=True)
class FileVersion:
    """A version of a memory file: the SHA-256, lowercase hex, of its bytes."""

    file: MemoryFile
    sha256: str


@dataclass(frozen=True)
class OwnWrite:
    """A write the model of a session made (WIT `own-write`): the file's SHA-256 before
    and after it, lowercase hex."""

    file: MemoryFile
    before_sha256: str
    after_sha256: str


@dataclass(frozen=True)
class SessionState:
    """What the model of one conversation has seen of the memory files (WIT `session`):
    the state a `memory_consolidate` is held to. The component starts it and moves it; a
    `MemorySession` only keeps it between calls, and nothing else should make one up.

    `seen`: the version of each file the model has been shown whole (a consolidate of a
    listed file is refused unless the file is still that version; of a file not listed,
    unless the file is empty or missing, since the model was shown nothing of it).
    `withheld`: files the memory audit kept out of the model's context (every tool write
    to them is refused). `shown`: versions refusals of the current model response showed
    it, seen from the next response on. `own_writes`: the writes the model made in this
    session, oldest first (the last 16), so that a refusal can say when the model's own
    write, not another session or a person, moved a file."""

    seen: tuple[FileVersion, ...] = ()
    withheld: tuple[MemoryFile, ...] = ()
    shown: tuple[FileVersion, ...] = ()
    own_writes: tuple[OwnWrite, ...] = ()


@dataclass(frozen=True)
class ShownFile:
    """One memory file read for the model of a session on demand (`MemorySession.show_file`,
    a memory tool's `view`). Unless `withheld`, the session counts `text` as shown, so the
    host must put exactly `text` before the model; when `withheld` (the audit keeps the
    file out: `findings` says why), `text` must not reach the model, and every tool write
    to the file is refused."""

    file: MemoryFile
    text: str
    findings: tuple[AuditFinding, ...]
    withheld: bool


@dataclass(frozen=True)
class ScanPolicy:
    """Which parts of the memory poisoning scan a tool call runs."""

    invisible_characters: bool = True
    injection_patterns: bool = True


@dataclass(frozen=True)
class ToolDefinition:
    """One tool, ready for an LLM API (`input_schema` is the JSON Schema as a dict)."""

    name: str
    description: str
    input_schema: dict[str, object]

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class MemoryUpdated:
    """`memory.updated`: emitted for every successful write."""

    type: ClassVar[str] = "memory.updated"
    file: MemoryFile
    operation: Operation
    before_hash: str
    after_hash: str
    before_size_bytes: int
    after_size_bytes: int

    def to_dict(self) -> dict[str, object]:
        """`{"type", "payload"}` with the spec's field names, ready for `json.dumps`."""
        return {"type": self.type, "payload": asdict(self)}


@dataclass(frozen=True)
class MemoryEviction:
    """`memory.eviction`: a write left the file over its soft cap. Despite the name, nothing
    is evicted: the store never drops an entry by itself, so `entries_evicted` is always 0.
    The event is the cue to consolidate the file (the name is the reference
    implementation's, which the contract keeps)."""

    type: ClassVar[str] = "memory.eviction"
    file: MemoryFile
    trigger: EvictionTrigger
    entries_evicted: int
    size_before_bytes: int
    size_after_bytes: int

    def to_dict(self) -> dict[str, object]:
        """`{"type", "payload"}` with the spec's field names, ready for `json.dumps`."""
        return {"type": self.type, "payload": asdict(self)}


MemoryEvent = MemoryUpdated | MemoryEviction


@dataclass(frozen=True)
class ToolSuccess:
    """A tool call that wrote the file: the text for the model and the events to publish."""

    text: str
    operation: Operation
    result: WriteResult
    events: tuple[MemoryEvent, ...] = field(default_factory=tuple)
    is_error: ClassVar[bool] = False


@dataclass(frozen=True)
class ToolRefusal:
    """A tool call that changed nothing (a value, not an exception): `message` is for the model.

    `shown` is the file version the message showed in full (a stale consolidate refused).
    """

    message: str
    is_user_visible: bool
    shown: FileVersion | None = None
    is_error: ClassVar[bool] = True


ToolOutcome = ToolSuccess | ToolRefusal
