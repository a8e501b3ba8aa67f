"""The cross-surface suite (`tests/surfaces/behaviours.json`, its README gives the format)
against the installed package: one case per row, each session (`"A"`, `"B"`) a
`MemoryStore.session()` of its own `MemoryStore` on the row's workspace, made with the
options of the last `memory_options` step (global user memory in the row's own home, a
temporary directory, never the real one); a `sessionless` call is `MemoryStore.call_tool`
on a store of its own, made the same way. A step, or an `expect`, with a key this driver
does not know fails the row, naming the key."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import metis_memory
from metis_memory import (
    ComponentTrap,
    GlobalUser,
    Limits,
    MemorySession,
    MemoryStore,
    MemoryStoreError,
    MetisWorkspaceError,
    ToolOutcome,
    ToolRefusal,
)

ROOT = Path(os.environ.get("METIS_REPO_ROOT") or Path(__file__).resolve().parents[3])
TABLE = ROOT / "tests" / "surfaces" / "behaviours.json"

# Each step's kind (the key that names it), with every key it may have and the checks
# its `expect` may hold.
STEPS: dict[str, tuple[set[str], set[str]]] = {
    "open": ({"open", "snapshot", "expect"}, {"prompt_contains", "prompt_lacks"}),
    "start": ({"start"}, set()),
    "prompt": ({"prompt", "expect"}, {"unchanged", "prompt_contains", "prompt_lacks"}),
    "update": ({"update", "expect"}, {"none", "text_contains", "text_lacks"}),
    "call": ({"call", "tool", "input", "expect"}, {"ok", "text_contains", "text_lacks"}),
    "sessionless": ({"sessionless", "expect"}, {"ok", "text_contains", "text_lacks"}),
    "next_response": ({"next_response"}, set()),
    "file": ({"file", "is"}, set()),
    "version": ({"version"}, set()),
    "trap_sweep": ({"trap_sweep"}, set()),
    "read_only_add": ({"read_only_add", "expect"}, {"kind", "text_contains"}),
    "add_under": ({"add_under", "expect"}, {"kind", "text_contains"}),
    "metis_holds": ({"metis_holds"}, set()),
    "root_mode": ({"root_mode"}, set()),
    "read_refused": ({"read_refused", "expect"}, {"kind", "text_contains"}),
    "memory_options": ({"memory_options"}, set()),
}
# What a `memory_options` step may set, and the values each takes.
OPTIONS: dict[str, tuple[object, ...]] = {
    "global_user": ("off", "read", "write"),
    "prompt_budget": (True, False),
}
# What a `sessionless` step's call may hold.
SESSIONLESS = {"tool", "input", "unheld"}
# How a `given` or `file` key names the user's own USER.md, in the row's home.
IN_HOME = "~/"
ROW_KEYS = {"name", "covers", "given", "steps", "surfaces", "surfaces_why"}
SURFACE = "python"


def load_rows() -> list[Any]:
    if not TABLE.is_file():
        return []
    rows = json.loads(TABLE.read_text())["behaviours"]
    return [pytest.param(row, id=row.get("name", f"row {i + 1}")) for i, row in enumerate(rows)]


ROWS = load_rows()


def test_the_table_is_found() -> None:
    assert ROWS, f"no behaviours in {TABLE}: set METIS_REPO_ROOT"


class RowFailed(AssertionError):
    pass


def check_texts(expect: dict[str, Any], prefix: str, text: str) -> None:
    """`text` against `expect`'s `{prefix}_contains` and `{prefix}_lacks` lists."""
    for wanted in expect.get(f"{prefix}_contains", ()):
        if wanted not in text:
            raise RowFailed(f"the {prefix} lacks {wanted!r}: {text!r}")
    for unwanted in expect.get(f"{prefix}_lacks", ()):
        if unwanted in text:
            raise RowFailed(f"the {prefix} holds {unwanted!r}: {text!r}")


def check_outcome(expect: dict[str, Any], outcome: ToolOutcome) -> None:
    """A tool call's outcome against `expect`'s `ok`, `text_contains` and `text_lacks`."""
    wrote = not outcome.is_error
    text = outcome.message if isinstance(outcome, ToolRefusal) else outcome.text
    if "ok" in expect and expect["ok"] != wrote:
        raise RowFailed(f"expected ok={expect['ok']}, got ok={wrote}: {text!r}")
    check_texts(expect, "text", text)


def wit_version(path: Path) -> str:
    """The version of the WIT package declared in `path` (`package metis:memory@X;`)."""
    found = re.search(r"^package metis:memory@([^;\s]+);", path.read_text(), re.M)
    if found is None:
        raise RowFailed(f"no `package metis:memory@…;` line in {path}")
    return found.group(1)


# `add_under`'s child: the add in a process of its own, as `tests/surfaces/under` runs it,
# with the row's options (`sys.argv[4]`: the global directory or "", `agent_writes`, the
# budget).
CHILD = """
import json, sys
from metis_memory import GlobalUser, MemoryStore, MemoryStoreError
options = json.loads(sys.argv[4])
global_user = GlobalUser(options["dir"], options["agent_writes"]) if options["dir"] else None
try:
    store = MemoryStore(
        sys.argv[1], global_user=global_user, prompt_budget=options["prompt_budget"]
    )
    store.add_entry(sys.argv[2], sys.argv[3])
    print(json.dumps({"ok": True}))
except MemoryStoreError as error:
    print(json.dumps({"ok": False, "kind": error.kind, "text": str(error)}))
"""
UNDER_UNAVAILABLE = 77


class Driver:
    """The package as a surface: sessions by name, all on the workspace at `root`, the
    user's own `.metis/` (global user memory) in `home`."""

    def __init__(self, root: Path, home: Path) -> None:
        self.root = root
        self.home = home
        self.sessions: dict[str, MemorySession] = {}
        # The prompt each session was opened with, byte for byte (`prompt`'s `unchanged`).
        self.opened: dict[str, str] = {}
        # The last `memory_options` step's, for every later step: both start off.
        self.options: dict[str, Any] = {"global_user": "off", "prompt_budget": False}

    def global_user(self) -> GlobalUser | None:
        """Global user memory as the options set it (`None`: off)."""
        mode = self.options["global_user"]
        if mode == "off":
            return None
        return GlobalUser(self.home / ".metis", agent_writes=mode == "write")

    def store(self, **kwargs: Any) -> MemoryStore:
        """A store on the row's workspace with the options every later step runs with."""
        return MemoryStore(
            self.root,
            global_user=self.global_user(),
            prompt_budget=self.options["prompt_budget"],
            **kwargs,
        )

    def on_disk(self, file: str) -> Path:
        """Where a `given` or `file` key is: `.metis/F`, or `~/.metis/USER.md` in the
        row's home."""
        if file.startswith(IN_HOME):
            return self.home / file.removeprefix(IN_HOME)
        return self.root / ".metis" / file

    def session(self, name: str) -> MemorySession:
        if name not in self.sessions:
            raise RowFailed(f"session {name!r} was never opened")
        return self.sessions[name]

    def run(self, row: dict[str, Any]) -> None:
        for key in row:
            if key not in ROW_KEYS:
                raise RowFailed(f"this driver does not know the row key {key!r}")
        if "surfaces" in row and SURFACE not in row["surfaces"]:
            pytest.skip(f"not for this surface: {row.get('surfaces_why')}")
        for file, text in row.get("given", {}).items():
            path = self.on_disk(file)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode())
        for index, step in enumerate(row["steps"], 1):
            try:
                self.step(step)
            except RowFailed as failed:
                raise RowFailed(f"step {index} {json.dumps(step)}: {failed}") from None

    def step(self, step: dict[str, Any]) -> None:
        kinds = [kind for kind in STEPS if kind in step]
        if len(kinds) != 1:
            known = {key for keys, _ in STEPS.values() for key in keys}
            unknown = [key for key in step if key not in known]
            if unknown:
                raise RowFailed(f"this driver does not know the step key {unknown[0]!r}")
            raise RowFailed(f"a step is one of {sorted(STEPS)}, not keys {sorted(step)}")
        kind = kinds[0]
        keys, checks = STEPS[kind]
        for key in step:
            if key not in keys:
                raise RowFailed(f"this driver does not know the step key {key!r}")
        expect = step.get("expect", {})
        for key in expect:
            if key not in checks:
                raise RowFailed(f"this driver does not know the {kind} check {key!r}")

        if kind == "open":
            # What a host does before a model call: a session, and the prompt composed.
            snapshot = step.get("snapshot", False)
            if not isinstance(snapshot, bool):
                raise RowFailed(f"snapshot is true or false, not {snapshot!r}")
            session = self.store().session(snapshot=snapshot)
            if session.snapshot is not snapshot:
                raise RowFailed(f"session(snapshot={snapshot}) made one with {session.snapshot}")
            prompt = session.system_prompt("")
            self.sessions[step["open"]] = session
            self.opened[step["open"]] = prompt.text
            check_texts(expect, "prompt", prompt.text)
        elif kind == "start":
            # A session whose model is shown nothing: no prompt composed.
            self.sessions[step["start"]] = self.store().session()
        elif kind == "prompt":
            name = step["prompt"]
            prompt = self.session(name).system_prompt("")
            if "unchanged" in expect:
                if name not in self.opened:
                    raise RowFailed(f"session {name!r} was started, not opened with a prompt")
                unchanged = prompt.text == self.opened[name]
                if unchanged != expect["unchanged"]:
                    raise RowFailed(
                        f"expected unchanged={expect['unchanged']}: opened with "
                        f"{self.opened[name]!r}, now {prompt.text!r}"
                    )
            check_texts(expect, "prompt", prompt.text)
        elif kind == "update":
            update = self.session(step["update"]).memory_update()
            if "none" in expect and (update is None) != expect["none"]:
                raise RowFailed(f"expected none={expect['none']}, got {update!r}")
            if update is None and ("text_contains" in expect or "text_lacks" in expect):
                raise RowFailed("no update, where its text was to be checked")
            check_texts(expect, "text", update or "")
        elif kind == "call":
            outcome = self.session(step["call"]).call_tool(step["tool"], step["input"])
            check_outcome(expect, outcome)
        elif kind == "sessionless":
            call = step["sessionless"]
            for key in call:
                if key not in SESSIONLESS:
                    raise RowFailed(f"this driver does not know the sessionless key {key!r}")
            unheld = call.get("unheld", False)
            if not isinstance(unheld, bool):
                raise RowFailed(f"unheld is true or false, not {unheld!r}")
            outcome = self.store().call_tool(call["tool"], call["input"], unheld=unheld)
            check_outcome(expect, outcome)
        elif kind == "next_response":
            self.session(step["next_response"]).next_response()
        elif kind == "file":
            path = self.on_disk(step["file"])
            data = path.read_bytes() if path.exists() else None
            if data != step["is"].encode():
                shown = "missing" if data is None else repr(data.decode(errors="replace"))
                raise RowFailed(f"{step['file']} is {shown}, expected {step['is']!r}")
        elif kind == "read_only_add":
            add = step["read_only_add"]
            try:
                self.store(read_only=True).add_entry(add["file"], add["entry"])
            except MemoryStoreError as error:
                if "kind" in expect and error.kind != expect["kind"]:
                    raise RowFailed(f"kind {error.kind}, expected {expect['kind']}: {error}") from None
                check_texts(expect, "text", str(error))
            else:
                raise RowFailed("a read-only store wrote")
        elif kind == "add_under":
            self.add_under(step["add_under"], expect)
        elif kind == "root_mode":
            self.root.chmod(int(step["root_mode"], 8))
        elif kind == "read_refused":
            try:
                text = self.store().read(step["read_refused"])
            except (MemoryStoreError, MetisWorkspaceError) as error:
                if "kind" in expect and error.kind != expect["kind"]:
                    raise RowFailed(f"kind {error.kind}, expected {expect['kind']}: {error}") from None
                check_texts(expect, "text", str(error))
            else:
                raise RowFailed(f"the read was not refused: {text!r}")
        elif kind == "metis_holds":
            held = sorted(path.name for path in (self.root / ".metis").iterdir())
            if held != sorted(step["metis_holds"]):
                raise RowFailed(f".metis/ holds {held}, expected {sorted(step['metis_holds'])}")
        elif kind == "memory_options":
            self.set_options(step["memory_options"])
        elif kind == "trap_sweep":
            self.trap_sweep(step["trap_sweep"]["file"], step["trap_sweep"]["entry"])
        elif kind == "version":
            wanted = wit_version(ROOT / step["version"])
            if metis_memory.__version__ != wanted:
                raise RowFailed(
                    f"the package reports version {metis_memory.__version__}, "
                    f"{step['version']} says {wanted}"
                )

    def set_options(self, options: dict[str, Any]) -> None:
        """A `memory_options` step: a key left out keeps its value."""
        for key, value in options.items():
            if key not in OPTIONS:
                raise RowFailed(f"this driver does not know the option {key!r}")
            if value not in OPTIONS[key] or type(value) is not type(OPTIONS[key][0]):
                raise RowFailed(f"{key} is one of {OPTIONS[key]}, not {value!r}")
            self.options[key] = value

    def add_under(self, add: dict[str, Any], expect: dict[str, Any]) -> None:
        """The add in a child process under `add["cause"]` (`tests/surfaces/under`)."""
        under = ROOT / "tests" / "surfaces" / "under"
        argv = [str(under), add["cause"], str(self.root), sys.executable, "-c", CHILD]
        global_user = self.global_user()
        options = {
            "dir": "" if global_user is None else str(global_user.dir),
            "agent_writes": global_user is not None and global_user.agent_writes,
            "prompt_budget": self.options["prompt_budget"],
        }
        done = subprocess.run(
            [*argv, str(self.root), add["file"], add["entry"], json.dumps(options)],
            capture_output=True,
            text=True,
            cwd=self.root,
        )
        if done.returncode == UNDER_UNAVAILABLE:
            print(f"skipped: {done.stderr.strip()}")
            return
        if done.returncode < 0:
            raise RowFailed(f"killed by signal {-done.returncode}: {done.stderr}")
        try:
            outcome = json.loads(done.stdout)
        except json.JSONDecodeError:
            raise RowFailed(f"the child failed: {done.stderr}") from None
        if outcome["ok"]:
            raise RowFailed(f"the add under {add['cause']} wrote")
        if "kind" in expect and outcome["kind"] != expect["kind"]:
            raise RowFailed(f"kind {outcome['kind']}, expected {expect['kind']}: {outcome['text']}")
        check_texts(expect, "text", outcome["text"])

    def add_with_fuel(self, file: str, entry: str, fuel: int | None) -> ComponentTrap | None:
        limits = Limits() if fuel is None else Limits(fuel=fuel)
        try:
            self.store(limits=limits).add_entry(file, entry)
        except ComponentTrap as trap:
            return trap
        return None

    def trap_sweep(self, file: str, entry: str) -> None:
        """Adds that trap at 20 budgets under what the add needs, each retried only as the
        trap's `written` says: the file must hold the entry exactly once every time."""
        path = self.on_disk(file)
        given = path.read_bytes() if path.exists() else b""

        def attempt(fuel: int | None) -> ComponentTrap | None:
            path.write_bytes(given)
            return self.add_with_fuel(file, entry, fuel)

        if attempt(None) is not None:
            raise RowFailed("the add traps even with the default fuel")
        low, high = 1, Limits().fuel
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (low, middle) if attempt(middle) is None else (middle, high)
        expected = given + f"{entry}\n".encode()
        trapped = told = 0
        for i in range(20):
            fuel = high // 2 + high * i // 40
            trap = attempt(fuel)
            if trap is None:
                continue
            trapped += 1
            told += trap.written is not None
            landed = trap.written if trap.written is not None else path.read_bytes() == expected
            if not landed:
                self.add_with_fuel(file, entry, None)
            if path.read_bytes() != expected:
                raise RowFailed(f"fuel {fuel}: written={trap.written}, then {path.read_bytes()!r}")
        if trapped == 0 or told == 0:
            raise RowFailed(f"{trapped} traps, {told} of them said whether they landed")


@pytest.mark.parametrize("row", ROWS)
def test_behaviour(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, row: dict[str, Any]
) -> None:
    try:
        Driver(tmp_path, tmp_path_factory.mktemp("home")).run(row)
    except RowFailed as failed:
        message = f"{row.get('name')}: {failed}"
    else:
        return
    pytest.fail(message, pytrace=False)
