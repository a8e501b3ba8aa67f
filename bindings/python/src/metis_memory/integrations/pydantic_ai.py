"""Memory for a pydantic-ai agent: the `MetisMemory` capability over a `MemorySession`.

```python
from pydantic_ai import Agent
from metis_memory import MemoryStore
from metis_memory.integrations.pydantic_ai import MetisMemory

session = MemoryStore("~/projects/app").session()  # one per conversation
agent = Agent("anthropic:claude-sonnet-5-5", capabilities=[MetisMemory(session)])
```

It gives the model the three memory tools and the memory in the instructions, composed
afresh before every model request (a snapshot session's prompt is kept byte for byte, and
what others wrote since reaches the model as a message of the request instead)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from pydantic_ai import FunctionToolset, RunContext, Tool
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.models import ModelRequestContext

from .._types import ToolRefusal
from ..session import MemorySession


def memory_toolset(session: MemorySession) -> FunctionToolset[Any]:
    """The three memory tools, as the component defines them, held to what the model of
    `session` has seen. Each is a `sequential` tool: pydantic-ai runs the calls of one
    response in the order the model emitted them, one at a time, so the outcome of a
    response does not depend on which thread finishes first. A refusal comes back as a
    failed tool result (`ToolFailed`) the model reads, which spends no retry budget."""
    tools = [
        Tool[Any].from_schema(
            _tool_function(session, definition.name),
            name=definition.name,
            description=definition.description,
            json_schema=definition.input_schema,
            sequential=True,
        )
        for definition in session.store.tool_definitions()
    ]
    return FunctionToolset(tools)


def _tool_function(session: MemorySession, name: str) -> Any:
    def call(**arguments: Any) -> str:
        outcome = session.call_tool(name, arguments)
        if isinstance(outcome, ToolRefusal):
            raise ToolFailed(outcome.message)
        # The model reads a tool's return value: the short text, not the write's details.
        return outcome.text

    call.__name__ = name
    return call


@dataclass
class MetisMemory(AbstractCapability[Any]):
    """A conversation's memory in a pydantic-ai agent: the memory tools, and the memory
    composed into the instructions (after `base`, empty by default, since the agent's own
    instructions come first). One per conversation, as its session is.

    pydantic-ai evaluates the instructions before every model request, once the tool calls
    of the response before it have run: that is where a model response ends, and
    `system_prompt` tells the session so (it composes afresh, or in a snapshot session
    returns the kept bytes and counts as `next_response`), so a refusal's content counts
    as seen from the next response on. With a snapshot session what another session or a
    person wrote since the model last saw it (`memory_update()`) is added to the request
    being prepared, as a user message, so it reaches the model and stays in the history;
    the instructions stay the bytes first composed."""

    session: MemorySession
    base: str = ""

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # holds a live session, which no spec can name

    def get_toolset(self) -> FunctionToolset[Any]:
        return memory_toolset(self.session)

    def get_instructions(self) -> Any:
        return self._instructions

    async def _instructions(self) -> str:
        prompt = await asyncio.to_thread(self.session.system_prompt, self.base)
        return prompt.text

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        # pydantic-ai has composed the instructions by now, so the update tells only what
        # changed since the prompt (or the last update) the model holds.
        if self.session.snapshot:
            update = await asyncio.to_thread(self.session.memory_update)
            if update is not None:
                ctx.enqueue(update)
        return request_context
