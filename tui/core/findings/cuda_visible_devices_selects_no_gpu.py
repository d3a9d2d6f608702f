"""`CUDA_VISIBLE_DEVICES` in the environment a server or interpreter is judged in selects no
GPU the driver shows, so CUDA sees no device at all: torch reports `torch.cuda.is_available()`
False or `RuntimeError: CUDA error: invalid device ordinal` / `no CUDA-capable device is
detected` (CUDA errors 101 and 100), while `nvidia-smi` — which ignores the variable — lists
every GPU. CUDA reads the variable as a comma-separated list of indices or `GPU-`/`MIG-` UUID
prefixes and stops at the first entry it cannot match: only the GPUs named before it are
visible. So `1` on a one-GPU host (indices start at 0), `-1` (the conventional "hide every
GPU"), an empty value, `all` (what `NVIDIA_VISIBLE_DEVICES` takes, not CUDA), or the UUID of a
GPU that was replaced or belongs to another host all select nothing, and every other GPU rule
goes quiet because nothing is visible. The finding names the entry CUDA stopped at and the GPUs
it could have named (index and UUID from `nvidia-smi`). `critical` for a serving process or
unit, `warning` for a shell (it may be meant; it still hides every GPU). MIG GPUs are left to
`mig-device-not-selected`. No fix id: the value belongs to whoever set it.

Examples — public threads where the maintainers' answer was this variable: pytorch/pytorch#1040
(`CUDA_VISIBLE_DEVICES=2` → "no CUDA-capable device is detected"), endernewton/tf-faster-rcnn#38
(a `$0` that expanded to a script name; fixed with `CUDA_VISIBLE_DEVICES=0`),
wdrink/PyDeepFakeDet#1 ("specifying the wrong GPU number, e.g. if there is only one GPU and the
program uses GPUs:1"). On a fake H100 node (the real 4-GPU capture) whose vLLM unit sets
`CUDA_VISIBLE_DEVICES=4`:

```
[critical] CUDA_VISIBLE_DEVICES=4 selects no GPU for pid 5151 vllm.entrypoints.openai.api_server
In the pid 5151 vllm.entrypoints.openai.api_server environment CUDA_VISIBLE_DEVICES='4', and CUDA
stops at the first entry it cannot match: 4 is not a GPU index here (the GPUs are 0-3), so no GPU
is visible. …
```
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from tui.core.facts import Facts, Gpu
from tui.core.findings import Finding, Severity
from tui.core.findings.record import FindingRecord
from tui.core.rules.rulekit import finding, indices

if TYPE_CHECKING:
    from tui.core.rules.subject import Subject

ID = "cuda-visible-devices-selects-no-gpu"
VAR = "CUDA_VISIBLE_DEVICES"


def _why_unmatched(item: str, gpus: Sequence[Gpu]) -> str:
    """Why CUDA cannot match one entry of the variable."""
    if not item:
        return "an empty entry names no GPU"
    if item.isdigit():
        return f"{item} is not a GPU index here (the GPUs are {indices([g.index for g in gpus])})"
    if item.lstrip("-").isdigit():
        return f"{item} is negative: the conventional way to hide every GPU"
    if item.startswith(("GPU-", "MIG-")):
        return f"{item} matches no GPU's UUID here (a replaced GPU, or another host's)"
    if item.lower() in ("all", "none", "void"):
        return f"{item!r} is a value of NVIDIA_VISIBLE_DEVICES, not of {VAR}"
    return f"{item!r} is neither a GPU index nor a GPU-/MIG- UUID"


def selected(facts: Facts, spec: str) -> tuple[list[Gpu], str | None]:
    """The GPUs CUDA enumerates under ``spec`` (nvidia-smi's order standing in for CUDA's),
    and why it stopped before the end (None: every entry matched)."""
    gpus = list(facts.gpus)
    chosen: list[Gpu] = []
    for raw in spec.split(","):
        item = raw.strip()
        match = None
        if item.isdigit():
            match = next((g for g in gpus if g.index == int(item)), None)
        elif item.startswith(("GPU-", "MIG-")):
            match = next((g for g in gpus if g.uuid and g.uuid.startswith(item)), None)
        if match is None:
            return chosen, _why_unmatched(item, gpus)
        if match in chosen:
            return chosen, f"{item} names GPU {match.index} a second time"
        chosen.append(match)
    return chosen, None


def rule_visible_devices(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    if facts.driver.state != "ok" or not facts.gpus:
        return
    if any(g.mig_mode == "Enabled" for g in facts.gpus):
        return  # mig-device-not-selected judges MIG hosts
    seen: set[str] = set()
    for s in subs:
        ctx = s.context
        if ctx is None or ctx.label in seen or VAR not in ctx.vars:
            continue
        seen.add(ctx.label)
        spec = ctx.vars[VAR]
        chosen, why = selected(facts, spec)
        if chosen:
            continue
        severity: Severity = "critical" if ctx.kind in ("process", "unit") else "warning"
        names = "; ".join(f"{g.index} or {g.uuid}" if g.uuid else str(g.index) for g in facts.gpus)
        yield finding(
            ID,
            severity,
            f"{VAR}={spec} selects no GPU for {ctx.label}",
            f"In the {ctx.label} environment {VAR}={spec!r}, and CUDA stops at the first entry "
            f"it cannot match: {why}, so no GPU is visible. torch.cuda.is_available() is "
            "False and CUDA reports 'no CUDA-capable device is detected' (100) or 'invalid "
            "device ordinal' (101), while nvidia-smi, which ignores the variable, lists every "
            f"GPU. Set {VAR} to GPUs that exist here (index or UUID: {names}), or unset it.",
            [
                f"{VAR}={spec} ({ctx.label})",
                f"stopped at: {why}",
                *(f"GPU{g.index} {g.name} {g.uuid or ''}".rstrip() for g in facts.gpus[:8]),
            ],
            s,
        )


FINDING = FindingRecord(
    id=ID,
    title="CUDA_VISIBLE_DEVICES selects no GPU",
    severities=("critical", "warning"),
    reads=("contexts.vars", "gpus.index", "gpus.uuid", "gpus.mig_mode", "driver.state"),
    rules=(rule_visible_devices,),
    cause=f"{VAR} selects no GPU",
    consequence="CUDA sees no device",
    fires_when=(
        f"`{VAR}` in the judged environment selects no visible GPU (CUDA stops at the first "
        "invalid entry: `-1`, an index past the last GPU, `all`, a stale UUID)"
    ),
    example=f"vLLM unit with `{VAR}=4` on a 4-GPU H100 node",
    doc=__doc__ or "",
    examples=(
        "pytorch/pytorch#1040",
        "endernewton/tf-faster-rcnn#38",
        "wdrink/PyDeepFakeDet#1",
    ),
)
