"""`metis_memory.integrations.pydantic_ai` against the installed package, driven through
pydantic-ai's own agent loop by its offline test models (`TestModel`, `FunctionModel`)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from metis_memory import MemoryStore
from metis_memory.integrations.pydantic_ai import MetisMemory


def store_with(root: Path, **files: str) -> MemoryStore:
    (root / ".metis").mkdir()
    for name, text in files.items():
        (root / ".metis" / f"{name}.md").write_text(text)
    return MemoryStore(root)


def memory_md(root: Path) -> str:
    return (root / ".metis" / "MEMORY.md").read_text()


class Script:
    """A `FunctionModel` function: the n-th model request gets the n-th response (tool
    calls as `(name, args)`), then a final text; `before` runs before a response is given
    (another writer, between model calls). Each request's instructions and messages are
    kept."""

    def __init__(self, *responses: list[tuple[str, dict[str, Any]]], before: Any = None) -> None:
        self.responses = responses
        self.before = before or {}
        self.instructions: list[str | None] = []
        self.messages: list[list[ModelMessage]] = []
        self.tools: list[Any] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        n = len(self.instructions)
        self.instructions.append(info.instructions)
        self.messages.append(list(messages))
        self.tools.append(info.function_tools)
        if n in self.before:
            self.before[n]()
        if n >= len(self.responses):
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(
            parts=[
                ToolCallPart(name, args, tool_call_id=f"call_{n}_{i}")
                for i, (name, args) in enumerate(self.responses[n])
            ]
        )


def returns(result: Any) -> list[ToolReturnPart]:
    return [
        part
        for message in result.all_messages()
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]


def test_one_response_with_add_and_consolidate_has_one_outcome_over_ten_runs(
    tmp_path: Path,
) -> None:
    outcomes = Counter()
    for run in range(10):
        root = tmp_path / str(run)
        root.mkdir()
        store = store_with(root, MEMORY="- a\n")
        agent = Agent(
            TestModel(call_tools=["memory_add", "memory_consolidate"]),
            capabilities=[MetisMemory(store.session())],
        )
        result = agent.run_sync("remember")
        # Both calls in the one response, in this order: the outcome is the order's.
        [call_response] = [
            m
            for m in result.all_messages()
            if isinstance(m, ModelResponse) and any(isinstance(p, ToolCallPart) for p in m.parts)
        ]
        assert [p.tool_name for p in call_response.parts] == ["memory_add", "memory_consolidate"]
        outcomes[memory_md(root)] += 1
    consolidated = call_response.parts[1].args_as_dict()["content"]
    # The add, then the consolidate that replaces everything with its content.
    assert outcomes == Counter({consolidated: 10})


def test_the_tools_are_the_components_and_run_one_at_a_time(tmp_path: Path) -> None:
    store = store_with(tmp_path)
    script = Script()
    Agent(FunctionModel(script), capabilities=[MetisMemory(store.session())]).run_sync("hi")
    [tools] = script.tools
    expected = {d.name: d for d in store.tool_definitions()}
    assert sorted(t.name for t in tools) == sorted(expected)
    for tool in tools:
        assert tool.description == expected[tool.name].description
        assert tool.parameters_json_schema == expected[tool.name].input_schema
        # A barrier: pydantic-ai runs it alone, after the calls emitted before it.
        assert tool.sequential, tool.name


def test_the_instructions_are_composed_afresh_before_every_request(tmp_path: Path) -> None:
    store = store_with(tmp_path, MEMORY="- a\n")
    script = Script(
        [("memory_add", {"file": "USER.md", "entry": "- likes tea"})],
        before={0: lambda: store.add_entry("MEMORY.md", "- from another session")},
    )
    agent = Agent(
        FunctionModel(script),
        instructions="Be brief.",
        capabilities=[MetisMemory(store.session())],
    )
    agent.run_sync("hi")
    first, second = script.instructions
    assert first is not None and second is not None
    assert first.startswith("Be brief.") and "- a" in first
    assert "from another session" not in first
    assert "from another session" in second and "likes tea" in second


def test_a_tool_returns_the_outcomes_text(tmp_path: Path) -> None:
    store = store_with(tmp_path)
    script = Script([("memory_add", {"file": "MEMORY.md", "entry": "- builds with cargo"})])
    result = Agent(FunctionModel(script), capabilities=[MetisMemory(store.session())]).run_sync(
        "hi"
    )
    [part] = returns(result)
    assert part.outcome == "success"
    assert part.content == "appended to MEMORY.md (20 bytes total)"


def test_refusals_are_failed_results_the_model_reads_and_spend_no_retries(tmp_path: Path) -> None:
    store = store_with(tmp_path, MEMORY="- a\n")
    refused = ("memory_replace", {"file": "MEMORY.md", "old": "- z", "new": "- y"})
    # More refusals in a row than any retry budget allows, the agent's set to none.
    script = Script(*[[refused] for _ in range(4)])
    agent = Agent(FunctionModel(script), retries=0, capabilities=[MetisMemory(store.session())])
    result = agent.run_sync("hi")
    assert result.output == "done"
    parts = returns(result)
    assert len(parts) == 4
    for part in parts:
        assert part.outcome == "failed"
        assert "MEMORY.md" in part.content and "Fix the errors" not in part.content
    assert memory_md(tmp_path) == "- a\n"


def test_what_a_refusal_showed_counts_from_the_next_response(tmp_path: Path) -> None:
    store = store_with(tmp_path, MEMORY="- a\n")
    session = store.session(snapshot=True)
    write = ("memory_consolidate", {"file": "MEMORY.md", "content": "- a\n- b\n"})
    # The other writer moves the file after the prompt was kept: the first consolidate is
    # refused (showing the file), and so is a second in the same response, which the model
    # wrote before reading the first's result; the next response's goes through.
    script = Script(
        [write, write],
        [("memory_consolidate", {"file": "MEMORY.md", "content": "- a\n- c\n- b\n"})],
        before={0: lambda: store.add_entry("MEMORY.md", "- c")},
    )
    result = Agent(FunctionModel(script), capabilities=[MetisMemory(session)]).run_sync("hi")
    assert [p.outcome for p in returns(result)] == ["failed", "failed", "success"]
    assert memory_md(tmp_path) == "- a\n- c\n- b\n"


def test_a_snapshot_keeps_the_instructions_and_adds_the_update_to_the_request(
    tmp_path: Path,
) -> None:
    store = store_with(tmp_path, MEMORY="- a\n")
    session = store.session(snapshot=True)
    script = Script(
        [("memory_add", {"file": "USER.md", "entry": "- likes tea"})],
        # Built on the update's content: it goes through only if the update counts as shown.
        [("memory_consolidate", {"file": "MEMORY.md", "content": "- a\n- c\n- d\n"})],
        before={0: lambda: store.add_entry("MEMORY.md", "- c")},
    )
    result = Agent(FunctionModel(script), capabilities=[MetisMemory(session)]).run_sync("hi")
    first, second, third = script.instructions
    assert first == second == third
    assert first is not None and "- c" not in first
    updates = [
        part.content
        for message in script.messages[1]
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart) and "- c" in str(part.content)
    ]
    assert len(updates) == 1, "the update reaches the next request, once"
    # It stays in the history the next requests are sent.
    assert any(
        isinstance(part, UserPromptPart) and part.content == updates[0]
        for message in script.messages[2]
        if isinstance(message, ModelRequest)
        for part in message.parts
    )
    # The model's own write is not news.
    assert "likes tea" not in str(updates[0])
    assert [p.outcome for p in returns(result)] == ["success", "success"]
    assert memory_md(tmp_path) == "- a\n- c\n- d\n"
