"""What every Python process of the bench shares (python_host.py, reference.py, hermes.py,
each run by path, so this directory is on their import path): MEMORY.md's 1.4 KB, and the
sample protocol the Rust bench uses too."""

import time
from typing import Callable

BASE = "".join(f"- remembered fact {i} about the build\n" for i in range(40))


def timed(
    calls: int,
    call: Callable[[int], object],
    between: Callable[[int], object] = lambda i: None,
) -> list[float]:
    """`call` 20 times untimed, then `calls` times timed, in microseconds; `between` runs
    after each, untimed (a reset)."""
    for i in range(20):
        call(i)
        between(i)
    out = []
    for i in range(calls):
        started = time.perf_counter()
        call(i)
        out.append((time.perf_counter() - started) * 1e6)
        between(i)
    return out
