"""The asyncio interface: `AsyncMemoryStore` and `AsyncMemorySession`, the memory store and
its sessions as coroutines that never block the event loop.

```python
from metis_memory import AsyncMemoryStore

store = AsyncMemoryStore("~/projects/app")  # one per workspace, as MemoryStore
session = store.session()  # one per conversation (makes nothing, so not awaited)
prompt = await session.system_prompt("You are a careful assistant.")
outcome = await session.call_tool("memory_add", {"file": "MEMORY.md", "entry": "- uses cargo"})
```

Each call runs the synchronous implementation (`MemoryStore`, `MemorySession`: the same
checks, results and exceptions) on a thread the store keeps for itself, one per store,
made on its first call: the calls of one store, and of all its sessions, run one at a
time, in the order they were made, whichever coroutines made them. wasmtime compiles
and runs the component without holding the GIL; what holds it (the host's checks, turning
values to and from wasmtime's) runs in short stretches between calls into wasmtime, and a
thread holding it hands it over within `sys.getswitchinterval()` (5 ms) to one waiting,
so the loop keeps running (`scripts/bench-loop` measures how long it waits; BENCHMARKS.md
has the figures).

Cancelling a coroutine that awaits a call cancels the call if it has not started: it
never runs. A call that has started cannot be stopped half-way; it runs to the end on the
store's thread and its effect stays (a write lands, a session keeps the move the
component returned, as it must: the state is what is on disk), but its result is
dropped. The calls after it run as usual.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
from collections.abc import Callable, Generator, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ._global_user import GlobalUser
from ._types import (
    AuditFinding,
    AuditPolicy,
    ComposedPrompt,
    FileVersion,
    MemoryFile,
    ScanPolicy,
    SessionState,
    ToolDefinition,
    ToolOutcome,
    WriteResult,
)
from .store import MemorySession, MemoryStore, _tool_input

if TYPE_CHECKING:
    from ._types import ShownFile

T = TypeVar("T")

__all__ = ["AsyncMemorySession", "AsyncMemoryStore"]


class AsyncMemoryStore:
    """`MemoryStore` for asyncio: the same methods, each a coroutine run on a thread this
    store keeps for its calls (one thread, made on the first call, so the calls of this
    store and its sessions run in the order they were made). Properties that touch no
    file (`workspace_path`, `metis_dir`, `global_user`, `prompt_budget`, `file_path`)
    are plain.

    Made from a workspace path and `MemoryStore`'s keyword arguments (`limits`,
    `read_only`, `global_user`, …), or around a `MemoryStore` (`AsyncMemoryStore(store)`),
    which may go on being used synchronously from other threads meanwhile (it may be used
    from several at once). It may serve one event loop after another. `aclose()`, or
    `async with`, ends the thread once the calls made before it are done; a store that is
    dropped ends it too."""

    def __init__(
        self, workspace: str | os.PathLike[str] | MemoryStore, **options: Any
    ) -> None:
        if isinstance(workspace, MemoryStore):
            if options:
                raise TypeError(
                    "AsyncMemoryStore(store) takes no options (they are the MemoryStore's), "
                    f"got {sorted(options)}"
                )
            self._store = workspace
        else:
            self._store = MemoryStore(workspace, **options)
        # One thread: the calls of this store run one at a time, first made first run. Its
        # worker holds only a weak reference to the executor, so a store that is dropped
        # ends it.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="metis-memory")
        self._closed = False

    @property
    def sync(self) -> MemoryStore:
        """The `MemoryStore` this store runs: for synchronous use (off the event loop)."""
        return self._store

    @property
    def workspace_path(self) -> str:
        return self._store.workspace_path

    @property
    def metis_dir(self) -> Path:
        return self._store.metis_dir

    @property
    def global_user(self) -> GlobalUser | None:
        """Global user memory as this store has it (`None`: off)."""
        return self._store.global_user

    @property
    def prompt_budget(self) -> bool:
        """Whether each prompt section's heading shows how full its file is."""
        return self._store.prompt_budget

    def file_path(self, file: MemoryFile | str) -> Path | None:
        """Where `file` is on disk (`MemoryStore.file_path`: reads nothing)."""
        return self._store.file_path(file)

    async def memory_files(self) -> tuple[MemoryFile, ...]:
        """`MemoryStore.memory_files`."""
        return await self._call(self._store.memory_files)

    async def global_is_workspace(self) -> bool:
        """`MemoryStore.global_is_workspace`."""
        return await self._call(self._store.global_is_workspace)

    # Reads

    async def read(self, file: MemoryFile | str) -> str:
        """The file's text; `""` when it is missing."""
        return await self._call(self._store.read, file)

    async def exists(self, file: MemoryFile | str) -> bool:
        """Whether the file exists (a 0-byte file does)."""
        return await self._call(self._store.exists, file)

    async def size_bytes(self, file: MemoryFile | str) -> int:
        """The file's size in bytes on disk; 0 when it is missing."""
        return await self._call(self._store.size_bytes, file)

    # Writes: each returns a WriteResult or raises a MemoryStoreError.

    async def add_entry(self, file: MemoryFile | str, entry: str) -> WriteResult:
        """Appends `entry`, stripped, as its own line."""
        return await self._call(self._store.add_entry, file, entry)

    async def replace(self, file: MemoryFile | str, old_text: str, new_text: str) -> WriteResult:
        """Replaces the one occurrence of `old_text` with `new_text`."""
        return await self._call(self._store.replace, file, old_text, new_text)

    async def consolidate(self, file: MemoryFile | str, new_content: str) -> WriteResult:
        """Makes `new_content` the whole file, byte for byte."""
        return await self._call(self._store.consolidate, file, new_content)

    async def consolidate_if_unchanged(
        self, file: MemoryFile | str, content: str, expected_hash: str
    ) -> WriteResult:
        """`consolidate`, only if the file's SHA-256 is still `expected_hash`
        (`MemoryChanged` otherwise, with the current hash and content)."""
        return await self._call(
            self._store.consolidate_if_unchanged, file, content, expected_hash
        )

    # Caps: static in MemoryStore, coroutines here since the first one may compile the
    # component.

    async def soft_cap(self, file: MemoryFile | str) -> int:
        """The size in bytes above which a write reports `over_soft_cap`."""
        return await self._call(MemoryStore.soft_cap, file)

    async def hard_cap(self, file: MemoryFile | str) -> int:
        """The largest size in bytes a write may leave the file at."""
        return await self._call(MemoryStore.hard_cap, file)

    # Composition and audit

    async def assemble_system_prompt(self, base: str) -> str:
        """`base`, then the USER.md and MEMORY.md sections (empty ones left out)."""
        return await self._call(self._store.assemble_system_prompt, base)

    async def compose_system_prompt(
        self, base: str, audit: AuditPolicy | str = AuditPolicy.OFF
    ) -> ComposedPrompt:
        """The prompt with the SHA-256 of each file it was composed from, audited under
        `audit`."""
        return await self._call(self._store.compose_system_prompt, base, audit)

    async def audit(self, file: MemoryFile | str) -> tuple[AuditFinding, ...]:
        """What the poisoning scan's rules find in the file on disk."""
        return await self._call(self._store.audit, file)

    # Tools

    async def tool_definitions(self) -> list[ToolDefinition]:
        """`memory_add`, `memory_replace`, `memory_consolidate`, for an LLM API."""
        return await self._call(self._store.tool_definitions)

    async def call_tool(
        self,
        name: str,
        input: str | Mapping[str, Any],
        *,
        seen: Mapping[MemoryFile | str, str] | Iterable[FileVersion] | None = None,
        withheld: Iterable[MemoryFile | str] = (),
        scan: ScanPolicy | None = None,
        unheld: bool = False,
    ) -> ToolOutcome:
        """One tool call outside any session (`MemoryStore.call_tool`); an agent host uses
        a `session()` instead."""
        # The arguments are read now, as the caller gave them, not later on the store's
        # thread (a mapping or an iterator the caller goes on to change or use up).
        if seen is not None:
            seen = dict(seen) if isinstance(seen, Mapping) else tuple(seen)
        return await self._call(
            functools.partial(
                self._store.call_tool,
                name,
                _tool_input(input),
                seen=seen,
                withheld=tuple(withheld),
                scan=scan,
                unheld=unheld,
            )
        )

    # Sessions

    def session(
        self,
        *,
        audit: AuditPolicy | str = AuditPolicy.OMIT,
        scan: ScanPolicy | None = None,
        snapshot: bool = False,
    ) -> AsyncMemorySession:
        """A model's conversation with this workspace's memory (`MemoryStore.session`).
        Making one reads nothing, so this need not be awaited (`await store.session()`
        gives the same session: awaiting a session gives the session itself)."""
        return AsyncMemorySession(
            self, self._store.session(audit=audit, scan=scan, snapshot=snapshot)
        )

    # The thread

    async def aclose(self) -> None:
        """Ends this store's thread once every call made before is done; a call made after
        raises `RuntimeError`. A second `aclose()` does nothing."""
        if self._closed:
            return
        # The calls made before run first: the thread takes them in order.
        last = asyncio.get_running_loop().run_in_executor(self._executor, _nothing)
        self._closed = True
        self._executor.shutdown(wait=False)
        await last

    async def __aenter__(self) -> AsyncMemoryStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _call(self, function: Callable[..., T], *args: Any) -> T:
        """`function(*args)` on this store's thread, in the caller's context (its context
        variables), after every call made before it."""
        if self._closed:
            raise RuntimeError(f"{self!r} is closed")
        context = contextvars.copy_context()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, context.run, function, *args)

    def __repr__(self) -> str:
        return f"AsyncMemoryStore({self.workspace_path!r})"


class AsyncMemorySession:
    """`MemorySession` for asyncio (`AsyncMemoryStore.session()`): the same methods, each a
    coroutine run on its store's thread, so the calls of one session run one at a time in
    the order they were made, each held to the state the one before it left, however many
    coroutines make them at once (an agent framework running one response's tool calls
    concurrently): all of them land, and `state` counts each write once."""

    def __init__(self, store: AsyncMemoryStore, session: MemorySession) -> None:
        self._store = store
        self._session = session

    @property
    def store(self) -> AsyncMemoryStore:
        """The store this session reads and writes."""
        return self._store

    @property
    def sync(self) -> MemorySession:
        """The `MemorySession` this session runs."""
        return self._session

    @property
    def audit(self) -> AuditPolicy:
        """The audit policy prompts are composed under."""
        return self._session.audit

    @property
    def scan(self) -> ScanPolicy:
        """The poisoning scan tool calls run under."""
        return self._session.scan

    @property
    def snapshot(self) -> bool:
        """Whether this is a snapshot session: its system prompt, once composed for a
        base, is kept byte for byte."""
        return self._session.snapshot

    @property
    def state(self) -> SessionState:
        """What the model has been shown, as the component last returned it: after the
        calls that have finished (one still running has not moved it yet)."""
        return self._session.state

    async def system_prompt(self, base: str = "") -> ComposedPrompt:
        """`MemorySession.system_prompt`: the system prompt for the next model call."""
        return await self._store._call(self._session.system_prompt, base)

    async def memory_update(self) -> str | None:
        """`MemorySession.memory_update`: what changed since the model was last shown each
        file, as text for the conversation, or `None`."""
        return await self._store._call(self._session.memory_update)

    async def show_file(self, file: MemoryFile | str, *, whole: bool = True) -> ShownFile:
        """`MemorySession.show_file`: one memory file for the model, read fresh and audited,
        when it asks to see it (a memory tool's `view`); with `whole=False`, for a host
        that shows only part of it."""
        return await self._store._call(
            functools.partial(self._session.show_file, file, whole=whole)
        )

    async def call_tool(self, name: str, input: str | Mapping[str, Any]) -> ToolOutcome:
        """`MemorySession.call_tool`: one of the model's tool calls, held to what the model
        has been shown."""
        # The input is read now (JSON text), as the caller gave it.
        return await self._store._call(self._session.call_tool, name, _tool_input(input))

    async def next_response(self) -> None:
        """`MemorySession.next_response`: the model is asked again without a fresh
        prompt."""
        await self._store._call(self._session.next_response)

    def __await__(self) -> Generator[Any, None, AsyncMemorySession]:
        """`await store.session()` is `store.session()`: the session, at once."""
        return self._itself().__await__()

    async def _itself(self) -> AsyncMemorySession:
        return self

    def __repr__(self) -> str:
        snapshot = ", snapshot=True" if self.snapshot else ""
        return f"AsyncMemorySession({self._store!r}, audit={self.audit.value!r}{snapshot})"


def _nothing() -> None:
    pass
