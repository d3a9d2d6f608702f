"""``tests/fixtures/torch1`` against the real torch 1.x wheels on the package index.

Reads, with HTTP Range requests (``tests/wheel_ranges.py``; about 1 MB a wheel, kept in the test
cache), the members the fixtures copy, and checks the copies byte for byte, the METADATA pins
and the cuDNN acceptance test of ``torch/backends/cudnn/__init__.py`` that
``tui/core/rules/cudnn_runtime.py`` applies.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from wheel_ranges import CACHE_ROOT, wheel_members

pytestmark = pytest.mark.slow

CACHE = CACHE_ROOT / "torch1-wheel-members"
FIXTURES = Path(__file__).parent / "fixtures" / "torch1"
PIP_ARGS = ("--only-binary=:all:", "--python-version", "3.10", "--platform", "manylinux1_x86_64")
LOCAL = {"1.13.1": "1.13.1+cu117", "1.12.1": "1.12.1+cu102"}


def members(version: str) -> Path:
    pats = ["torch/version.py", "torch/lib/libtorch_global_deps.so"]
    if version == "1.13.1":  # (1.12.1's METADATA does not match its own RECORD: not read)
        pats += ["torch/backends/cudnn/__init__.py", "torch-1.13.1.dist-info/METADATA"]
    others = [f"torch=={v}" for v in LOCAL]
    return wheel_members(f"torch-{version}", f"torch=={version}", PIP_ARGS, pats, CACHE, others)


@pytest.mark.parametrize("version", list(LOCAL))
def test_the_fixtures_are_copies_of_the_wheels_members(version: str) -> None:
    got, local = members(version), LOCAL[version]
    deps = FIXTURES / f"torch-{local}-cp310-manylinux1_x86_64-libtorch_global_deps.so"
    assert deps.read_bytes() == (got / "torch/lib/libtorch_global_deps.so").read_bytes()
    version_py = FIXTURES / f"torch-version.py-{local}-x86_64-pypi.py"
    assert version_py.read_bytes() == (got / "torch/version.py").read_bytes()


def test_the_pin_and_torchs_acceptance_test() -> None:
    got = members("1.13.1")
    meta = (got / "torch-1.13.1.dist-info/METADATA").read_text()
    pins = [line for line in meta.splitlines() if line.startswith("Requires-Dist:")]
    assert pins == (FIXTURES / "torch-1.13.1-METADATA-Requires-Dist.txt").read_text().splitlines()
    source = (got / "torch/backends/cudnn/__init__.py").read_text()
    assert "cudnn_compatible = runtime_minor >= compile_minor" in source
    assert "if runtime_major != compile_major:" in source
    assert "cuDNN version incompatibility" in source
