"""Times the reference implementation's store (`store.py` of PyPI `metis-llm` 0.1.0,
loaded by file path: it needs only the standard library) in this process, and prints
the per-call times in microseconds as JSON. Usage: reference.py STORE_PY WORKSPACE CALLS"""

import importlib.util
import json
import sys

from samples import BASE, timed

store_py, workspace, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
spec = importlib.util.spec_from_file_location("reference_store", store_py)
module = importlib.util.module_from_spec(spec)
sys.modules["reference_store"] = module
spec.loader.exec_module(module)
store = module.MemoryStore(workspace)
M = module.MemoryFile.MEMORY


store.consolidate(M, BASE)
store.consolidate(module.MemoryFile.USER, "- prefers tea\n")
reset = lambda i: store.consolidate(M, BASE)
print(json.dumps({
    "read": timed(calls, lambda i: store.read(M)),
    "add": timed(calls, lambda i: store.add_entry(M, "- one more fact"), reset),
    "replace": timed(calls, lambda i: store.replace(M, *(("fact 7 ", "fact 7x ") if i % 2 == 0 else ("fact 7x ", "fact 7 ")))),
    "consolidate": timed(calls, lambda i: store.consolidate(M, BASE if i % 2 else BASE + "- x\n")),
    "assemble": timed(calls, lambda i: store.assemble_system_prompt("You are helpful.")),
}))
