#!/usr/bin/env python3
"""A pydantic-ai agent with metis-memory: the `MetisMemory` capability gives the model the
three memory tools and puts the memory in its instructions, composed before every model
request. Two conversations in a row: the first learns a fact, the second starts with it.

live:     ANTHROPIC_API_KEY=... python3 pydantic_ai_memory.py [--workspace DIR] [--model M]
offline:  python3 pydantic_ai_memory.py --offline [--workspace DIR]
          (pydantic-ai's FunctionModel plays the model: no network, no key)

Needs `pip install metis-memory[pydantic-ai]` (and the provider's package to run live).
"""

from __future__ import annotations

import argparse

from metis_memory import MemoryStore
from metis_memory.integrations.pydantic_ai import MetisMemory
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

FACT = "- build: `cargo build --release`"


def offline_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Remembers the fact unless its instructions already hold it, then answers."""
    answered = any(part.part_kind == "tool-return" for part in messages[-1].parts)
    if FACT in (info.instructions or "") or answered:
        return ModelResponse(parts=[TextPart("We build with `cargo build --release`.")])
    return ModelResponse(parts=[ToolCallPart("memory_add", {"file": "MEMORY.md", "entry": FACT})])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workspace", default=".", help="the workspace whose .metis/ to use")
    parser.add_argument("--offline", action="store_true", help="play the model offline")
    parser.add_argument("--model", default="anthropic:claude-sonnet-5-5")
    args = parser.parse_args()

    store = MemoryStore(args.workspace)
    model = FunctionModel(offline_model) if args.offline else args.model
    for prompt in ("Remember: we build with `cargo build --release`.", "How do we build?"):
        # One session per conversation: it holds the model to what it has been shown.
        session = store.session()
        agent = Agent(
            model,
            instructions="You are a careful coding assistant.",
            capabilities=[MetisMemory(session)],
        )
        result = agent.run_sync(prompt)
        for message in result.new_messages():
            for part in message.parts:
                if part.part_kind == "tool-call":
                    print(f"  {part.tool_name}({part.args_as_json_str()})")
                elif part.part_kind == "tool-return":
                    print(f"  -> {part.content}")
        print(f"{prompt}\n  {result.output}")
    print("MEMORY.md now holds:\n" + store.read("MEMORY.md"), end="")


if __name__ == "__main__":
    main()
