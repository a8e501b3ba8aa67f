"""Times the Python package (`metis_memory`, installed from the wheel) as an agent host
uses it, and prints the per-call times in microseconds as JSON, with the same operations
and arguments as the Rust bench. Usage: python_host.py WORKSPACE CALLS"""

import json
import sys

import metis_memory

from samples import BASE, timed

workspace, calls = sys.argv[1], int(sys.argv[2])
store = metis_memory.MemoryStore(workspace)
M = "MEMORY.md"
TOOL_ADD = '{"file":"MEMORY.md","entry":"- deploys go through scripts/deploy"}'
TOOL_REFUSED = '{"file":"NOTES.md","entry":"x"}'


store.consolidate(M, BASE)
store.consolidate("USER.md", "- prefers tea\n")
reset = lambda i: store.consolidate(M, BASE)
print(json.dumps({
    "read": timed(calls, lambda i: store.read(M)),
    "assemble": timed(calls, lambda i: store.assemble_system_prompt("You are helpful.")),
    "add": timed(calls, lambda i: store.add_entry(M, "- one more fact"), reset),
    "replace": timed(calls, lambda i: store.replace(M, *(("fact 7 ", "fact 7x ") if i % 2 == 0 else ("fact 7x ", "fact 7 ")))),
    "consolidate": timed(calls, lambda i: store.consolidate(M, BASE if i % 2 else BASE + "- x\n")),
    "tool": timed(calls, lambda i: store.call_tool("memory_add", TOOL_ADD), reset),
    "refused": timed(calls, lambda i: store.call_tool("memory_add", TOOL_REFUSED)),
}))
