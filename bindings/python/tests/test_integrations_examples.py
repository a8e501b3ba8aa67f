"""The integration examples (examples/integrations/) run offline, each with its framework's
own test model, against the installed package: on a fresh workspace the first conversation
writes the fact and the second finds it; on one that already holds an entry, the fact is
added beside it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(os.environ.get("METIS_REPO_ROOT") or Path(__file__).resolve().parents[3])
EXAMPLES = sorted((ROOT / "examples" / "integrations").glob("*.py"))
FACT = "- build: `cargo build --release`\n"


def run(example: Path, workspace: Path) -> str:
    done = subprocess.run(
        [sys.executable, str(example), "--offline", "--workspace", str(workspace)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        # Offline means offline: no key is there to use.
        env={k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")},
    )
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr, done.stderr
    return done.stdout


def test_there_is_an_example_per_integration() -> None:
    names = {example.stem for example in EXAMPLES}
    assert names == {"anthropic_memory", "openai_agents_memory", "pydantic_ai_memory"}, (
        f"examples in {ROOT / 'examples' / 'integrations'}: set METIS_REPO_ROOT"
    )


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.stem for e in EXAMPLES])
def test_an_example_remembers_and_recalls_offline(example: Path, tmp_path: Path) -> None:
    out = run(example, tmp_path)
    assert (tmp_path / ".metis" / "MEMORY.md").read_text() == FACT
    recall = out.split("How do we build?", 1)[1]
    assert "cargo build --release" in recall.split("MEMORY.md now holds:", 1)[0]


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.stem for e in EXAMPLES])
def test_an_example_keeps_what_the_file_held(example: Path, tmp_path: Path) -> None:
    (tmp_path / ".metis").mkdir()
    (tmp_path / ".metis" / "MEMORY.md").write_text("- tests: scripts/test\n")
    run(example, tmp_path)
    assert (tmp_path / ".metis" / "MEMORY.md").read_text() == "- tests: scripts/test\n" + FACT
