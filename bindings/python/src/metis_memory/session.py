"""`MemorySession`: one conversation's hold on memory, so that a `memory_consolidate`
composed from an old version, or from nothing the model was shown, is refused instead of
dropping what another session or a person wrote. How a session moves is decided in the
component (`compose-session-prompt`, `call-in-session`, `next-response`,
`memory-update`, `show-file`, `offer-file`); this type only keeps it between calls, as the
Rust host's `Session` does."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._types import (
    AuditPolicy,
    ComposedPrompt,
    MemoryFile,
    ScanPolicy,
    SessionState,
    ShownFile,
    ToolOutcome,
)

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
    tool calls scanned under `scan`. A session starts shown nothing, and only what reaches
    the model counts as shown: the prompt `system_prompt` returns, the text
    `memory_update` returns, the model's own writes (their results told it), and the
    content a refusal showed, once `next_response` says the model has read it. Until a
    file has been shown, a consolidate of it is refused (showing it) unless the file is
    empty, so compose the prompt first.

    A snapshot session (`store.session(snapshot=True)`) composes the system prompt once
    and returns the same bytes for the rest of the conversation, so a provider's prompt
    cache keeps the whole prefix: the model learns of its own writes from their tool
    results, and of anyone else's from `memory_update()`, text the host appends to the
    conversation.

    A session may be used from several threads at once (an agent framework that runs one
    model response's tool calls in threads): its calls take turns, each taking the state
    the one before it returned, so no call's move of the session is lost."""

    def __init__(
        self, store: MemoryStore, audit: AuditPolicy, scan: ScanPolicy, *, snapshot: bool = False
    ) -> None:
        self._store = store
        self._audit = audit
        self._scan = scan
        self._snapshot = bool(snapshot)
        self._state = SessionState()
        # In a snapshot session, the base and the prompt composed for it: returned for it.
        self._frozen: tuple[str, ComposedPrompt] | None = None
        # Each call reads the state and replaces it with what the component returned: two
        # at once would each start from the same state, and the second would undo the
        # first's move (a write it made, what a refusal showed). Reentrant, so that a
        # subclass's method may call another.
        self._lock = threading.RLock()

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
    def snapshot(self) -> bool:
        """Whether this is a snapshot session: its system prompt, once composed for a
        base, is kept byte for byte."""
        return self._snapshot

    @property
    def state(self) -> SessionState:
        """What the model has been shown: the state the next tool call is held to, as the
        component last returned it."""
        return self._state

    def system_prompt(self, base: str = "") -> ComposedPrompt:
        """The system prompt for the next model call (`base`, then the memory sections),
        with the versions it was composed from: the session starts again from what the
        model now sees. A store refusal (`MemoryFlagged` under the `refuse` policy, say)
        raises and leaves the session as it was.

        In a snapshot session, the prompt first composed for `base`, byte for byte (the
        same object), whatever was written since, and the model is asked again
        (`next_response`); another base composes and is kept in its place. Call
        `memory_update()` before each user turn to tell the model what changed."""
        with self._lock:
            if self._frozen is not None and self._frozen[0] == base:
                prompt = self._frozen[1]
                self._state = self._store._next_response(self._state)
                return prompt
            prompt, self._state = self._store._compose_session_prompt(base, self._audit)
            if self._snapshot:
                self._frozen = (base, prompt)
            return prompt

    def memory_update(self) -> str | None:
        """What changed in the memory since the model was last shown each file, as text to
        append to the conversation, or `None` when nothing did. Append it at the start of
        the next user turn, never to the system prompt (whose bytes a snapshot session
        keeps for the prompt cache). Each changed file is shown whole, between marker
        lines naming its version, and counts as shown once returned: the model's next
        consolidate is held to it, so the text must reach the model. The model's own
        writes, which it learnt from their tool results, are not news. Read under the
        session's audit policy: a file the audit now flags is withheld instead, and said
        so. Meant for a snapshot session; any session may call it. A store refusal (a
        file that is not text, say) raises and leaves the session as it was."""
        with self._lock:
            text, self._state = self._store._memory_update(self._state, self._audit)
            return text

    def show_file(self, file: MemoryFile | str, *, whole: bool = True) -> ShownFile:
        """One memory file for the model, read fresh and audited under the session's
        policy, when the model asks to see it (a memory tool's `view`). Unless the audit
        keeps it out (`withheld`: its text must not reach the model, and the tools refuse
        to write it), the file counts as shown at the version read from the model's next
        response (`next_response`), as a refusal's content does: the other calls of this
        response were written before the model read it. Put exactly `text` before the model. With `whole=False` the host shows only part of the text
        (a range of lines): the audit still withholds a flagged file, but nothing counts
        as shown, since a consolidate built on a part would drop the rest. A store refusal
        (a file that is not text) raises and leaves the session as it was."""
        with self._lock:
            shown, self._state = self._store._show_file(
                MemoryFile(file), self._state, self._audit, whole=whole
            )
            return shown

    def call_tool(self, name: str, input: str | Mapping[str, Any]) -> ToolOutcome:
        """Runs one of the model's tool calls (`input`: its JSON text, or a mapping sent
        as JSON), held to what the model has been shown; returns a `ToolSuccess` or a
        `ToolRefusal` (a consolidate of a file changed since the model saw it, or never
        shown to it, shows the current content). Each runs on a fresh instance, as
        `MemoryStore.call_tool` does. A `ComponentTrap` leaves the session as it was (and
        the file as the trap left it: read it to know)."""
        with self._lock:
            outcome, self._state = self._store._call_in_session(
                name, input, self._scan, self._state
            )
            return outcome

    def next_response(self) -> None:
        """The model is asked again without a freshly composed prompt: what refusals of
        its last response showed it now counts as seen. (`system_prompt` before the next
        model call does this too.)"""
        with self._lock:
            self._state = self._store._next_response(self._state)

    def __repr__(self) -> str:
        snapshot = ", snapshot=True" if self._snapshot else ""
        return f"MemorySession({self._store!r}, audit={self._audit.value!r}{snapshot})"
