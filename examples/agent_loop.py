#!/usr/bin/env python3
"""An agent loop with metis-memory: every model call gets the memory in its system prompt
and the three memory tools; the model's tool calls run through the session, their results
go back to the model and their events are published. The session holds the model to what
it has seen: a memory_consolidate based on an old version (another session or a person
wrote since) is refused, with the current content shown to the model.

It is a snapshot session: the system prompt is composed once and sent byte-identical on
every call, so the provider's prompt cache keeps it and the conversation after it (the
cache breakpoint goes on the system prompt; Anthropic caches the tools before it too). The
model learns of its own writes from their tool results, and of anyone else's from
memory_update(), which leads the next user turn.

live:    ANTHROPIC_API_KEY=... python3 examples/agent_loop.py [--workspace DIR] TASK
replay:  python3 examples/agent_loop.py --replay examples/agent_loop.replay.json TASK
         (the model's responses are read from the file: no network, no key)
"""

import argparse
import json
import os
import urllib.request

from metis_memory import MemoryStore

BASE = "You are a careful coding assistant. Remember what will matter next session."


def anthropic(request):
    """One call to the Anthropic Messages API."""
    headers = {"x-api-key": os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01",
               "content-type": "application/json"}
    body = json.dumps(request).encode()
    with urllib.request.urlopen(urllib.request.Request(
            "https://api.anthropic.com/v1/messages", body, headers)) as response:
        return json.load(response)


def publish(event):
    """Where a host puts each event ({"type", "payload"}) on its bus; here, one line each."""
    before, after = (v for k, v in event["payload"].items() if "size" in k)
    print(f"  {event['type']}: {event['payload']['file']} {before} -> {after} bytes")


def user_turn(session, text):
    """A user's turn, led by what others changed in memory since the model last saw it."""
    update = session.memory_update()  # None when nothing changed
    return {"role": "user", "content": text if update is None else f"{update}\n\n{text}"}


def run(store, task, send, model="claude-sonnet-4-5", publish=publish):
    session = store.session(snapshot=True)  # one per conversation
    tools = [tool.to_dict() for tool in store.tool_definitions()]
    session.system_prompt(BASE)
    messages = [user_turn(session, task)]
    while True:
        # The same bytes on every call: the model is asked again, on a cached prefix.
        system = [{"type": "text", "text": session.system_prompt(BASE).text,
                   "cache_control": {"type": "ephemeral"}}]
        response = send({"model": model, "max_tokens": 1024, "tools": tools,
                         "system": system, "messages": messages})
        messages.append({"role": "assistant", "content": response["content"]})
        if response["stop_reason"] != "tool_use":
            return "".join(b["text"] for b in response["content"] if b["type"] == "text")
        results = []
        for call in (b for b in response["content"] if b["type"] == "tool_use"):
            outcome = session.call_tool(call["name"], call["input"])
            text = outcome.message if outcome.is_error else outcome.text
            print(f"{call['name']}: {'refused: ' if outcome.is_error else ''}{text}")
            for event in getattr(outcome, "events", ()):
                publish(event.to_dict())
            results.append({"type": "tool_result", "tool_use_id": call["id"], "content": text,
                            "is_error": outcome.is_error})
        messages.append({"role": "user", "content": results})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("task")
    parser.add_argument("--workspace", default=".", help="the project (default: .)")
    parser.add_argument("--replay", metavar="FILE", help="model responses to use, in order")
    parser.add_argument("--model", default=os.environ.get("ANTHROPIC_MODEL", "claude-sonnet-4-5"))
    args = parser.parse_args()
    if args.replay:
        with open(args.replay) as file:
            responses = iter(json.load(file))
        send = lambda request: next(responses)  # noqa: E731
    else:
        send = anthropic
    print(run(MemoryStore(args.workspace), args.task, send, args.model))
