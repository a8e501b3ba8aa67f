"""What counts as shown: a tool call outside a session is held as one whose model was shown
nothing (`unheld=True` opts out, by name); a session's calls take turns when made from
several threads at once; a snapshot session keeps its system prompt byte for byte and
tells the model what others wrote through `memory_update()`."""

from __future__ import annotations

import threading
from pathlib import Path

from metis_memory import (
    FileVersion,
    MemoryFile,
    MemoryStore,
    OwnWrite,
    ScanPolicy,
    SessionState,
    ToolOutcome,
    ToolRefusal,
    ToolSuccess,
)
from support import consolidate, on_disk, sha, workspace

M, U = MemoryFile.MEMORY, MemoryFile.USER
NOT_SHOWN = "You have not been shown MEMORY.md in this conversation"
SOMEONE_ELSE = "another session or a person"


def add(entry: str, file: str = "MEMORY.md") -> dict[str, str]:
    return {"file": file, "entry": entry}


def text(outcome: ToolOutcome) -> str:
    return outcome.message if isinstance(outcome, ToolRefusal) else outcome.text


# A call outside any session


def test_a_sessionless_consolidate_of_a_file_that_holds_something_is_refused(
    tmp_path: Path,
) -> None:
    held = "- a\n- b from another session\n"
    root = workspace(tmp_path, MEMORY=held)
    store = MemoryStore(root)
    refused = store.call_tool("memory_consolidate", consolidate("- a\n"))
    assert isinstance(refused, ToolRefusal) and refused.is_user_visible
    assert NOT_SHOWN in refused.message and "- b from another session" in refused.message
    assert refused.shown == FileVersion(M, sha(held))
    assert on_disk(root) == held
    # With the scan set, it is held all the same.
    assert store.call_tool(
        "memory_consolidate", consolidate("- a\n"), scan=ScanPolicy(False, False)
    ).is_error
    assert on_disk(root) == held

    # A file that holds nothing has nothing to lose; the other tools are not held.
    tea = store.call_tool("memory_consolidate", consolidate("- tea\n", "USER.md"))
    assert isinstance(tea, ToolSuccess)
    assert isinstance(store.call_tool("memory_add", add("- c")), ToolSuccess)
    assert on_disk(root) == held + "- c\n" and on_disk(root, U) == "- tea\n"


def test_a_sessionless_call_is_held_to_the_versions_it_is_told_were_seen(tmp_path: Path) -> None:
    root = workspace(tmp_path, MEMORY="- a\n- b\n")
    store = MemoryStore(root)
    # A file listed twice is held to its last version, as `call-with-options` counts it.
    seen = [FileVersion(M, sha("something else")), FileVersion(M, sha("- a\n- b\n"))]
    done = store.call_tool("memory_consolidate", consolidate("- a, b\n"), seen=seen)
    assert isinstance(done, ToolSuccess) and on_disk(root) == "- a, b\n"
    stale = store.call_tool("memory_consolidate", consolidate("- a\n"), seen={M: sha("- a\n- b\n")})
    assert stale.is_error and "changed since you last saw it" in stale.message
    assert on_disk(root) == "- a, b\n"


def test_unheld_by_name_rewrites_the_file_whatever_it_holds(tmp_path: Path) -> None:
    root = workspace(tmp_path, MEMORY="- a\n- b\n")
    store = MemoryStore(root)
    done = store.call_tool("memory_consolidate", consolidate("- a\n"), unheld=True)
    assert isinstance(done, ToolSuccess) and done.result.before_hash == sha("- a\n- b\n")
    assert on_disk(root) == "- a\n"
    # Unheld is held only to the versions listed.
    stale = store.call_tool(
        "memory_consolidate", consolidate(""), seen={M: sha("- a\n- b\n")}, unheld=True
    )
    assert stale.is_error and on_disk(root) == "- a\n"


# A session shown nothing yet


def test_a_fresh_session_may_not_consolidate_until_the_file_was_shown(tmp_path: Path) -> None:
    held = "- a\n- b from a person\n"
    root = workspace(tmp_path, MEMORY=held)
    session = MemoryStore(root).session()
    refused = session.call_tool("memory_consolidate", consolidate("- a\n"))
    assert isinstance(refused, ToolRefusal)
    assert NOT_SHOWN in refused.message and "- b from a person" in refused.message
    assert on_disk(root) == held
    # Shown in the refusal: seen once the model has read it, from its next response on.
    assert session.state.shown == (FileVersion(M, sha(held)),)
    assert session.call_tool("memory_consolidate", consolidate("- a\n")).is_error
    session.next_response()
    assert session.state.seen == (FileVersion(M, sha(held)),)
    assert isinstance(session.call_tool("memory_consolidate", consolidate("- a\n")), ToolSuccess)
    assert on_disk(root) == "- a\n"


def test_the_sessions_own_writes_are_kept_and_named_in_a_refusal(tmp_path: Path) -> None:
    root = workspace(tmp_path, MEMORY="- a\n")
    a = MemoryStore(root).session()
    a.system_prompt("")
    MemoryStore(root).add_entry(M, "- b from another session")
    mine = a.call_tool("memory_add", add("- c from A"))
    assert isinstance(mine, ToolSuccess)
    assert a.state.own_writes == (OwnWrite(M, mine.result.before_hash, mine.result.after_hash),)
    # The own writes go back to the component with the rest of the state: the refusal
    # tells the two writes apart.
    refused = a.call_tool("memory_consolidate", consolidate("- a, c\n"))
    assert refused.is_error
    assert (
        "another session or a person wrote to it, and then your own earlier write in this "
        "conversation" in refused.message
    )
    assert on_disk(root) == "- a\n- b from another session\n- c from A\n"


# Tool calls from several threads at once


def test_a_sessions_tool_calls_from_two_threads_take_turns(tmp_path: Path) -> None:
    """One model response's two tool calls, run at once (as pydantic-ai runs them, in
    threads): whichever runs first, the second takes the state the first returned, so the
    consolidate is held to the model's own add, never refused as if someone else wrote."""
    for run in range(20):
        (tmp_path / str(run)).mkdir()
        root = workspace(tmp_path / str(run), MEMORY="- a\n")
        session = MemoryStore(root).session()
        session.system_prompt("")
        barrier = threading.Barrier(2)
        outcomes: dict[str, ToolOutcome] = {}
        failures: list[BaseException] = []

        def call(name: str, input: dict[str, str]) -> None:
            try:
                barrier.wait()
                outcomes[name] = session.call_tool(name, input)
            except BaseException as error:
                failures.append(error)

        threads = [
            threading.Thread(target=call, args=("memory_add", add("- b"))),
            threading.Thread(target=call, args=("memory_consolidate", consolidate("- a, c\n"))),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not failures, failures
        for name, outcome in outcomes.items():
            assert SOMEONE_ELSE not in text(outcome), f"run {run}: {name}: {text(outcome)}"
        assert {name: outcome.is_error for name, outcome in outcomes.items()} == {
            "memory_add": False,
            "memory_consolidate": False,
        }, f"run {run}: {outcomes}"
        # Both moves were taken in: the session holds what is on disk now.
        now = on_disk(root)
        assert now in ("- a, c\n", "- a, c\n- b\n"), f"run {run}: {now!r}"
        assert FileVersion(M, sha(now)) in session.state.seen, f"run {run}: {session.state}"
        assert len(session.state.own_writes) == 2, f"run {run}: {session.state}"


# Snapshot sessions


def test_a_snapshot_sessions_prompt_is_byte_identical_and_its_update_carries_the_news(
    tmp_path: Path,
) -> None:
    root = workspace(tmp_path, MEMORY="- a\n")
    a = MemoryStore(root).session(snapshot=True)
    assert a.snapshot and not MemoryStore(root).session().snapshot
    first = a.system_prompt("You are careful.")
    assert first.text == "You are careful.\n\n## Workspace memory (MEMORY.md)\n- a"
    assert a.memory_update() is None

    # Its own write: told in the tool result, so neither the prompt nor the update moves.
    assert isinstance(a.call_tool("memory_add", add("- b from A")), ToolSuccess)
    again = a.system_prompt("You are careful.")
    assert again.text.encode() == first.text.encode() and again == first
    assert a.memory_update() is None

    # Another session's write: the prompt stays; a consolidate on the old version is
    # refused, and the update shows the file once.
    b = MemoryStore(root).session()
    b.system_prompt("")
    assert isinstance(b.call_tool("memory_add", add("- c from B")), ToolSuccess)
    assert a.system_prompt("You are careful.").text.encode() == first.text.encode()
    stale = a.call_tool("memory_consolidate", consolidate("- a, b\n"))
    assert stale.is_error and "changed since you last saw it" in stale.message
    update = a.memory_update()
    assert update is not None and update.count("- c from B") == 1
    assert "- a\n- b from A\n- c from B\n" in update
    assert a.memory_update() is None
    # Shown by the update: a consolidate built on it goes through.
    done = a.call_tool("memory_consolidate", consolidate("- a, b from A, c from B\n"))
    assert isinstance(done, ToolSuccess) and on_disk(root) == "- a, b from A, c from B\n"
    assert a.system_prompt("You are careful.").text.encode() == first.text.encode()
    assert a.memory_update() is None


def test_a_snapshot_prompt_asks_the_model_again_and_another_base_freezes_anew(
    tmp_path: Path,
) -> None:
    root = workspace(tmp_path, MEMORY="- a\n")
    a = MemoryStore(root).session(snapshot=True)
    first = a.system_prompt("")
    MemoryStore(root).add_entry(M, "- b")
    refused = a.call_tool("memory_consolidate", consolidate("- a\n"))
    assert refused.is_error and a.state.shown == (FileVersion(M, sha("- a\n- b\n")),)
    # The frozen prompt, and the model asked again: what the refusal showed is seen.
    assert a.system_prompt("").text == first.text
    assert a.state.shown == () and FileVersion(M, sha("- a\n- b\n")) in a.state.seen
    assert isinstance(a.call_tool("memory_consolidate", consolidate("- a, b\n")), ToolSuccess)

    other = a.system_prompt("Another base.")
    assert other.text == "Another base.\n\n## Workspace memory (MEMORY.md)\n- a, b"
    MemoryStore(root).add_entry(M, "- c")
    assert a.system_prompt("Another base.").text == other.text


def test_memory_update_in_a_session_that_recomposes(tmp_path: Path) -> None:
    """Any session may ask; what the update shows counts as seen."""
    root = workspace(tmp_path, MEMORY="- a\n")
    session = MemoryStore(root).session()
    assert not session.snapshot
    # Shown nothing yet: the update shows the file, and the session holds it.
    update = session.memory_update()
    assert update is not None and "- a" in update
    assert session.state == SessionState(seen=(FileVersion(M, sha("- a\n")),))
    assert session.memory_update() is None
    assert isinstance(session.call_tool("memory_consolidate", consolidate("- A\n")), ToolSuccess)
