"""``tui.core`` is layered by stage, and a test holds the order: reaching hosts and reading
facts at the bottom, then the rules, the fix plans, the judging (diagnosis and what-if), the
records, and the orchestration on top (runner, service, validation, applying fixes). A module
imports only from its own stage or below — at module level or inside a function; imports under
``TYPE_CHECKING`` are annotations and do not count. ``tui.core`` never imports the front ends
(``tui.ui``, ``tui.commands``) or Textual, not even for annotations.

A new module must be placed in ``STAGES``, so that where it sits is a decision.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORE = REPO / "tui" / "core"

# lowest first, module names split by spaces; "fixes.X" is tui/core/fixes/X.py, "fixes" the
# package's __init__ (the same for findings: one module per finding id)
PACKAGES = ("fixes", "findings")
PACKAGE_NAMES = ("tui.core", *(f"tui.core.{p}" for p in PACKAGES))
FINDING_MODULES = sorted(
    p.stem
    for p in (CORE / "findings").glob("*.py")
    if p.stem not in ("__init__", "record", "registry")
)
STAGES: dict[str, str] = {
    "base": "exitcodes locations hosts redact md_safe durable neterrors ssh_argv systemd_syntax",
    "facts": (
        "facts host_changes parsers probe_records fabric facts_contexts facts_pythons "
        "facts_tools factbuild gpu_state gpu_table gpu_scope mig "
        "torch_arch torch_index torch_libs torch_variants compat ptxas_targets flashinfer_eras "
        "flashinfer_pre02 flashinfer_prebuilt flashinfer_replay triton_ptxas extensions findings"
    ),
    "reach": (
        "inventory hostlist importer shell_command transport local_transport ssh_transport "
        "exec_transport hops hostkeys known_hosts sshconnect pool standalone"
    ),
    "rules": (
        "subject rulekit findings.record "
        + " ".join(f"findings.{m}" for m in FINDING_MODULES)
        + " findings.registry rules completeness symptoms"
    ),
    "plans": (
        "fixes fixes.confine fixes.steplock fixes.plan fixes.shell fixes.envset "
        "fixes.env_targets fixes.toolkit "
        "fixes.workarounds fixes.compatpath fixes.extension fixes.jitcache fixes.libpath "
        "fixes.torchcuda fixes.triton fixes.wheels fixes.pipplan fixes.restart fixes.unitenv "
        "fixes.current_shell fixes.activate "
        "fixes.undo fixes.record fixes.simulate fixes.mig fixes.flashinfer_upgrade fixes.registry"
    ),
    "judge": "diagnosis whatif judged host_stack explain",
    "records": (
        "transcript transcript_index probe_json finding_model report issue_report fixes.journal "
        "fixes.history "
        "history verdicts prometheus checks history_diff history_causes history_view drift"
    ),
    "run": (
        "runner deep gpu_now service symptom_source ingest validate validate_result "
        "validate_records "
        "validate_markdown pending fixes.envread fixes.executor fixes.fleet fixes.fleet_group "
        "fixes.outcome_words fixes.render"
    ),
}
ORDER = list(STAGES)
STAGE_OF = {module: stage for stage, names in STAGES.items() for module in names.split()}
FRONT_ENDS = ("tui.ui", "tui.commands", "textual")


def _name(path: Path) -> str:
    """``fixes.executor`` for tui/core/fixes/executor.py, ``fixes`` for its __init__."""
    parts = path.relative_to(CORE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, *, annotations: bool) -> Iterator[str]:
    """Every module an import names (``from tui.core import x`` names ``tui.core.x``);
    with ``annotations=False`` not those under ``if TYPE_CHECKING:``."""

    def visit(node: ast.AST) -> Iterator[str]:
        for child in ast.iter_child_nodes(node):
            if (
                not annotations
                and isinstance(child, ast.If)
                and "TYPE_CHECKING" in ast.unparse(child.test)
            ):
                continue
            if isinstance(child, ast.ImportFrom) and child.module:
                if child.module in PACKAGE_NAMES:
                    yield from (f"{child.module}.{a.name}" for a in child.names)
                else:
                    yield child.module
            elif isinstance(child, ast.Import):
                yield from (a.name for a in child.names)
            yield from visit(child)

    yield from visit(ast.parse(path.read_text(encoding="utf-8")))


def _core_key(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] != ["tui", "core"] or len(parts) < 3:
        return None
    return ".".join(parts[2:4]) if parts[2] in PACKAGES else parts[2]


def _modules() -> list[Path]:
    files = [p for p in sorted(CORE.rglob("*.py")) if p != CORE / "__init__.py"]
    assert len(files) > 50, "is the package layout broken?"
    return files


def test_every_core_module_has_a_stage() -> None:
    unplaced = [_name(p) for p in _modules() if _name(p) not in STAGE_OF]
    assert not unplaced, f"place these in STAGES (tests/test_core_stages.py): {unplaced}"
    gone = sorted(set(STAGE_OF) - {_name(p) for p in _modules()})
    assert not gone, f"STAGES names modules that no longer exist: {gone}"


def test_no_import_runs_up_the_stages() -> None:
    upward = []
    for path in _modules():
        me = _name(path)
        for module in _imports(path, annotations=False):
            other = _core_key(module)
            if other is None or other == me or other not in STAGE_OF:
                continue
            if ORDER.index(STAGE_OF[other]) > ORDER.index(STAGE_OF[me]):
                upward.append(f"{me} ({STAGE_OF[me]}) imports {module} ({STAGE_OF[other]})")
    assert not upward, "imports from a higher stage:\n" + "\n".join(upward)


def test_core_never_imports_a_front_end() -> None:
    found = [
        f"{_name(path)} imports {module}"
        for path in _modules()
        for module in _imports(path, annotations=True)
        if module.startswith(FRONT_ENDS)
    ]
    assert not found, "\n".join(found)


def _module_level_imports(path: Path) -> set[str]:
    """The core modules imported when ``path`` is imported (not in functions, not for
    annotations)."""
    found = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.module:
            names = (
                [f"{node.module}.{a.name}" for a in node.names]
                if node.module in PACKAGE_NAMES
                else [node.module]
            )
            found.update(k for k in map(_core_key, names) if k in STAGE_OF)
        elif isinstance(node, ast.Import):
            found.update(k for k in (_core_key(a.name) for a in node.names) if k in STAGE_OF)
    return found


def test_no_import_cycle_between_core_modules() -> None:
    """Importing any core module never comes back to itself (the executor/undo cycle is gone;
    a cycle inside a stage would go unnoticed by the stage order)."""
    graph = {_name(p): _module_level_imports(p) - {_name(p)} for p in _modules()}

    def reaches(start: str, goal: str) -> list[str] | None:
        seen, stack = set(), [(start, [start])]
        while stack:
            node, path = stack.pop()
            for nxt in graph.get(node, ()):
                if nxt == goal:
                    return [*path, nxt]
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*path, nxt]))
        return None

    cycles = [" → ".join(c) for m in graph if (c := reaches(m, m))]
    assert not cycles, "\n".join(cycles)
