"""The architecture holds (docs/architecture.md): no import cycle, no module past 500 lines.

The layers and the independence of the services and of the game service's contexts are
import-linter contracts (`[tool.importlinter]` in pyproject.toml, run by `.ci/run` as
`lint-imports`); what a contract cannot say is checked here.
"""

from __future__ import annotations

from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 500
WHY_LONGER = "# longer than 500 lines:"
"""A module past the limit says why in a comment that begins so."""


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Returns every strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(edges[module]):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return found


def test_cycles_finds_a_cycle_and_only_a_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(edges) == [["a", "b", "c"]]


def test_no_module_of_shared_or_services_takes_part_in_an_import_cycle() -> None:
    # grimp reads every import statement, those inside functions included: a function-local
    # import that closes a cycle is a cycle.
    graph = grimp.build_graph("shared", "services", cache_dir=None)
    edges = {
        module: {m for m in graph.find_modules_directly_imported_by(module) if m in graph.modules}
        for module in graph.modules
    }
    assert cycles(edges) == []


def test_no_module_outside_the_tests_is_longer_than_500_lines_without_saying_why() -> None:
    long = []
    for path in sorted([*ROOT.glob("shared/**/*.py"), *ROOT.glob("services/**/*.py")]):
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > MAX_LINES and WHY_LONGER not in text:
            long.append(f"{path.relative_to(ROOT)}: {text.count(chr(10))} lines")
    assert long == []
