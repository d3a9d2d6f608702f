"""The CUDA variants PyTorch publishes for each release, and which one a host can run.

From pytorch/pytorch's RELEASE.md "Release Compatibility Matrix" (stable and experimental
CUDA per release), as recorded in ``shared/knowledge/cuda-facts.md`` §5.1. Each variant has
its own package index (``tui.core.tables.torch_index``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from packaging.version import InvalidVersion, Version

from tui.core.tables import support_matrix

CUDA_VARIANTS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "2.4": ("11.8", "12.1", "12.4"),
        "2.5": ("11.8", "12.1", "12.4"),
        "2.6": ("11.8", "12.4", "12.6"),
        "2.7": ("11.8", "12.6", "12.8"),
        "2.8": ("12.6", "12.8", "12.9"),
        "2.9": ("12.6", "12.8", "13.0"),
        "2.10": ("12.6", "12.8", "13.0"),
        "2.11": ("12.6", "12.8", "13.0"),
        "2.12": ("12.6", "13.0", "13.2"),
        "2.13": ("12.6", "13.0", "13.2"),
        "2.14": ("12.6", "13.0", "13.2"),
    }
)


def is_cpu_build(torch_version: str | None, torch_cuda: str | None) -> bool:
    """A torch without CUDA (``+cpu``, or no CUDA and no other accelerator in its version)."""
    if not torch_version or torch_cuda:
        return False
    try:
        local = Version(torch_version).local or ""
    except InvalidVersion:
        return False
    return local in ("", "cpu") or local.startswith("cpu")


def cuda_variant_for(
    torch_version: str,
    driver: str | None,
    driver_cuda: str | None,
    gpus: Sequence[tuple[int, int]],
    machine: str | None,
) -> str | None:
    """The newest CUDA build of this torch release that the driver runs and that has kernels
    for every GPU (``"12.8"``); None when no recorded build fits."""
    try:
        v = Version(torch_version)
    except InvalidVersion:
        return None
    for cuda in reversed(CUDA_VARIANTS.get(f"{v.major}.{v.minor}", ())):
        if support_matrix.driver_runs_cuda(driver, driver_cuda, cuda) is not True:
            continue
        archs = support_matrix.torch_arch_list(cuda, machine)
        if archs is not None and not all(support_matrix.torch_runs_on(archs, cc) for cc in gpus):
            continue
        return cuda
    return None
