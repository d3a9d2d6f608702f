"""``mig-device-not-selected``: a GPU is in MIG mode and the serving environment names no MIG
device in ``CUDA_VISIBLE_DEVICES``.

A GPU in MIG mode is used through its MIG devices (GPU instance + compute instance), each with a
``MIG-`` UUID (R470+) that ``CUDA_VISIBLE_DEVICES`` takes (CUDA Programming Guide, "CUDA
Environment Variables"). "With CUDA 11/R450 and CUDA 12/R525, only enumeration of a single MIG
instance is supported" (MIG user guide, quoted in pytorch/pytorch#130181): a process sees one
MIG device. Left unset on a MIG host, torch fails at the first device query ("device >= 0 &&
device < num_gpus INTERNAL ASSERT FAILED", pytorch/pytorch#107300 and #131650, fixed there by
setting ``CUDA_VISIBLE_DEVICES`` to the MIG device); a GPU index or ``GPU-`` UUID of a GPU in
MIG mode selects no MIG device.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from tui.core.facts import Facts, MigDevice
from tui.core.findings import Finding, Severity
from tui.core.rulekit import finding

if TYPE_CHECKING:
    from tui.core.subject import Subject

FINDING = "mig-device-not-selected"


def _named(facts: Facts, spec: str) -> tuple[list[MigDevice], list[str]]:
    """The MIG devices a CUDA_VISIBLE_DEVICES value names, and its other entries."""
    devices, other = [], []
    for raw in spec.split(","):
        item = raw.strip()
        if not item:
            continue
        hit = next(
            (m for m in facts.mig_devices if item.startswith("MIG-") and m.uuid.startswith(item)),
            None,
        )
        if hit is not None:
            devices.append(hit)
        else:
            other.append(item)
    return devices, other


def _listing(devices: Sequence[MigDevice]) -> str:
    return "; ".join(f"GPU {m.gpu} MIG {m.profile} device {m.device}: {m.uuid}" for m in devices)


def rule_mig_not_selected(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    mig_gpus = [g for g in facts.gpus if g.mig_mode == "Enabled"]
    if facts.driver.state != "ok" or not mig_gpus:
        return
    seen: set[str] = set()
    for s in subs:
        ctx = s.context
        if ctx is None or ctx.label in seen:
            continue
        seen.add(ctx.label)
        spec = ctx.vars.get("CUDA_VISIBLE_DEVICES")
        chosen, other = _named(facts, spec) if spec is not None else ([], [])
        if spec is not None and not spec.strip():
            continue  # no GPU wanted at all
        if chosen and len(chosen) == 1:
            continue  # one MIG device, as CUDA enumerates it
        mig_list = _listing(facts.mig_devices) or "none: create GPU and compute instances first"
        severity: Severity = "critical"
        if chosen:
            severity = "warning"
            what = (
                f"CUDA_VISIBLE_DEVICES names {len(chosen)} MIG devices, but a CUDA process "
                "enumerates only one MIG device (CUDA 11/R450, CUDA 12/R525): tensor "
                "parallelism across MIG slices does not work; run one server per MIG device"
            )
        elif spec is None:
            what = (
                "CUDA_VISIBLE_DEVICES is not set, so no MIG device is chosen: torch fails at "
                "its first device query ('device >= 0 && device < num_gpus INTERNAL ASSERT "
                "FAILED') or the server sees no usable device"
            )
        else:
            what = (
                f"CUDA_VISIBLE_DEVICES={spec} names {', '.join(other)}, not a MIG device: a GPU "
                "in MIG mode is used only through its MIG devices, so the server sees no "
                "usable device ('No CUDA GPUs are available')"
            )
        names = ", ".join(f"GPU {g.index} {g.name}" for g in mig_gpus)
        yield finding(
            FINDING,
            severity,
            f"MIG is enabled on {names} but {ctx.label} selects no single MIG device",
            f"MIG mode is enabled on {names}: CUDA programs use its MIG devices (a GPU instance "
            f"and a compute instance), each with its own MIG- UUID. In the {ctx.label} "
            f"environment {what}. Set CUDA_VISIBLE_DEVICES to one MIG UUID from "
            f"`nvidia-smi -L` for each server process (MIG devices here: {mig_list}).",
            [
                *(f"GPU{g.index} {g.name}: MIG M. {g.mig_mode}" for g in mig_gpus),
                f"CUDA_VISIBLE_DEVICES={spec}"
                if spec is not None
                else "CUDA_VISIBLE_DEVICES unset",
                *(
                    f"MIG {m.profile} device {m.device} of GPU {m.gpu}: {m.uuid}"
                    for m in facts.mig_devices[:8]
                ),
            ],
            s,
        )
