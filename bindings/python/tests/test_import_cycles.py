"""No two of the package's modules import each other, directly or around a circle. Every
import counts: at module level, under `if TYPE_CHECKING:`, and inside a function, since a
circle that only a type checker or a late call follows still ties the modules together
(neither can be read, moved or tested without the other)."""

from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

import metis_memory

PACKAGE = "metis_memory"


def test_no_two_modules_of_the_package_import_each_other() -> None:
    graph = _graph(_installed())
    # A walk that found nothing would pass whatever the package imports.
    assert "metis_memory._types" in graph["metis_memory.store"]
    circles = sorted({" -> ".join(c) for m in graph if (c := _circle(graph, m)) is not None})
    assert not circles, "modules importing each other:\n" + "\n".join(circles)


def test_a_circle_through_a_type_only_or_a_function_level_import_is_found() -> None:
    graph = _graph(
        {
            "metis_memory": ("from .a import A\n", True),
            "metis_memory.a": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n"
                "    from .b import B\n",
                False,
            ),
            "metis_memory.b": ("def f():\n    from . import a\n", False),
        }
    )
    assert _circle(graph, "metis_memory.a") == ["metis_memory.a", "metis_memory.b", "metis_memory.a"]
    # Importing a submodule runs its package's __init__ first, as for every submodule: not
    # counted, or every module the package's __init__ imports would be in a circle.
    assert _circle(graph, "metis_memory") is None


def _installed() -> dict[str, tuple[str, bool]]:
    """The package's modules as installed: name -> (source, whether it is a package)."""
    root = Path(metis_memory.__file__).parent
    modules = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        modules[".".join([PACKAGE, *parts])] = (path.read_text(encoding="utf-8"), is_package)
    return modules


def _graph(modules: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """Each module -> the package's modules it imports anywhere in its code."""
    graph: dict[str, set[str]] = {}
    for name, (source, is_package) in modules.items():
        here = name.split(".") if is_package else name.split(".")[:-1]
        targets = []
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                targets += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    origin = ".".join(here[: len(here) - node.level + 1] + [node.module or ""])
                else:
                    origin = node.module or ""
                origin = origin.rstrip(".")
                # `from origin import x`: x is a submodule, or a name origin defines.
                targets += [
                    f"{origin}.{a.name}" if f"{origin}.{a.name}" in modules else origin
                    for a in node.names
                ]
        graph[name] = set()
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                graph[name].add(target)
    return graph


def _circle(graph: dict[str, set[str]], start: str) -> list[str] | None:
    """The shortest way from `start` back to itself, if there is one."""
    paths = {start: [start]}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for next_ in sorted(graph[node]):
            if next_ == start:
                return paths[node] + [start]
            if next_ not in paths:
                paths[next_] = paths[node] + [next_]
                queue.append(next_)
    return None
