#!/usr/bin/env python3
"""Claude's memory tool backed by metis-memory: `MetisMemoryTool` is the `memory_20250818`
tool over the workspace's two files (`/memories/MEMORY.md`, `/memories/USER.md`), run by
the Anthropic SDK's tool runner. Claude views memory when it wants to; a create, insert or
delete of a file it has not viewed is refused, so nothing it never saw is dropped. Two
conversations in a row: the first learns a fact, the second looks it up.

live:     ANTHROPIC_API_KEY=... python3 anthropic_memory.py [--workspace DIR] [--model M]
offline:  python3 anthropic_memory.py --offline [--workspace DIR]
          (a scripted Claude behind a fake Messages API, an httpx mock transport, plays
          the model through the SDK's real tool runner: no network, no key)

Needs `pip install metis-memory[anthropic]`.
"""

from __future__ import annotations

import argparse
import json
import re
from typing import Any

import anthropic
import httpx2
from metis_memory import MemoryStore
from metis_memory.integrations.anthropic import MetisMemoryTool

FACT = "- build: `cargo build --release`"
REMEMBER = "Remember: we build with `cargo build --release`."
MEMORY = "/memories/MEMORY.md"


class OfflineClaude:
    """A scripted Claude behind the Messages API: views memory, then writes the fact where
    it belongs, or answers from what it viewed. The API keeps each conversation (a thread
    the SDK continues by the previous message's id), and so does this."""

    def __init__(self) -> None:
        self.threads: dict[str, tuple[str, int]] = {}  # message id -> (prompt, step)

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        [message] = body["messages"]
        if body["thread"]["type"] == "create":
            prompt, step = message["content"], 0
        else:
            prompt, step = self.threads[body["thread"]["previous_message_id"]]
            step += 1
        seen = "".join(str(b.get("content", "")) for b in message["content"]) if step else ""
        commands, text = self.respond(prompt, step, seen)
        id = f"msg_{len(self.threads)}"
        self.threads[id] = (prompt, step)
        content: list[dict[str, Any]] = [
            {"type": "tool_use", "id": f"toolu_{id}_{i}", "name": "memory", "input": command}
            for i, command in enumerate(commands)
        ] or [{"type": "text", "text": text}]
        return httpx2.Response(
            200,
            json={
                "id": id,
                "type": "message",
                "role": "assistant",
                "model": "offline",
                "content": content,
                "stop_reason": "tool_use" if commands else "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 0, "output_tokens": 0},
            },
        )

    @staticmethod
    def respond(prompt: str, step: int, seen: str) -> tuple[list[dict[str, Any]], str]:
        remembering = prompt == REMEMBER
        if remembering and step == 0:
            return [{"command": "view", "path": "/memories"}], ""
        if step == int(remembering):
            return [{"command": "view", "path": MEMORY}], ""
        if remembering and step == 2 and FACT not in seen:
            lines = len(re.findall(r"^ *\d+\t", seen, flags=re.MULTILINE))
            if lines == 0:
                return [{"command": "create", "path": MEMORY, "file_text": FACT + "\n"}], ""
            insert = {
                "command": "insert",
                "path": MEMORY,
                "insert_line": lines,
                "insert_text": FACT,
            }
            return [insert], ""
        if remembering:
            return [], "Noted."
        return [], "`cargo build --release`." if FACT in seen else "I do not know yet."


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workspace", default=".", help="the workspace whose .metis/ to use")
    parser.add_argument("--offline", action="store_true", help="play the model offline")
    parser.add_argument("--model", default="claude-sonnet-5-5")
    args = parser.parse_args()

    if args.offline:
        http = httpx2.Client(transport=httpx2.MockTransport(OfflineClaude()))
        client = anthropic.Anthropic(api_key="offline", http_client=http, max_retries=0)
    else:
        client = anthropic.Anthropic()
    store = MemoryStore(args.workspace)
    for prompt in (REMEMBER, "How do we build?"):
        memory = MetisMemoryTool(store.session())  # one per conversation
        runner = client.beta.messages.tool_runner(
            model=args.model,
            max_tokens=1024,
            tools=[memory],
            messages=[{"role": "user", "content": prompt}],
            betas=["context-management-2025-06-27"],
        )
        print(prompt)
        # Each message is a model response: `responses` tells the session where each begins.
        for message in memory.responses(runner):
            results = runner.generate_tool_call_response()  # runs this response's calls
            calls = [block for block in message.content if block.type == "tool_use"]
            for call, result in zip(calls, results["content"] if results else ()):
                mark = "refused: " if result.get("is_error") else ""
                print(f"  memory {json.dumps(call.input)}\n  -> {mark}{result['content']}")
            for block in message.content:
                if block.type == "text":
                    print(f"  {block.text}")
    print("MEMORY.md now holds:\n" + store.read("MEMORY.md"), end="")


if __name__ == "__main__":
    main()
