"""The header captures and the CCCL check against NVIDIA's real wheels.

Downloads ``nvidia-cuda-runtime`` 13.0.96, ``nvidia-cuda-runtime-cu12`` 12.8.90 and
``nvidia-cuda-cccl`` 13.0.85 (a few MB) into the test cache: the captured ``CUDART_VERSION``
lines are the wheels' own, and CCCL's ``#error`` that ``toolkit-headers-mismatch`` quotes is in
its headers, comparing the compiler with ``CUDART_VERSION``.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tui.core.facts.parsers import parse_cudart_define
from tui.core.findings.toolkit_headers_mismatch import CCCL_ERROR
from tui.demo import fakehost

pytestmark = pytest.mark.slow

CACHE = Path.home() / ".cache" / "detective-tui-tests" / "nvidia-runtime"


def wheel(dist: str, version: str) -> Path:
    pattern = f"{dist.replace('-', '_')}-{version}-*.whl"
    if not sorted(CACHE.glob(pattern)):
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", f"{dist}=={version}", "--no-deps",
             "--only-binary=:all:", "--platform", "manylinux2014_x86_64",
             "--platform", "manylinux_2_17_x86_64", "-d", str(CACHE)],
            check=True, capture_output=True, timeout=600,
        )  # fmt: skip
    (found,) = sorted(CACHE.glob(pattern))
    return found


@pytest.mark.parametrize(
    ("dist", "version", "member", "capture", "expected"),
    [
        ("nvidia-cuda-runtime", "13.0.96", "nvidia/cu13/include/cuda_runtime_api.h",
         fakehost.CUDART_130_HEADER, "13.0"),
        ("nvidia-cuda-runtime-cu12", "12.8.90", "nvidia/cuda_runtime/include/cuda_runtime_api.h",
         fakehost.CUDART_128_HEADER, "12.8"),
    ],
)  # fmt: skip
def test_header_captures_are_the_wheels_lines(
    dist: str, version: str, member: str, capture: str, expected: str
) -> None:
    with zipfile.ZipFile(wheel(dist, version)) as zf:
        header = zf.read(member).decode()
    lines = header.splitlines(keepends=True)
    assert "".join(lines[137:139]) == fakehost.fixture_text(capture)
    assert parse_cudart_define(header) == expected


def test_cccl_stops_a_build_whose_compiler_and_headers_differ() -> None:
    with zipfile.ZipFile(wheel("nvidia-cuda-cccl", "13.0.85")) as zf:
        text = zf.read("nvidia/cu13/include/cccl/cuda/std/__cccl/cuda_toolkit.h").decode()
    assert f'error "{CCCL_ERROR}"' in text
    assert "_CCCL_CUDACC_EQUAL((CUDART_VERSION / 1000), (CUDART_VERSION % 1000) / 10)" in text
