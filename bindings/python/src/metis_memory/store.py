"""`MemoryStore`: the spec's Python interface (§4), run by the memory component.

`MemorySession`: one conversation's hold on memory, so that a `memory_consolidate`
composed from an old version, or from nothing the model was shown, is refused instead of
dropping what another session or a person wrote. How a session moves is decided in the
component (`workspace.compose`, `.update`, `.show`, `tools.call-with-options`,
`tools.next-response`); this type only keeps it between calls, as the Rust host's
`Session` does.

The two share this module because each names the other (a store makes sessions, and a
session's `store` is the store it runs on, typed as such for its users), and no two of
the package's modules import each other; `metis_memory.session` keeps the session's
import path."""

from __future__ import annotations

import errno
import functools
import json
import os
import secrets
import stat
import threading
from collections.abc import Callable, Iterable, Mapping
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

from wasmtime.component import Variant

from . import _global_user, _kept, _preopen, _runtime, _trust, _wit
from ._global_user import GlobalUser
from ._runtime import STORE, TOOLS, Exports, Settings
from ._types import (
    AuditFinding,
    AuditPolicy,
    ComposedPrompt,
    FileVersion,
    Limits,
    MemoryFile,
    ScanPolicy,
    SessionState,
    ShownFile,
    ToolDefinition,
    ToolOutcome,
    ToolRefusal,
    WriteResult,
)
from .errors import ComponentTrap, MetisWorkspaceError

T = TypeVar("T")


# How many times a write is run again after its `.metis/` vanished under it.
_VANISHED_RETRIES = 3


class _Access(Enum):
    READ = "read"
    WRITE = "write"


class _Refused(Exception):
    """A tool refusal on its way out of a write: it counts as a failed write. `value` is
    what the call returns (the refusal, or the refusal and the session after it)."""

    def __init__(self, value: Any) -> None:
        self.value = value


@functools.cache
def _cap(name: str, file: MemoryFile) -> int:
    def op(exports: Exports) -> int:
        value: int = exports(STORE, name, _wit.wit_file(file))
        return value

    return _runtime.with_instance(op, metis_dir=None, read_only=True, limits=Limits(), owner=None)


class MemoryStore:
    """The memory of the workspace at `workspace_path`: `.metis/MEMORY.md` and
    `.metis/USER.md`. Every call reads the files fresh, in a sandboxed instance that sees
    only `.metis/`: a fresh one for each write, one kept by this store for reads (see
    `_kept.KeptInstance`); `.metis/` is created (mode 0700) on the first write. A store
    may be used from several threads.

    With `global_user` (off by default), the person's own USER.md (`MemoryFile.GLOBAL_USER`,
    in the `GlobalUser` directory, normally `~/.metis/`) is composed into the prompt ahead
    of the workspace's, and the instances see that directory too (created, mode 0700, by a
    write if missing). With `prompt_budget`, each prompt section's heading shows how full
    its file is against its hard cap (`[67% — 2,744/4,096 bytes]`)."""

    def __init__(
        self,
        workspace_path: str | os.PathLike[str],
        *,
        limits: Limits = Limits(),
        follow_metis_link: bool = False,
        read_only: bool = False,
        trust_foreign_metis: bool = False,
        global_user: GlobalUser | None = None,
        prompt_budget: bool = False,
    ) -> None:
        if global_user is not None and not isinstance(global_user, GlobalUser):
            raise TypeError(f"global_user must be a GlobalUser or None, got {global_user!r}")
        self._workspace = Path(workspace_path).expanduser().resolve()
        self._limits = limits
        self._follow_metis_link = follow_metis_link
        # A `.metis/` another user owns, or in a directory every user can write, is refused
        # unless this is set (see `_trust`); the user's own `.metis/` is refused then
        # whatever this says (see `_global_user.open_dir`).
        self._trust_foreign_metis = trust_foreign_metis
        self._read_only = read_only
        self._global_user = global_user
        self._prompt_budget = bool(prompt_budget)
        self._kept = _kept.KeptInstance()
        # `.metis/`, and what every instance of this store is told (see
        # `_runtime.Settings`): used by every call, so made once.
        self._metis = self._workspace / ".metis"
        self._settings = Settings(
            read_only=read_only,
            global_user=None if global_user is None else global_user.agent_writes,
            prompt_budget=self._prompt_budget,
        )

    @property
    def workspace_path(self) -> str:
        return str(self._workspace)

    @property
    def metis_dir(self) -> Path:
        return self._metis

    @property
    def global_user(self) -> GlobalUser | None:
        """Global user memory as this store has it (`None`: off)."""
        return self._global_user

    @property
    def prompt_budget(self) -> bool:
        """Whether each prompt section's heading shows how full its file is."""
        return self._prompt_budget

    def memory_files(self) -> tuple[MemoryFile, ...]:
        """The memory files this store has: the workspace's two, and the user's own with
        global user memory on, unless it is the workspace's (a workspace at home)."""
        files = (MemoryFile.MEMORY, MemoryFile.USER)
        if self._global_user is None or self.global_is_workspace():
            return files
        return (*files, MemoryFile.GLOBAL_USER)

    def global_is_workspace(self) -> bool:
        """Whether the user's own `.metis/` is this workspace's (a workspace at home, the
        same device and inode): then the two USER.md are one file, which the component
        composes and writes as the workspace's."""
        if self._global_user is None:
            return False
        try:
            metis = self._existing_metis_dir()
        except OSError:
            metis = None
        try:
            global_dir = _global_user.existing(self._global_user)
        except OSError:
            global_dir = None
        return metis is not None and (metis.st_dev, metis.st_ino) == global_dir

    def file_path(self, file: MemoryFile | str) -> Path | None:
        """Where `file` is on disk: in the workspace's `.metis/`, or for the user's own,
        in its directory (`None` with global user memory off)."""
        file = MemoryFile(file)
        if file is MemoryFile.GLOBAL_USER:
            return None if self._global_user is None else self._global_user.dir / "USER.md"
        return self.metis_dir / file.value

    # Reads

    def read(self, file: MemoryFile | str) -> str:
        """The file's text; `""` when it is missing."""
        value: str = self._store("read", _wit.wit_file(file))
        return value

    def exists(self, file: MemoryFile | str) -> bool:
        """Whether the file exists (a 0-byte file does)."""
        value: bool = self._store("exists", _wit.wit_file(file))
        return value

    def size_bytes(self, file: MemoryFile | str) -> int:
        """The file's size in bytes on disk; 0 when it is missing."""
        value: int = self._store("size-bytes", _wit.wit_file(file))
        return value

    # Writes: each returns a WriteResult or raises a MemoryStoreError.

    def add_entry(self, file: MemoryFile | str, entry: str) -> WriteResult:
        """Appends `entry`, stripped, as its own line."""
        return self._write(file, Variant("add-entry", entry))

    def replace(self, file: MemoryFile | str, old_text: str, new_text: str) -> WriteResult:
        """Replaces the one occurrence of `old_text` with `new_text`."""
        return self._write(file, Variant("replace", _wit.replacement(old_text, new_text)))

    def consolidate(self, file: MemoryFile | str, new_content: str) -> WriteResult:
        """Makes `new_content` the whole file, byte for byte."""
        return self._write(file, Variant("consolidate", new_content))

    def consolidate_if_unchanged(
        self, file: MemoryFile | str, content: str, expected_hash: str
    ) -> WriteResult:
        """`consolidate`, only if the file's SHA-256 is still `expected_hash`
        (`MemoryChanged` otherwise, with the current hash and content)."""
        return self._write(
            file, Variant("consolidate", content), _wit.write_options(expected_hash)
        )

    # Caps

    @staticmethod
    def soft_cap(file: MemoryFile | str) -> int:
        """The size in bytes above which a write reports `over_soft_cap`."""
        return _cap("soft-cap", MemoryFile(file))

    @staticmethod
    def hard_cap(file: MemoryFile | str) -> int:
        """The largest size in bytes a write may leave the file at."""
        return _cap("hard-cap", MemoryFile(file))

    # Composition and audit

    def assemble_system_prompt(self, base: str) -> str:
        """`base`, then the USER.md and MEMORY.md sections (empty ones left out)."""
        if self._global_user is None and not self._prompt_budget:
            prompt: str = self._store("assemble-system-prompt", base)
            return prompt
        # With global user memory or the budget on, in their layout (a file that is not
        # text fails the call all the same).
        return self._compose(base, AuditPolicy.OFF, strict=True).text

    def compose_system_prompt(
        self, base: str, audit: AuditPolicy | str = AuditPolicy.OFF
    ) -> ComposedPrompt:
        """The prompt with the SHA-256 of each file it was composed from, audited under
        `audit`."""
        return _wit.composed_prompt(self._compose(base, AuditPolicy(audit)))

    def audit(self, file: MemoryFile | str) -> tuple[AuditFinding, ...]:
        """What the poisoning scan's rules find in the file on disk."""
        return _wit.findings(self._store("audit", _wit.wit_file(file)))

    # Tools

    def tool_definitions(self) -> list[ToolDefinition]:
        """`memory_add`, `memory_replace`, `memory_consolidate`, for an LLM API."""
        values = self._run(_Access.READ, lambda exports: exports(TOOLS, "definitions"))
        return [_wit.tool_definition(v) for v in values]

    def call_tool(
        self,
        name: str,
        input: str | Mapping[str, Any],
        *,
        seen: Mapping[MemoryFile | str, str] | Iterable[FileVersion] | None = None,
        withheld: Iterable[MemoryFile | str] = (),
        scan: ScanPolicy | None = None,
        unheld: bool = False,
    ) -> ToolOutcome:
        """Runs one tool call outside any session; `input` is its JSON text (or a mapping,
        sent as JSON). A refusal is returned as a `ToolRefusal` and changed nothing (a
        `ComponentTrap` may not have: see there).

        The call is held as a session's is, to a model shown only `seen` (the versions it
        has seen: none when `None`) and kept from `withheld`: a `memory_consolidate` of a
        file not in `seen` is refused, showing the file, unless it is empty or missing,
        since a model shown nothing of a file would drop whatever it holds. An agent host
        keeps what its model saw with a `session()` instead.

        `unheld=True` is the opt-out, by name, for a caller that knows what the file holds
        (a person's own script, the conformance cases): only the files listed in `seen`
        are held, and a consolidate of any other rewrites it whatever it holds."""
        state = SessionState(
            # A file listed twice counts by its last version: the component decides it.
            seen=tuple(_versions(seen)),
            # A file listed twice is left to the component, as `seen`'s are.
            withheld=tuple(MemoryFile(f) for f in withheld),
        )
        # Held to what the model saw, unseen files too; unheld, only the files in `seen`.
        outcome, _ = self._call_tool(
            name, input, scan or ScanPolicy(), state, hold_unseen=not unheld
        )
        return outcome

    # Sessions

    def session(
        self,
        *,
        audit: AuditPolicy | str = AuditPolicy.OMIT,
        scan: ScanPolicy | None = None,
        snapshot: bool = False,
    ) -> MemorySession:
        """A model's conversation with this workspace's memory, held to what it has been
        shown: compose the prompt with `system_prompt` before every model call and run the
        model's tool calls with `call_tool`, and a consolidate based on an old version, or
        on a file the model was never shown, is refused with the current content shown.
        Prompts are audited under `audit` (a file the memory audit flags is left out and
        withheld from the tools by default), tool calls scanned under `scan` (both parts
        by default). One per conversation.

        With `snapshot=True` the system prompt is composed once and kept byte for byte,
        so a provider's prompt cache keeps the whole prefix; what others write meanwhile
        reaches the model through `memory_update()` instead (see `MemorySession`)."""
        return MemorySession(self, AuditPolicy(audit), scan or ScanPolicy(), snapshot=snapshot)

    def _compose(self, base: str, audit: AuditPolicy, *, strict: bool = False) -> Any:
        """The component's `workspace.compose` (a WIT `composed-prompt`), on the kept read
        instance."""
        return self._method("compose", base, _wit.compose_options(audit.value, strict=strict))

    def _compose_session_prompt(
        self, base: str, audit: AuditPolicy
    ) -> tuple[ComposedPrompt, SessionState]:
        """The prompt a session starts from, and that session."""
        value = self._compose(base, audit)
        return _wit.composed_prompt(value), _wit.session_state(value.session)

    def _call_tool(
        self,
        name: str,
        input: str | Mapping[str, Any],
        scan: ScanPolicy,
        state: SessionState,
        *,
        hold_unseen: bool,
    ) -> tuple[ToolOutcome, SessionState]:
        """The component's `tools.call-with-options`, as a write on a fresh instance: the
        outcome and the session after it. A trap raises, and no session comes back."""
        text = _tool_input(input)
        options = _wit.call_options(scan, state, hold_unseen=hold_unseen)

        def op(exports: Exports) -> tuple[ToolOutcome, SessionState]:
            value = exports(TOOLS, "call-with-options", exports.workspace(), name, text, options)
            result = _wit.tool_outcome(value.outcome), _wit.session_state(value.session)
            if isinstance(result[0], ToolRefusal):
                raise _Refused(result)
            return result

        try:
            return self._run(_Access.WRITE, op)
        except _Refused as refused:
            after: tuple[ToolOutcome, SessionState] = refused.value
            return after

    def _memory_update(
        self, state: SessionState, audit: AuditPolicy
    ) -> tuple[str | None, SessionState]:
        """The component's `workspace.update`, on the kept read instance: the text for the
        conversation (`None`: nothing changed) and the session after it. A store refusal
        raises, and no session comes back."""
        return _wit.session_update(self._method("update", _wit.session(state), audit.value))

    def _show_file(
        self, file: MemoryFile, state: SessionState, audit: AuditPolicy, *, whole: bool
    ) -> tuple[ShownFile, SessionState]:
        """The component's `workspace.show` (`whole=False` when the model is shown only
        part of it), on the kept read instance: the file as read and audited, and the
        session after it. A store refusal raises, and no session comes back."""
        value = self._method(
            "show", _wit.wit_file(file), _wit.session(state), audit.value, whole
        )
        shown = ShownFile(file, value.text, _wit.findings(value.findings), value.withheld)
        return shown, _wit.session_state(value.session)

    def _next_response(self, state: SessionState) -> SessionState:
        """The component's `next-response` (it reads no file), on the kept read instance."""
        value = self._run(
            _Access.READ, lambda exports: exports(TOOLS, "next-response", _wit.session(state))
        )
        return _wit.session_state(value)

    # The host's duties

    def _store(self, function: str, *args: Any) -> Any:
        """A plain `store` read, on the kept read instance; a refusal raises with the
        component's own text."""
        return self._run(_Access.READ, lambda exports: _checked(exports(STORE, function, *args)))

    def _method(self, name: str, *args: Any) -> Any:
        """A read through the `store.workspace` of the kept read instance (made with this
        store's settings); a refusal raises with the component's own text."""
        return self._run(_Access.READ, lambda exports: _checked(exports.method(name, *args)))

    def _write(
        self, file: MemoryFile | str, edit: Variant, options: Any = _wit.PLAIN_WRITE
    ) -> WriteResult:
        """The component's `workspace.write` on a fresh instance, whose workspace carries
        this write's own token (see `_run`); a refusal raises with the component's text."""
        args = (_wit.wit_file(file), edit, options)
        value = self._run(_Access.WRITE, lambda exports: _checked(exports.method("write", *args)))
        return _wit.write_result(value)

    def _run(self, access: _Access, op: Callable[[Exports], T]) -> T:
        """Runs `op` on an instance that sees `.metis/` (and the user's own, with global
        user memory on): a read on the kept instance, a write on a fresh one (after
        creating `.metis/`, and the user's own), then undoes what a failed write left: a
        trapped call's lock and temporary file, and a `.metis/` (or the user's own) this
        call created that is still empty."""
        settings = self._settings
        if access is _Access.READ:
            info = self._existing_metis_dir()
            made_for = _kept.KeptFor(
                metis=None if info is None else (info.st_dev, info.st_ino),
                global_dir=self._existing_global_dir(),
                settings=settings,
            )
            return self._kept.run(made_for, self._open_dirs, self._limits, op)
        metis = self.metis_dir
        writes = not self._read_only
        # A write whose `.metis/` vanished under it (another writer's refused first write
        # removes the `.metis/` it created while still empty) wrote nothing there, and runs
        # again in the new one.
        for attempt in range(_VANISHED_RETRIES + 1):
            last = attempt == _VANISHED_RETRIES
            created = self._create_metis_dir() if writes else False
            try:
                created_global = self._create_global_dir() if writes else False
            except BaseException:
                if created:
                    _remove_empty(metis)
                raise
            # Pre-opened as the host opened it, never through a link swapped in after the
            # check.
            try:
                opened = self._open_metis_dir()
            except BaseException:
                if created_global:
                    self._remove_global_dir()
                raise
            if opened is None and writes:
                if created_global:
                    self._remove_global_dir()
                if not last:
                    continue
                raise MetisWorkspaceError(
                    f"{metis} was removed as the call began; nothing was written"
                )
            # A write's own token: after a trap, exactly its lock and temporary file are
            # removed.
            owner = secrets.randbits(64)
            done = False
            global_opened: _preopen.OpenedDir | None = None
            try:
                global_opened = self._open_global_dir()
                result = _runtime.with_instance(
                    op,
                    metis_dir=None if opened is None else opened.path,
                    read_only=self._read_only,
                    limits=self._limits,
                    owner=owner,
                    read_only_fs=opened is not None and opened.read_only_fs,
                    global_dir=None if global_opened is None else global_opened.path,
                    global_user=settings.global_user,
                    prompt_budget=settings.prompt_budget,
                )
                done = True
                return result
            except ComponentTrap as trap:
                if writes and opened is not None:
                    # If even this traps, the lock is left to expire (a lease, as after a
                    # crash) and what landed is not known.
                    try:
                        trap.written = _runtime.recover_after_trap(
                            opened.path,
                            owner,
                            global_dir=None if global_opened is None else global_opened.path,
                        )
                    except ComponentTrap:
                        pass
                raise
            except Exception:
                # A call that created `.metis/` removes it itself (below) when it fails.
                if (
                    writes
                    and not created
                    and not last
                    and opened is not None
                    and self._vanished(opened.id)
                ):
                    continue
                raise
            finally:
                if opened is not None:
                    opened.close()
                if global_opened is not None:
                    global_opened.close()
                if created and not done:
                    _remove_empty(metis)
                if created_global and not done:
                    self._remove_global_dir()
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _vanished(self, opened_id: tuple[int, int]) -> bool:
        """Whether `.metis/` is no longer the directory `opened_id` names."""
        try:
            info = self._existing_metis_dir()
        except MetisWorkspaceError:
            return False
        return info is None or (info.st_dev, info.st_ino) != opened_id

    def _existing_metis_dir(self) -> os.stat_result | None:
        """`.metis/`'s status if it exists, else `None`; an error when something else is
        there, or a symbolic link this store was not told to follow."""
        metis = self.metis_dir
        try:
            info = os.lstat(metis)
            # The common case in one system call: a directory that is not a link.
            if stat.S_ISDIR(info.st_mode):
                return info
            if stat.S_ISLNK(info.st_mode) and not self._follow_metis_link:
                raise MetisWorkspaceError(
                    f"{metis} is a symbolic link to {os.readlink(metis)}: memory would be "
                    "read and written outside this workspace, so it is refused (if you keep "
                    "memory there on purpose, pass follow_metis_link=True)"
                )
            info = os.stat(metis)
        except FileNotFoundError:
            return None
        except MetisWorkspaceError:
            raise
        except OSError as e:
            raise MetisWorkspaceError(f"cannot access {metis}: {e}") from e
        if not stat.S_ISDIR(info.st_mode):
            raise MetisWorkspaceError(f"{metis} exists but is not a directory")
        return info

    def _open_metis_dir(self) -> _preopen.OpenedDir | None:
        """`.metis/` opened for pre-opening (`None` if there is none), never through a link
        unless this store follows one: the instance gets exactly the directory opened here,
        even if `.metis` is swapped for a link or another directory a moment later."""
        metis = self.metis_dir
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK | os.O_CLOEXEC
        if not self._follow_metis_link:
            flags |= os.O_NOFOLLOW
        try:
            fd = os.open(metis, flags)
        except OSError as e:
            # Say why as `_existing_metis_dir` does (a link refused, not a directory,
            # missing); a directory again by now means it was swapped meanwhile.
            if self._existing_metis_dir() is None:
                return None
            if e.errno in (errno.ELOOP, errno.ENOTDIR):
                raise MetisWorkspaceError(
                    f"{metis} changed as it was opened (it was a symbolic link or not a "
                    f"directory a moment ago: {e}), so it is refused"
                ) from e
            raise MetisWorkspaceError(f"cannot open {metis}: {e}") from e
        def check() -> None:
            if not self._trust_foreign_metis:
                _trust.check_owner(metis, fd)
                _trust.check_root(self._workspace)

        return _preopen.opened(fd, metis, check)

    def _open_dirs(self) -> _preopen.Preopens:
        """The directories a read's instance pre-opens: `.metis/`, and the user's own with
        global user memory on (each `None` if it is not there)."""
        metis = self._open_metis_dir()
        try:
            return _preopen.Preopens(metis, self._open_global_dir())
        except BaseException:
            if metis is not None:
                metis.close()
            raise

    def _existing_global_dir(self) -> _preopen.DirId | None:
        """The user's own `.metis/`'s identity, if global user memory is on and it exists."""
        if self._global_user is None:
            return None
        return _global_user.existing(self._global_user)

    def _open_global_dir(self) -> _preopen.OpenedDir | None:
        """The user's own `.metis/`, opened (following a link) and checked as `.metis/` is,
        if global user memory is on and it exists."""
        if self._global_user is None:
            return None
        return _global_user.open_dir(self._global_user)

    def _create_global_dir(self) -> bool:
        """Whether this call created the user's own `.metis/` (mode 0700): a write with
        global user memory on does, when it is missing."""
        if self._global_user is None:
            return False
        return _global_user.create(self._global_user)

    def _remove_global_dir(self) -> None:
        """Removes the user's own `.metis/` this call created, if it is still empty."""
        if self._global_user is not None:
            _global_user.remove_if_empty(self._global_user)

    def _create_metis_dir(self) -> bool:
        """Makes sure `.metis/` exists (mode 0700 when created here); whether this call
        created it."""
        if self._existing_metis_dir() is not None:
            return False
        if not self._trust_foreign_metis:
            _trust.check_root(self._workspace)
        try:
            os.mkdir(self.metis_dir, 0o700)
        except FileExistsError:
            return False
        except OSError as e:
            raise MetisWorkspaceError(f"cannot create {self.metis_dir}: {e}") from e
        # The new entry in the workspace directory is made durable before anything is
        # written into it, as the rename of a file into `.metis/` is by its own sync.
        try:
            fd = os.open(self._workspace, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as e:
            try:
                os.rmdir(self.metis_dir)
            except OSError:
                pass
            raise MetisWorkspaceError(
                f"cannot sync {self._workspace} after creating .metis/ in it: {e}"
            ) from e
        return True

    def __repr__(self) -> str:
        return f"MemoryStore({self.workspace_path!r})"


def _remove_empty(directory: Path) -> None:
    """Removes `directory` if it is empty: anything another writer put there meanwhile
    stays."""
    try:
        os.rmdir(directory)
    except OSError:
        pass


def _checked(value: Any) -> Any:
    """A `store` call's `result`: the value, or its `store-error` raised (wasmtime-py gives
    the error as a `Variant`, and no `ok` value of the WIT is one)."""
    if isinstance(value, Variant):
        raise _wit.store_error(value)
    return value


def _tool_input(input: str | Mapping[str, Any]) -> str:
    """A tool call's input as JSON text: given as text, or a mapping sent as JSON."""
    return input if isinstance(input, str) else json.dumps(input, ensure_ascii=False)


def _versions(
    seen: Mapping[MemoryFile | str, str] | Iterable[FileVersion] | None,
) -> list[FileVersion]:
    if seen is None:
        return []
    if isinstance(seen, Mapping):
        return [FileVersion(MemoryFile(f), h) for f, h in seen.items()]
    return list(seen)


class MemorySession:
    """A model's conversation with a workspace's memory (`MemoryStore.session()`):

    ```python
    session = store.session()
    prompt = session.system_prompt("You are a careful assistant.")  # before every model call
    # … send prompt.text with the tool definitions; for each tool call the model makes:
    outcome = session.call_tool("memory_add", {"file": "MEMORY.md", "entry": "- uses cargo"})
    ```

    Prompts are composed under the `audit` policy (`omit` unless told otherwise: a file
    the memory audit flags is left out of the prompt, and the tools refuse to write it),
    tool calls scanned under `scan`. A session starts shown nothing, and only what reaches
    the model counts as shown: the prompt `system_prompt` returns, the text
    `memory_update` returns, the model's own writes (their results told it), and the
    content a refusal showed, once `next_response` says the model has read it. Until a
    file has been shown, a consolidate of it is refused (showing it) unless the file is
    empty, so compose the prompt first.

    A snapshot session (`store.session(snapshot=True)`) composes the system prompt once
    and returns the same bytes for the rest of the conversation, so a provider's prompt
    cache keeps the whole prefix: the model learns of its own writes from their tool
    results, and of anyone else's from `memory_update()`, text the host appends to the
    conversation.

    A session may be used from several threads at once (an agent framework that runs one
    model response's tool calls in threads): its calls take turns, each taking the state
    the one before it returned, so no call's move of the session is lost."""

    def __init__(
        self, store: MemoryStore, audit: AuditPolicy, scan: ScanPolicy, *, snapshot: bool = False
    ) -> None:
        self._store = store
        self._audit = audit
        self._scan = scan
        self._snapshot = bool(snapshot)
        self._state = SessionState()
        # In a snapshot session, the base and the prompt composed for it: returned for it.
        self._frozen: tuple[str, ComposedPrompt] | None = None
        # Each call reads the state and replaces it with what the component returned: two
        # at once would each start from the same state, and the second would undo the
        # first's move (a write it made, what a refusal showed). Reentrant, so that a
        # subclass's method may call another.
        self._lock = threading.RLock()

    @property
    def store(self) -> MemoryStore:
        """The store this session reads and writes."""
        return self._store

    @property
    def audit(self) -> AuditPolicy:
        """The audit policy prompts are composed under."""
        return self._audit

    @property
    def scan(self) -> ScanPolicy:
        """The poisoning scan tool calls run under."""
        return self._scan

    @property
    def snapshot(self) -> bool:
        """Whether this is a snapshot session: its system prompt, once composed for a
        base, is kept byte for byte."""
        return self._snapshot

    @property
    def state(self) -> SessionState:
        """What the model has been shown: the state the next tool call is held to, as the
        component last returned it."""
        return self._state

    def system_prompt(self, base: str = "") -> ComposedPrompt:
        """The system prompt for the next model call (`base`, then the memory sections),
        with the versions it was composed from: the session starts again from what the
        model now sees. A store refusal (`MemoryFlagged` under the `refuse` policy, say)
        raises and leaves the session as it was.

        In a snapshot session, the prompt first composed for `base`, byte for byte (the
        same object), whatever was written since, and the model is asked again
        (`next_response`); another base composes and is kept in its place. Call
        `memory_update()` before each user turn to tell the model what changed."""
        with self._lock:
            if self._frozen is not None and self._frozen[0] == base:
                prompt = self._frozen[1]
                self._state = self._store._next_response(self._state)
                return prompt
            prompt, self._state = self._store._compose_session_prompt(base, self._audit)
            if self._snapshot:
                self._frozen = (base, prompt)
            return prompt

    def memory_update(self) -> str | None:
        """What changed in the memory since the model was last shown each file, as text to
        append to the conversation, or `None` when nothing did. Append it at the start of
        the next user turn, never to the system prompt (whose bytes a snapshot session
        keeps for the prompt cache). Each changed file is shown whole, between marker
        lines naming its version, and counts as shown once returned: the model's next
        consolidate is held to it, so the text must reach the model. The model's own
        writes, which it learnt from their tool results, are not news. Read under the
        session's audit policy: a file the audit now flags is withheld instead, and said
        so. Meant for a snapshot session; any session may call it. A store refusal (a
        file that is not text, say) raises and leaves the session as it was."""
        with self._lock:
            text, self._state = self._store._memory_update(self._state, self._audit)
            return text

    def show_file(self, file: MemoryFile | str, *, whole: bool = True) -> ShownFile:
        """One memory file for the model, read fresh and audited under the session's
        policy, when the model asks to see it (a memory tool's `view`). Unless the audit
        keeps it out (`withheld`: its text must not reach the model, and the tools refuse
        to write it), the file counts as shown at the version read from the model's next
        response (`next_response`), as a refusal's content does: the other calls of this
        response were written before the model read it. Put exactly `text` before the model. With `whole=False` the host shows only part of the text
        (a range of lines): the audit still withholds a flagged file, but nothing counts
        as shown, since a consolidate built on a part would drop the rest. A store refusal
        (a file that is not text) raises and leaves the session as it was."""
        with self._lock:
            shown, self._state = self._store._show_file(
                MemoryFile(file), self._state, self._audit, whole=whole
            )
            return shown

    def call_tool(self, name: str, input: str | Mapping[str, Any]) -> ToolOutcome:
        """Runs one of the model's tool calls (`input`: its JSON text, or a mapping sent
        as JSON), held to what the model has been shown; returns a `ToolSuccess` or a
        `ToolRefusal` (a consolidate of a file changed since the model saw it, or never
        shown to it, shows the current content). Each runs on a fresh instance, as
        `MemoryStore.call_tool` does. A `ComponentTrap` leaves the session as it was (and
        the file as the trap left it: read it to know)."""
        with self._lock:
            # Held to what its model saw, unseen files too.
            outcome, self._state = self._store._call_tool(
                name, input, self._scan, self._state, hold_unseen=True
            )
            return outcome

    def next_response(self) -> None:
        """The model is asked again without a freshly composed prompt: what refusals of
        its last response showed it now counts as seen. (`system_prompt` before the next
        model call does this too.)"""
        with self._lock:
            self._state = self._store._next_response(self._state)

    def __repr__(self) -> str:
        snapshot = ", snapshot=True" if self._snapshot else ""
        return f"MemorySession({self._store!r}, audit={self._audit.value!r}{snapshot})"
