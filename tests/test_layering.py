"""``tui.core`` and ``probes`` are usable without the TUI: importing them loads no Textual.

Every ``tui.core`` module is imported in a fresh interpreter. The ``probes`` package is imported
too; its other files are scripts sent to hosts (they run on import), so their imports are read
from the source instead.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

SCRIPT = r"""
import importlib, pkgutil, sys
import probes, tui.core
names = ["probes", "tui.core"]
names += [i.name for i in pkgutil.walk_packages(tui.core.__path__, "tui.core.")]
for name in names:
    importlib.import_module(name)
loaded = sorted(m for m in sys.modules if m == "textual" or m.startswith("textual."))
print(len(names))
print(",".join(loaded))
"""


def _run(code: str) -> list[str]:
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_core_never_imports_textual() -> None:
    out = _run(SCRIPT)
    imported, loaded = int(out[0]), out[1] if len(out) > 1 else ""
    assert imported > 10, f"only {imported} modules found: is the package layout broken?"
    assert loaded == "", f"importing tui.core/probes loaded Textual modules: {loaded}"


def _imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_probe_scripts_import_neither_textual_nor_tui() -> None:
    scripts = sorted((REPO / "probes").rglob("*.py"))
    assert scripts
    for script in scripts:
        bad = {m for m in _imported_modules(script) if m.split(".")[0] in ("textual", "tui")}
        assert not bad, f"{script.relative_to(REPO)} imports {sorted(bad)}"


def test_layering_check_detects_textual() -> None:
    """The check above really notices Textual: importing the UI does load it."""
    assert _run("import sys, tui.ui.app; print('textual' in sys.modules)") == ["True"]
