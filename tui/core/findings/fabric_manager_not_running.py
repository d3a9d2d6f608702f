"""An NVSwitch system (HGX/DGX A100, H100, H200, B200 with 8 GPUs) whose GPUs are not
registered with the NVLink fabric: `nvidia-smi --query-gpu=fabric.state` says `In Progress` or
`Not Started` (or `Completed` with a status other than `Success`). The fabric manager
(`nv-fabricmanager`, the `nvidia-fabricmanager` service) registers them at boot, and until it
has, every CUDA program fails at initialisation with error 802, `cudaErrorSystemNotReady`
("system not yet initialized"), while `nvidia-smi` looks fine. `critical`; the explanation says
whether an `nv-fabricmanager` process runs and whether the `nvidia-fabricmanager*` package dpkg
lists is at the driver's version — the fabric manager refuses to start against a driver of
another version, so a driver upgrade without it leaves the GPUs unregistered. Start it at the
driver's version (`apt install nvidia-fabricmanager-<branch>=<driver version>-1`, `systemctl
enable --now nvidia-fabricmanager`); where it runs and the GPUs stay `In Progress`, read
`/var/log/fabricmanager.log` (on NVLink 5 systems, B200 and later, the NVLink Subnet Manager
must run too). `warning` when the GPUs are registered but the fabric manager's package is not
at the driver's version: its next start (the next boot) fails. Silent where no GPU joins a
fabric (PCIe GPUs, a single GPU, 4-GPU boards without NVSwitch say `N/A`/`Not Supported`); the
fabric state is read only on hosts with two or more GPUs, the package only from dpkg.

Examples — pytorch/pytorch#35710 ("cuda runtime error (802) : system not yet initialized";
the answer there installs `nvidia-fabricmanager`), hiyouga/LlamaFactory#8968 (8× B200, "Cuda
failure 802 'system not yet initialized'": "the version of nvidia-fabric-manager and nvidia
driver is different. Install the same version"), NVIDIA/gpu-operator#2511 (a 580.159.04 HGX
node whose GPUs show Fabric `State : In Progress`, `Status : N/A`), NVIDIA/NVSentinel#883 (H100
nodes whose `nvidia-fabricmanager.service` had failed to start and stayed down). On a fake
8× H200 node on driver 550.163.01 whose `nvidia-fabricmanager-550` package is at 550.127.05
and not running:

```
[critical] The GPUs are not registered with the NVLink fabric: the fabric manager is not running
8 of 8 GPUs report a fabric state other than Completed/Success … Its package
(nvidia-fabricmanager-550 550.127.05-1) is not at the driver's version, so it cannot start
against this driver. Install the fabric manager at the driver's version (550.163.01: `apt
install nvidia-fabricmanager-550=550.163.01-1`) and start it …
  GPU 0, 1, 2, 3, 4, 5, 6, 7: fabric.state In Progress, fabric.status N/A
  no nv-fabricmanager process
  package nvidia-fabricmanager-550 550.127.05-1
```
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from tui.core.facts import FABRIC_STATES, Facts
from tui.core.findings import Finding
from tui.core.findings.record import FindingRecord
from tui.core.rules.rulekit import finding

if TYPE_CHECKING:
    from tui.core.rules.subject import Subject

ID = "fabric-manager-not-running"


def upstream_version(version: str) -> str:
    """A Debian package version without its epoch and revision: ``550.163.01-1`` → ``550.163.01``."""
    return version.split(":", 1)[-1].rsplit("-", 1)[0]


def _package_lines(facts: Facts, driver: str | None) -> tuple[list[str], list[str]]:
    """(evidence, the packages not at the driver's version)."""
    evidence, stale = [], []
    for name, version in facts.fabric.packages:
        evidence.append(f"package {name} {version}")
        if driver and upstream_version(version) != driver:
            stale.append(f"{name} {version}")
    if not facts.fabric.packages:
        evidence.append("no nvidia-fabricmanager package in dpkg's status (or no dpkg)")
    return evidence, stale


def rule_fabric_manager(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    fab = facts.fabric
    registered = fab.registered
    if registered is None:
        return
    driver = facts.driver.driver_version
    joined = [g for g in fab.gpus if g.state in FABRIC_STATES]
    pending = [g for g in joined if not (g.state == "Completed" and g.status == "Success")]
    pkg_evidence, stale = _package_lines(facts, driver)
    pids = ", ".join(str(p) for p in fab.manager_pids)
    evidence = [
        *(
            f"GPU {', '.join(str(g.index) for g in pending if (g.state, g.status) == key)}: "
            f"fabric.state {key[0]}, fabric.status {key[1]}"
            for key in dict.fromkeys((g.state, g.status) for g in pending)
        ),
        f"nv-fabricmanager running (pid {pids})" if pids else "no nv-fabricmanager process",
        *pkg_evidence,
        f"driver {driver}" if driver else "driver version unknown",
    ]
    install = (
        f"Install the fabric manager at the driver's version ({driver}: `apt install "
        f"nvidia-fabricmanager-{driver.split('.')[0]}={driver}-1`) and "
        if driver
        else "Install the fabric manager at the driver's version and "
    )
    if registered:
        if not stale:
            return
        yield finding(
            ID,
            "warning",
            "The fabric manager's package is not at the driver's version",
            f"The GPUs are registered with the NVLink fabric, but {', '.join(stale)} is not at "
            f"driver {driver}: the fabric manager refuses to start against another driver, so "
            "its next start (the next boot) leaves the GPUs unregistered and CUDA fails with "
            f"error 802 (system not yet initialized). {install}restart it in a maintenance "
            "window.",
            evidence,
        )
        return
    if not pids:
        why = "the fabric manager is not running"
        then = (
            f" Its package ({', '.join(stale)}) is not at the driver's version, so it cannot "
            "start against this driver."
            if stale
            else ""
        )
        todo = (
            f"{install}start it: `systemctl enable --now nvidia-fabricmanager`"
            if stale or not fab.packages
            else "Start it: `systemctl enable --now nvidia-fabricmanager`"
        )
    else:
        why = "the fabric manager runs but has not registered them"
        then = ""
        todo = (
            "Read /var/log/fabricmanager.log and `journalctl -u nvidia-fabricmanager`; on NVLink "
            "5 systems (B200 and later) the NVLink Subnet Manager (nvlsm) must run too"
        )
    yield finding(
        ID,
        "critical",
        f"The GPUs are not registered with the NVLink fabric: {why}",
        f"{len(pending)} of {len(joined)} GPUs report a fabric state other than Completed/"
        f"Success: on an NVSwitch system the fabric manager registers every GPU with the NVLink "
        "fabric, and until it has, every CUDA program fails at initialisation with error 802 "
        f"(cudaErrorSystemNotReady, 'system not yet initialized') while nvidia-smi works.{then} "
        f"{todo}, then check that `nvidia-smi -q` shows Fabric State Completed on every GPU.",
        evidence,
    )


FINDING = FindingRecord(
    id=ID,
    title="The fabric manager does not register the GPUs",
    severities=("critical", "warning"),
    reads=(
        "fabric.gpus",
        "fabric.manager_pids",
        "fabric.packages",
        "driver.driver_version",
    ),
    rules=(rule_fabric_manager,),
    cause="fabric manager not running",
    consequence="CUDA error 802",
    implicates=("driver",),
    fires_when=(
        "an NVSwitch system's GPUs report fabric.state In Progress or Not Started (warning: "
        "registered, but the nvidia-fabricmanager package is not at the driver's version)"
    ),
    example="8× H200 HGX node after a driver upgrade that left nvidia-fabricmanager behind",
    doc=__doc__ or "",
    examples=(
        "pytorch/pytorch#35710",
        "hiyouga/LlamaFactory#8968",
        "NVIDIA/gpu-operator#2511",
        "NVIDIA/NVSentinel#883",
    ),
)
