"""The release string read from a real CUDA binary's ``.rodata`` (``hostread.elf_section``, the
helper's ``tkbin`` read) equals the line its ``--version`` prints: this machine's nvcc where it
has one (``/usr/local/cuda-*/bin/nvcc``), and the ptxas of ``nvidia-cuda-nvcc-cu12==12.8.93``
(about 40 MB, into the test cache; that wheel ships ptxas, not nvcc)."""

from __future__ import annotations

import glob
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from probes import hostread

pytestmark = pytest.mark.slow

CACHE = Path.home() / ".cache" / "detective-tui-tests" / "nvidia-nvcc"
PATTERN = "Cuda compilation tools, release [0-9][0-9.]*, V[0-9][0-9.]*"
LOCAL_NVCC = sorted(glob.glob("/usr/local/cuda-*/bin/nvcc"))


def wheel_ptxas(dest: Path) -> Path:
    pattern = "nvidia_cuda_nvcc_cu12-12.8.93-*.whl"
    if not sorted(CACHE.glob(pattern)):
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "nvidia-cuda-nvcc-cu12==12.8.93",
             "--no-deps", "--only-binary=:all:", "--platform", "manylinux2014_x86_64",
             "--platform", "manylinux_2_17_x86_64", "-d", str(CACHE)],
            check=True, capture_output=True, timeout=600,
        )  # fmt: skip
    (wheel,) = sorted(CACHE.glob(pattern))
    with zipfile.ZipFile(wheel) as zf:
        ptxas = Path(zf.extract("nvidia/cuda_nvcc/bin/ptxas", dest))
    ptxas.chmod(ptxas.stat().st_mode | stat.S_IXUSR)
    return ptxas


def check(binary: Path) -> None:
    printed = subprocess.run(
        [str(binary), "--version"], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    (line,) = [ln for ln in printed.splitlines() if ln.startswith("Cuda compilation tools")]
    assert hostread.op_grepo(PATTERN, str(binary), "1", ".rodata") == (line.encode(), 0)


def test_the_wheels_ptxas_string_is_its_version_line(tmp_path: Path) -> None:
    check(wheel_ptxas(tmp_path))


@pytest.mark.skipif(not LOCAL_NVCC, reason="no /usr/local/cuda-*/bin/nvcc on this machine")
@pytest.mark.parametrize("nvcc", LOCAL_NVCC)
def test_this_machines_nvcc_string_is_its_version_line(nvcc: str) -> None:
    check(Path(nvcc))
