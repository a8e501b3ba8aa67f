"""`metis_memory.integrations.anthropic` beyond the shared table: what the tool runner
sends, global user memory, and a runner iterated without `responses`. Through the SDK's
own tool runner over a fake Messages API, as the table's driver runs it."""

from __future__ import annotations

from pathlib import Path

import anthropic
import httpx2
from test_integrations_anthropic_table import FakeMessagesApi, run_sync

from metis_memory import GlobalUser, MemoryStore
from metis_memory.integrations.anthropic import MetisMemoryTool

VIEW = {"command": "view", "path": "/memories/MEMORY.md"}


def responses(*calls: dict[str, object]) -> list[dict[str, object]]:
    """The model's responses, one command each."""
    return [{"calls": [{"input": command}]} for command in calls]


def store_with(root: Path, **files: str) -> MemoryStore:
    (root / ".metis").mkdir()
    for name, text in files.items():
        (root / ".metis" / f"{name}.md").write_text(text)
    return MemoryStore(root)


def test_the_runner_sends_claudes_memory_tool_and_no_memory_in_the_prompt(tmp_path: Path) -> None:
    store = store_with(tmp_path, MEMORY="- a secret fact\n")
    api = FakeMessagesApi(store, responses(VIEW))
    run_sync(store, api, "hi")
    first, _ = api.requests
    assert first["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    assert "secret fact" not in str(first), "memory reaches the model only through a view"
    [result] = api.results(0)
    assert "secret fact" in str(result["content"])


def test_user_md_is_the_persons_own_when_the_agent_writes_it(tmp_path: Path) -> None:
    home = tmp_path / "home" / ".metis"
    home.mkdir(parents=True)
    (home / "USER.md").write_text("- name: Sam\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".metis").mkdir()
    (workspace / ".metis" / "USER.md").write_text("- the workspace's\n")
    store = MemoryStore(workspace, global_user=GlobalUser(home, agent_writes=True))
    view = {"command": "view", "path": "/memories/USER.md"}
    create = {"command": "create", "path": "/memories/USER.md", "file_text": "- name: Sam\n- tea\n"}
    api = FakeMessagesApi(store, responses(view, create))
    run_sync(store, api, "hi")
    [shown], [created] = api.results(0), api.results(1)
    assert "name: Sam" in shown["content"] and "the workspace's" not in shown["content"]
    assert not created.get("is_error"), created
    assert (home / "USER.md").read_text() == "- name: Sam\n- tea\n"
    assert (workspace / ".metis" / "USER.md").read_text() == "- the workspace's\n"


def test_without_responses_a_refusals_content_never_counts_but_a_view_does(
    tmp_path: Path,
) -> None:
    store = store_with(tmp_path, MEMORY="- a\n")
    create = {"command": "create", "path": "/memories/MEMORY.md", "file_text": "- a\n- b\n"}
    api = FakeMessagesApi(store, responses(create, create, VIEW, create))
    client = anthropic.Anthropic(
        api_key="test",
        http_client=httpx2.Client(transport=httpx2.MockTransport(api)),
        max_retries=0,
    )
    memory = MetisMemoryTool(store.session())
    client.beta.messages.tool_runner(
        model="claude-test",
        max_tokens=64,
        tools=[memory],
        messages=[{"role": "user", "content": "hi"}],
    ).until_done()
    refused, again, viewed, created = (api.results(n)[0] for n in range(4))
    assert refused.get("is_error") and again.get("is_error")
    assert "view /memories/MEMORY.md" in again["content"]
    assert not viewed.get("is_error") and not created.get("is_error")
    assert (tmp_path / ".metis" / "MEMORY.md").read_text() == "- a\n- b\n"
