"""Conversions between wasmtime-py's component values (records with the WIT's kebab-case
field names, `Variant`s, enum case names as strings) and this package's types."""

from __future__ import annotations

import json
from typing import Any

from wasmtime.component import Record, Variant

from . import errors
from ._types import (
    AuditFinding,
    ComposedPrompt,
    EvictionTrigger,
    FileVersion,
    MemoryEvent,
    MemoryEviction,
    MemoryFile,
    MemoryUpdated,
    Operation,
    OwnWrite,
    PromptSource,
    ScanPolicy,
    SessionState,
    ToolDefinition,
    ToolRefusal,
    ToolSuccess,
    WriteResult,
)

FILE_TO_WIT = {
    MemoryFile.MEMORY: "memory",
    MemoryFile.USER: "user",
    MemoryFile.GLOBAL_USER: "global-user",
}
FILE_FROM_WIT = {wit: file for file, wit in FILE_TO_WIT.items()}


def wit_file(file: MemoryFile | str) -> str:
    """`file` (a `MemoryFile`, or `"MEMORY.md"`, `"USER.md"`, `"~/.metis/USER.md"`) as
    the component's `memory-file`."""
    return FILE_TO_WIT[MemoryFile(file)]


def record(**fields: Any) -> Record:
    """A record to pass to the component, its field names in kebab case."""
    value = Record()
    for name, field in fields.items():
        setattr(value, name.replace("_", "-"), field)
    return value


def get(value: Any, name: str) -> Any:
    return getattr(value, name.replace("_", "-"))


def write_result(value: Any) -> WriteResult:
    return WriteResult(
        file=FILE_FROM_WIT[value.file],
        before_hash=get(value, "before_hash"),
        after_hash=get(value, "after_hash"),
        before_size_bytes=get(value, "before_size_bytes"),
        after_size_bytes=get(value, "after_size_bytes"),
        over_soft_cap=get(value, "over_soft_cap"),
        over_hard_cap=get(value, "over_hard_cap"),
    )


def findings(values: Any) -> tuple[AuditFinding, ...]:
    return tuple(AuditFinding(v.line, v.rule, v.detail) for v in values)


def composed_prompt(value: Any) -> ComposedPrompt:
    sources = tuple(
        PromptSource(
            file=FILE_FROM_WIT[s.file],
            sha256=s.sha256,
            size_bytes=get(s, "size_bytes"),
            included=s.included,
            findings=findings(s.findings),
        )
        for s in value.sources
    )
    return ComposedPrompt(value.text, sources)


def tool_definition(value: Any) -> ToolDefinition:
    return ToolDefinition(value.name, value.description, json.loads(get(value, "input_schema")))


def event(value: Variant) -> MemoryEvent:
    p: Any = value.payload
    if value.tag == "updated":
        return MemoryUpdated(
            file=FILE_FROM_WIT[p.file],
            operation=Operation(p.operation),
            before_hash=get(p, "before_hash"),
            after_hash=get(p, "after_hash"),
            before_size_bytes=get(p, "before_size_bytes"),
            after_size_bytes=get(p, "after_size_bytes"),
        )
    return MemoryEviction(
        file=FILE_FROM_WIT[p.file],
        trigger=EvictionTrigger(p.trigger.replace("-", "_")),
        entries_evicted=get(p, "entries_evicted"),
        size_before_bytes=get(p, "size_before_bytes"),
        size_after_bytes=get(p, "size_after_bytes"),
    )


def tool_outcome(value: Variant) -> ToolSuccess | ToolRefusal:
    """`result<tool-success, tool-error>`: both are records, so wasmtime-py tags them."""
    p: Any = value.payload
    if value.tag == "ok":
        return ToolSuccess(
            text=p.text,
            operation=Operation(p.operation),
            result=write_result(p.result),
            events=tuple(event(e) for e in p.events),
        )
    shown = None if p.shown is None else file_version(p.shown)
    return ToolRefusal(p.message, get(p, "is_user_visible"), shown)


def file_version(value: Any) -> FileVersion:
    return FileVersion(FILE_FROM_WIT[value.file], value.sha256)


def file_version_record(version: FileVersion) -> Record:
    return record(file=wit_file(version.file), sha256=version.sha256)


def session_state(value: Any) -> SessionState:
    """A WIT `session`, as the component returned it."""
    return SessionState(
        seen=tuple(file_version(v) for v in value.seen),
        withheld=tuple(FILE_FROM_WIT[f] for f in value.withheld),
        shown=tuple(file_version(v) for v in value.shown),
        own_writes=tuple(
            OwnWrite(FILE_FROM_WIT[w.file], get(w, "before_sha256"), get(w, "after_sha256"))
            for w in get(value, "own_writes")
        ),
    )


def session(state: SessionState) -> Record:
    """`state` as the WIT `session` to pass back to the component, unchanged."""
    return record(
        seen=[file_version_record(v) for v in state.seen],
        withheld=[wit_file(f) for f in state.withheld],
        shown=[file_version_record(v) for v in state.shown],
        own_writes=[
            record(
                file=wit_file(w.file),
                before_sha256=w.before_sha256,
                after_sha256=w.after_sha256,
            )
            for w in state.own_writes
        ],
    )


def session_update(value: Any) -> tuple[str | None, SessionState]:
    """A WIT `session-update`: the text for the conversation (`None`: nothing changed)
    and the session after it."""
    text: str | None = value.text
    return text, session_state(value.session)


def scan_policy(policy: ScanPolicy) -> Record:
    return record(
        invisible_characters=policy.invisible_characters,
        injection_patterns=policy.injection_patterns,
    )


# The plain write's: no scan.
NO_SCAN = ScanPolicy(invisible_characters=False, injection_patterns=False)


def settings(
    *,
    read_only: bool,
    read_only_mount: bool,
    global_user: bool | None,
    prompt_budget: bool,
    owner: int | None,
) -> Record:
    """A `store.settings` record (`global_user`: `None` off, else whether the agent writes
    the user's own USER.md; `owner`: `None` for a random one)."""
    return record(
        read_only=read_only,
        read_only_mount=read_only_mount,
        global_user=None if global_user is None else ("write" if global_user else "read"),
        prompt_budget=prompt_budget,
        owner=owner,
    )


def replacement(old_text: str, new_text: str) -> Record:
    """The payload of a `store.edit` `replace`."""
    return record(old_text=old_text, new_text=new_text)


def write_options(if_unchanged: str | None) -> Record:
    """A `store.write-options` held to `if_unchanged`, with no scan."""
    return record(if_unchanged=if_unchanged, scan=scan_policy(NO_SCAN))


# The plain write's options, made once: no version required, no scan.
PLAIN_WRITE = write_options(None)


def compose_options(audit: str, *, strict: bool = False) -> Record:
    return record(audit=audit, strict=strict)


def call_options(scan: ScanPolicy, state: SessionState, *, hold_unseen: bool) -> Record:
    return record(scan=scan_policy(scan), session=session(state), hold_unseen=hold_unseen)


def store_error(error: Variant) -> errors.MemoryStoreError:
    """The exception for a `store-error`: its text and file are the payload's."""
    p: Any = error.payload
    message: str = p.message
    if error.tag == "unsynced":
        result = write_result(get(p, "result"))
        return errors.MemoryUnsynced(message, result.file, result, get(p, "reason"))
    file = FILE_FROM_WIT[p.file]
    match error.tag:
        case "hard-cap-exceeded":
            return errors.MemoryHardCapExceeded(
                file, get(p, "attempted_bytes"), get(p, "cap_bytes"), message
            )
        case "not-unique":
            return errors.ReplaceSourceNotUnique(message, file, p.count)
        case "invalid-utf8":
            return errors.InvalidUtf8(message, file, p.offset)
        case "changed":
            return errors.MemoryChanged(
                message,
                file,
                get(p, "expected_hash"),
                get(p, "current_hash"),
                get(p, "current_content"),
            )
        case "flagged":
            return errors.MemoryFlagged(message, file, findings(p.findings))
        case "poisoned":
            return errors.MemoryPoisoned(message, file, p.rule)
        case "too-large":
            return errors.MemoryTooLarge(
                message, file, get(p, "size_bytes"), get(p, "limit_bytes")
            )
    # The cases whose payload is a `file-error`: the message and the file.
    return _FILE_ERRORS.get(error.tag, errors.MemoryStoreError)(message, file)


_FILE_ERRORS: dict[str, type[errors.MemoryStoreError]] = {
    "empty-entry": errors.EmptyEntry,
    "nothing-to-replace": errors.NothingToReplace,
    "not-found": errors.ReplaceSourceNotFound,
    "not-a-regular-file": errors.NotARegularFile,
    "busy": errors.MemoryBusy,
    "io": errors.MemoryIOFailure,
    "read-only": errors.MemoryReadOnly,
    "file-too-large": errors.MemoryFileTooLarge,
    "insufficient-space": errors.MemoryInsufficientSpace,
}
