"""Live GPU state, as nvitop shows it: per GPU its utilisation, memory used/total and
temperature (a GPU in MIG mode with its MIG devices and their ``MIG-`` UUIDs under it, as
``nvidia-smi -L`` lists them), then the compute processes with the interpreter behind each
(where the probe knows the process: the serving process's environment and Python)."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from tui.core.facts import Facts
from tui.core.redact import redact_text
from tui.ui.fleet_state import short_gpu_name

Part = str | tuple[str, str] | Content
HOT_C = 85  # a temperature shown in the warning colour from here
FULL = 0.95  # memory shown in the warning colour from this fraction


def _gib(mib: int | None) -> str:
    return "?" if mib is None else f"{mib / 1024:.1f}"


def load_summary(facts: Facts) -> str:
    """One line for the detail pane: ``8 GPUs · 0–12% · 690.9/764.7 GiB · 35–41 °C``."""
    load = facts.gpu_load
    if not load:
        return ""
    utils = [g.utilization_pct for g in load if g.utilization_pct is not None]
    temps = [g.temperature_c for g in load if g.temperature_c is not None]
    used = sum(g.memory_used_mib or 0 for g in load)
    total = sum(g.memory_total_mib or 0 for g in load)

    def span(values: list[int], unit: str) -> str:
        if not values:
            return "?"
        low, high = min(values), max(values)
        return f"{low}{unit}" if low == high else f"{low}–{high}{unit}"

    return (
        f"{len(load)} GPU{'s' if len(load) > 1 else ''} now · {span(utils, '%')} busy · "
        f"{_gib(used)}/{_gib(total)} GiB · {span(temps, ' °C')}"
    )


def gpu_parts(facts: Facts | None, empty: str | None = None) -> list[Part]:
    """``empty``: what to say without facts (default: not probed yet)."""
    if facts is None:
        return [empty or "Not probed yet."]
    if not facts.gpu_load:
        return ["No live GPU state: nvidia-smi did not answer the state query (see Findings)."]
    names = {g.index: short_gpu_name(g.name) for g in facts.gpus}
    mig_on = {g.index for g in facts.gpus if g.mig_mode == "Enabled"}
    parts: list[Part] = [
        ("GPU  name                          util   memory (GiB)     temp\n", "bold")
    ]
    for g in facts.gpu_load:
        full = (g.memory_used_mib or 0) >= FULL * (g.memory_total_mib or 1)
        hot = (g.temperature_c or 0) >= HOT_C
        util = "  ?" if g.utilization_pct is None else f"{g.utilization_pct:>3}"
        temp = "?" if g.temperature_c is None else f"{g.temperature_c} °C"
        memory = f"{_gib(g.memory_used_mib):>6} / {_gib(g.memory_total_mib):<6}"
        name = names.get(g.index, "?")
        name = name if len(name) <= 28 else name[:27] + "…"
        parts += [
            f"{g.index:>3}  {name:<28}  {util}%   ",
            (memory, "$warning" if full else ""),
            "   ",
            (temp, "$warning" if hot else ""),
            "\n",
        ]
        if g.index in mig_on:
            parts += _mig_parts(facts, g.index)
    parts.append(("\nCompute processes\n", "bold"))
    if not facts.gpu_processes:
        parts.append(("none running\n", "dim"))
    contexts = {c.pid: c for c in facts.contexts if c.pid is not None}
    for p in facts.gpu_processes:
        where = "GPU ?" if p.gpu is None else f"GPU {p.gpu}"
        memory = "" if p.memory_mib is None else f"  {_gib(p.memory_mib)} GiB"
        parts.append(redact_text(f"{where:<6} pid {p.pid:<7} {p.name}{memory}"))
        ctx = contexts.get(p.pid)
        if ctx is not None:
            python = next((py for py in facts.pythons if py.context == ctx.label), None)
            interp = python.path if python else (ctx.exe or "?")
            parts.append(("\n         " + redact_text(f"{ctx.label}: {interp}"), "dim"))
        parts.append("\n")
    return parts


def _mig_parts(facts: Facts, gpu: int) -> list[Part]:
    """The MIG devices under their GPU: profile, device number and the UUID that
    ``CUDA_VISIBLE_DEVICES`` takes."""
    devices = [m for m in facts.mig_devices if m.gpu == gpu]
    if not devices:
        return [("     MIG on: no MIG devices (create GPU and compute instances first)\n", "dim")]
    parts: list[Part] = []
    for m in devices:
        parts += [
            f"     MIG {m.profile:<10} device {m.device:<2} ",
            (redact_text(m.uuid), "dim"),
            "\n",
        ]
    return parts


class GpuView(Static):
    def show(self, facts: Facts | None, empty: str | None = None) -> None:
        self.update(Content.assemble(*gpu_parts(facts, empty)))
