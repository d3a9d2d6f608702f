"""The probe runs in a container that was given GPUs — `/dev/nvidia*` device nodes and the
driver's libraries are there, and the host's module shows in `/proc/driver/nvidia/version` —
yet `nvidia-smi` fails with "Failed to initialize NVML: Unknown Error". The container has lost
access to the devices it was given: with runc and the systemd cgroup driver, a `systemctl
daemon-reload` on the host (run by hand or by a package upgrade) re-applies the container's
device rules without the GPU devices the NVIDIA runtime added, and every open of `/dev/nvidia*`
is refused from then on. CUDA fails at initialisation too (`cuInit` error 999, "unknown
error"). Nothing inside the container is wrong, and installing a driver would not help: recreate
the container (it is given the devices again), and on the host run `nvidia-ctk system
create-dev-char-symlinks --create-all` (NVIDIA Container Toolkit) so the devices survive the
next reload. `no-nvidia-driver` stays silent (the driver state is `error`: NVML's own text).

Examples — NVIDIA/nvidia-docker#1671 ("This works until you do `systemctl daemon-reload` … then
inside the same running container: Failed to initialize NVML: Unknown Error. Running the
container again will work fine"), NVIDIA/nvidia-docker#1678 and alibaba/BladeDISC#1248 (after
hours or days of running). On a fake vLLM container given the H100 node's GPUs whose
`nvidia-smi` prints that line and exits 255:

```
[critical] This container has lost access to the GPUs it was given
nvidia-smi fails with 'Failed to initialize NVML: Unknown Error' although this container (/.dockerenv)
has its GPU device nodes (/dev/nvidia-uvm, /dev/nvidia0, /dev/nvidiactl) …
```
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from tui.core.facts import Facts
from tui.core.findings import Finding
from tui.core.findings.record import FindingRecord
from tui.core.rules.rulekit import finding

if TYPE_CHECKING:
    from tui.core.rules.subject import Subject

ID = "container-lost-gpu-access"
NVML_UNKNOWN = "Failed to initialize NVML: Unknown Error"


def rule_lost_access(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    c = facts.container
    message = facts.driver.message or ""
    if not c.markers or not c.devices or NVML_UNKNOWN not in message:
        return
    host_module = facts.driver.proc_version
    yield finding(
        ID,
        "critical",
        "This container has lost access to the GPUs it was given",
        f"nvidia-smi fails with '{NVML_UNKNOWN}' although this container ({', '.join(c.markers)}) "
        f"has its GPU device nodes ({', '.join(c.devices)})"
        + (f" and the host's NVIDIA module {host_module} is loaded" if host_module else "")
        + ": the container was given the GPUs and has since lost access to them. With runc and "
        "the systemd cgroup driver, a `systemctl daemon-reload` on the host re-applies the "
        "container's device rules without the GPU devices, and every open of /dev/nvidia* is "
        "refused from then on; CUDA fails to initialise as well (error 999, unknown error). "
        "Installing a driver would not help. Recreate the container, and on the host run "
        "`nvidia-ctk system create-dev-char-symlinks --create-all` so its GPUs survive the next "
        "daemon-reload.",
        [
            *(f"container marker: {m}" for m in c.markers),
            *(f"device node: {d}" for d in c.devices),
            f"nvidia-smi (exit {facts.driver.smi_exit}): {message.strip()}",
            f"/proc/driver/nvidia/version: {host_module}"
            if host_module
            else "/proc/driver/nvidia/version absent",
        ],
    )


FINDING = FindingRecord(
    id=ID,
    title="A container lost access to its GPUs",
    severities=("critical",),
    reads=(
        "container.markers",
        "container.devices",
        "driver.message",
        "driver.smi_exit",
        "driver.proc_version",
    ),
    rules=(rule_lost_access,),
    cause="container lost its GPUs",
    consequence="NVML and CUDA fail inside",
    fires_when=(
        "a container given GPUs (device nodes present) where nvidia-smi says 'Failed to "
        "initialize NVML: Unknown Error' (the device cgroup lost them; recreate the container)"
    ),
    example="vLLM container after a `systemctl daemon-reload` on the host",
    doc=__doc__ or "",
    examples=(
        "NVIDIA/nvidia-docker#1671",
        "NVIDIA/nvidia-docker#1678",
        "alibaba/BladeDISC#1248",
    ),
)
