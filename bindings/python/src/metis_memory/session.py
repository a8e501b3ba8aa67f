"""`MemorySession`: one conversation's hold on memory, so that a `memory_consolidate`
composed from an old version is refused instead of dropping what another session or a
person wrote since. How a session moves is decided in the component
(`compose-session-prompt`, `call-in-session`, `next-response`); this type only keeps it
between calls, as the Rust host's `Session` does."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._types import AuditPolicy, ComposedPrompt, ScanPolicy, SessionState, ToolOutcome

if TYPE_CHECKING:
    from .store import MemoryStore


class MemorySession:
    """A model's conversation with a workspace's memory (`MemoryStore.session()`):

    ```python
    session = store.session()
    prompt = session.system_prompt("You are a careful assistant.")  # before every model call
    # … send prompt.text with the tool definitions; for each tool call the model makes:
    outcome = session.call_tool("memory_add", {"file": "MEMORY.md", "entry": "- uses cargo"})
    ```

    Prompts are composed under the `audit` policy (`omit` unless told otherwise: a file
    the memory audit flags is left out of the prompt, and the tools refuse to write it),
    tool calls scanned under `scan`. Until the first `system_prompt` nothing is seen, so a
    consolidate is held to nothing: compose the prompt first. A session is one
    conversation's: use it from one thread at a time."""

    def __init__(self, store: MemoryStore, audit: AuditPolicy, scan: ScanPolicy) -> None:
        self._store = store
        self._audit = audit
        self._scan = scan
        self._state = SessionState()

    @property
    def store(self) -> MemoryStore:
        """The store this session reads and writes."""
        return self._store

    @property
    def audit(self) -> AuditPolicy:
        """The audit policy prompts are composed under."""
        return self._audit

    @property
    def scan(self) -> ScanPolicy:
        """The poisoning scan tool calls run under."""
        return self._scan

    @property
    def state(self) -> SessionState:
        """What the model has seen: the state the next tool call is held to, as the
        component last returned it."""
        return self._state

    def system_prompt(self, base: str = "") -> ComposedPrompt:
        """The system prompt for the next model call (`base`, then the memory sections),
        with the versions it was composed from: the session starts again from what the
        model now sees. A store refusal (`MemoryFlagged` under the `refuse` policy, say)
        raises and leaves the session as it was."""
        prompt, self._state = self._store._compose_session_prompt(base, self._audit)
        return prompt

    def call_tool(self, name: str, input: str | Mapping[str, Any]) -> ToolOutcome:
        """Runs one of the model's tool calls (`input`: its JSON text, or a mapping sent
        as JSON), held to what the model has seen; returns a `ToolSuccess` or a
        `ToolRefusal` (a stale consolidate's shows the current content). Each runs on a
        fresh instance, as `MemoryStore.call_tool` does. A `ComponentTrap` leaves the
        session as it was (and the file as the trap left it: read it to know)."""
        outcome, self._state = self._store._call_in_session(name, input, self._scan, self._state)
        return outcome

    def next_response(self) -> None:
        """The model is asked again without a freshly composed prompt: what refusals of
        its last response showed it now counts as seen. (`system_prompt` before the next
        model call does this too.)"""
        self._state = self._store._next_response(self._state)

    def __repr__(self) -> str:
        return f"MemorySession({self._store!r}, audit={self._audit.value!r})"
