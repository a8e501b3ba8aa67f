"""Every case in tests/conformance/ (its README gives the format) through the installed
package, with the checks every runner makes on every step and the exhaustive `final`."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from metis_memory import (
    ComponentTrap,
    MemoryStore,
    MemoryStoreError,
    MetisWorkspaceError,
    ToolSuccess,
    WriteResult,
)
from support import Entry, content, snapshot

HERE = Path(__file__).resolve().parent
CONFORMANCE = Path(
    os.environ.get("METIS_CONFORMANCE_DIR", HERE.parents[2] / "tests" / "conformance")
)
MEMORY_FILES = ("MEMORY.md", "USER.md")


def load_cases() -> list[Any]:
    cases = []
    for path in sorted(CONFORMANCE.glob("*.json")):
        suite = json.loads(path.read_text())
        for case in suite["cases"]:
            cases.append(pytest.param(case, id=f"{path.stem}::{case['name']}"))
    return cases


CASES = load_cases()


def test_the_conformance_suites_are_found() -> None:
    # A floor, not the exact count: adding a case needs no edit here.
    assert len(CASES) >= 100, f"only {len(CASES)} cases in {CONFORMANCE}"


def text(step: dict[str, Any], key: str) -> str:
    return content(step[key]).decode()


def plain(value: Any) -> Any:
    """Enums as their strings, tuples as lists: the JSON the cases are written in."""
    return json.loads(json.dumps(value))


def write_result_json(result: WriteResult) -> dict[str, Any]:
    return plain(vars(result))


def error_json(error: Exception) -> dict[str, Any]:
    if isinstance(error, MemoryStoreError):
        value: dict[str, Any] = {"kind": error.kind, "message": str(error)}
        if error.file is not None:
            value["file"] = error.file.value
        renames = {"attempted_size": "attempted_bytes", "hard_cap": "cap_bytes"}
        for key, field in vars(error).items():
            if key not in ("message", "file"):
                value[renames.get(key, key)] = field
        if "findings" in value:
            value["findings"] = [vars(f) for f in value["findings"]]
        return plain(value)
    kind = "trap" if isinstance(error, ComponentTrap) else "workspace"
    return {"kind": kind, "message": str(error)}


def run_step(store: MemoryStore, step: dict[str, Any]) -> dict[str, Any]:
    if "tool" in step:
        payload = (
            json.dumps(step["input"], ensure_ascii=False)
            if "input" in step
            else text(step, "input_text")
        )
        # The cases are the WIT's `call` and `call-with-options`: held only to what a
        # case lists, so the unheld path, by name.
        outcome = store.call_tool(
            step["tool"],
            payload,
            seen=step.get("seen"),
            withheld=step.get("withheld", ()),
            unheld=True,
        )
        if isinstance(outcome, ToolSuccess):
            result = write_result_json(outcome.result) | {"operation": outcome.operation.value}
            events = [e.to_dict() for e in outcome.events]
            return {"ok": plain({"text": outcome.text, "result": result, "events": events})}
        shown = None if outcome.shown is None else vars(outcome.shown)
        return {
            "error": plain(
                {
                    "message": outcome.message,
                    "is_user_visible": outcome.is_user_visible,
                    "shown": shown,
                }
            )
        }
    op, file = step["op"], step.get("file")
    try:
        match op:
            case "read" | "exists" | "size-bytes" | "audit":
                value = getattr(store, op.replace("-", "_"))(file)
                if op == "audit":
                    value = [vars(f) for f in value]
            case "soft-cap" | "hard-cap":
                value = getattr(MemoryStore, op.replace("-", "_"))(file)
            case "add-entry":
                value = write_result_json(store.add_entry(file, text(step, "entry")))
            case "replace":
                value = write_result_json(store.replace(file, text(step, "old"), text(step, "new")))
            case "consolidate":
                value = write_result_json(store.consolidate(file, text(step, "content")))
            case "consolidate-if-unchanged":
                result = store.consolidate_if_unchanged(
                    file, text(step, "content"), step["expected_hash"]
                )
                value = write_result_json(result)
            case "assemble-system-prompt":
                value = store.assemble_system_prompt(text(step, "base"))
            case "compose-system-prompt":
                prompt = store.compose_system_prompt(text(step, "base"), step.get("audit", "off"))
                sources = [
                    vars(s) | {"findings": [vars(f) for f in s.findings]} for s in prompt.sources
                ]
                value = {"text": prompt.text, "sources": sources}
            case "tool-definitions":
                value = [t.to_dict() for t in store.tool_definitions()]
            case _:
                raise AssertionError(f"unknown op {op}")
    except (MemoryStoreError, ComponentTrap, MetisWorkspaceError) as error:
        return {"error": error_json(error)}
    return {"ok": plain(value)}


def expect_match(expected: Any, actual: Any, path: str = "") -> None:
    """Every key `expected` gives must match (objects partially, arrays element by element
    and of equal length); `message_starts_with` checks a prefix of `message`."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key, value in expected.items():
            if key == "message_starts_with":
                message = actual.get("message", "")
                assert message.startswith(value), (
                    f"{path}.message: {message!r} does not start with {value!r}"
                )
                continue
            assert key in actual, f"{path}.{key}: missing"
            expect_match(value, actual[key], f"{path}.{key}")
    elif isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        for i, (want, got) in enumerate(zip(expected, actual, strict=True)):
            expect_match(want, got, f"{path}[{i}]")
    else:
        assert expected == actual and type(expected) is type(actual), (
            f"{path}: expected {expected!r}, got {actual!r}"
        )


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_invariants(
    actual: dict[str, Any],
    before: tuple[bool, dict[str, Entry]],
    after: tuple[bool, dict[str, Entry]],
) -> None:
    """A refused call changes nothing; no entry but the memory files appears; a write's
    hashes and sizes are those of the bytes before and after, repeated by `memory.updated`."""
    if "error" in actual:
        assert before == after, f"a refused call changed .metis/: {before} -> {after}"
    new = [n for n in after[1] if n not in before[1] and n not in MEMORY_FILES]
    assert not new, f"new entries left in .metis/: {new}"
    ok = actual.get("ok")
    result = ok.get("result") if isinstance(ok, dict) and "events" in ok else ok
    if not isinstance(result, dict) or "before_hash" not in result:
        return
    file = result["file"]

    def data(entries: dict[str, Entry]) -> bytes:
        kind, value = entries.get(file, ("file", b""))
        assert kind == "file", f"{file} is a {kind} around a successful write"
        return bytes(value)

    old, new_bytes = data(before[1]), data(after[1])
    assert file in after[1], f"{file} does not exist after a successful write"
    checks = {
        "before_hash": sha256(old),
        "after_hash": sha256(new_bytes),
        "before_size_bytes": len(old),
        "after_size_bytes": len(new_bytes),
    }
    for key, want in checks.items():
        assert result[key] == want, f"{key} is {result[key]}, but the bytes on disk give {want}"
    if isinstance(ok, dict) and "events" in ok:
        updated = ok["events"][0]
        assert updated["type"] == "memory.updated" and updated["payload"]["file"] == file
        for key, want in checks.items():
            assert updated["payload"][key] == want, f"memory.updated {key} does not match the write"


def check_final(expected: dict[str, Any], found: tuple[bool, dict[str, Entry]]) -> None:
    """`final` is exhaustive: exactly the entries it names, and `.metis/` as `metis_dir` says."""
    assert found[0] == expected.get("metis_dir", True), (
        f".metis/ exists: {found[0]} (holding {found[1]})"
    )
    wanted: dict[str, Entry] = {}
    for name, spec in expected.items():
        if name == "metis_dir" or spec is None:
            continue
        wanted[name] = (
            ("directory", None)
            if isinstance(spec, dict) and "directory" in spec
            else ("file", content(spec))
        )
    assert found[1] == wanted


@pytest.mark.parametrize("case", CASES)
def test_conformance(case: dict[str, Any], tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    metis = tmp_path / ".metis"
    if "given" in case:
        metis.mkdir()
        for name, spec in case["given"].items():
            if isinstance(spec, dict) and "directory" in spec:
                (metis / name).mkdir()
            else:
                (metis / name).write_bytes(content(spec))
    for index, step in enumerate(case["steps"]):
        before = snapshot(metis)
        actual = run_step(store, step)
        after = snapshot(metis)
        where = f"step {index} ({json.dumps(step)[:300]})\n  got: {json.dumps(actual)[:2000]}"
        if "expect" in step:
            try:
                expect_match(step["expect"], actual)
            except AssertionError as e:
                raise AssertionError(f"{where}: {e}") from None
        try:
            check_invariants(actual, before, after)
        except AssertionError as e:
            raise AssertionError(f"{where}: {e}") from None
    if "final" in case:
        check_final(case["final"], snapshot(metis))
