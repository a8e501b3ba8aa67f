"""How long the asyncio event loop waits while `metis_memory.AsyncMemoryStore` works: a probe
task awaits `asyncio.sleep(0)` in a loop and records the longest gap between two of its
turns (the loop's worst stall) while the calls run. scripts/bench-loop runs it against the
installed wheel and writes BENCHMARKS.md's section from what it prints (one JSON object
a line).

Usage: python loop_stall.py MODE [RUNS]
  first       the process's first call (a read), in this fresh process
  async       RUNS times, each on a fresh workspace: the probe while a thread sleeps
              200 ms, holding no GIL and using no CPU ("control": the stalls this machine
              makes on its own, measured between the others), 40 adds one after another
              ("adds"), then 20 tool-call adds of one session at once, by asyncio.gather
              ("session")
  to-thread   the adds and the session's adds through the sync API and asyncio.to_thread,
              a session's calls taking turns on its lock (the design aio.py does not use)
Each case but the control runs twice: once with the probe (the stall, and the time taken
with the probe competing for the GIL) and once without it ("alone_ms").
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from importlib import metadata
from typing import Any

from metis_memory import AsyncMemoryStore, MemoryStore

ADDS = 40
SESSION_ADDS = 20


async def probed(work: Callable[[], Awaitable[Any]]) -> dict[str, float]:
    """Runs `work` with the probe going: its worst gap (ms), how many turns it made, and
    how long `work` took (ms)."""
    worst = 0.0
    turns = 0
    done = False

    async def probe() -> None:
        nonlocal worst, turns
        last = time.perf_counter()
        while not done:
            await asyncio.sleep(0)
            now = time.perf_counter()
            worst = max(worst, now - last)
            turns += 1
            last = now

    task = asyncio.ensure_future(probe())
    await asyncio.sleep(0)  # the probe's first turn, so that it measures from the start
    start = time.perf_counter()
    await work()
    took = time.perf_counter() - start
    done = True
    await task
    return {"stall_ms": worst * 1e3, "turns": turns, "took_ms": took * 1e3}


async def timed(work: Callable[[], Awaitable[Any]]) -> float:
    """How long `work` takes (ms), with no probe competing for the GIL."""
    start = time.perf_counter()
    await work()
    return (time.perf_counter() - start) * 1e3


def sequential_adds(store: AsyncMemoryStore) -> Callable[[], Awaitable[None]]:
    async def work() -> None:
        for i in range(ADDS):
            await store.add_entry("MEMORY.md", f"- entry {i}")

    return work


def concurrent_session_adds(store: AsyncMemoryStore) -> Callable[[], Awaitable[None]]:
    session = store.session()

    async def work() -> None:
        await asyncio.gather(
            *(
                session.call_tool("memory_add", {"file": "USER.md", "entry": f"- fact {i}"})
                for i in range(SESSION_ADDS)
            )
        )

    return work


def to_thread_adds(store: MemoryStore) -> Callable[[], Awaitable[None]]:
    async def work() -> None:
        for i in range(ADDS):
            await asyncio.to_thread(store.add_entry, "MEMORY.md", f"- entry {i}")

    return work


def to_thread_session_adds(store: MemoryStore) -> Callable[[], Awaitable[None]]:
    session = store.session()

    async def work() -> None:
        await asyncio.gather(
            *(
                asyncio.to_thread(
                    session.call_tool, "memory_add", {"file": "USER.md", "entry": f"- fact {i}"}
                )
                for i in range(SESSION_ADDS)
            )
        )

    return work


def warm(store: MemoryStore) -> None:
    """The component compiled and every path run once, as in a host that has been up."""
    store.add_entry("MEMORY.md", "- warm")
    session = store.session()
    session.system_prompt("")
    session.call_tool("memory_add", {"file": "USER.md", "entry": "- warm"})


async def main(mode: str, runs: int) -> None:
    info = {"wasmtime": metadata.version("wasmtime"), "python": sys.version.split()[0]}
    if mode == "first":
        store = AsyncMemoryStore(tempfile.mkdtemp(prefix="metis-loop-"))
        result = await probed(lambda: store.read("MEMORY.md"))
        print(json.dumps({"mode": mode, **info, **result}))
        return
    for _ in range(runs):
        sync = MemoryStore(tempfile.mkdtemp(prefix="metis-loop-"))
        warm(sync)
        if mode == "async":
            control = await probed(lambda: asyncio.to_thread(time.sleep, 0.2))
            print(json.dumps({"mode": mode, "case": "control", **info, **control}), flush=True)
            store = AsyncMemoryStore(sync)
            cases = {"adds": sequential_adds(store), "session": concurrent_session_adds(store)}
        elif mode == "to-thread":
            cases = {"adds": to_thread_adds(sync), "session": to_thread_session_adds(sync)}
        else:
            raise SystemExit(f"unknown mode {mode!r}")
        for case, work in cases.items():
            result = await probed(work)
            result["alone_ms"] = await timed(work)
            print(json.dumps({"mode": mode, "case": case, **info, **result}), flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    asyncio.run(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 10))
