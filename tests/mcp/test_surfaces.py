"""The cross-surface suite (`tests/surfaces/behaviours.json`, its README gives the format)
against `metis-memory mcp` through the PyPI `mcp` client: one case per row. Each session
(`"A"`, `"B"`) is a client connection of its own, its own server process spawned by the
SDK's stdio client on the row's workspace. Over MCP only a tool result is sure to reach
the model, so `open` connects, initializes and calls `memory_view` (what the model is
shown is that result's text; the initialize result's `instructions` count for nothing),
and `start` connects and initializes alone; `call` is `tools/call`, `memory_view`
included (it wrote, or showed, when the result is not `is_error`; its text is the text
content); `next_response` is nothing (a refusal's content counts as seen at once); `file`
reads the file from disk; `version` is `serverInfo.version` against wit/world.wit;
`memory_options` starts every later server with `--global-user G` (and
`--prompt-budget`). Every server of a row runs with `HOME` set to the row's own home, a
temporary directory, so `~/.metis/USER.md` (in `given` and `file`) is its
`.metis/USER.md` and the server finds it by itself, never in the real home. A row whose
`surfaces` leave out `mcp` is passed over (skipped), saying why. A step, or an `expect`,
with a key this driver does not know fails the row, naming the key (the table's
`prompt`, `update`, `sessionless` and `snapshot` are for other surfaces, in rows that
leave out `mcp`, and are not known here). Run by scripts/test-mcp, which sets
METIS_MEMORY_BIN and METIS_REPO_ROOT."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

BIN = os.environ["METIS_MEMORY_BIN"]
ROOT = Path(os.environ.get("METIS_REPO_ROOT") or Path(__file__).resolve().parents[2])
TABLE = ROOT / "tests" / "surfaces" / "behaviours.json"
UNDER = ROOT / "tests" / "surfaces" / "under"

# A bound on a broken server, never a wait for something to happen.
PATIENCE_SECONDS = 60

# Each step's kind (the key that names it), with every key it may have and the checks
# its `expect` may hold.
STEPS: dict[str, tuple[set[str], set[str]]] = {
    "open": ({"open", "expect"}, {"prompt_contains", "prompt_lacks"}),
    "start": ({"start"}, set()),
    "call": ({"call", "tool", "input", "expect"}, {"ok", "text_contains", "text_lacks"}),
    "next_response": ({"next_response"}, set()),
    "file": ({"file", "is"}, set()),
    "version": ({"version"}, set()),
    "add_under": ({"add_under", "expect"}, {"kind", "text_contains"}),
    "metis_holds": ({"metis_holds"}, set()),
    "root_mode": ({"root_mode"}, set()),
    "read_refused": ({"read_refused", "expect"}, {"kind", "text_contains"}),
    "memory_options": ({"memory_options"}, set()),
}
# The options a `memory_options` step may set.
OPTIONS = {"global_user", "prompt_budget"}
ROW_KEYS = {"name", "covers", "given", "steps", "surfaces", "surfaces_why"}
SURFACE = "mcp"
# The read-only tool that shows the model the memory, and counts as shown.
VIEW = "memory_view"


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


def wit_version(path: Path) -> str:
    """The version of the WIT package declared in `path` (`package metis:memory@X;`)."""
    found = re.search(r"^package metis:memory@([^;\s]+);", path.read_text(), re.M)
    if found is None:
        raise RowFailed(f"no `package metis:memory@…;` line in {path}")
    return found.group(1)


def text_of(result) -> str:
    """The text content of a tool result, all of it."""
    return "\n".join(block.text for block in result.content if block.type == "text")


class Driver:
    """The MCP server as a surface: a connection per session name, all on the workspace
    at `root` with `HOME` the row's own `home`, each closed when the row ends (by
    `stack`)."""

    def __init__(self, root: Path, home: Path, stack: AsyncExitStack) -> None:
        self.root = root
        self.home = home
        self.stack = stack
        self.sessions: dict[str, ClientSession] = {}
        # Set by `memory_options`: `off`, `read` or `write` (None: never set, no flag).
        self.global_user: str | None = None
        self.prompt_budget = False

    def on_disk(self, file: str) -> Path:
        """Where a row's file name is: `~/…` in the row's home, else in `.metis/`."""
        if file.startswith("~/"):
            return self.home / file.removeprefix("~/")
        return self.root / ".metis" / file

    def server(self, *before: str) -> StdioServerParameters:
        """The server on the workspace with the options set so far, its command line
        led by `before` (a wrapper such as `under`). `HOME` is the row's home, where
        the server finds the user's own `.metis/` by itself. The component cache is
        `METIS_MEMORY_CACHE_DIR` (an absolute directory scripts/test-mcp sets, else
        `off`), which the server prefers to any under `HOME`, so it does not move with
        it."""
        argv = [*before, BIN, "--workspace", str(self.root)]
        if self.global_user is not None:
            argv += ["--global-user", self.global_user]
        if self.prompt_budget:
            argv.append("--prompt-budget")
        argv.append("mcp")
        env = {
            "METIS_MEMORY_CACHE_DIR": os.environ.get("METIS_MEMORY_CACHE_DIR", "off"),
            "HOME": str(self.home),
        }
        return StdioServerParameters(command=argv[0], args=argv[1:], env=env)

    async def connect(self, cause: str | None = None):
        """A new connection, initialized: the client and the initialize result. With
        `cause`, the server runs under it (`tests/surfaces/under`)."""
        before = [] if cause is None else [str(UNDER), cause, str(self.root)]
        server = self.server(*before)
        errlog = self.stack.enter_context(tempfile.TemporaryFile("w+"))
        read, write = await self.stack.enter_async_context(stdio_client(server, errlog=errlog))
        client = await self.stack.enter_async_context(ClientSession(read, write))
        with anyio.fail_after(PATIENCE_SECONDS):
            result = await client.initialize()
        return client, result

    async def call(self, client: ClientSession, tool: str, arguments: dict[str, Any]):
        """`tools/call`: the result; a protocol error (no tool result) fails the row."""
        try:
            with anyio.fail_after(PATIENCE_SECONDS):
                return await client.call_tool(tool, arguments)
        except Exception as error:  # a protocol error is no tool result
            raise RowFailed(f"tools/call {tool} failed: {error!r}") from None

    def session(self, name: str) -> ClientSession:
        if name not in self.sessions:
            raise RowFailed(f"session {name!r} was never opened")
        return self.sessions[name]

    async def run(self, row: dict[str, Any]) -> None:
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
                await self.step(step)
            except RowFailed as failed:
                raise RowFailed(f"step {index} {json.dumps(step)}: {failed}") from None

    async def step(self, step: dict[str, Any]) -> None:
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
            # A connection (a session opened again is a new connection), and the memory
            # shown to its model: a `memory_view` result, the one way over MCP that is
            # sure to reach it.
            client, _ = await self.connect()
            self.sessions[step["open"]] = client
            result = await self.call(client, VIEW, {})
            if result.is_error:
                raise RowFailed(f"{VIEW} failed: {text_of(result)!r}")
            check_texts(expect, "prompt", text_of(result))
        elif kind == "start":
            # A connection shown nothing: `initialize` alone, whose instructions a client
            # may never show its model.
            client, _ = await self.connect()
            self.sessions[step["start"]] = client
        elif kind == "call":
            client = self.session(step["call"])
            result = await self.call(client, step["tool"], step["input"])
            wrote = not result.is_error
            text = text_of(result)
            if "ok" in expect and expect["ok"] != wrote:
                raise RowFailed(f"expected ok={expect['ok']}, got ok={wrote}: {text!r}")
            check_texts(expect, "text", text)
        elif kind == "next_response":
            # The model answers again: for MCP nothing, a refusal's content counted as
            # seen when it was sent. The session must exist all the same.
            self.session(step["next_response"])
        elif kind == "file":
            path = self.on_disk(step["file"])
            data = path.read_bytes() if path.exists() else None
            if data != step["is"].encode():
                shown = "missing" if data is None else repr(data.decode(errors="replace"))
                raise RowFailed(f"{step['file']} is {shown}, expected {step['is']!r}")
        elif kind == "add_under":
            await self.add_under(step["add_under"], expect)
        elif kind == "root_mode":
            self.root.chmod(int(step["root_mode"], 8))
        elif kind == "read_refused":
            await self.refused_at_start(expect)
        elif kind == "metis_holds":
            held = sorted(path.name for path in (self.root / ".metis").iterdir())
            if held != sorted(step["metis_holds"]):
                raise RowFailed(f".metis/ holds {held}, expected {sorted(step['metis_holds'])}")
        elif kind == "memory_options":
            # Every server started after this runs with these options; a key left out
            # keeps its value.
            options = step["memory_options"]
            for key in options:
                if key not in OPTIONS:
                    raise RowFailed(f"this driver does not know the option {key!r}")
            if "global_user" in options:
                self.global_user = options["global_user"]
            if "prompt_budget" in options:
                self.prompt_budget = options["prompt_budget"]
        elif kind == "version":
            wanted = wit_version(ROOT / step["version"])
            _, result = await self.connect()
            reported = result.server_info.version
            if reported != wanted:
                raise RowFailed(f"serverInfo.version is {reported}, {step['version']} says {wanted}")


    async def refused_at_start(self, expect: dict[str, Any]) -> None:
        """A server on an unusable workspace refuses before serving: the client's
        initialize fails, the server exits 1 (its start refusal: `kind` `workspace`), and
        the reason is on its stderr."""
        server = self.server()
        with tempfile.TemporaryFile("w+") as errlog:
            try:
                async with stdio_client(server, errlog=errlog) as (read, write):
                    async with ClientSession(read, write) as client:
                        with anyio.fail_after(PATIENCE_SECONDS):
                            await client.initialize()
            except Exception:  # noqa: BLE001 - the refusal is the point
                pass
            else:
                raise RowFailed("the server served an unusable workspace")
            errlog.seek(0)
            said = errlog.read()
        if expect.get("kind", "workspace") != "workspace":
            raise RowFailed(f"a refusal at start is of kind workspace, not {expect['kind']}")
        check_texts(expect, "text", said)

    async def add_under(self, add: dict[str, Any], expect: dict[str, Any]) -> None:
        """`memory_add` through a server running under `add["cause"]`. A tool result
        carries no kind, only the text the model reads, which names the cause's kind in
        parentheses (`read-only file system (read-only)`): that is what `kind` checks."""
        if not under_available(add["cause"], self.root):
            return
        client, _ = await self.connect(add["cause"])
        arguments = {"file": add["file"], "entry": add["entry"]}
        with anyio.fail_after(PATIENCE_SECONDS):
            result = await client.call_tool("memory_add", arguments)
        text = text_of(result)
        if not result.is_error:
            raise RowFailed(f"the add under {add['cause']} wrote: {text!r}")
        if "kind" in expect and f"({expect['kind']})" not in text:
            raise RowFailed(f"the text does not name the kind ({expect['kind']}): {text!r}")
        check_texts(expect, "text", text)


def under_available(cause: str, root: Path) -> bool:
    """Whether this machine can set `cause` up (`under` exits 77 when it cannot)."""
    done = subprocess.run([str(UNDER), cause, str(root), "true"], capture_output=True, text=True)
    if done.returncode == 77:
        print(f"skipped: {done.stderr.strip()}")
        return False
    return True


@pytest.mark.parametrize("row", ROWS)
def test_behaviour(tmp_path_factory: pytest.TempPathFactory, row: dict[str, Any]) -> None:
    failure: list[str] = []
    # The workspace, and the row's own home (for `~/.metis/`), apart from each other.
    root = tmp_path_factory.mktemp("workspace")
    home = tmp_path_factory.mktemp("home")

    async def test() -> None:
        async with AsyncExitStack() as stack:
            try:
                await Driver(root, home, stack).run(row)
            except RowFailed as failed:
                failure.append(f"{row.get('name')}: {failed}")

    anyio.run(test)
    if failure:
        pytest.fail(failure[0], pytrace=False)
