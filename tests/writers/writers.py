"""Writers from three runtimes on one file at once: the Rust CLI, the Python package and
the Node package, each as separate processes adding uniquely tagged entries to the same
MEMORY.md. Nothing may be lost, and the write results must chain from the empty file's
hash to the final file's, one write at a time.

Run by scripts/test-writers with the Python package's virtual environment:
    python writers.py CLI NODE_INSTALL_DIR
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

PER_RUNTIME = 2
ADDS = 20
EMPTY = hashlib.sha256(b"").hexdigest()

PYTHON_WRITER = """
import json, sys
from metis_memory import MemoryStore
store = MemoryStore(sys.argv[1])
sys.stdin.readline()
for i in range(int(sys.argv[3])):
    r = store.add_entry("MEMORY.md", f"- {sys.argv[2]}-{i:02d}")
    print(json.dumps([r.before_hash, r.after_hash]), flush=True)
"""

NODE_WRITER = """
import { openWorkspace } from "metis-memory";
import { createInterface } from "node:readline";
const [root, tag, adds] = process.argv.slice(2);
const ws = openWorkspace(root);
const lines = createInterface({ input: process.stdin });
for await (const _ of lines) break;
for (let i = 0; i < Number(adds); i++) {
  const r = await ws.addEntry("MEMORY.md", `- ${tag}-${String(i).padStart(2, "0")}`);
  console.log(JSON.stringify([r.beforeHash, r.afterHash]));
}
process.exit(0);
"""


def main() -> int:
    cli, node_dir = sys.argv[1], Path(sys.argv[2])
    (node_dir / "writer.mjs").write_text(NODE_WRITER)
    with tempfile.TemporaryDirectory() as root:
        children: list[tuple[str, subprocess.Popen[str]]] = []
        for n in range(PER_RUNTIME):
            tag = f"python{n}"
            children.append((tag, subprocess.Popen(
                [sys.executable, "-c", PYTHON_WRITER, root, tag, str(ADDS)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)))
            tag = f"node{n}"
            children.append((tag, subprocess.Popen(
                ["node", "writer.mjs", root, tag, str(ADDS)], cwd=node_dir,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)))

        # The Rust CLI is one process per add: each writer is a thread of such processes.
        gate = threading.Barrier(PER_RUNTIME + 1)
        rust_results: dict[str, list[list[str]]] = {}

        def rust_writer(tag: str) -> None:
            gate.wait()
            results = []
            for i in range(ADDS):
                out = subprocess.run(
                    [cli, "--workspace", root, "--json", "add", "MEMORY.md", f"- {tag}-{i:02d}"],
                    capture_output=True, text=True, check=True)
                r = json.loads(out.stdout)
                results.append([r["before_hash"], r["after_hash"]])
            rust_results[tag] = results

        threads = [threading.Thread(target=rust_writer, args=(f"rust{n}",)) for n in range(PER_RUNTIME)]
        for thread in threads:
            thread.start()
        # Every process is up and waiting on its stdin: let them all go at once.
        for _, child in children:
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        gate.wait()

        results: dict[str, list[list[str]]] = {}
        for tag, child in children:
            out, _ = child.communicate(timeout=600)
            assert child.returncode == 0, f"{tag} exited {child.returncode}"
            results[tag] = [json.loads(line) for line in out.splitlines()]
        for thread in threads:
            thread.join()
        results.update(rust_results)

        final = (Path(root) / ".metis" / "MEMORY.md").read_bytes()
        lines = final.decode().splitlines()
        expected = {f"- {tag}-{i:02d}" for tag in results for i in range(ADDS)}
        lost = expected - set(lines)
        assert not lost, f"entries lost: {sorted(lost)}"
        assert len(lines) == len(expected) == 3 * PER_RUNTIME * ADDS, "an entry is doubled"

        # The chain: every version is the base of exactly one write, from the empty file
        # to the final one.
        writes = [w for ws in results.values() for w in ws]
        following = {before: after for before, after in writes}
        assert len(following) == len(writes), "two writes were based on the same bytes"
        version, steps = EMPTY, 0
        while version in following:
            version, steps = following[version], steps + 1
        assert steps == len(writes), f"the chain from the empty file covers {steps} of {len(writes)} writes"
        assert version == hashlib.sha256(final).hexdigest(), "the chain does not end at the file"
        print(f"writers: {len(writes)} adds from {3 * PER_RUNTIME} processes in 3 runtimes "
              f"(Rust CLI, Python, Node): none lost, one hash chain from the empty file to the final one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
