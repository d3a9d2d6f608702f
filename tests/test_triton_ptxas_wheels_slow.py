"""The Triton table against the real wheels: bundled ptxas versions, selection code, targets.

Reads, from each release of ``tui.core.tables.triton_ptxas.VERIFIED`` on the package index (x86_64,
cp312 wheels of 150–270 MB — never installed), only its bundled ptxas binaries,
``triton/knobs.py`` and ``triton/backends/nvidia/compiler.py`` (10–28 MB a wheel) with HTTP
Range requests (``tests/wheel_ranges.py``) into the test cache, runs the ptxas binaries, and
runs the wheel's own selection code (``tests/triton_oracle.py``) for GPUs from SM 8.0 to 12.1
with each override variable set to a stand-in ptxas. Every row of the table and every file of
``tui/demo/captures/triton`` must agree.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from wheel_ranges import CACHE_ROOT, wheel_members

from tui.core.tables import triton_ptxas
from tui.core.tables.triton_ptxas import PTXAS_BLACKWELL, release_for

pytestmark = pytest.mark.slow

CACHE = CACHE_ROOT / "triton-wheel-members"
CAPTURES = Path(__file__).resolve().parents[1] / "tui" / "demo" / "captures" / "triton"
ORACLE = Path(__file__).with_name("triton_oracle.py")
PLATFORMS = (
    "manylinux_2_17_x86_64",
    "manylinux2014_x86_64",
    "manylinux_2_27_x86_64",
    "manylinux_2_28_x86_64",
)
MEMBERS = ("triton/knobs.py", "triton/backends/nvidia/compiler.py")
BIN = "triton/backends/nvidia/bin/"


def unpacked(version: str) -> Path:
    """A directory holding ``MEMBERS`` and the ptxas binaries of the triton ``version`` wheel."""
    args = ["--only-binary=:all:", "--python-version", "3.12"]
    args += [arg for platform in PLATFORMS for arg in ("--platform", platform)]
    # every name under BIN with "/ptxas" in it
    patterns = (*MEMBERS, f"{BIN}ptxas*", f"{BIN}*/ptxas*")
    others = [f"triton=={v}" for v in triton_ptxas.VERIFIED]
    dest = wheel_members(f"triton-{version}", f"triton=={version}", args, patterns, CACHE, others)
    for binary in (dest / BIN).glob("ptxas*"):
        binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    return dest


@pytest.fixture(scope="module")
def fake_ptxas(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("fake") / "ptxas"
    path.write_text('#!/bin/sh\necho "Cuda compilation tools, release 13.0, V13.0.88"\n')
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize("version", triton_ptxas.VERIFIED)
def test_bundled_ptxas_versions_and_captures(version: str) -> None:
    root = unpacked(version)
    match = release_for(version)
    assert match is not None and not match.newer_than_known
    rel = match.release
    binaries = sorted(p.name for p in (root / BIN).glob("ptxas*"))
    assert binaries == sorted(rel.bundled), version
    for name in binaries:
        out = subprocess.run(
            [str(root / BIN / name), "--version"], capture_output=True, text=True, timeout=60
        ).stdout
        assert f", V{rel.bundled[name]}\n" in out, (version, name, out)
        capture = CAPTURES / f"triton-{version}-{name}-version.txt"
        assert capture.read_text() == out, capture
    assert version in rel.wheels


@pytest.mark.parametrize("version", triton_ptxas.VERIFIED)
def test_the_wheels_own_selection_code_agrees_with_the_table(version: str, fake_ptxas) -> None:
    root = unpacked(version)
    rel = release_for(version).release  # type: ignore[union-attr]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_")}
    out = subprocess.run(
        [sys.executable, str(ORACLE), str(root), fake_ptxas],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=True,
    ).stdout
    real = json.loads(out)
    for arch_text, binary in real["picks"]["-"].items():
        sm = int(arch_text)
        assert binary == rel.binary_for(sm), (version, sm)
        assert real["targets"][arch_text] == f"sm_{rel.target(sm)}", (version, sm)
        for var, picks in real["picks"].items():
            if var == "-":
                continue
            overridden = picks[arch_text] == "override"
            assert overridden == (var == rel.override_var(rel.binary_for(sm))), (version, sm, var)
    for cuda, accepted in real["accepts"].items():
        assert rel.accepts_ptxas(cuda) is accepted, (version, cuda)
    if PTXAS_BLACKWELL in rel.bundled:
        assert rel.blackwell_var in triton_ptxas.OVERRIDE_VARS
