"""The cuDNN sub-library table against the real wheels (``tui.core.tables.cudnn_sublibs``).

Reads ``libcudnn.so.9`` and ``libcudnn_graph.so.9`` of each ``nvidia-cudnn-*`` release in
``VERIFIED`` from the package index with HTTP Range requests (``tests/wheel_ranges.py``; 0.1–128
MB a member), kept in the test cache: whether the frontend has a ``DT_RPATH`` or a
``DT_RUNPATH`` (``readelf -d``), and which ``libcudnn_*.so`` names each one opens (its strings).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from wheel_ranges import CACHE_ROOT, wheel_members

from tui.core.tables import cudnn_sublibs

pytestmark = pytest.mark.slow

CACHE = CACHE_ROOT / "cudnn-wheel-members"
DISTS = {
    "9.1.0.70": "nvidia-cudnn-cu12",
    "9.10.2.21": "nvidia-cudnn-cu12",
    "9.20.0.48": "nvidia-cudnn-cu13",
    "9.24.0.43": "nvidia-cudnn-cu13",
}
PLATFORMS = ("manylinux_2_27_x86_64", "manylinux2014_x86_64", "manylinux_2_17_x86_64")
MEMBERS = ("nvidia/cudnn/lib/libcudnn.so.9", "nvidia/cudnn/lib/libcudnn_graph.so.9")


def _opens(path: str) -> set[str]:
    data = Path(path).read_bytes()
    names = set(re.findall(rb"(?<![a-z_])(libcudnn_[a-z_]+)\.so\x00", data))
    return {n.decode() for n in names}


def _dynamic(path: str) -> str:
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("needs readelf")
    return subprocess.run([readelf, "-d", path], capture_output=True, text=True).stdout


@pytest.mark.parametrize("version", cudnn_sublibs.VERIFIED)
def test_the_table_is_what_the_wheel_does(version: str) -> None:
    dist = DISTS[version]
    args = ["--only-binary=:all:", "--python-version", "3.12"]
    args += [a for p in PLATFORMS for a in ("--platform", p)]
    got = wheel_members(f"{dist}-{version}", f"{dist}=={version}", args, MEMBERS, CACHE)
    front, graph = (str(got / m) for m in MEMBERS)
    row = cudnn_sublibs.release_for(version)
    assert row is not None
    front_dyn = _dynamic(front)
    assert ("(RPATH)" in front_dyn and "$ORIGIN" in front_dyn) is row.frontend_rpath
    assert "(RUNPATH)" in _dynamic(graph)
    assert _opens(front) == set(row.frontend_opens)
    assert _opens(graph) == set(row.graph_opens)
