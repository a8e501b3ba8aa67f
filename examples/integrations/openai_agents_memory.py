#!/usr/bin/env python3
"""An OpenAI Agents SDK agent with metis-memory: `MetisMemory` gives the agent its
instructions (yours, then the memory, composed before every model call) and the three
memory tools, and its run config runs one response's tool calls in the order the model
emitted them. Two conversations in a row: the first learns a fact, the second starts
with it.

live:     OPENAI_API_KEY=... python3 openai_agents_memory.py [--workspace DIR] [--model M]
offline:  python3 openai_agents_memory.py --offline [--workspace DIR]
          (the SDK's ScriptedModel plays the model: no network, no key)

Needs `pip install metis-memory[openai-agents]`.
"""

from __future__ import annotations

import argparse
from typing import Any

from agents import Agent, Runner, set_tracing_disabled
from agents.items import ToolCallItem, ToolCallOutputItem
from agents.testing import ScriptedModel, assistant_message, function_call
from metis_memory import MemoryStore
from metis_memory.integrations.openai_agents import MetisMemory

FACT = "- build: `cargo build --release`"
ANSWER = "We build with `cargo build --release`."


def offline_model(store: MemoryStore) -> ScriptedModel:
    """Remembers the fact unless the memory already holds it, then answers."""
    if FACT in store.read("MEMORY.md"):
        return ScriptedModel([[assistant_message(ANSWER)]])
    add = function_call("memory_add", {"file": "MEMORY.md", "entry": FACT}, call_id="call_1")
    return ScriptedModel([[add], [assistant_message(ANSWER)]])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workspace", default=".", help="the workspace whose .metis/ to use")
    parser.add_argument("--offline", action="store_true", help="play the model offline")
    parser.add_argument("--model", default="gpt-5")
    args = parser.parse_args()
    if args.offline:
        set_tracing_disabled(True)  # nothing leaves the machine

    store = MemoryStore(args.workspace)
    for prompt in ("Remember: we build with `cargo build --release`.", "How do we build?"):
        # One per conversation, as its session is.
        memory = MetisMemory(store.session(), base="You are a careful coding assistant.")
        model: Any = offline_model(store) if args.offline else args.model
        agent = Agent(
            name="assistant", instructions=memory.instructions, tools=memory.tools, model=model
        )
        result = Runner.run_sync(agent, prompt, run_config=memory.run_config())
        for item in result.new_items:
            if isinstance(item, ToolCallItem):
                print(f"  {item.raw_item.name}({item.raw_item.arguments})")
            elif isinstance(item, ToolCallOutputItem):
                print(f"  -> {item.output}")
        print(f"{prompt}\n  {result.final_output}")
    print("MEMORY.md now holds:\n" + store.read("MEMORY.md"), end="")


if __name__ == "__main__":
    main()
