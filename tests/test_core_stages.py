"""``tui.core`` is one package per stage, and a test holds their order: the base
(``tui/core/*.py``), the data tables, the facts, reaching hosts, the rules and the finding
records, the fix plans, the judging (diagnosis and what-if), the records, and the orchestration
on top (runner, service, validation, applying fixes). A module imports only from its own stage
or below — at module level or inside a function; imports under ``TYPE_CHECKING`` are
annotations and do not count. ``tui.core`` never imports the front ends (``tui.ui``,
``tui.commands``) or Textual, not even for annotations. That nothing imports itself back is
``tests/test_module_shape.py``'s.

A new module goes into the package of its stage; a new package must be placed in ``STAGES``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORE = REPO / "tui" / "core"

# lowest first: each stage and its packages under tui/core ("" is tui/core/*.py itself)
STAGES: dict[str, tuple[str, ...]] = {
    "base": ("",),
    "tables": ("tables",),
    "facts": ("facts",),
    "reach": ("reach",),
    "rules": ("rules", "findings"),
    "plans": ("fixes",),
    "judge": ("judge",),
    "records": ("records",),
    "run": ("run",),
}
ORDER = list(STAGES)
STAGE_OF = {pkg: stage for stage, pkgs in STAGES.items() for pkg in pkgs}
FRONT_ENDS = ("tui.ui", "tui.commands", "textual")
MAX_BASE_MODULES = 15


def _name(path: Path) -> str:
    """``tui.core.run.fix_executor`` for tui/core/run/fix_executor.py, ``tui.core.run`` for
    its __init__."""
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(top: Path) -> dict[str, Path]:
    return {_name(p): p for p in sorted(top.rglob("*.py")) if "fixtures" not in p.parts}


CORE_MODULES = _modules(CORE)
ALL_MODULES = {**_modules(REPO / "tui"), **_modules(REPO / "probes")}


def _imports(path: Path, known: dict[str, Path], *, annotations: bool) -> Iterator[str]:
    """Every module an import names (``from tui.core.run import service`` names
    ``tui.core.run.service``, ``from tui.core.facts import Facts`` names ``tui.core.facts``);
    with ``annotations=False`` not those under ``if TYPE_CHECKING:``."""

    def visit(node: ast.AST) -> Iterator[str]:
        for child in ast.iter_child_nodes(node):
            if (
                not annotations
                and isinstance(child, ast.If)
                and "TYPE_CHECKING" in ast.unparse(child.test)
            ):
                continue
            if isinstance(child, ast.ImportFrom) and child.module and not child.level:
                for alias in child.names:
                    sub = f"{child.module}.{alias.name}"
                    yield sub if sub in known else child.module
            elif isinstance(child, ast.Import):
                yield from (a.name for a in child.names)
            yield from visit(child)

    yield from visit(ast.parse(path.read_text(encoding="utf-8")))


def _package(module: str) -> str | None:
    """The stage package of a tui.core module: ``run`` for tui.core.run.service, ``""`` for
    tui.core.redact; None outside tui.core."""
    parts = module.split(".")
    if parts[:2] != ["tui", "core"] or len(parts) < 3:
        return None
    return parts[2] if (CORE / parts[2]).is_dir() else ""


def test_every_package_has_a_stage() -> None:
    packages = sorted(p.name for p in CORE.iterdir() if (p / "__init__.py").exists())
    unplaced = [p for p in packages if p not in STAGE_OF]
    assert not unplaced, f"place these packages in STAGES (tests/test_core_stages.py): {unplaced}"
    gone = sorted(set(STAGE_OF) - {"", *packages})
    assert not gone, f"STAGES names packages that no longer exist: {gone}"
    nested = [m for m, p in CORE_MODULES.items() if len(p.relative_to(CORE).parts) > 2]
    assert not nested, f"one level of stage packages, no deeper: {nested}"


def test_few_modules_directly_in_core() -> None:
    base = sorted(p.stem for p in CORE.glob("*.py") if p.stem != "__init__")
    assert len(base) <= MAX_BASE_MODULES, f"{len(base)} modules in tui/core itself: {base}"


def test_no_import_runs_up_the_stages() -> None:
    upward = []
    for me, path in CORE_MODULES.items():
        mine = _package(me)
        if mine is None:
            continue
        for module in _imports(path, ALL_MODULES, annotations=False):
            other = _package(module)
            if other is None:
                continue
            if ORDER.index(STAGE_OF[other]) > ORDER.index(STAGE_OF[mine]):
                upward.append(f"{me} ({STAGE_OF[mine]}) imports {module} ({STAGE_OF[other]})")
    assert not upward, "imports from a higher stage:\n" + "\n".join(upward)


def test_core_never_imports_a_front_end() -> None:
    found = [
        f"{me} imports {module}"
        for me, path in CORE_MODULES.items()
        for module in _imports(path, ALL_MODULES, annotations=True)
        if module.startswith(FRONT_ENDS)
    ]
    assert not found, "\n".join(found)


def test_the_stage_test_sees_an_upward_import(tmp_path: Path) -> None:
    """The checker itself: a base module importing the runner is caught."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from tui.core.run.runner import Session\n", encoding="utf-8")
    found = list(_imports(bad, ALL_MODULES, annotations=False))
    assert found == ["tui.core.run.runner"]
    runner, redact = _package(found[0]), _package("tui.core.redact")
    assert runner == "run" and redact == ""
    assert ORDER.index(STAGE_OF[runner]) > ORDER.index(STAGE_OF[redact])
