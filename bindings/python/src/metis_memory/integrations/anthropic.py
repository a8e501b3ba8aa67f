"""Claude's memory tool (`memory_20250818`) over a `MemorySession`, for the Anthropic SDK's
tool runner: `MetisMemoryTool` and `AsyncMetisMemoryTool`.

```python
import anthropic
from metis_memory import MemoryStore
from metis_memory.integrations.anthropic import MetisMemoryTool

memory = MetisMemoryTool(MemoryStore("~/projects/app").session())  # one per conversation
runner = anthropic.Anthropic().beta.messages.tool_runner(
    model="claude-sonnet-5-5", max_tokens=1024, tools=[memory],
    messages=[{"role": "user", "content": "Remember that we build with cargo."}],
)
for message in memory.responses(runner):
    ...
```

Claude views memory when it wants to, so the memory is not in the prompt: `/memories`
holds the two files, `view` shows one (and it counts as shown), and the other commands
are the memory tools, held to what the model was shown. A refusal is an `is_error` tool
result (the SDK's `ToolError`), which the model reads; nothing is retried for it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from typing import TypeVar

from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaCacheControlEphemeralParam,
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from ..session import MemorySession
from ._claude_memory import ClaudeMemory, CommandRefused

T = TypeVar("T")


def _run(command: Callable[[], str]) -> str:
    try:
        return command()
    except CommandRefused as refused:
        raise ToolError(refused.message) from None


class MetisMemoryTool(BetaAbstractMemoryTool):
    """Claude's memory tool over `session` (one per conversation, as the session is).

    Iterate the tool runner through `responses(runner)`: each message it yields is a new
    model response, written after the model read the results of the one before, and the
    session is told so before that response's tool calls run (what a refusal showed
    counts as seen from then on, and so does a view). Iterated otherwise (`until_done()`),
    the tool cannot tell where a response ends: a view counts as read at once, as over
    MCP, so the model views the file before it writes it again."""

    def __init__(
        self,
        session: MemorySession,
        *,
        cache_control: BetaCacheControlEphemeralParam | None = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        self._memory = ClaudeMemory(session)

    @property
    def session(self) -> MemorySession:
        return self._memory.session

    def responses(self, runner: Iterable[T]) -> Iterator[T]:
        """The items of `runner`, each a model response, the session told of each."""
        self._memory.boundaries = True
        for item in runner:
            self._memory.session.next_response()
            yield item

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return _run(lambda: self._memory.view(command.path, command.view_range))

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return _run(lambda: self._memory.create(command.path, command.file_text))

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return _run(
            lambda: self._memory.str_replace(command.path, command.old_str, command.new_str)
        )

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return _run(
            lambda: self._memory.insert(command.path, command.insert_line, command.insert_text)
        )

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return _run(lambda: self._memory.delete(command.path))

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return _run(lambda: self._memory.rename(command.old_path, command.new_path))


class AsyncMetisMemoryTool(BetaAsyncAbstractMemoryTool):
    """`MetisMemoryTool` for the async client's tool runner: each command runs the
    session's blocking calls in a worker thread. Iterate the runner through
    `responses(runner)` (`async for`)."""

    def __init__(
        self,
        session: MemorySession,
        *,
        cache_control: BetaCacheControlEphemeralParam | None = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        self._memory = ClaudeMemory(session)

    @property
    def session(self) -> MemorySession:
        return self._memory.session

    async def responses(self, runner: AsyncIterable[T]) -> AsyncIterator[T]:
        """The items of `runner`, each a model response, the session told of each."""
        self._memory.boundaries = True
        async for item in runner:
            await asyncio.to_thread(self._memory.session.next_response)
            yield item

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return await asyncio.to_thread(
            _run, lambda: self._memory.view(command.path, command.view_range)
        )

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return await asyncio.to_thread(
            _run, lambda: self._memory.create(command.path, command.file_text)
        )

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return await asyncio.to_thread(
            _run, lambda: self._memory.str_replace(command.path, command.old_str, command.new_str)
        )

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return await asyncio.to_thread(
            _run,
            lambda: self._memory.insert(command.path, command.insert_line, command.insert_text),
        )

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return await asyncio.to_thread(_run, lambda: self._memory.delete(command.path))

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return await asyncio.to_thread(
            _run, lambda: self._memory.rename(command.old_path, command.new_path)
        )
