"""The torch loader table against the real wheels: what ``_load_global_deps`` preloads.

Reads, from each torch release of ``tui.core.tables.torch_libs.VERIFIED`` on the package index
(x86_64 cp312 wheels of 0.5–0.9 GB each), only the members these tests and
``test_torch_arch_slow.py`` read — ``torch/__init__.py``, ``torch/version.py``,
``torch/lib/libtorch_python.so`` and ``torch/lib/libtorch_global_deps.so``, about 10 MB a wheel —
with HTTP Range requests (``tests/wheel_ranges.py``), kept in the test cache for the next run.
Compares what ``torch/__init__.py`` preloads and the ``DT_RPATH`` of ``libtorch_global_deps.so``
with the table.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
from pathlib import Path

import pytest
from wheel_ranges import CACHE_ROOT, wheel_members

from tui.core.tables import torch_libs

pytestmark = pytest.mark.slow

CACHE = CACHE_ROOT / "torch-wheel-members"
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")
PIP_ARGS = ("--only-binary=:all:", "--python-version", "3.12")
MEMBERS = (
    "torch/__init__.py",
    "torch/version.py",
    "torch/lib/libtorch_python.so",
    "torch/lib/libtorch_global_deps.so",
)


def wheel(version: str) -> Path:
    """A directory holding ``MEMBERS`` of the torch ``version`` wheel (fetched when missing)."""
    platforms = [arg for p in (*PLATFORMS, "manylinux1_x86_64") for arg in ("--platform", p)]
    args = (*PIP_ARGS, *platforms)
    others = [f"torch=={v}" for v in torch_libs.VERIFIED]
    return wheel_members(f"torch-{version}", f"torch=={version}", args, MEMBERS, CACHE, others)


def _strings(node: ast.AST) -> list[str]:
    return [
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def preloads(source: str) -> tuple[set[str], str]:
    """(stems preloaded after a successful load of the global deps, the maps condition)."""
    tree = ast.parse(source)
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    load = funcs["_load_global_deps"]
    tries = [n for n in ast.walk(load) if isinstance(n, ast.Try)]
    success = tries[0].body  # the `try: ctypes.CDLL(global deps)` block, its handlers aside
    stems: set[str] = set()
    condition = ""
    for stmt in success:
        for call in (n for n in ast.walk(stmt) if isinstance(n, ast.Call)):
            name = getattr(call.func, "id", "")
            if name == "_preload_cuda_deps" and call.args:
                stems |= {s.split(".so")[0] for s in _strings(call) if ".so" in s}
            elif name == "_preload_cuda_deps":  # no arguments: its whole list
                stems |= {
                    s.split(".so")[0] for s in _strings(funcs["_preload_cuda_deps"]) if ".so." in s
                }
        for cmp in (n for n in ast.walk(stmt) if isinstance(n, ast.Compare)):
            if isinstance(cmp.left, ast.Constant) and "libcudart" in str(cmp.left.value):
                condition = cmp.left.value
    return stems, condition


@pytest.mark.parametrize("version", torch_libs.VERIFIED)
def test_the_table_says_what_the_wheels_init_preloads(version: str) -> None:
    source = (wheel(version) / "torch/__init__.py").read_bytes().decode()
    stems, condition = preloads(source)
    row = torch_libs.loader_for(version)
    assert row is not None
    assert version in row.source
    mentioned = set(torch_libs.CUDA_LIBS)
    assert set(row.preloads) == stems & mentioned, version
    assert row.condition == condition, version


def test_torch_links_its_libraries_with_rpath_not_runpath() -> None:
    """DT_RPATH (searched before LD_LIBRARY_PATH), naming the wheels' nvidia/*/lib."""
    if shutil.which("readelf") is None:
        pytest.skip("readelf (binutils) is not installed")
    for version in ("2.5.1", "2.11.0"):
        out = subprocess.run(
            ["readelf", "-d", str(wheel(version) / "torch/lib/libtorch_global_deps.so")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "(RPATH)" in out and "(RUNPATH)" not in out, version
        assert "$ORIGIN/../../nvidia/" in out, version
