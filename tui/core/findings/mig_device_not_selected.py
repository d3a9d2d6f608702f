"""A GPU is in MIG mode (the default table's "MIG M." cell says `Enabled`; the probe then also
runs `nvidia-smi -L` for the MIG devices and their `MIG-` UUIDs) and the serving environment's
`CUDA_VISIBLE_DEVICES` does not name exactly one MIG device. A GPU in MIG mode is used through
its MIG devices (a GPU instance plus a compute instance); from R470 each has a `MIG-` UUID that
`CUDA_VISIBLE_DEVICES` takes (CUDA Programming Guide, "CUDA Environment Variables"), and "with
CUDA 11/R450 and CUDA 12/R525, only enumeration of a single MIG instance is supported" (MIG user
guide, quoted by a PyTorch maintainer in pytorch/pytorch#130181).

- `critical`: unset (torch fails at its first device query with *device >= 0 && device <
  num_gpus INTERNAL ASSERT FAILED*: pytorch/pytorch#107300 and #131650, both on A100s in MIG
  mode, solved by setting `CUDA_VISIBLE_DEVICES` to the MIG slice), or set to a GPU index or
  `GPU-` UUID of a GPU in MIG mode.
- `warning`: several MIG UUIDs (one process enumerates one MIG device; tensor parallelism
  across MIG slices does not work).
- silent: one MIG UUID (or a unique prefix of one), MIG disabled, or `CUDA_VISIBLE_DEVICES=""`.

The explanation lists every MIG device (`GPU 0 MIG 1g.24gb device 0: MIG-…`) so the UUID to
set is at hand. The fix `select-mig-device uuid=MIG-…` writes that `CUDA_VISIBLE_DEVICES` into
the unit's drop-in and the venv's `activate` (undone like every environment fix); the what-if
proposes the first MIG device no other probed environment selects, since which slice a server
should own is the operator's choice. The real
`nvidia-smi -L` layout parsed in the tests is the A100-SXM4-80GB listing of
DataDog/datadog-agent#33120 (seven `1g.10gb` devices).

Example — the demo host `pro6000-mig` (an RTX PRO 6000 Server in MIG mode — the real R610
table — split into four `1g.24gb` devices, the profile of aws/sagemaker-hyperpod-cli#403's
configs; vLLM's unit sets `CUDA_VISIBLE_DEVICES=0`):

```
[critical] mig-device-not-selected MIG is enabled on GPU 0 NVIDIA RTX PRO 6000 Blackwell Server Edition but pid 5151 vllm.entrypoints.openai.api_server selects no single MIG device
MIG mode is enabled on GPU 0 NVIDIA RTX PRO 6000 Blackwell Server Edition: CUDA programs use its MIG
devices (a GPU instance and a compute instance), each with its own MIG- UUID. In the pid 5151
vllm.entrypoints.openai.api_server environment CUDA_VISIBLE_DEVICES=0 names 0, not a MIG device: a
GPU in MIG mode is used only through its MIG devices, so the server sees no usable device ('No CUDA
GPUs are available'). Set CUDA_VISIBLE_DEVICES to one MIG UUID from `nvidia-smi -L` for each server
process (MIG devices here: GPU 0 MIG 1g.24gb device 0: MIG-df07775f-db75-58f5-f2a6-cb3e7afad59e; GPU
0 MIG 1g.24gb device 1: MIG-42404e7a-5996-5733-855c-30c51b79f684; GPU 0 MIG 1g.24gb device 2:
MIG-b447b7c1-b78c-5c68-eefa-88112482ae75; GPU 0 MIG 1g.24gb device 3:
MIG-488b243a-78e2-5cdf-9b7e-0dc13f6386ca). (Judged in the pid 5151
vllm.entrypoints.openai.api_server environment.)
evidence: GPU0 NVIDIA RTX PRO 6000 Blackwell Server Edition: MIG M. Enabled · CUDA_VISIBLE_DEVICES=0
          · MIG 1g.24gb device 0 of GPU 0: MIG-df07775f-db75-58f5-f2a6-cb3e7afad59e · MIG 1g.24gb
          device 1 of GPU 0: MIG-42404e7a-5996-5733-855c-30c51b79f684 · MIG 1g.24gb device 2 of GPU
          0: MIG-b447b7c1-b78c-5c68-eefa-88112482ae75 · MIG 1g.24gb device 3 of GPU 0:
          MIG-488b243a-78e2-5cdf-9b7e-0dc13f6386ca
--
[(0, 'Enabled')] (MigDevice(gpu=0, device=0, profile='1g.24gb', uuid='MIG-df07775f-db75-58f5-f2a6-cb3e7afad59e'),) ok
[critical] mig-device-not-selected MIG is enabled on GPU 0 NVIDIA RTX PRO 6000 Blackwell Server Edition but pid 5151 vllm.entrypoints.openai.api_server selects no single MIG device
```
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tui.core.facts import Facts, MigDevice
from tui.core.findings import Finding, Severity
from tui.core.findings.record import FindingRecord
from tui.core.rules.rulekit import finding
from tui.core.rules.subject import Subject

# The rule, in short:
# ``mig-device-not-selected``: a GPU is in MIG mode and the serving environment names no MIG
# device in ``CUDA_VISIBLE_DEVICES``.
#
# A GPU in MIG mode is used through its MIG devices (GPU instance + compute instance), each with a
# ``MIG-`` UUID (R470+) that ``CUDA_VISIBLE_DEVICES`` takes (CUDA Programming Guide, "CUDA
# Environment Variables"). "With CUDA 11/R450 and CUDA 12/R525, only enumeration of a single MIG
# instance is supported" (MIG user guide, quoted in pytorch/pytorch#130181): a process sees one
# MIG device. Left unset on a MIG host, torch fails at the first device query ("device >= 0 &&
# device < num_gpus INTERNAL ASSERT FAILED", pytorch/pytorch#107300 and #131650, fixed there by
# setting ``CUDA_VISIBLE_DEVICES`` to the MIG device); a GPU index or ``GPU-`` UUID of a GPU in
# MIG mode selects no MIG device.

ID = "mig-device-not-selected"


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
            ID,
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


FINDING = FindingRecord(
    id=ID,
    title="MIG is on and no MIG instance is selected",
    severities=("critical", "warning"),
    reads=("gpus.mig_mode", "mig_devices.uuid", "contexts.vars", "driver.state"),
    rules=(rule_mig_not_selected,),
    fixes=("select-mig-device",),
    cause="MIG on, no instance selected",
    consequence="no GPU for the service",
    fires_when=(
        "a GPU is in MIG mode and the serving environment's `CUDA_VISIBLE_DEVICES` names no single "
        "MIG device (unset, a GPU index or `GPU-` UUID, or several MIG UUIDs); lists the `MIG-` UUIDs "
        "to set"
    ),
    example="RTX PRO 6000 in MIG mode, vLLM with `CUDA_VISIBLE_DEVICES=0`",
    doc=__doc__ or "",
    examples=(
        "pytorch/pytorch#130181",
        "pytorch/pytorch#107300",
        "pytorch/pytorch#131650",
        "DataDog/datadog-agent#33120",
        "aws/sagemaker-hyperpod-cli#403",
    ),
)
