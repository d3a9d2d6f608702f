"""The ptxas captures of 11.7.99 and 12.0.140 against the real wheels' ptxas.

Downloads ``nvidia-cuda-nvcc-cu11==11.7.99`` and ``nvidia-cuda-nvcc-cu12==12.0.140`` (about
20 MB each; they ship ptxas, not nvcc) into the test cache and compares their ``--version``
and the ``--gpu-name`` section of ``--help`` with ``tui/demo/captures/ptxas``.
"""

from __future__ import annotations

import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

CACHE = Path.home() / ".cache" / "detective-tui-tests" / "nvcc-cu11"
CAPTURES = Path(__file__).resolve().parents[1] / "tui" / "demo" / "captures" / "ptxas"


@pytest.mark.parametrize(
    ("dist", "version"),
    [("nvidia-cuda-nvcc-cu11", "11.7.99"), ("nvidia-cuda-nvcc-cu12", "12.0.140")],
)
def test_captures_are_the_wheels_ptxas(dist: str, version: str, tmp_path: Path) -> None:
    pattern = f"{dist.replace('-', '_')}-{version}-*.whl"
    if not sorted(CACHE.glob(pattern)):
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", f"{dist}=={version}", "--no-deps",
             "--only-binary=:all:", "--platform", "manylinux1_x86_64",
             "--platform", "manylinux2014_x86_64", "-d", str(CACHE)],
            check=True, capture_output=True, timeout=600,
        )  # fmt: skip
    (wheel,) = sorted(CACHE.glob(pattern))
    with zipfile.ZipFile(wheel) as zf:
        member = next(n for n in zf.namelist() if n.endswith("/bin/ptxas"))
        ptxas = Path(zf.extract(member, tmp_path))
    ptxas.chmod(ptxas.stat().st_mode | stat.S_IXUSR)
    out = subprocess.run([str(ptxas), "--version"], capture_output=True, text=True).stdout
    assert out == (CAPTURES / f"ptxas-{version}-version.txt").read_text()
    help_text = subprocess.run([str(ptxas), "--help"], capture_output=True, text=True).stdout
    start = help_text.index("--gpu-name <gpu name>")
    end = help_text.index("\n", help_text.index("Default value:", start)) + 1
    assert help_text[start:end] == (CAPTURES / f"ptxas-{version}-gpu-name-help.txt").read_text()
