"""Compatibility tables: driver floors, torch wheel arch lists, minimum nvcc per GPU — data.

Sources (``shared/knowledge/cuda-facts.md``): §3.1 (minimum driver per toolkit, NVIDIA release
notes table 3), §3.2 (minor-version compatibility floors), §5.2 (``torch.cuda.get_arch_list()``
of the PyPI wheels and the build script's ``TORCH_CUDA_ARCH_LIST`` per CUDA variant), §1.3 and
§4 (which toolkit first targets a compute capability; which cubins run on which GPU).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from packaging.version import InvalidVersion, Version

from tui.core.tables.ptxas_targets import first_toolkit_for

# Minor-version compatibility: anything built with CUDA <major>.x runs on a driver ≥ this.
MINOR_COMPAT_DRIVER_FLOOR: Mapping[int, str] = MappingProxyType(
    {11: "450.80.02", 12: "525.60.13", 13: "580.65.06"}
)

# Minimum Linux x86_64 driver of each toolkit GA (NVIDIA's table 3). A driver ≥ this reports
# at least that CUDA version in nvidia-smi.
TOOLKIT_MIN_DRIVER: Mapping[str, str] = MappingProxyType(
    {
        "11.8": "520.61.05",
        "12.0": "525.60.13",
        "12.1": "530.30.02",
        "12.2": "535.54.03",
        "12.3": "545.23.06",
        "12.4": "550.54.14",
        "12.5": "555.42.02",
        "12.6": "560.28.03",
        "12.8": "570.26",
        "12.9": "575.51.03",
        "13.0": "580.65.06",
        "13.1": "590.44.01",
        "13.2": "595.45.04",
        "13.3": "610.43.02",
    }
)

# torch.cuda.get_arch_list() of the PyPI / download.pytorch.org wheels, by torch.version.cuda
# and machine. Used only when the probe could not read the list from libtorch_python.so.
_TORCH_ARCH_LISTS: Mapping[tuple[str, str], str] = MappingProxyType(
    {
        ("11.8", "x86_64"): "sm_37 sm_50 sm_60 sm_61 sm_70 sm_75 sm_80 sm_86 sm_90",
        ("12.1", "x86_64"): "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90",
        ("12.4", "x86_64"): "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90",
        ("12.6", "x86_64"): "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90",
        ("12.6", "aarch64"): "sm_80 sm_90",
        ("12.8", "x86_64"): "sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120",
        ("12.9", "x86_64"): "sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 compute_120",
        ("13.0", "x86_64"): "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120",
        ("13.0", "aarch64"): "sm_80 sm_90 sm_100 sm_110 sm_120",
        ("13.2", "x86_64"): "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 compute_120",
        ("13.2", "aarch64"): "sm_80 sm_90 sm_100 sm_110 sm_120 compute_120",
    }
)
TORCH_ARCH_LISTS: Mapping[tuple[str, str], tuple[str, ...]] = MappingProxyType(
    {key: tuple(value.split()) for key, value in _TORCH_ARCH_LISTS.items()}
)

# (cubin arch, GPU) pairs that break the "same major, minor ≥" rule (torch DEVICE_REQUIREMENT).
CUBIN_EXCEPTIONS: frozenset[tuple[str, str]] = frozenset(
    {("10.0", "10.1"), ("8.0", "8.7"), ("8.6", "8.7"), ("7.0", "7.2")}
)

# Compute capabilities FlashInfer's JIT accepts at all (check_cuda_arch): 7.5 and newer.
FLASHINFER_MIN_CC = (7, 5)


def _version(text: str | None) -> Version | None:
    if not text:
        return None
    try:
        return Version(text)
    except InvalidVersion:
        return None


def cuda_major(text: str | None) -> int | None:
    v = _version(text)
    return v.major if v else None


def parse_cc(cc: str | None) -> tuple[int, int] | None:
    """``"12.0"`` → ``(12, 0)``."""
    if not cc:
        return None
    major, _, minor = cc.partition(".")
    if not (major.isdigit() and minor.isdigit()):
        return None
    return int(major), int(minor)


def driver_floor_for(cuda: str) -> str | None:
    """The oldest driver that runs code built with CUDA ``cuda`` (minor-version compatible)."""
    major = cuda_major(cuda)
    return MINOR_COMPAT_DRIVER_FLOOR.get(major) if major is not None else None


def driver_runs_cuda(driver_version: str | None, driver_cuda: str | None, cuda: str) -> bool | None:
    """Can a driver (number and/or its highest CUDA) run code built with CUDA ``cuda``?

    Same major or older: yes when the driver's CUDA is at least that major and, within one
    major, when the driver is past the minor-version compatibility floor. ``None``: unknown.
    """
    want = _version(cuda)
    if want is None:
        return None
    have_cuda = _version(driver_cuda)
    if have_cuda is not None:
        if have_cuda.major != want.major:
            return have_cuda.major > want.major
        if (have_cuda.major, have_cuda.minor) >= (want.major, want.minor):
            return True
    floor = driver_floor_for(cuda)
    have_driver = _version(driver_version)
    if have_driver is None or floor is None:
        return None if have_cuda is None else False
    return have_driver >= Version(floor)


def driver_cuda_from_number(driver_version: str | None) -> str | None:
    """The highest toolkit whose minimum driver this driver meets (when nvidia-smi lacks it)."""
    have = _version(driver_version)
    if have is None:
        return None
    best = None
    for toolkit, floor in TOOLKIT_MIN_DRIVER.items():
        if have >= Version(floor):
            best = toolkit
    return best


def torch_arch_list(torch_cuda: str | None, machine: str | None) -> tuple[str, ...] | None:
    """The wheel table's arch list for a torch CUDA variant, or ``None`` when not recorded."""
    v = _version(torch_cuda)
    if v is None:
        return None
    return TORCH_ARCH_LISTS.get((f"{v.major}.{v.minor}", machine or "x86_64"))


def torch_runs_on(arch_list: Sequence[str], cc: tuple[int, int]) -> bool:
    """Does a torch build with this ``get_arch_list()`` have kernels for a GPU of ``cc``?

    ``sm_XY`` cubins run on the same major with minor ≥ Y (minus ``CUBIN_EXCEPTIONS``);
    ``compute_XY`` PTX is JIT-compiled by the driver for any GPU ≥ XY.
    """
    gpu = f"{cc[0]}.{cc[1]}"
    for entry in arch_list:
        kind, _, num = entry.partition("_")
        digits = num.rstrip("abcdefghijklmnopqrstuvwxyz")
        if not digits.isdigit() or len(digits) < 2:
            continue
        major, minor = int(digits[:-1]), int(digits[-1])
        if kind == "sm" and major == cc[0] and minor <= cc[1]:
            if (f"{major}.{minor}", gpu) not in CUBIN_EXCEPTIONS and num == digits:
                return True
            if num != digits and minor == cc[1]:
                return True
        if kind == "compute" and (major, minor) <= cc:
            return True
    return False


def min_nvcc_for_cc(cc: tuple[int, int]) -> str | None:
    """The oldest recorded toolkit whose nvcc can emit SASS for this compute capability."""
    return first_toolkit_for(f"{cc[0]}{cc[1]}")


def flashinfer_supports_cc(cc: tuple[int, int]) -> bool:
    return cc >= FLASHINFER_MIN_CC
