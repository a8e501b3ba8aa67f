"""Claude's memory tool (`memory_20250818`) over a session: each command as a memory call.

The tool's `/memories` holds exactly the two memory files. Nothing here decides a memory
rule: a write is a tool call the session holds to what the model has seen (`create`,
`insert` and `delete` rewrite the whole file, so they are `memory_consolidate`), and a
`view` of a file is the session's `show_file`. The table in
tests/integrations/claude_memory_tool.json is what this must do."""

from __future__ import annotations

from collections.abc import Sequence

from .._types import MemoryFile, ToolOutcome, ToolRefusal
from ..session import MemorySession
from ..store import MemoryStore

ROOT = "/memories"
_MEMORY_PATH = f"{ROOT}/MEMORY.md"
_USER_PATH = f"{ROOT}/USER.md"
# The tool's name for each file, as the memory tools take it.
_TOOL_FILE = {_MEMORY_PATH: "MEMORY.md", _USER_PATH: "USER.md"}
_ABOUT = {_MEMORY_PATH: "facts about this workspace", _USER_PATH: "facts about the user"}
_FILES = (
    f"the memory is exactly two files, {_MEMORY_PATH} ({_ABOUT[_MEMORY_PATH]}) and "
    f"{_USER_PATH} ({_ABOUT[_USER_PATH]}); there are no others, and no directories"
)
# Wide enough for any line count the caps allow, as the SDK's own tool numbers lines.
_NUMBER_WIDTH = 6


class CommandRefused(Exception):
    """A command that changed nothing: `message` is for the model."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ClaudeMemory:
    """The commands of Claude's memory tool, run in `session`. Each returns the text for
    the model or raises `CommandRefused`."""

    def __init__(self, session: MemorySession) -> None:
        self._session = session
        # Whether the tool's `responses` tells the session where each response ends.
        # Until it does, a view is taken as read at once, as over MCP: nothing else would
        # ever make it count.
        self.boundaries = False

    @property
    def session(self) -> MemorySession:
        return self._session

    def view(self, path: str, view_range: Sequence[int] | None = None) -> str:
        if path in (ROOT, f"{ROOT}/"):
            return self._listing()
        file = self._file(path)
        whole = view_range is None
        shown = self._session.show_file(file, whole=whole)
        if whole and not shown.withheld and not self.boundaries:
            self._session.next_response()
        if shown.withheld:
            found = ", ".join(f"line {f.line}: {f.rule}" for f in shown.findings)
            raise CommandRefused(
                f"{path} is withheld: the memory audit flagged it ({found}), so its text is "
                "not shown, and every write to it is refused until a person reviews it."
            )
        lines = _lines(shown.text)
        if whole:
            if not lines:
                return f"{path} is empty."
            return f"Here's the content of {path} with line numbers:\n" + _numbered(lines, 1)
        start, end = _range(view_range, len(lines))
        return (
            f"Lines {start}-{end} of {len(lines)} of {path}, a part of it, which does not count "
            "as having seen the file: view the whole file before a create, insert or delete "
            "of it.\n" + _numbered(lines[start - 1 : end], start)
        )

    def create(self, path: str, file_text: str) -> str:
        self._file(path)
        return self._consolidate(path, file_text)

    def str_replace(self, path: str, old_str: str, new_str: str) -> str:
        self._file(path)
        return _text(
            self._session.call_tool(
                "memory_replace", {"file": _TOOL_FILE[path], "old": old_str, "new": new_str}
            )
        )

    def insert(self, path: str, insert_line: int, insert_text: str) -> str:
        file = self._file(path)
        # Read, not shown: the model sees none of it, and the consolidate below is held to
        # the version the model did see (refused if the file changed since, or was never
        # viewed).
        lines = _lines(self._session.store.read(file))
        if isinstance(insert_line, bool) or not 0 <= insert_line <= len(lines):
            raise CommandRefused(
                f"Invalid `insert_line` parameter: {insert_line}. It should be within the "
                f"range [0, {len(lines)}]."
            )
        lines.insert(insert_line, insert_text.rstrip("\n"))
        return self._consolidate(path, "".join(line + "\n" for line in lines))

    def delete(self, path: str) -> str:
        self._file(path)
        # The file stays, empty: the store has no other way to hold nothing.
        return self._consolidate(path, "")

    def rename(self, old_path: str, new_path: str) -> str:
        raise CommandRefused(f"rename is refused: {_FILES}, and they cannot be renamed.")

    def _listing(self) -> str:
        store = self._session.store
        rows = []
        for path in (_MEMORY_PATH, _USER_PATH):
            file = self._file(path)
            cap_file = MemoryFile(_TOOL_FILE[path])
            rows.append(
                f"{store.size_bytes(file)} bytes\t{path}\t{_ABOUT[path]} (soft cap "
                f"{MemoryStore.soft_cap(cap_file)}, hard cap {MemoryStore.hard_cap(cap_file)} bytes)"
            )
        return f"{ROOT} holds two memory files; view one to read it:\n" + "\n".join(rows)

    def _consolidate(self, path: str, content: str) -> str:
        outcome = self._session.call_tool(
            "memory_consolidate", {"file": _TOOL_FILE[path], "content": content}
        )
        if isinstance(outcome, ToolRefusal) and outcome.shown is not None:
            # The refusal speaks of memory_consolidate, which this tool calls create.
            raise CommandRefused(
                f"{outcome.message}\n(create, insert and delete rewrite the whole of {path}, "
                f"held to the version you were shown: view {path}, then send the command "
                "again.)"
            )
        return _text(outcome)

    def _file(self, path: str) -> MemoryFile:
        if path not in _TOOL_FILE:
            raise CommandRefused(f"{path} is not a memory file: {_FILES}.")
        if path == _USER_PATH and _user_is_global(self._session.store):
            return MemoryFile.GLOBAL_USER
        return MemoryFile(_TOOL_FILE[path])


def _user_is_global(store: MemoryStore) -> bool:
    """Whether the memory tools' USER.md is the person's own (global user memory with
    agent writes), which is then the file a view must show."""
    global_user = store.global_user
    return global_user is not None and global_user.agent_writes and not store.global_is_workspace()


def _text(outcome: ToolOutcome) -> str:
    if isinstance(outcome, ToolRefusal):
        raise CommandRefused(outcome.message)
    return outcome.text


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def _numbered(lines: Sequence[str], first: int) -> str:
    return "\n".join(f"{n:>{_NUMBER_WIDTH}}\t{line}" for n, line in enumerate(lines, first))


def _range(view_range: Sequence[int] | None, count: int) -> tuple[int, int]:
    if view_range is None or len(view_range) != 2:
        raise CommandRefused(
            "view_range must be two line numbers: [first, last], last -1 for the end."
        )
    first, last = view_range
    last = count if last == -1 else last
    if not 1 <= first <= max(count, 1) or not first <= last <= count:
        raise CommandRefused(
            f"Invalid `view_range` {list(view_range)}: the file has {count} lines; give "
            "[first, last] with 1 <= first <= last, last -1 for the end."
        )
    return first, last
