"""``select-mig-device``: point the serving environment's ``CUDA_VISIBLE_DEVICES`` at one MIG
device (its ``MIG-`` UUID, as the probe's ``nvidia-smi -L`` listed it).

A GPU in MIG mode is used only through its MIG devices, and one CUDA process enumerates one of
them (``mig-device-not-selected``). The drop-in, the venv's ``activate`` block and their undo
are the ones every environment fix writes (``tui.core.fixes.envset``). Which slice a server owns
is the operator's choice: ``uuid=`` names it; without it the what-if proposes the first MIG
device no other probed environment already selects.
"""

from __future__ import annotations

from collections.abc import Mapping

from tui.core.facts import Facts
from tui.core.findings import mig_device_not_selected
from tui.core.fixes.env_targets import env_targets, pick_python
from tui.core.fixes.envset import env_change, make_plan
from tui.core.fixes.plan import FixError, FixPlan
from tui.core.fixes.record import Fix, Param
from tui.core.fixes.simulate import with_vars
from tui.core.hosts import Host

FIX_ID = "select-mig-device"
VAR = "CUDA_VISIBLE_DEVICES"


def _in_use(facts: Facts) -> set[str]:
    """The MIG UUIDs some probed environment already names."""
    named = {item.strip() for c in facts.contexts for item in c.vars.get(VAR, "").split(",")}
    return {m.uuid for m in facts.mig_devices if m.uuid in named}


def select_mig_device(
    facts: Facts, host: Host, params: Mapping[str, str], python: str | None, stamp: str
) -> FixPlan:
    uuid = params.get("uuid", "")
    known = [m.uuid for m in facts.mig_devices]
    if uuid not in known:
        listed = ", ".join(known) or "none: create GPU and compute instances first"
        raise FixError(
            f"uuid={uuid or '?'} is not a MIG device probed on {host.name}; pass uuid= one of "
            f"the MIG devices `nvidia-smi -L` listed there ({listed})"
        )
    device = next(m for m in facts.mig_devices if m.uuid == uuid)
    py = pick_python(facts, python)
    change = env_change(
        host, env_targets(facts, py), name="mig", fix_id=FIX_ID, env={VAR: uuid}, stamp=stamp
    )
    notes = (
        *change.notes,
        f"The server gets MIG {device.profile} device {device.device} of GPU {device.gpu} "
        "only: one CUDA process enumerates one MIG device. Run one server per MIG device, "
        f"each with its own uuid= (other MIG devices here: "
        f"{', '.join(k for k in known if k != uuid) or 'none'}).",
    )
    return make_plan(
        facts,
        host,
        FIX_ID,
        {"uuid": uuid},
        py,
        steps=change.steps,
        verify=(mig_device_not_selected.ID,),
        notes=notes,
        change=change,
        stamp=stamp,
    )


def _choices(facts: Facts, python: str | None) -> list[dict[str, str]]:
    """The first MIG device of a GPU in MIG mode that no probed environment selects yet."""
    mig_gpus = {g.index for g in facts.gpus if g.mig_mode == "Enabled"}
    taken = _in_use(facts)
    free = [m for m in facts.mig_devices if m.gpu in mig_gpus and m.uuid not in taken]
    return [{"uuid": free[0].uuid}] if free else []


FIX = Fix(
    id=FIX_ID,
    order=11,
    params=(Param("uuid", "the MIG- UUID of the MIG device the server should use"),),
    plan=select_mig_device,
    simulate=lambda facts, params, py, labels: with_vars(facts, labels, **{VAR: params["uuid"]}),
    choices=_choices,
    title=lambda facts, params, python: f"Set {VAR}={params['uuid']} (one MIG device)",
)
