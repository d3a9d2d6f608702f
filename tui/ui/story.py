"""The host screen's four-way CUDA comparison, as data.

driver max CUDA · torch.version.cuda · the PATH nvcc · FlashInfer's JIT toolkit. A box is
marked when a finding implicates it (table below) or, for the PATH nvcc, when it is not the
toolkit FlashInfer would use — so the disagreement is visible before any text is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from tui.core.completeness import partial_verdict
from tui.core.facts import Facts
from tui.core.findings import SEVERITY_ORDER
from tui.ui.fleet import path_nvcc, primary_python, primary_replay

if TYPE_CHECKING:
    from tui.core.diagnosis import Diagnosis

BOXES = ("driver", "torch", "path", "jit")

# finding id → the boxes it points at
IMPLICATES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "flashinfer-arch-rejected": ("jit",),
        "nvcc-too-old-for-gpu": ("jit",),
        "nvcc-torch-major-mismatch": ("jit",),
        "driver-too-old-for-torch": ("driver",),
        "driver-too-old-for-nvcc": ("driver", "jit"),
        "torch-lacks-gpu-arch": ("torch",),
        "toolkit-shadowed": ("path", "jit"),
        "no-nvidia-driver": ("driver",),
        "toolkit-headers-mismatch": ("jit",),
        "cuda-library-shadowed": ("torch",),
    }
)


@dataclass(frozen=True)
class CudaBox:
    key: str  # one of BOXES
    label: str
    value: str  # the CUDA version, or "—"
    detail: str  # where it came from
    severity: str | None  # worst finding implicating it; "odd" when only out of line


def cuda_boxes(facts: Facts, diagnosis: Diagnosis | None) -> tuple[CudaBox, ...]:
    worst: dict[str, str] = {}
    for finding in diagnosis.findings if diagnosis else ():
        for box in IMPLICATES.get(finding.id, ()):
            if box not in worst or SEVERITY_ORDER[finding.severity] < SEVERITY_ORDER[worst[box]]:
                worst[box] = finding.severity

    drv = facts.driver
    driver_detail = (
        f"driver {drv.smi_version}" if drv.smi_version else (drv.message or drv.state)
    ).splitlines()[0]

    py = primary_python(facts, diagnosis)
    torch_value = "—"
    torch_detail = "no torch found"
    if py is not None and py.torch_version:
        torch_value = py.torch_cuda or "cpu"
        torch_detail = f"torch {py.torch_version}"

    nvcc, tk = path_nvcc(facts)
    path_value = (tk.version if tk and tk.version else "?") if nvcc else "—"
    path_detail = nvcc or "no nvcc on PATH"

    replay = primary_replay(diagnosis)
    jit_value = "—"
    jit_detail = "FlashInfer not installed"
    if replay is not None:
        jit_value = replay.cuda_version or "none"
        source = "torch.version.cuda fallback" if replay.cuda_version_source == "torch" else ""
        jit_detail = source or replay.cuda_home or "no toolkit resolved"

    path_severity = worst.get("path")
    if path_severity is None and nvcc and replay and path_value != jit_value:
        path_severity = "odd"

    return (
        CudaBox(
            "driver", "Driver CUDA", drv.cuda_version or "—", driver_detail, worst.get("driver")
        ),
        CudaBox("torch", "torch CUDA", torch_value, torch_detail, worst.get("torch")),
        CudaBox("path", "PATH nvcc", path_value, path_detail, path_severity),
        CudaBox("jit", "FlashInfer JIT", jit_value, jit_detail, worst.get("jit")),
    )


def headline(diagnosis: Diagnosis | None, unseen: tuple[str, ...] = ()) -> tuple[str, str]:
    """(severity, one line) for the top of the host screen. ``unseen``: what the probe could
    not see (``tui.core.completeness``); then no all-clear is given."""
    if diagnosis is None:
        return "info", "not diagnosed yet"
    if not diagnosis.findings and unseen:
        return "warning", partial_verdict(unseen)
    if not diagnosis.findings:
        return "healthy", "No findings: driver, torch, nvcc and FlashInfer agree."
    first = diagnosis.findings[0]
    more = len(diagnosis.findings) - 1
    tail = f"  (+{more} more)" if more else ""
    return first.severity, f"{first.title}{tail}"
