"""The shape of the code: no import cycle anywhere in ``tui`` and ``probes`` (imports inside
functions count, and so do those under ``TYPE_CHECKING``), and no module there, in ``bench`` or
in ``tests`` over 600 lines.

A function-level or a ``TYPE_CHECKING`` import hides a cycle from Python (it runs later, or
never) but not from a reader or a type checker: the two modules still cannot be understood,
tested or moved apart.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOTS = ("tui", "probes")
MAX_LINES = 600
# the benchmarks and the tests are modules too (their imports are not the product's)
SIZED = (*ROOTS, "bench", "tests")


def _modules() -> dict[str, Path]:
    found = {}
    for root in ROOTS:
        for path in (REPO / root).rglob("*.py"):
            parts = path.relative_to(REPO).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The project modules ``name`` imports, at any depth of its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*up, base] if base else up)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in known:
                    out.add(sub)
                elif base in known:
                    out.add(base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    out.discard(name)
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each strongly connected group of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return groups


def test_the_graph_is_read() -> None:
    known = _modules()
    graph = {n: _imports(n, p, known) for n, p in known.items()}
    assert len(known) > 200
    # a function-level import is an edge: the launcher reads --ingest captures on demand
    assert "tui.ui.ingested" in graph["tui.ui.launch"]
    assert "tui.ui.app" in graph["tui.ui.ingested"]
    # so is a TYPE_CHECKING one (a type checker follows it)
    assert "tui.core.run.fix_executor" in graph["tui.ui.control.fixing"]


def test_cycles_are_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle() -> None:
    known = _modules()
    graph = {n: _imports(n, p, known) for n, p in known.items()}
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(" ↔ ".join(c) for c in cycles)


def test_no_module_over_the_limit() -> None:
    too_long = []
    for path in sorted(p for root in SIZED for p in (REPO / root).rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            too_long.append(f"{rel}: {lines} lines (at most {MAX_LINES}): split it along a seam")
    assert not too_long, "\n".join(too_long)
