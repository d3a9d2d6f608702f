"""One line of reason per host: a finding's cause in the host's own values and what follows
from it — "SM 12.0 + nvcc 12.8 → FlashInfer drops the GPU". The hosts table's Reason
column, the detail pane and the groups view (hosts share a group when this line is equal)
read it from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

# finding id → (cause template over HostRow fields, consequence in a few words)
CAUSES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "flashinfer-arch-rejected": ("SM {sm} + nvcc {jit}", "FlashInfer drops the GPU"),
        "nvcc-too-old-for-gpu": ("SM {sm} + nvcc {jit}", "the JIT cannot build for the GPU"),
        "nvcc-torch-major-mismatch": (
            "nvcc {jit} vs torch CUDA {torch_cuda}",
            "JIT and torch CUDA majors differ",
        ),
        "driver-too-old-for-torch": (
            "driver CUDA {driver_cuda} < torch CUDA {torch_cuda}",
            "torch cannot initialise CUDA",
        ),
        "driver-too-old-for-nvcc": (
            "driver CUDA {driver_cuda} < nvcc {jit}",
            "JIT-built kernels fail to load",
        ),
        "torch-lacks-gpu-arch": (
            "SM {sm} + torch CUDA {torch_cuda}",
            "no kernel image for the GPU",
        ),
        "toolkit-shadowed": ("several toolkits", "CUDA_HOME, PATH and /usr/local/cuda disagree"),
        "no-nvidia-driver": ("driver {driver}", "no usable GPU"),
        "flashinfer-replay-disagrees": ("replay vs the host's FlashInfer", "the replay is off"),
        "triton-ptxas-too-old": ("SM {sm} + Triton's ptxas", "Triton kernels fail to compile"),
        "toolkit-headers-mismatch": (
            "nvcc {jit} vs its headers/wheels",
            "JIT builds fail in the headers",
        ),
        "cuda-library-shadowed": ("a CUDA library from another CUDA", "torch loads the wrong one"),
        "jit-nvcc-missing": ("SM {sm} + no nvcc for the JIT", "the JIT cannot build"),
        "extension-torch-abi-mismatch": (
            "extension built for another torch",
            "its import fails",
        ),
        "cuda-compat-shadows-driver": (
            "CUDA compat libs ahead of driver {driver}",
            "CUDA cannot initialise",
        ),
        "container-without-gpu-runtime": ("container without the GPU runtime", "no GPU inside"),
        "torch-cpu-build": ("CPU-only torch", "the service cannot use the GPUs"),
        "mig-device-not-selected": ("MIG on, no instance selected", "no GPU for the service"),
    }
)
VALUE_KEYS = ("sm", "jit", "torch_cuda", "driver_cuda", "driver")


def cause(finding_id: str, title: str, values: Mapping[str, str]) -> tuple[str, str]:
    """(cause, consequence) of one finding with the host's values (``?`` where unknown);
    a finding without a template is its title."""
    if finding_id not in CAUSES:
        return "", title
    template, consequence = CAUSES[finding_id]
    return template.format(**{k: values.get(k) or "?" for k in VALUE_KEYS}), consequence


def reason_line(finding_id: str, title: str, values: Mapping[str, str], more: int = 0) -> str:
    """``cause → consequence`` (``(+N)`` when the host has N more findings)."""
    why, then = cause(finding_id, title, values)
    line = f"{why} → {then}" if why else then
    return f"{line} (+{more})" if more else line
