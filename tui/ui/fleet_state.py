"""What the UI knows about each host: immutable state, and the values the tables show.

Pure data and functions over ``Facts`` / ``Diagnosis`` — no Textual here, so it is tested
directly. The app holds one ``FleetState`` in a reactive and replaces it on every change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

from tui.core.facts import Facts
from tui.core.findings import SEVERITY_ORDER, FlashInferReplay
from tui.core.hosts import Host
from tui.core.judge.host_stack import primary_python, primary_replay
from tui.core.redact import visible
from tui.core.rules.completeness import unseen
from tui.core.tables.flashinfer_prebuilt import replay_coverage
from tui.ui.reasons import VALUE_KEYS, reason_line

if TYPE_CHECKING:
    from tui.core.judge.diagnosis import Diagnosis
    from tui.core.run.pending import PendingWork
    from tui.core.run.runner import ProbeResult

Status = Literal[
    "idle",
    "queued",
    "connecting",
    "probing",
    "done",
    "unreachable",
    "hostkey-unknown",
    "hostkey-changed",
    "hostkey-revoked",
    "timeout",
    "probe-failed",
    "bad-inventory",
]
BUSY: frozenset[str] = frozenset({"queued", "connecting", "probing"})
NOT_REACHED: frozenset[str] = frozenset(
    {
        "unreachable",
        "hostkey-unknown",
        "hostkey-changed",
        "hostkey-revoked",
        "timeout",
        "probe-failed",
        "bad-inventory",
    }
)


@dataclass(frozen=True)
class HostState:
    host: Host
    status: Status = "idle"
    step: str = ""
    done: int = 0
    total: int | None = None
    lines: int = 0  # raw output lines received so far (the lines live in the app's buffer)
    result: ProbeResult | None = None
    diagnosis: Diagnosis | None = None
    finished_at: datetime | None = None
    pending: PendingWork | None = None  # a restart left pending, a fix that never finished

    @property
    def name(self) -> str:
        return self.host.name

    @property
    def facts(self) -> Facts | None:
        return self.result.facts if self.result is not None else None

    @property
    def error(self) -> str | None:
        return self.result.error if self.result is not None else self.host.invalid

    @property
    def busy(self) -> bool:
        return self.status in BUSY

    @cached_property
    def row(self) -> HostRow:
        """The table cells, computed once per state (states are replaced, never changed)."""
        return host_row(self)


@dataclass(frozen=True)
class FleetState:
    order: tuple[str, ...] = ()
    states: Mapping[str, HostState] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def of(cls, hosts: Iterable[Host]) -> FleetState:
        hosts = tuple(hosts)
        return cls(
            order=tuple(h.name for h in hosts),
            states=MappingProxyType(
                {h.name: HostState(h, "bad-inventory" if h.invalid else "idle") for h in hosts}
            ),
        )

    def __getitem__(self, name: str) -> HostState:
        return self.states[name]

    def __iter__(self):
        return (self.states[n] for n in self.order)

    def __len__(self) -> int:
        return len(self.order)

    def updated(self, *new: HostState) -> FleetState:
        states = dict(self.states)
        for s in new:
            states[s.name] = s
        return FleetState(self.order, MappingProxyType(states))


def queued(state: HostState) -> HostState:
    return replace(state, status="queued", step="", done=0, total=None, lines=0)


# -- what the hosts table shows -------------------------------------------------------------


def short_gpu_name(name: str) -> str:
    for prefix in ("NVIDIA GeForce ", "NVIDIA "):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def gpu_summary(facts: Facts) -> str:
    if not facts.gpus:
        return ""
    names: dict[str, int] = {}
    for g in facts.gpus:
        names[short_gpu_name(g.name)] = names.get(short_gpu_name(g.name), 0) + 1
    return visible(", ".join(f"{n}× {name}" for name, n in names.items()))


def sm_summary(facts: Facts) -> str:
    caps = sorted({g.compute_cap for g in facts.gpus if g.compute_cap}, key=_version_key)
    return ", ".join(caps)


def _version_key(v: str) -> tuple[int, ...]:
    out = []
    for part in v.replace("+", ".").split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        out.append(int(digits) if digits else 0)
    return tuple(out)


def flashinfer_verdict(replay: FlashInferReplay | None, prebuilt: bool = False) -> str:
    """``prebuilt``: the JIT cache serves the modules, so an nvcc that cannot compile is not
    needed."""
    if replay is None:
        return ""
    if replay.import_error:
        return "import error"
    if replay.check_cuda_arch == "fail":
        return "rejects GPU"
    if replay.compiles is False:
        return "ok (JIT cache)" if prebuilt else "cannot compile"
    return "ok"


def _prebuilt(facts: Facts, replay: FlashInferReplay | None) -> bool:
    covered = replay_coverage(facts, replay) if replay is not None else None
    return bool(covered and covered.covered)


def worst_severity(diagnosis: Diagnosis | None) -> str | None:
    if diagnosis is None or not diagnosis.findings:
        return None
    return min((f.severity for f in diagnosis.findings), key=lambda s: SEVERITY_ORDER[s])


STATUS_TEXT: Mapping[str, str] = MappingProxyType(
    {
        "idle": "not probed",
        "queued": "queued",
        "connecting": "connecting…",
        "probing": "probing",
        "done": "done",
        "unreachable": "unreachable",
        "hostkey-unknown": "unknown host key",
        "hostkey-changed": "HOST KEY CHANGED",
        "hostkey-revoked": "HOST KEY REVOKED",
        "timeout": "timed out",
        "probe-failed": "probe failed",
        "bad-inventory": "inventory error",
    }
)


def status_word(state: HostState) -> str:
    """The status in a few words (the hosts table's Status column; the reason goes to Reason)."""
    if state.status == "probing":
        if state.total:
            return f"probing {state.done}/{state.total} {state.step}".rstrip()
        return f"probing {state.step}".rstrip()
    return STATUS_TEXT[state.status]


def status_text(state: HostState) -> str:
    """The status in words, with the error reason (first line) when there is one."""
    text = status_word(state)
    if state.status in ("unreachable", "timeout", "probe-failed", "bad-inventory") and state.error:
        text = f"{text}: {state.error.splitlines()[0]}"
    elif state.status == "done" and (reasons := unseen(state.result)):
        text = f"partial: {reasons[0].splitlines()[0]}"
    return text


STATUS_WIDTH = 16  # the hosts table cuts longer statuses (probe steps) with "…"

COLUMNS: tuple[tuple[str, str], ...] = (  # most telling first: 80 columns show the first four
    ("host", "Host"),
    ("status", "Status"),
    ("worst", "Worst"),
    ("reason", "Reason"),
    ("sm", "SM"),
    ("driver_cuda", "Drv CUDA"),
    ("torch_cuda", "torch"),
    ("jit", "JIT nvcc"),
    ("flashinfer", "FlashInfer"),
    ("verdict", "Verdict"),
    ("driver", "Driver"),
    ("gpu", "GPU"),
)


@dataclass(frozen=True)
class HostRow:
    """The hosts table's cells for one host, as plain strings (keys of ``COLUMNS``)."""

    host: str
    status: str
    gpu: str = ""
    sm: str = ""
    driver: str = ""
    driver_cuda: str = ""
    torch_cuda: str = ""
    jit: str = ""
    flashinfer: str = ""
    verdict: str = ""
    worst: str = ""
    reason: str = ""  # the top finding's cause → consequence, or why the host was not reached

    def cell(self, key: str) -> str:
        return getattr(self, key)


def _first_line(text: str | None) -> str:
    return text.splitlines()[0] if text else ""


def _reason(state: HostState, row: HostRow) -> str:
    diagnosis = state.diagnosis
    if diagnosis is None:
        return _first_line(state.error)
    if not diagnosis.findings:
        return "no findings: driver, torch, nvcc and FlashInfer agree"
    top = diagnosis.findings[0]
    values = {k: row.cell(k) for k in VALUE_KEYS}
    return reason_line(top.id, top.title, values, len(diagnosis.findings) - 1)


def host_row(state: HostState) -> HostRow:
    row = _host_row(state)
    reason = _reason(state, row)
    if state.pending is not None and not state.busy:
        row = replace(row, status=state.pending.label, reason=f"{state.pending.detail} · {reason}")
    else:
        row = replace(row, reason=reason)
    # every cell may hold a host's text (a GPU name, an error): its control characters visible
    return HostRow(**{k: visible(v) for k, v in vars(row).items()})


def _host_row(state: HostState) -> HostRow:
    facts = state.facts
    status = status_word(state)
    if facts is None:
        return HostRow(host=state.name, status=status)
    py = primary_python(facts, state.diagnosis)
    replay = primary_replay(state.diagnosis)
    jit = ""
    if replay is not None:
        jit = replay.jit_cuda or "none"
        if replay.jit_cuda_source == "torch":
            jit += " (torch)"
    driver = facts.driver.driver_version or (
        "" if facts.driver.state == "ok" else facts.driver.state
    )
    return HostRow(
        host=state.name,
        status=status,
        gpu=gpu_summary(facts),
        sm=sm_summary(facts),
        driver=driver,
        driver_cuda=facts.driver.max_cuda or "",
        torch_cuda=(py.torch_cuda or ("cpu" if py.torch_version else "")) if py else "",
        jit=jit,
        flashinfer=replay.version if replay else ((py.flashinfer_version or "") if py else ""),
        verdict=flashinfer_verdict(replay, _prebuilt(facts, replay)),
        worst=worst_severity(state.diagnosis) or ("none" if state.diagnosis else ""),
    )


STATUS_RANK: Mapping[str, int] = MappingProxyType(
    {
        s: i
        for i, s in enumerate(
            (
                "bad-inventory",
                "hostkey-revoked",
                "hostkey-changed",
                "hostkey-unknown",
                "unreachable",
                "timeout",
                "probe-failed",
                "probing",
                "connecting",
                "queued",
                "done",
                "idle",
            )
        )
    }
)
WORST_RANK: Mapping[str, int] = MappingProxyType(
    {"critical": 0, "warning": 1, "info": 2, "none": 3, "": 4}
)


def worst_rank(state: HostState) -> int:
    """A host that was not reached ranks above a critical one: nothing is known about it."""
    if state.status in NOT_REACHED:
        return -1
    return WORST_RANK.get(state.row.worst, 4)


def sort_key(state: HostState, column: str) -> tuple:
    """Sort key for one column: severities and statuses by importance, versions numerically;
    demo hosts after real ones, whatever the column."""
    row = state.row
    demo = state.host.demo
    if column == "worst":
        return (demo, worst_rank(state), row.host)
    if column == "status":
        return (demo, STATUS_RANK[state.status], row.host)
    if column in ("sm", "driver", "driver_cuda", "torch_cuda", "jit", "flashinfer"):
        value = row.cell(column)
        return (demo, value == "", _version_key(value), row.host)
    return (demo, row.cell(column).lower(), row.host)
