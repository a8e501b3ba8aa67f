"""`metis_memory.integrations.openai_agents` against the installed package, driven through
the Agents SDK's own run loop (`Runner`) by its offline test model (`agents.testing.ScriptedModel`)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner, set_tracing_disabled
from agents.exceptions import UserError
from agents.items import ToolCallOutputItem
from agents.testing import ScriptedModel, assistant_message, function_call

from metis_memory import MemoryStore
from metis_memory.integrations.openai_agents import MetisMemory

# Offline: no trace is sent anywhere.
set_tracing_disabled(True)


def store_with(root: Path, **files: str) -> MemoryStore:
    (root / ".metis").mkdir()
    for name, text in files.items():
        (root / ".metis" / f"{name}.md").write_text(text)
    return MemoryStore(root)


def memory_md(root: Path) -> str:
    return (root / ".metis" / "MEMORY.md").read_text()


def responses(*calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """The model's responses: each a list of memory calls, then a final message."""
    steps: list[Any] = [
        [function_call(name, args, call_id=f"call_{n}_{i}") for i, (name, args) in enumerate(c)]
        for n, c in enumerate(calls)
    ]
    return [*steps, [assistant_message("done")]]


class Writer(ScriptedModel):
    """`ScriptedModel` with another writer's write before the n-th model call (`before`)."""

    def __init__(self, steps: list[Any], before: dict[int, Any]) -> None:
        super().__init__(steps)
        self.before = before

    async def get_response(self, *args: Any, **kwargs: Any) -> Any:
        n = len(self.calls)
        if n in self.before:
            self.before[n]()
        return await super().get_response(*args, **kwargs)


def run(memory: MetisMemory, model: ScriptedModel, config: RunConfig | None = None) -> Any:
    agent = Agent(name="a", instructions=memory.instructions, tools=memory.tools, model=model)
    return Runner.run_sync(agent, "hi", run_config=config or memory.run_config())


def outputs(result: Any) -> list[str]:
    return [item.output for item in result.new_items if isinstance(item, ToolCallOutputItem)]


def test_one_response_with_several_memory_calls_has_one_outcome_over_ten_runs(
    tmp_path: Path,
) -> None:
    calls = [
        ("memory_add", {"file": "MEMORY.md", "entry": "- b"}),
        ("memory_consolidate", {"file": "MEMORY.md", "content": "- x\n"}),
        ("memory_add", {"file": "MEMORY.md", "entry": "- y"}),
    ]
    outcomes = Counter()
    for n in range(10):
        root = tmp_path / str(n)
        root.mkdir()
        store = store_with(root, MEMORY="- a\n")
        result = run(MetisMemory(store.session()), ScriptedModel(responses(calls)))
        assert outputs(result) == [
            "appended to MEMORY.md (8 bytes total)",
            "consolidated MEMORY.md: 8 → 4 bytes",
            "appended to MEMORY.md (8 bytes total)",
        ]
        outcomes[memory_md(root)] += 1
    assert outcomes == Counter({"- x\n- y\n": 10})


def test_a_run_that_may_run_memory_calls_at_once_fails_and_writes_nothing(tmp_path: Path) -> None:
    store = store_with(tmp_path, MEMORY="- a\n")
    memory = MetisMemory(store.session())
    model = ScriptedModel(responses([("memory_add", {"file": "MEMORY.md", "entry": "- b"})]))
    with pytest.raises(UserError, match="run_config=memory.run_config"):
        run(memory, model, RunConfig())
    assert memory_md(tmp_path) == "- a\n"


def test_the_run_config_keeps_the_callers_settings(tmp_path: Path) -> None:
    memory = MetisMemory(store_with(tmp_path).session())
    config = memory.run_config(RunConfig(workflow_name="mine"))
    assert config.workflow_name == "mine"
    assert config.tool_execution is not None
    assert config.tool_execution.max_function_tool_concurrency == 1


def test_the_tools_are_the_components(tmp_path: Path) -> None:
    store = store_with(tmp_path)
    tools = MetisMemory(store.session()).tools
    assert [(t.name, t.description, t.params_json_schema) for t in tools] == [
        (d.name, d.description, d.input_schema) for d in store.tool_definitions()
    ]


def test_the_instructions_are_the_base_and_the_memory_composed_before_every_call(
    tmp_path: Path,
) -> None:
    store = store_with(tmp_path, MEMORY="- a\n")
    model = Writer(
        responses([("memory_add", {"file": "USER.md", "entry": "- likes tea"})]),
        # During the first call: after its instructions, before the second's.
        before={0: lambda: store.add_entry("MEMORY.md", "- from another session")},
    )
    run(MetisMemory(store.session(), base="Be brief."), model)
    first, second = (call.system_instructions for call in model.calls)
    assert first is not None and second is not None
    assert first.startswith("Be brief.") and "- a" in first and "likes tea" not in first
    assert "from another session" in second and "likes tea" in second


def test_a_refusal_is_the_tools_output_and_the_run_goes_on(tmp_path: Path) -> None:
    store = store_with(tmp_path, MEMORY="- a\n")
    refused = ("memory_replace", {"file": "MEMORY.md", "old": "- z", "new": "- y"})
    result = run(MetisMemory(store.session()), ScriptedModel(responses(*[[refused]] * 4)))
    assert result.final_output == "done"
    [text] = set(outputs(result))
    assert "MEMORY.md" in text and "error occurred" not in text
    assert memory_md(tmp_path) == "- a\n"


def test_what_a_refusal_showed_counts_from_the_next_response(tmp_path: Path) -> None:
    store = store_with(tmp_path, MEMORY="- a\n")
    write = ("memory_consolidate", {"file": "MEMORY.md", "content": "- a\n- b\n"})
    model = Writer(
        responses(
            [write, write], [("memory_consolidate", {"file": "MEMORY.md", "content": "- a\n- c\n"})]
        ),
        before={0: lambda: store.add_entry("MEMORY.md", "- c")},
    )
    # A session shown nothing: the prompt composed before the first call shows "- a",
    # and the other writer moves the file before the model answers.
    result = run(MetisMemory(store.session(snapshot=True)), model)
    first, second, third = outputs(result)
    assert "nothing was written" in first and "nothing was written" in second
    assert third.startswith("consolidated MEMORY.md")
    assert memory_md(tmp_path) == "- a\n- c\n"


def test_a_snapshot_keeps_the_prompt_and_appends_each_update_after_it(tmp_path: Path) -> None:
    store = store_with(tmp_path, MEMORY="- a\n")
    model = Writer(
        responses(
            [("memory_add", {"file": "USER.md", "entry": "- likes tea"})],
            # Built on the update's content: it goes through only if the update was shown.
            [("memory_consolidate", {"file": "MEMORY.md", "content": "- a\n- c\n- d\n"})],
        ),
        before={0: lambda: store.add_entry("MEMORY.md", "- c")},
    )
    result = run(MetisMemory(store.session(snapshot=True), base="Be brief."), model)
    first, second, third = (call.system_instructions for call in model.calls)
    assert first is not None and second is not None and third is not None
    # The kept bytes lead every call; the update follows them and stays.
    assert second.startswith(first) and third == second
    update = second[len(first) :]
    assert "- c" in update and "likes tea" not in update
    assert outputs(result)[1].startswith("consolidated MEMORY.md")
    assert memory_md(tmp_path) == "- a\n- c\n- d\n"
