"""The repository README's Python examples, against the installed wheel: every ```python
block runs, every console session that runs `python3` prints what it shows, and the agent
loop example (examples/agent_loop.py) does what its replayed model asks and sends what a
model needs. cli/tests/readme.rs covers the README's other blocks."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(os.environ.get("METIS_REPO_ROOT") or Path(__file__).resolve().parents[3])
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.M | re.S)


def blocks(lang: str) -> list[str]:
    return [body for kind, body in FENCE.findall(README.read_text()) if kind == lang]


def python_sessions() -> list[str]:
    return [b for b in blocks("console") if re.search(r"^\$ .*python3", b, re.M)]


def test_the_readme_is_the_repository_s():
    assert README.is_file(), f"no README at {README}: set METIS_REPO_ROOT"
    assert blocks("python") and python_sessions()


def env_for(home: Path) -> dict[str, str]:
    """`python3` is the interpreter with the wheel (this one); HOME and TMPDIR are temporary."""
    env = {k: v for k, v in os.environ.items() if k != "METIS_WORKSPACE"}
    bin_dir = Path(sys.executable).parent  # the virtual environment's bin/, with python3
    env.update(HOME=str(home), TMPDIR=str(home), PATH=f"{bin_dir}:{env['PATH']}")
    return env


@pytest.mark.parametrize("code", blocks("python"))
def test_readme_python_block_runs(tmp_path, code):
    # The examples name their workspace under ~ or the current directory.
    (tmp_path / "projects" / "app").mkdir(parents=True)
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env_for(tmp_path),
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    # Each file the example names was written (a refused tool call writes nothing).
    written = {path.name for path in tmp_path.rglob(".metis/*.md") if path.stat().st_size}
    named = {name for name in ("MEMORY.md", "USER.md") if name.split(".")[0] in code}
    assert named and named <= written, f"wrote {written}, names {named}"


def session(body: str) -> list[tuple[str, str]]:
    steps: list[tuple[str, str]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], ""))
        else:
            command, output = steps[-1]
            steps[-1] = (command, output + line + "\n")
    return steps


@pytest.mark.parametrize("body", python_sessions())
def test_readme_console_session_prints_what_it_shows(tmp_path, body):
    """Run from a copy of the clone's examples/, as the README says, in one bash."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    steps = session(body)
    script = "".join(f"printf '\\036'\n{command}\nprintf '\\037%d' $?\n" for command, _ in steps)
    run = subprocess.run(["bash", "--noprofile", "--norc", "-c", "exec 2>&1\n" + script],
                         cwd=tmp_path, env=env_for(tmp_path), capture_output=True, text=True)
    printed = [part.rsplit("\x1f", 1) for part in run.stdout.split("\x1e")[1:]]
    assert len(printed) == len(steps)
    for (command, shown), (output, status) in zip(steps, printed):
        assert (output, status) == (shown, "0"), command


def load_example():
    spec = importlib.util.spec_from_file_location("agent_loop", ROOT / "examples" / "agent_loop.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def expected_files(responses: list[dict], files: dict[str, str]) -> list[bool]:
    """Applies the replayed tool calls to `files` by the spec's rules (§3); the refusals."""
    refused = []
    for response in responses:
        for call in (b for b in response["content"] if b["type"] == "tool_use"):
            args, text = call["input"], files[call["input"]["file"]]
            if call["name"] == "memory_add":
                files[args["file"]] = text + args["entry"].strip() + "\n"
                refused.append(False)
            elif call["name"] == "memory_replace":
                ok = text.count(args["old"]) == 1
                if ok:
                    files[args["file"]] = text.replace(args["old"], args["new"])
                refused.append(not ok)
            else:
                files[args["file"]] = args["content"]
                refused.append(False)
    return refused


def test_agent_loop_replayed_writes_memory_and_sends_it_with_the_tools(tmp_path):
    from metis_memory import MemoryStore

    agent_loop = load_example()
    responses = json.loads((ROOT / "examples" / "agent_loop.replay.json").read_text())
    (tmp_path / ".metis").mkdir()
    seed = "- deploys on Fridays\n"
    (tmp_path / ".metis" / "MEMORY.md").write_text(seed)
    files = {"MEMORY.md": seed, "USER.md": ""}
    refused = expected_files(responses, files)
    assert True in refused and False in refused, "the replay shows a refusal and a success"

    requests, events = [], []
    replies = iter(responses)

    def send(request):
        requests.append(json.loads(json.dumps(request)))  # what would go on the wire
        return next(replies)

    store = MemoryStore(tmp_path)
    before = store.assemble_system_prompt(agent_loop.BASE)
    final = agent_loop.run(store, "remember things", send, publish=events.append)

    assert final == responses[-1]["content"][0]["text"]
    assert len(requests) == len(responses)
    for name, text in files.items():
        assert (tmp_path / ".metis" / name).read_text() == text, name
    assert len(events) == refused.count(False)
    assert {e["type"] for e in events} == {"memory.updated"}

    definitions = [d.to_dict() for d in store.tool_definitions()]
    for request in requests:
        assert request["tools"] == definitions
        assert [t["name"] for t in request["tools"]] == [
            "memory_add", "memory_replace", "memory_consolidate"]
        assert request["messages"][0] == {"role": "user", "content": "remember things"}
    # A snapshot session: one system prompt, byte-identical on every call and marked for
    # the prompt cache, though the model wrote in between (it learnt that from results).
    system = requests[0]["system"]
    assert [r["system"] for r in requests] == [system] * len(requests)
    assert system == [{"type": "text", "text": before, "cache_control": {"type": "ephemeral"}}]
    assert before.startswith(agent_loop.BASE)
    assert "## Workspace memory (MEMORY.md)\n- deploys on Fridays" in before
    first_entry = responses[0]["content"][1]["input"]["entry"]
    assert first_entry not in before
    assert first_entry in store.assemble_system_prompt(agent_loop.BASE)

    # Every tool_use answered by a tool_result, refusals with is_error.
    results = [block for request in requests for block in request["messages"][-1]["content"]
               if isinstance(block, dict) and block.get("type") == "tool_result"]
    results = list({r["tool_use_id"]: r for r in results}.values())
    assert [r["is_error"] for r in results] == refused
    assert "replace source not found in MEMORY.md" in [r["content"] for r in results]
