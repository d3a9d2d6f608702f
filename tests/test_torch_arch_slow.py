"""torch_arch's rows against the libraries of the torch wheels the test cache holds.

The wheels are the ones ``tests/test_torch_libs_wheels_slow.py`` reads (2.5.1 – 2.11.0, only
the members these tests need, over HTTP Range requests); each wheel's ``libtorch_python.so``
arch-flag string is compared with the row of that release.
"""

from __future__ import annotations

import re

import pytest

from probes import PYFACTS_MODULES, one_program
from tui.core.tables import torch_arch, torch_libs

pytestmark = pytest.mark.slow

# no NUL needed before it: in 2.8/2.9 the string is merged into the tail of another
FLAGS = re.compile(rb"((?:sm|compute)_\d+[af]?(?: (?:sm|compute)_\d+[af]?)+)\0")


@pytest.mark.parametrize("version", torch_libs.VERIFIED)
def test_rows_are_the_wheels_own(version: str) -> None:
    from test_torch_libs_wheels_slow import wheel  # fetches its members when the cache lacks them

    root = wheel(version)
    lib = (root / "torch/lib/libtorch_python.so").read_bytes()
    version_py = (root / "torch/version.py").read_bytes().decode()
    cuda = re.search(r"^cuda: Optional\[str\] = '([\d.]+)'", version_py, re.M)
    assert cuda is not None
    (flags,) = {m.group(1).decode() for m in FLAGS.finditer(lib)}
    row = torch_arch.WHEEL_ARCH_LISTS[(version, torch_arch.variant(cuda.group(1)) or "", "x86_64")]
    assert " ".join(row) == flags


@pytest.mark.parametrize("version", torch_libs.VERIFIED)
def test_the_probe_reads_each_wheels_flags(version: str) -> None:
    """The probe's own reader (pybinaries.py with pyrecord.py inlined, as pyfacts_program sends
    them) on the real library."""
    from test_torch_libs_wheels_slow import wheel

    lib = wheel(version) / "torch/lib/libtorch_python.so"
    space: dict = {"__name__": "pybinaries"}
    exec(one_program("pybinaries.py", PYFACTS_MODULES), space)
    expected = {r for (v, _variant, m), r in torch_arch.WHEEL_ARCH_LISTS.items() if v == version}
    assert tuple(space["arch_flags"](str(lib)).split()) in expected
