"""Memory for an OpenAI Agents SDK agent: `MetisMemory` over a `MemorySession`.

```python
from agents import Agent, Runner
from metis_memory import MemoryStore
from metis_memory.integrations.openai_agents import MetisMemory

memory = MetisMemory(MemoryStore("~/projects/app").session(), base="You are a careful assistant.")
agent = Agent(name="assistant", instructions=memory.instructions, tools=memory.tools)
result = await Runner.run(agent, "We build with cargo.", run_config=memory.run_config())
```

The instructions are `base` and the memory, composed before every model call; the tools
are the three memory tools; the run config runs one response's tool calls one at a time,
in the order the model emitted them."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
from typing import Any

from agents import FunctionTool, RunConfig, RunContextWrapper
from agents.exceptions import UserError
from agents.run_config import ToolExecutionConfig
from agents.tool_context import ToolContext

from .._types import ToolDefinition, ToolRefusal
from ..session import MemorySession


class MetisMemory:
    """A conversation's memory for the Agents SDK, one per conversation as its session is:
    `instructions` (pass it as the agent's `instructions`), `tools` (add them to the
    agent's) and `run_config()` (pass it to every `Runner.run` of the conversation).

    The SDK calls the instructions before every model call, which is where a model
    response ends: the session is told, and the prompt composed afresh. With a snapshot
    session the prompt's bytes are kept, and what another session or a person wrote since
    the model last saw it (`memory_update()`) is appended after them, where it stays for
    the rest of the conversation (the model must keep what it was shown)."""

    def __init__(self, session: MemorySession, base: str = "") -> None:
        self._session = session
        self._base = base
        # What snapshot updates have shown the model, oldest first: each must reach every
        # later model call, since the session counts it as shown.
        self._updates: list[str] = []
        self._tools = [_memory_tool(session, d) for d in session.store.tool_definitions()]

    @property
    def session(self) -> MemorySession:
        return self._session

    @property
    def tools(self) -> list[FunctionTool]:
        """The three memory tools, as the component defines them. A refusal is the tool's
        output (the Responses API has no error flag for a function call's output), text
        written for the model; an error of the host (a trap, an unusable `.metis/`) fails
        the run instead of asking the model to try again."""
        return list(self._tools)

    async def instructions(self, context: RunContextWrapper[Any], agent: Any) -> str:
        """`base` and the memory, for the next model call."""
        return await asyncio.to_thread(self._compose)

    def _compose(self) -> str:
        text = self._session.system_prompt(self._base).text
        if not self._session.snapshot:
            return text
        update = self._session.memory_update()
        if update is not None:
            self._updates.append(update)
        return "\n\n".join([text, *self._updates]) if self._updates else text

    def run_config(self, config: RunConfig | None = None) -> RunConfig:
        """`config` (a default one if `None`) running one function tool call at a time, in
        the order the model emitted them, so that the outcome of a response with several
        memory calls is the one the model asked for. A memory tool call in a run without
        it fails the run."""
        config = config or RunConfig()
        execution = config.tool_execution or ToolExecutionConfig()
        return dataclasses.replace(
            config,
            tool_execution=dataclasses.replace(execution, max_function_tool_concurrency=1),
        )


def _memory_tool(session: MemorySession, definition: ToolDefinition) -> FunctionTool:
    name = definition.name

    async def invoke(context: ToolContext[Any], arguments: str) -> str:
        _require_sequential(context)
        # The component reads the JSON text as the model sent it, and validates it.
        outcome = await asyncio.to_thread(session.call_tool, name, arguments or "{}")
        return outcome.message if isinstance(outcome, ToolRefusal) else outcome.text

    return FunctionTool(
        name=name,
        description=definition.description,
        params_json_schema=copy.deepcopy(definition.input_schema),
        on_invoke_tool=invoke,
        # The component's schema as it is: strict mode would rewrite it.
        strict_json_schema=False,
    )


def _require_sequential(context: ToolContext[Any]) -> None:
    config = context.run_config
    if config is None:
        return  # invoked outside a run: one call, nothing runs beside it
    execution = config.tool_execution
    if execution is None or execution.max_function_tool_concurrency != 1:
        raise UserError(
            "metis-memory's tools run one at a time, in the order the model emitted them: "
            "pass run_config=memory.run_config() to Runner.run"
        )
