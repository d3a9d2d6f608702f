"""No driver, driver not loaded, NVML missing, or driver/library version mismatch. `critical`
when the driver is half-installed or a CUDA build of torch / FlashInfer is installed;
`warning` with no driver and only a CUDA toolkit (a build-only machine: nvcc needs no driver);
`info` with no driver and no CUDA software at all. GPU-dependent findings stay silent on such
a host.

```
[critical] No working NVIDIA driver (not-loaded)
On this host the NVIDIA userspace is installed but the kernel module is not loaded. Nothing that uses
CUDA can run here: torch sees no GPU (or fails with cudaErrorInsufficientDriver, error 35), and
FlashInfer detects no architecture. Install or load the driver (or reboot after a driver upgrade)
before anything else; the other checks are meaningless until then.
evidence: driver state: not-loaded · nvidia-smi exit status 9 · nvidia-smi: NVIDIA-SMI has failed
          because it couldn't communicate with the NVIDIA driver. … · /proc/driver/nvidia/version absent
```
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tui.core.facts import Facts
from tui.core.findings import Finding, Severity, container_without_gpu_runtime
from tui.core.findings.record import FindingRecord
from tui.core.rules.rulekit import finding as _finding
from tui.core.rules.subject import Subject

ID = "no-nvidia-driver"
BROKEN_DRIVER = {  # driver state → what it means
    "no-driver": "no NVIDIA kernel driver is installed or loaded (nvidia-smi cannot run)",
    "not-loaded": "the NVIDIA userspace is installed but the kernel module is not loaded",
    "no-nvml": "nvidia-smi cannot find libnvidia-ml.so (the driver's userspace is missing)",
    "version-mismatch": "the loaded kernel module and the userspace libraries are different "
    "driver versions (typically after a driver upgrade without a reboot)",
}


def rule_no_driver(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    d = facts.driver
    meaning = BROKEN_DRIVER.get(d.state)
    if meaning is None or container_without_gpu_runtime.applies(
        facts
    ):  # the container runtime, not a driver
        return
    runtime = [
        *(f"torch {p.torch_version} (CUDA {p.torch_cuda})" for p in facts.pythons if p.torch_cuda),
        *(f"FlashInfer {p.flashinfer_version}" for p in facts.pythons if p.flashinfer_version),
    ]
    toolkits = [f"CUDA toolkit at {t.home}" for t in facts.toolkits if t.exists]
    severity: Severity = "critical"
    tail = (
        " Nothing that uses CUDA can run here: torch sees no GPU (or fails with "
        "cudaErrorInsufficientDriver, error 35), and FlashInfer detects no architecture. "
        "Install or load the driver (or reboot after a driver upgrade) before anything else; "
        "the other checks are meaningless until then."
    )
    if d.state == "no-driver" and not runtime:  # nothing here needs a GPU at run time
        severity = "warning" if toolkits else "info"
        tail = (
            " Only a CUDA toolkit is installed: fine for a build-only machine (nvcc needs no "
            "driver), but nothing compiled here can run on this host."
            if toolkits
            else " No CUDA software was found either; if this host is not meant to have a GPU, "
            "ignore this."
        )
    evidence = [f"driver state: {d.state}"]
    if d.smi_exit is not None:
        evidence.append(f"nvidia-smi exit status {d.smi_exit}")
    if d.message:
        evidence.append(f"nvidia-smi: {d.message.strip().splitlines()[0]}")
    evidence.append(
        f"/proc/driver/nvidia/version: {d.proc_version}"
        if d.proc_version
        else "/proc/driver/nvidia/version absent"
    )
    evidence += (runtime + toolkits)[:4]
    yield _finding(
        ID,
        severity,
        f"No working NVIDIA driver ({d.state})",
        f"On this host {meaning}.{tail}",
        evidence,
    )


FINDING = FindingRecord(
    id=ID,
    title="No working NVIDIA driver",
    severities=("critical", "warning", "info"),
    reads=(
        "driver.state",
        "driver.smi_exit",
        "driver.message",
        "driver.proc_version",
        "container.markers",
        "pythons.torch_cuda",
        "pythons.flashinfer_version",
        "toolkits.exists",
    ),
    rules=(rule_no_driver,),
    cause="driver {driver}",
    consequence="no usable GPU",
    implicates=("driver",),
    fires_when="no driver, module not loaded, NVML missing, or driver/library mismatch",
    example="`nvidia-smi` exit 9: *couldn't communicate with the NVIDIA driver*",
    doc=__doc__ or "",
)
