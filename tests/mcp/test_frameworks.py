"""Which agent frameworks show the model the server's `initialize` instructions, and that
`memory_view` and a refusal reach the model through them: `metis-memory mcp` driven by
each framework's own MCP integration, with an offline model in place of a real one that
records everything it is given and answers with scripted tool calls. Pydantic AI
(`pydantic-ai-slim`, `MCPToolset` over FastMCP's `StdioTransport`, its `FunctionModel`) and
the OpenAI Agents SDK (`openai-agents`, `MCPServerStdio`, a `Model` of this file's own).
Nothing reaches a network: the models are local functions. docs/mcp.md cites these tests
for which clients forward the instructions. Run by scripts/test-mcp, which installs both
frameworks, pinned, into its virtual environment and sets METIS_MEMORY_BIN."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

BIN = os.environ["METIS_MEMORY_BIN"]

# A bound on a broken server or framework, never a wait for something to happen.
PATIENCE_SECONDS = 60

# An entry only the memory holds: if the model is given it before any tool call, the
# instructions (which carry the memory) reached it.
ENTRY = "- the build runs on the quartz-falcon runner"
# The start of the server's guidance, the other half of its instructions.
GUIDANCE = "Bounded memory for this workspace"
# The framework user's own instructions: they must reach the model, or the recording
# would prove nothing.
OWN = "You keep notes for the team (own instructions)."
CONSOLIDATED = "- builds run on the quartz-falcon runner\n"
NOT_SHOWN = "You have not been shown MEMORY.md in this conversation"


def server_env(home: Path) -> dict[str, str]:
    """The server's environment: the component cache scripts/test-mcp chose, and a home
    of the test's own (never the real one)."""
    return {
        "METIS_MEMORY_CACHE_DIR": os.environ.get("METIS_MEMORY_CACHE_DIR", "off"),
        "HOME": str(home),
    }


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    (root / ".metis").mkdir(parents=True)
    (root / ".metis" / "MEMORY.md").write_text(f"{ENTRY}\n- uses cargo\n")
    (tmp_path / "home").mkdir()
    return root


def memory_md(root: Path) -> str:
    return (root / ".metis" / "MEMORY.md").read_text()


class Script:
    """What the offline model does on each of its turns (one model request each): the
    tool call it makes, `(tool, arguments)`, or None to end with a text answer; and what
    it was given on each turn, all of it as one string."""

    def __init__(self, *calls: tuple[str, dict[str, Any]] | None):
        self.calls = list(calls)
        self.given: list[str] = []

    def next(self, given: str) -> tuple[str, dict[str, Any]] | None:
        self.given.append(given)
        turn = len(self.given) - 1
        assert turn < len(self.calls), f"the model was asked more than {len(self.calls)} times"
        return self.calls[turn]


VIEW = ("memory_view", {})
CONSOLIDATE = ("memory_consolidate", {"file": "MEMORY.md", "content": CONSOLIDATED})


# Pydantic AI


def pydantic_ai_run(root: Path, script: Script, **toolset_options: Any) -> None:
    """One agent run with `metis-memory mcp` as its MCP toolset (`toolset_options` as
    `MCPToolset` takes them) and `script` as its model."""
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        # Everything the model is given: the instructions, then every message.
        given = "\n".join([str(info.instructions), *(repr(message) for message in messages)])
        call = script.next(given)
        if call is None:
            return ModelResponse(parts=[TextPart("done")])
        tool, arguments = call
        return ModelResponse(parts=[ToolCallPart(tool, arguments)])

    transport = StdioTransport(
        command=BIN,
        args=["--workspace", str(root), "mcp"],
        env=server_env(root.parent / "home"),
    )
    toolset = MCPToolset(transport, **toolset_options)
    agent = Agent(FunctionModel(model), toolsets=[toolset], instructions=OWN)

    async def run() -> None:
        with anyio.fail_after(PATIENCE_SECONDS):
            async with agent:
                await agent.run("Tidy the workspace memory.")

    anyio.run(run)


def test_pydantic_ai_does_not_show_the_instructions_by_default_and_memory_view_shows_the_memory(workspace):
    script = Script(VIEW, CONSOLIDATE, None)
    pydantic_ai_run(workspace, script)
    first, after_view, after_consolidate = script.given
    assert OWN in first, first
    # The server's instructions, memory and guidance, never reached the model.
    assert ENTRY not in first and GUIDANCE not in first, first
    # memory_view's result did, and counted as shown: the consolidate went through.
    assert ENTRY in after_view, after_view
    assert "consolidated MEMORY.md" in after_consolidate, after_consolidate
    # The model got the tool text, not the write's hashes and events (which the server
    # keeps in `_meta`, where pydantic-ai does not look).
    assert "after_hash" not in after_consolidate, after_consolidate
    assert memory_md(workspace) == CONSOLIDATED


def test_pydantic_ai_shows_the_instructions_only_when_asked_and_they_still_do_not_count(workspace):
    script = Script(CONSOLIDATE, CONSOLIDATE, None)
    pydantic_ai_run(workspace, script, include_instructions=True)
    first, after_refusal, _ = script.given
    assert OWN in first and GUIDANCE in first and ENTRY in first, first
    # The server cannot tell that this client showed them: the consolidate is refused,
    # and the refusal (a tool result the model reads) shows the file; the same call
    # then goes through.
    assert NOT_SHOWN in after_refusal, after_refusal
    assert "- uses cargo" in after_refusal, after_refusal
    # An `isError` result reaches the model as the tool's return, marked as retried.
    assert "ToolReturnPart(tool_name='memory_consolidate'" in after_refusal, after_refusal
    assert "outcome='retried'" in after_refusal, after_refusal
    assert memory_md(workspace) == CONSOLIDATED


# The OpenAI Agents SDK


def openai_agents_run(root: Path, script: Script) -> str:
    """One agent run with `metis-memory mcp` as its MCP server and `script` as its model,
    an offline `Model` of the SDK's interface: the instructions the SDK was given."""
    from agents import Agent, Runner, set_tracing_disabled
    from agents.items import ModelResponse
    from agents.mcp import MCPServerStdio
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    set_tracing_disabled(True)

    class Scripted(Model):
        """The SDK's model interface over `script`: one response per turn."""

        async def get_response(
            self,
            system_instructions,
            input,
            model_settings,
            tools,
            output_schema,
            handoffs,
            tracing,
            *,
            previous_response_id,
            conversation_id,
            prompt,
        ) -> ModelResponse:
            # Everything the model is given: the instructions, the input items, the prompt.
            call = script.next("\n".join([str(system_instructions), repr(input), repr(prompt)]))
            turn = len(script.given)
            if call is None:
                text = ResponseOutputText(type="output_text", text="done", annotations=[])
                output = ResponseOutputMessage(
                    id=f"msg_{turn}", type="message", role="assistant", status="completed", content=[text]
                )
            else:
                tool, arguments = call
                output = ResponseFunctionToolCall(
                    type="function_call",
                    id=f"fc_{turn}",
                    call_id=f"call_{turn}",
                    name=tool,
                    arguments=json.dumps(arguments),
                    status="completed",
                )
            return ModelResponse(output=[output], usage=Usage(), response_id=None)

        def stream_response(self, *args, **kwargs):
            raise NotImplementedError("these runs do not stream")

    kept: list[str] = []

    async def run() -> None:
        with anyio.fail_after(PATIENCE_SECONDS):
            params = {
                "command": BIN,
                "args": ["--workspace", str(root), "mcp"],
                "env": server_env(root.parent / "home"),
            }
            async with MCPServerStdio(params=params, client_session_timeout_seconds=PATIENCE_SECONDS) as server:
                agent = Agent(name="notes", instructions=OWN, model=Scripted(), mcp_servers=[server])
                await Runner.run(agent, "Tidy the workspace memory.")
                kept.append(server.server_initialize_result.instructions)

    anyio.run(run)
    return kept[0]


def test_the_openai_agents_sdk_does_not_show_the_instructions_and_memory_view_shows_the_memory(workspace):
    script = Script(VIEW, CONSOLIDATE, None)
    instructions = openai_agents_run(workspace, script)
    first, after_view, after_consolidate = script.given
    assert OWN in first, first
    # The SDK was given the instructions, and kept them from the model.
    assert ENTRY in instructions and GUIDANCE in instructions, instructions
    assert ENTRY not in first and GUIDANCE not in first, first
    assert ENTRY in after_view, after_view
    assert "consolidated MEMORY.md" in after_consolidate, after_consolidate
    assert memory_md(workspace) == CONSOLIDATED


def test_the_openai_agents_sdk_shows_the_model_a_refusal_and_the_same_consolidate_then_goes_through(workspace):
    script = Script(CONSOLIDATE, CONSOLIDATE, None)
    openai_agents_run(workspace, script)
    _, after_refusal, _ = script.given
    assert NOT_SHOWN in after_refusal, after_refusal
    assert "- uses cargo" in after_refusal, after_refusal
    assert memory_md(workspace) == CONSOLIDATED
