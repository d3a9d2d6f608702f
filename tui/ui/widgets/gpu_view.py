"""Live GPU state, as nvitop shows it: per GPU its utilisation, memory used/total and
temperature (a GPU in MIG mode with its MIG devices and their ``MIG-`` UUIDs under it, as
``nvidia-smi -L`` lists them), then the compute processes with the interpreter behind each
(where the probe knows the process: the serving process's environment and Python)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from textual.content import Content
from textual.widgets import Static

from tui.core.facts import Facts
from tui.core.facts.gpu_state import GpuNow
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


REFRESH_S = 5.0  # while GPUs now is shown, its state is read again this often


def _ago(then: datetime, now: datetime) -> str:
    seconds = max(0, int((now - then).total_seconds()))
    if seconds < 5:
        return "just now"
    return f"{seconds} s ago" if seconds < 120 else f"{seconds // 60} min ago"


def age_parts(probed: datetime | None, fresh: GpuNow | None, now: datetime) -> list[Part]:
    """Where the state shown comes from and how old it is; a failed refresh says why."""
    keys = f"N reads it again; every {REFRESH_S:g} s while shown"
    if fresh is not None and fresh.error is None:
        return [(f"Live: read at {fresh.at:%H:%M:%S} ({_ago(fresh.at, now)}) · {keys}\n", "dim")]
    shown = f"the probe at {probed:%H:%M:%S} ({_ago(probed, now)})" if probed else "the probe"
    if fresh is not None:
        why = redact_text(f"Refresh at {fresh.at:%H:%M:%S} failed: {fresh.error}")
        return [(f"{why}. Shown: {shown} · {keys}\n", "$warning")]
    return [(f"As of {shown} · {keys}\n", "dim")]


class GpuView(Static):
    """The probe's GPU state, replaced by a refresh's (``fresh``) until the next probe."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.facts: Facts | None = None
        self.fresh: GpuNow | None = None
        self._empty: str | None = None
        self._probed: datetime | None = None

    def show(
        self, facts: Facts | None, empty: str | None = None, at: datetime | None = None
    ) -> None:
        if facts is not self.facts:
            self.fresh = None  # a new probe is newer than any refresh of the old one
        self.facts, self._empty, self._probed = facts, empty, at
        self.redraw()

    def refreshed(self, fresh: GpuNow) -> None:
        self.fresh = fresh
        self.redraw()

    def redraw(self) -> None:
        facts, fresh = self.facts, self.fresh
        if facts is not None and fresh is not None and fresh.error is None:
            facts = replace(
                facts,
                gpu_load=fresh.load,
                gpu_processes=fresh.processes,
                mig_devices=fresh.mig_devices,
            )
        parts = gpu_parts(facts, self._empty)
        if self.facts is not None and (self.facts.gpu_load or fresh is not None):
            now = getattr(self.app, "clock", datetime.now)()
            parts = [*age_parts(self._probed, fresh, now), *parts]
        self.update(Content.assemble(*parts))
