"""The Claude memory tool table (`tests/integrations/claude_memory_tool.json`, its README
gives the format) against the installed package: each row through the Anthropic SDK's own
tool runner, sync (`MetisMemoryTool`) and async (`AsyncMetisMemoryTool`), over a fake
Messages API (an httpx mock transport) that replies with the row's tool calls, one
response after another. A key this driver does not know fails the row, naming it."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest

from metis_memory import MemoryStore
from metis_memory.integrations.anthropic import AsyncMetisMemoryTool, MetisMemoryTool

ROOT = Path(os.environ.get("METIS_REPO_ROOT") or Path(__file__).resolve().parents[3])
TABLE = ROOT / "tests" / "integrations" / "claude_memory_tool.json"
ROWS: list[dict[str, Any]] = json.loads(TABLE.read_text())["rows"] if TABLE.is_file() else []

ROW_KEYS = {"name", "given", "responses", "after"}
RESPONSE_KEYS = {"others_add", "calls"}
CALL_KEYS = {"input", "is_error", "contains", "lacks"}
FILES = ("MEMORY.md", "USER.md")


class FakeMessagesApi:
    """The Messages API as a script: the n-th request gets the n-th response's tool calls
    (a final text reply once they run out), after the writes of others the script puts
    before it. Every request's body is kept, so the tool results can be read back."""

    def __init__(self, store: MemoryStore, responses: list[dict[str, Any]]) -> None:
        self.store = store
        self.responses = responses
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(json.loads(request.content))
        n = len(self.requests) - 1
        if n >= len(self.responses):
            return _message(n, [{"type": "text", "text": "done"}], "end_turn")
        response = self.responses[n]
        for write in response.get("others_add", ()):
            self.store.add_entry(write["file"], write["entry"])
        blocks = [
            {"type": "tool_use", "id": f"toolu_{n}_{i}", "name": "memory", "input": call["input"]}
            for i, call in enumerate(response["calls"])
        ]
        return _message(n, blocks, "tool_use")

    def results(self, n: int) -> list[dict[str, Any]]:
        """The tool results the runner sent for response `n`, in its calls' order."""
        content = self.requests[n + 1]["messages"][-1]["content"]
        by_id = {block["tool_use_id"]: block for block in content}
        return [by_id[f"toolu_{n}_{i}"] for i in range(len(self.responses[n]["calls"]))]


def _message(n: int, content: list[dict[str, Any]], stop_reason: str) -> httpx2.Response:
    return httpx2.Response(
        200,
        json={
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
    )


def _text(result: dict[str, Any]) -> str:
    content = result["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content)


def _check_keys(row: dict[str, Any]) -> None:
    unknown = set(row) - ROW_KEYS
    for response in row["responses"]:
        unknown |= set(response) - RESPONSE_KEYS
        for call in response["calls"]:
            unknown |= set(call) - CALL_KEYS
    assert not unknown, f"this driver does not know the keys {sorted(unknown)}"


def _given(root: Path, given: dict[str, str]) -> MemoryStore:
    assert set(given) <= set(FILES), f"unknown files in given: {sorted(set(given) - set(FILES))}"
    (root / ".metis").mkdir()
    for name, text in given.items():
        (root / ".metis" / name).write_bytes(text.encode())
    return MemoryStore(root)


def run_sync(store: MemoryStore, api: FakeMessagesApi, prompt: str) -> None:
    client = anthropic.Anthropic(
        api_key="test",
        http_client=httpx2.Client(transport=httpx2.MockTransport(api)),
        max_retries=0,
    )
    memory = MetisMemoryTool(store.session())
    runner = client.beta.messages.tool_runner(
        model="claude-test",
        max_tokens=64,
        tools=[memory],
        messages=[{"role": "user", "content": prompt}],
    )
    for _ in memory.responses(runner):
        pass


def run_async(store: MemoryStore, api: FakeMessagesApi, prompt: str) -> None:
    async def run() -> None:
        client = anthropic.AsyncAnthropic(
            api_key="test",
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(api)),
            max_retries=0,
        )
        memory = AsyncMetisMemoryTool(store.session())
        runner = client.beta.messages.tool_runner(
            model="claude-test",
            max_tokens=64,
            tools=[memory],
            messages=[{"role": "user", "content": prompt}],
        )
        async for _ in memory.responses(runner):
            pass

    asyncio.run(run())


RUNNERS: dict[str, Callable[[MemoryStore, FakeMessagesApi, str], None]] = {
    "sync": run_sync,
    "async": run_async,
}


def test_the_table_has_rows() -> None:
    assert len(ROWS) >= 10, f"no rows in {TABLE}: set METIS_REPO_ROOT"


@pytest.mark.parametrize("runner", sorted(RUNNERS))
@pytest.mark.parametrize("row", ROWS, ids=[row["name"] for row in ROWS])
def test_row(row: dict[str, Any], runner: str, tmp_path: Path) -> None:
    _check_keys(row)
    store = _given(tmp_path, row["given"])
    api = FakeMessagesApi(store, row["responses"])
    RUNNERS[runner](store, api, row["name"])

    assert len(api.requests) == len(row["responses"]) + 1, "the runner stopped early"
    failures = []
    for n, response in enumerate(row["responses"]):
        for i, (call, result) in enumerate(zip(response["calls"], api.results(n))):
            where = f"response {n + 1}, call {i + 1} ({call['input'].get('command')})"
            text = _text(result)
            if "is_error" in call and bool(result.get("is_error")) != call["is_error"]:
                failures.append(f"{where}: is_error {result.get('is_error')!r}: {text!r}")
            failures += [
                f"{where}: lacks {want!r}: {text!r}"
                for want in call.get("contains", ())
                if want not in text
            ]
            failures += [
                f"{where}: holds {unwanted!r}: {text!r}"
                for unwanted in call.get("lacks", ())
                if unwanted in text
            ]
    for name in FILES:
        path = tmp_path / ".metis" / name
        on_disk = path.read_bytes().decode() if path.exists() else None
        if on_disk != row["after"][name]:
            failures.append(f"{name} is {on_disk!r}, not {row['after'][name]!r}")
    assert not failures, "\n".join(failures)
