"""Times Hermes Agent's memory (`tools/memory_tool.py` of PyPI `hermes-agent` 0.19, run by
an interpreter it is installed for) in this process, with python_host.py's protocol and
keys, and prints the per-call times in microseconds as JSON. Usage: hermes.py DIR CALLS

- "read": the store's read of MEMORY.md (`MemoryStore._read_file`). No Hermes tool reads
  memory: the agent reads the file this way at session start and again before every write.
- "tool": a `memory` tool call that adds an entry, as the agent makes it: the model's JSON
  arguments parsed, then `memory_tool` (write gate, threat scan, lock, reload, write)."""

import json
import os
import sys
from pathlib import Path

workspace, calls = Path(sys.argv[1]), int(sys.argv[2])
# Hermes resolves its memory directory from HERMES_HOME on every call, and creates its
# home tree (SOUL.md, logs/, ...) there when the write gate first loads its config: set
# before importing it, so nothing lands in ~/.hermes.
os.environ["HERMES_HOME"] = str(workspace)

from tools import memory_tool  # noqa: E402

from samples import BASE, timed  # noqa: E402

TOOL_ADD = '{"action":"add","target":"memory","content":"- deploys go through scripts/deploy"}'


def write_synced(path: Path, content: str) -> None:
    # The reset is untimed but must leave nothing dirty (file, rename, directory), as the
    # package's reset (a durable consolidate) does: otherwise the timed add's fsync could
    # pay for the reset's writeback in the same journal commit.
    tmp = path.with_name(path.name + ".reset")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(content)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


memories = memory_tool.get_memory_dir()
memories.mkdir(parents=True, exist_ok=True)
write_synced(memories / "MEMORY.md", BASE)
write_synced(memories / "USER.md", "- prefers tea\n")
store = memory_tool.MemoryStore()  # the default limits: 2,200 characters for MEMORY.md
store.load_from_disk()  # what the agent does at session start


def tool_add(_: int) -> str:
    args = json.loads(TOOL_ADD)
    return memory_tool.memory_tool(
        action=args.get("action"),
        target=args.get("target", "memory"),
        content=args.get("content"),
        old_text=args.get("old_text"),
        operations=args.get("operations"),
        store=store,
    )


def reset(_: int) -> None:
    write_synced(memories / "MEMORY.md", BASE)


# The same 1.4 KB as the package's MEMORY.md (one entry: it has no § delimiters), and a
# real add timed, not a refusal (a duplicate, the limit, the gate staging it).
assert store._read_file(store._path_for("memory")) == [BASE.strip()]
result = json.loads(tool_add(0))
assert result.get("message") == "Entry added.", result
reset(0)

print(json.dumps({
    "read": timed(calls, lambda i: store._read_file(store._path_for("memory"))),
    "tool": timed(calls, tool_add, reset),
}))
