"""Which GPUs a torch build has kernels for, by (torch version, CUDA variant, machine) — data.

``torch.cuda.get_arch_list()`` is the arch-flag string compiled into
``torch/lib/libtorch_python.so``; the probe reads it from the installed library. When it
cannot (an older probe, an unreadable file), this table answers for the wheels whose library
was read: the PyPI default wheel of each release from 2.4.0 to 2.14.0 (x86_64; 2.11.0 and
2.14.0 also aarch64), rows copied from ``shared/fixtures/torch/torch-pypi-wheels-CUDA_ARCH_
FLAGS-from-libtorch_python.tsv`` (``tests/test_torch_arch.py`` checks they still match) and
2.5.1 read by this project (``tests/test_torch_arch_slow.py`` reads the library of every wheel
the test cache holds). Another variant of a release (cu118, cu126 from PyTorch's own index)
falls back to the per-variant table of ``tui.core.tables.support_matrix``, and the evidence says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from packaging.version import InvalidVersion, Version

from tui.core.tables import support_matrix

_PYPI = "the PyPI wheel torch-{v} (libtorch_python.so)"
# version variant machine: arch flags
_ROWS = """
2.4.0 cu121 x86_64: sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90
2.5.0 cu124 x86_64: sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90
2.5.1 cu124 x86_64: sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90
2.6.0 cu124 x86_64: sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90
2.7.0 cu126 x86_64: sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90
2.8.0 cu128 x86_64: sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120
2.9.0 cu128 x86_64: sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120
2.10.0 cu128 x86_64: sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120
2.11.0 cu130 x86_64: sm_75 sm_80 sm_86 sm_90 sm_100 sm_120
2.12.0 cu130 x86_64: sm_75 sm_80 sm_86 sm_90 sm_100 sm_120
2.13.0 cu130 x86_64: sm_75 sm_80 sm_86 sm_90 sm_100 sm_120
2.14.0 cu130 x86_64: sm_75 sm_80 sm_86 sm_90 sm_100 sm_120
2.11.0 cu130 aarch64: sm_80 sm_90 sm_100 sm_110 sm_120
2.14.0 cu130 aarch64: sm_80 sm_90 sm_100 sm_110 sm_120
"""


def _parse(text: str) -> Mapping[tuple[str, str, str], tuple[str, ...]]:
    rows = {}
    for line in text.strip().splitlines():
        key, _, flags = line.partition(": ")
        version, variant, machine = key.split()
        rows[(version, variant, machine)] = tuple(flags.split())
    return MappingProxyType(rows)


WHEEL_ARCH_LISTS = _parse(_ROWS)


def variant(torch_cuda: str | None) -> str | None:
    """torch.version.cuda "12.8" → "cu128"."""
    try:
        v = Version(torch_cuda or "")
    except InvalidVersion:
        return None
    return f"cu{v.major}{v.minor}"


def arch_list(
    torch_version: str | None, torch_cuda: str | None, machine: str | None
) -> tuple[tuple[str, ...], str] | None:
    """(the arch list, where it comes from) for a torch build the probe could not read."""
    try:
        base = Version(torch_version or "").base_version
    except InvalidVersion:
        base = None
    key = (base or "", variant(torch_cuda) or "", machine or "x86_64")
    if key in WHEEL_ARCH_LISTS:
        return WHEEL_ARCH_LISTS[key], _PYPI.format(v=f"{key[0]}+{key[1]}, {key[2]}")
    listed = support_matrix.torch_arch_list(torch_cuda, machine)
    if listed is None:
        return None
    return listed, f"the {key[1]} variant's list (no wheel of torch {base} read)"
