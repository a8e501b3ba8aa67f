"""`MemorySession`'s import path, and the types its methods take and return, as they were
importable from here. The class lives in `store.py`, beside `MemoryStore`: each names the
other, and no two of the package's modules import each other."""

from ._types import (
    AuditPolicy,
    ComposedPrompt,
    MemoryFile,
    ScanPolicy,
    SessionState,
    ShownFile,
    ToolOutcome,
)
from .store import MemorySession

__all__ = [
    "AuditPolicy",
    "ComposedPrompt",
    "MemoryFile",
    "MemorySession",
    "ScanPolicy",
    "SessionState",
    "ShownFile",
    "ToolOutcome",
]
