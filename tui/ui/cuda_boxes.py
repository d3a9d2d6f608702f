"""Which CUDA: the four versions that must agree on a host, and where each comes from.

The driver's highest CUDA (``DriverInfo.max_cuda``) · ``torch.version.cuda`` of the interpreter
the story is about · the toolkit of the first ``nvcc`` on PATH · the toolkit FlashInfer's JIT
resolves. The rules cite these, and the host screen's comparison shows them
(``cuda_boxes``): a box is marked when a finding implicates it, or for the PATH nvcc when it
is not the toolkit FlashInfer would use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from tui.core.facts import Facts
from tui.core.findings import SEVERITY_ORDER
from tui.core.findings.registry import FINDINGS
from tui.core.judge.host_stack import path_nvcc, primary_python, primary_replay

if TYPE_CHECKING:
    from tui.core.judge.diagnosis import Diagnosis


# finding id → the boxes it points at (each finding record's ``implicates``)
IMPLICATES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {f.id: f.implicates for f in FINDINGS if f.implicates}
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
        f"driver {drv.driver_version}" if drv.driver_version else (drv.message or drv.state)
    ).splitlines()[0]

    driver_cuda = facts.driver.max_cuda or "—"

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
        jit_value = replay.jit_cuda or "none"
        source = "torch.version.cuda fallback" if replay.jit_cuda_source == "torch" else ""
        jit_detail = source or replay.cuda_home or "no toolkit resolved"

    path_severity = worst.get("path")
    if path_severity is None and nvcc and replay and path_value != jit_value:
        path_severity = "odd"

    return (
        CudaBox(
            "driver",
            "Driver CUDA",
            driver_cuda,
            driver_detail,
            worst.get("driver"),
        ),
        CudaBox("torch", "torch CUDA", torch_value, torch_detail, worst.get("torch")),
        CudaBox("path", "PATH nvcc", path_value, path_detail, path_severity),
        CudaBox("jit", "FlashInfer JIT", jit_value, jit_detail, worst.get("jit")),
    )
