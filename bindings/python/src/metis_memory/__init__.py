"""metis-memory: bounded, agent-curated memory for AI agents (`.metis/MEMORY.md` and
`.metis/USER.md`, and with global user memory on the person's own `~/.metis/USER.md`),
run by a sandboxed WebAssembly component (`metis:memory`, the version of this package).

Start with `MemoryStore(workspace).session()`: a `MemorySession` composes the system prompt
before every model call and runs the model's tool calls held to what it has seen. Under
asyncio, `AsyncMemoryStore(workspace).session()`: the same calls as coroutines that never
block the event loop (`metis_memory.aio`)."""

from importlib import metadata as _metadata

from ._global_user import GlobalUser
from ._types import (
    AuditFinding,
    AuditPolicy,
    ComposedPrompt,
    EvictionTrigger,
    FileVersion,
    Limits,
    MemoryEvent,
    MemoryEviction,
    MemoryFile,
    MemoryUpdated,
    Operation,
    OwnWrite,
    PromptSource,
    ScanPolicy,
    SessionState,
    ShownFile,
    ToolDefinition,
    ToolOutcome,
    ToolRefusal,
    ToolSuccess,
    WriteResult,
)
from .errors import (
    ComponentTrap,
    EmptyEntry,
    InvalidUtf8,
    MemoryBusy,
    MemoryChanged,
    MemoryFlagged,
    MemoryPoisoned,
    MemoryUnsynced,
    MemoryReadOnly,
    MemoryFileTooLarge,
    MemoryInsufficientSpace,
    MemoryHardCapExceeded,
    MemoryIOFailure,
    MemoryStoreError,
    MemoryTooLarge,
    MetisWorkspaceError,
    NotARegularFile,
    NothingToReplace,
    ReplaceSourceNotFound,
    ReplaceSourceNotUnique,
)
from .session import MemorySession
from .store import MemoryStore
from .aio import AsyncMemorySession, AsyncMemoryStore

try:
    # The wheel's version, which the build stamps from the WIT package (`wit/world.wit`).
    __version__ = _metadata.version("metis-memory")
except _metadata.PackageNotFoundError:  # imported from a source tree, not installed
    __version__ = "0+unknown"

__all__ = [
    "AsyncMemorySession",
    "AsyncMemoryStore",
    "AuditFinding",
    "AuditPolicy",
    "ComponentTrap",
    "ComposedPrompt",
    "EmptyEntry",
    "EvictionTrigger",
    "FileVersion",
    "GlobalUser",
    "InvalidUtf8",
    "Limits",
    "MemoryBusy",
    "MemoryChanged",
    "MemoryEvent",
    "MemoryEviction",
    "MemoryFile",
    "MemoryFlagged",
    "MemoryPoisoned",
    "MemoryUnsynced",
    "MemoryReadOnly",
    "MemoryFileTooLarge",
    "MemoryInsufficientSpace",
    "MemoryHardCapExceeded",
    "MemoryIOFailure",
    "MemorySession",
    "MemoryStore",
    "MemoryStoreError",
    "MemoryTooLarge",
    "MemoryUpdated",
    "MetisWorkspaceError",
    "NotARegularFile",
    "NothingToReplace",
    "Operation",
    "OwnWrite",
    "PromptSource",
    "ReplaceSourceNotFound",
    "ReplaceSourceNotUnique",
    "ScanPolicy",
    "SessionState",
    "ShownFile",
    "ToolDefinition",
    "ToolOutcome",
    "ToolRefusal",
    "ToolSuccess",
    "WriteResult",
]
