"""One list of the CUDA libraries the probe looks for: ``tui.core.tables.torch_libs.CUDA_LIBS`` (and
``SUB_LIBS``, whose ``<stem>_<part>`` sub-libraries it looks for too). The
probe cannot import it (POSIX sh, and ``pyfacts.py`` runs on the host alone), so each place that
spells the names there is checked against it: pyfacts' wheel prefixes (in ``pybinaries.py``),
``probe.sh``'s LD_LIBRARY_PATH globs, its ld.so cache patterns and its ``/proc/PID/maps``
expression."""

from __future__ import annotations

import ast
import re
from fnmatch import fnmatchcase
from pathlib import Path

from tui.core.tables.torch_libs import CUDA_LIBS, SUB_LIBS

PROBES = Path(__file__).resolve().parents[1] / "probes"
PROBE_SH = (PROBES / "probe.sh").read_text(encoding="utf-8")
# mapped by a process but never looked for on its own: NVRTC opens it itself
MAPPED_ONLY = {"libnvrtc-builtins"}


def _pyfacts_constant(name: str) -> object:
    tree = ast.parse((PROBES / "pybinaries.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return ast.literal_eval(node.value)
    raise AssertionError(f"pybinaries.py has no {name}")


def _function(name: str) -> str:
    start = PROBE_SH.index(f"\n{name}() {{")
    return PROBE_SH[start : PROBE_SH.index("\n}\n", start)]


def test_pyfacts_looks_for_the_same_wheel_libraries() -> None:
    assert _pyfacts_constant("CUDA_LIB_PREFIXES") == (
        *(f"{s}.so." for s in CUDA_LIBS),
        *(f"{s}_" for s in SUB_LIBS),
    )


def test_the_library_path_globs_are_the_list() -> None:
    globs = re.findall(r'"\$R\$_ld"/(lib[\w-]+)\.so', _function("ld_dirs"))
    assert globs, "probe.sh's ld_dirs globs were not found"
    assert set(globs) == set(CUDA_LIBS)
    subs = re.findall(r'"\$R\$_ld"/(lib\w+)_\*\.so\.\[0-9\]\*', _function("ld_dirs"))
    assert set(subs) == set(SUB_LIBS)


def test_the_ld_cache_patterns_match_exactly_the_list() -> None:
    line = next(ln for ln in _function("probe_ldcache").splitlines() if "case $_ln in *lib" in ln)
    patterns = re.findall(r"\*lib[^ |)]*", line)
    assert patterns, "probe.sh's ld.so cache patterns were not found"
    names = [f"/usr/lib/{s}.so.12" for s in CUDA_LIBS]
    names += [f"/usr/lib/{s}_engines_precompiled.so.9" for s in SUB_LIBS]
    for name in names:
        assert any(fnmatchcase(name, p) for p in patterns), name
    for pattern in patterns:
        assert any(fnmatchcase(name, pattern) for name in names), pattern


def test_the_maps_expression_is_the_list() -> None:
    m = re.search(r"^CUDA_LIB_RE='lib\(([^)]*)\)", PROBE_SH, re.M)
    assert m is not None, "probe.sh has no CUDA_LIB_RE"
    names = set(m.group(1).split("|"))
    subs = {f"lib{n}" for n in names if n.endswith("_[a-z_]+")}
    assert {s.removesuffix("_[a-z_]+") for s in subs} == set(SUB_LIBS)
    assert {f"lib{n}" for n in names} - subs == set(CUDA_LIBS) | MAPPED_ONLY
