"""(Only with `--deep`.) CUDA itself fails to initialise in the environment a server or
interpreter is judged in: `--deep` runs `cuInit(0)` and `cuDeviceGetCount` through the host's
own Python and `ctypes` on the `libcuda.so.1` its loader finds (`probes/deep_cuinit.py`;
never torch or any CUDA package, and only with the host's own interpreters: nothing from an
inspected tree runs here), with that process's `CUDA_VISIBLE_DEVICES`, `CUDA_DEVICE_ORDER` and
`LD_LIBRARY_PATH`. `critical` when `cuInit` returns an error, or `libcuda.so.1` cannot be
loaded; `warning` when it initialises but counts no device. The error is named by the
driver's own `cuGetErrorName`, and its meaning and usual cause come from a table kept as data
(`CUINIT_ERRORS`, each row from the driver API's `CUresult` documentation as
XuehaiPan/nvitop's `nvitop/api/libcuda.py` carries it): 34 a stub library, 46 devices
unavailable (compute mode), 100 no device, 101 an invalid device ordinal, 304 an OS call
failed, 802 system not ready, 803 the display and CUDA drivers disagree, 804 forward
compatibility on unsupported hardware, 999 unknown (inside a container: the device cgroup lost
the GPUs; on a host: a wedged `nvidia_uvm` — `nvidia-smi` still works while CUDA does not).
Where a finding of its own explains the code on this host, the explanation names it.

Examples — pytorch/pytorch#35710 (error 802 until the fabric manager ran), NVIDIA/warp#219
(error 34, the stub on the loader's path), NVIDIA/nvidia-docker#1671 (999 inside a container
after a `systemctl daemon-reload`). On a fake vLLM unit whose `libcuda.so.1` answers 999:

```
[critical] CUDA fails to initialise: cuInit returned 999 (CUDA_ERROR_UNKNOWN)
```
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from tui.core.findings import (
    Finding,
    container_lost_gpu_access,
    cuda_compat_shadows_driver,
    cuda_visible_devices_selects_no_gpu,
    fabric_manager_not_running,
    libcuda_stub_on_library_path,
)
from tui.core.findings.record import FindingRecord

ID = "cuda-init-fails"
SOURCE = "XuehaiPan/nvitop nvitop/api/libcuda.py (CUresult, the CUDA driver API's documentation)"


@dataclass(frozen=True)
class CuInitError:
    name: str  # the CUresult name, as the driver API documents it
    meaning: str  # the documentation's sentence, shortened
    cause: str  # what usually causes it at initialisation, and what to do
    findings: tuple[str, ...] = ()  # findings that explain it when they fired on the host


CUINIT_ERRORS: Mapping[int, CuInitError] = MappingProxyType(
    {
        34: CuInitError(
            "CUDA_ERROR_STUB_LIBRARY",
            "the CUDA driver that the application has loaded is a stub library",
            "a toolkit's lib64/stubs is on the loader's path ahead of the driver's libcuda",
            (libcuda_stub_on_library_path.ID,),
        ),
        46: CuInitError(
            "CUDA_ERROR_DEVICE_UNAVAILABLE",
            "the requested CUDA device is unavailable at the current time",
            "the GPUs are in EXCLUSIVE_PROCESS compute mode and taken, or PROHIBITED "
            "(`nvidia-smi -q -d COMPUTE`)",
        ),
        100: CuInitError(
            "CUDA_ERROR_NO_DEVICE",
            "no CUDA-capable devices were detected by the installed CUDA driver",
            "CUDA_VISIBLE_DEVICES selects none, or the process cannot open /dev/nvidia*",
            (cuda_visible_devices_selects_no_gpu.ID,),
        ),
        101: CuInitError(
            "CUDA_ERROR_INVALID_DEVICE",
            "the device ordinal supplied does not correspond to a valid CUDA device",
            "CUDA_VISIBLE_DEVICES names a GPU this host does not have",
            (cuda_visible_devices_selects_no_gpu.ID,),
        ),
        304: CuInitError(
            "CUDA_ERROR_OPERATING_SYSTEM",
            "an OS call failed",
            "the process may not open the GPU device nodes (permissions, a sandbox, SELinux)",
        ),
        802: CuInitError(
            "CUDA_ERROR_SYSTEM_NOT_READY",
            "the system is not yet ready to start any CUDA work",
            "on an NVSwitch system the fabric manager has not registered the GPUs",
            (fabric_manager_not_running.ID,),
        ),
        803: CuInitError(
            "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
            "a mismatch between the versions of the display driver and the CUDA driver",
            "a CUDA forward-compatibility libcuda (…/compat) older than the kernel module loads",
            (cuda_compat_shadows_driver.ID,),
        ),
        804: CuInitError(
            "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
            "forward compatibility is not supported on the visible hardware",
            "a forward-compatibility libcuda loads on a GPU it does not support",
            (cuda_compat_shadows_driver.ID,),
        ),
        999: CuInitError(
            "CUDA_ERROR_UNKNOWN",
            "an unknown internal error has occurred",
            "inside a container, the device cgroup lost the GPUs (recreate it); on a host, a "
            "wedged nvidia_uvm module (`nvidia-smi` still works): reload nvidia_uvm or reboot",
            (container_lost_gpu_access.ID,),
        ),
    }
)


def _why(code: int | None, name: str | None, fired: set[str]) -> tuple[str, str]:
    """(title, explanation) for an error code, the host's own findings first."""
    row = CUINIT_ERRORS.get(code) if code is not None else None
    label = name or (row.name if row else "an error the table does not list")
    title = f"CUDA fails to initialise: cuInit returned {code} ({label})"
    if row is None:
        return title, (
            f"cuInit returned {code}, which this version's table ({SOURCE}) does not list; "
            "run the program once with CUDA_LOG_FILE=stderr or read the driver's messages in "
            "`dmesg`."
        )
    known = [f for f in row.findings if f in fired]
    text = f"cuInit returned {code}, {row.name}: {row.meaning} ({SOURCE}). "
    if known:
        return title, text + f"On this host that is explained by {', '.join(known)}."
    return title, text + f"Usual cause: {row.cause}."


def cuinit_findings(
    results: Iterable[tuple[str, Mapping[str, Any]]], fired: Iterable[str]
) -> tuple[Finding, ...]:
    """One finding per judged environment whose deep cuInit run failed. ``results``: (the
    environment's label, what ``probes/deep_cuinit.py`` printed); ``fired``: the host's ids."""
    fired_ids = set(fired)
    out = []
    for label, r in results:
        if "error" in r:  # the run itself failed: nothing is known about CUDA
            continue
        where = f" (judged in the {label} environment)"
        evidence = tuple(
            f"{k}: {r[k]}" for k in ("python", "library", "driver_version") if r.get(k)
        )
        if r.get("load_error"):
            out.append(
                Finding(
                    ID,
                    "critical",
                    "CUDA fails to initialise: libcuda.so.1 cannot be loaded",
                    f"The loader finds no libcuda.so.1{where}: {r['load_error']}. The driver's "
                    "user-space libraries are not installed, or not in a directory the loader "
                    "searches (in a container: the NVIDIA runtime did not inject them).",
                    evidence,
                    python=r.get("python"),
                )
            )
            continue
        code = r.get("cuinit")
        if code not in (0, None):
            title, text = _why(code, r.get("error_name"), fired_ids)
            out.append(Finding(ID, "critical", title, text + where, evidence, r.get("python")))
        elif code == 0 and r.get("device_count") == 0:
            out.append(
                Finding(
                    ID,
                    "warning",
                    "CUDA initialises but sees no device",
                    f"cuInit succeeded and cuDeviceGetCount counted 0 devices{where}: "
                    "CUDA_VISIBLE_DEVICES or the container's device list selects none.",
                    evidence,
                    r.get("python"),
                )
            )
    return tuple(out)


FINDING = FindingRecord(
    id=ID,
    title="CUDA fails to initialise",
    severities=("critical", "warning"),
    reads=("pythons.path", "contexts.vars"),
    rules=(),
    cause="cuInit fails",
    consequence="no CUDA program starts",
    implicates=("driver",),
    fires_when=(
        "(`--deep` only) cuInit through the host's own Python and ctypes fails in the judged "
        "environment (the error code named, its cause from a table), or counts no device"
    ),
    example="vLLM unit on a host whose nvidia_uvm is wedged: cuInit 999 while nvidia-smi works",
    doc=__doc__ or "",
    examples=("pytorch/pytorch#35710", "NVIDIA/warp#219", "NVIDIA/nvidia-docker#1671"),
    heading_note="(only with `--deep`)",
)
