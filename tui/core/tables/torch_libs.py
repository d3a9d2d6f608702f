"""How torch's CUDA libraries are found at run time — data, read from the real PyPI wheels.

torch's own libraries carry a ``DT_RPATH`` (not ``RUNPATH``) naming the wheels'
``nvidia/*/lib`` folders (``readelf -d torch/lib/libtorch_cuda.so`` of 2.5.1 and 2.11.0), so
what they link directly (``libcudart``, ``libcublas``, ``libcudnn``, ``libnccl``…) is found
there before ``LD_LIBRARY_PATH``. Three libraries are not: ``libnvJitLink`` (needed by
cuSPARSE, which has no RPATH for it — pytorch#138460), ``libcublasLt`` (needed by cuBLAS
through its ``RUNPATH``, which ``LD_LIBRARY_PATH`` precedes — torch 2.11's ``__init__.py``)
and ``libnvrtc`` (``dlopen``ed by cuDNN — pytorch#145580). torch loads some of them itself,
by absolute path from the wheel, right after ``libtorch_global_deps.so``
(``_load_global_deps`` in ``torch/__init__.py``); which ones is a table per release.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from packaging.version import InvalidVersion, Version

# soname stem → what loads it, when torch does not pin it (the causal chain's wording)
UNPINNED: Mapping[str, str] = MappingProxyType(
    {
        "libnvJitLink": "cuSPARSE (no RPATH for it)",
        "libcublasLt": "cuBLAS (through its RUNPATH)",
        "libnvrtc": "cuDNN (dlopen, for its runtime-compiled engines)",
    }
)
# the libraries whose files the probe looks for (soname stems)
CUDA_LIBS = (
    "libcudart",
    "libnvrtc",
    "libcublas",
    "libcublasLt",
    "libcudnn",
    "libnccl",
    "libnvJitLink",
)
# stems whose sub-libraries (<stem>_<part>.so.N) the probe looks for too: cuDNN 9's, which its
# frontend and libcudnn_graph open by name (tui.core.tables.cudnn_sublibs)
SUB_LIBS = ("libcudnn",)
# the nvidia-* distribution that ships each stem (cu12 wheels: <name>-cu12; cu13: <name>)
DISTS: Mapping[str, str] = MappingProxyType(
    {
        "libcudart": "nvidia-cuda-runtime",
        "libnvrtc": "nvidia-cuda-nvrtc",
        "libcublas": "nvidia-cublas",
        "libcublasLt": "nvidia-cublas",
        "libnvJitLink": "nvidia-nvjitlink",
        "libcudnn": "nvidia-cudnn",
        "libnccl": "nvidia-nccl",
    }
)


@dataclass(frozen=True)
class TorchLoader:
    first: str  # the first torch release this row describes
    preloads: tuple[str, ...]  # stems loaded from the wheel right after the global deps
    condition: str  # what /proc/self/maps must hold for it to happen
    source: str


_SRC = "torch/__init__.py _load_global_deps of the PyPI wheel{s} torch-{v}"
LOADERS: tuple[TorchLoader, ...] = (
    TorchLoader("2.5.0", (), "", _SRC.format(s="", v="2.5.1") + " (preloads only on failure)"),
    TorchLoader(
        "2.6.0",
        ("libnvrtc", "libnvJitLink"),
        "nvidia/cuda_runtime/lib/libcudart.so",
        _SRC.format(s="s", v="2.6.0, 2.8.0"),
    ),
    TorchLoader(
        "2.9.0",
        ("libnvrtc", "libnvJitLink"),
        "libcudart.so",
        _SRC.format(s="", v="2.9.0"),
    ),
    TorchLoader(
        "2.10.0",
        (
            "libcublasLt",
            "libcublas",
            "libcudnn",
            "libnvrtc",
            "libcudart",
            "libnvJitLink",
            "libnccl",
        ),
        "libcudart.so",
        _SRC.format(s="s", v="2.10.0, 2.11.0"),
    ),
)
VERIFIED = ("2.5.1", "2.6.0", "2.8.0", "2.9.0", "2.10.0", "2.11.0")


def loader_for(torch_version: str | None) -> TorchLoader | None:
    if not torch_version:
        return None
    try:
        v = Version(Version(torch_version).base_version)
    except InvalidVersion:
        return None
    rows = [r for r in LOADERS if Version(r.first) <= v]
    return rows[-1] if rows else None


def preloads_skipped(row: TorchLoader, cudart: str) -> bool:
    """Whether ``_load_global_deps`` skips its preloads when libtorch_global_deps.so's libcudart
    is the file ``cudart`` (its path as ``/proc/self/maps`` shows it): the same substring test
    torch makes."""
    return bool(row.preloads and row.condition) and row.condition not in cudart


def unpinned(torch_version: str | None) -> tuple[str, ...]:
    """The stems ``LD_LIBRARY_PATH`` can shadow under this torch (installed from the wheels)."""
    row = loader_for(torch_version)
    if row is None:
        return ()
    return tuple(stem for stem in UNPINNED if stem not in row.preloads)
