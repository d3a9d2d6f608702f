"""Group a fleet by finding: "12 hosts: SM 12.0 + nvcc 12.8 → FlashInfer drops the GPU".

Hosts share a group when they have the same finding for the same cause (the values named in
the cause template), so a fleet of mixed toolkits splits into one group per toolkit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from tui.core.findings import SEVERITY_ORDER, Finding
from tui.core.rules.completeness import unseen
from tui.ui.fleet_state import HostState, status_text
from tui.ui.reasons import VALUE_KEYS, cause


@dataclass(frozen=True)
class FindingGroup:
    key: tuple[str, ...]
    label: str
    severity: str  # critical | warning | info | unreachable | healthy
    finding_id: str | None
    hosts: tuple[str, ...]


_GROUP_RANK: Mapping[str, int] = MappingProxyType(
    {**SEVERITY_ORDER, "unreachable": -1, "healthy": 9}
)


def _plural(n: int) -> str:
    return f"{n} host" if n == 1 else f"{n} hosts"


def _cause(finding: Finding, state: HostState) -> tuple[str, str]:
    row = state.row
    return cause(finding.id, finding.title, {k: row.cell(k) for k in VALUE_KEYS})


def group_by_finding(states: Iterable[HostState]) -> tuple[FindingGroup, ...]:
    """Groups ordered unreachable first, then by severity, then by size; healthy last."""
    members: dict[tuple[str, ...], list[str]] = {}
    meta: dict[tuple[str, ...], tuple[str, str | None, str, str]] = {}
    for state in states:
        if state.status not in ("done", "idle") and not state.busy:
            key = ("error", state.status)
            members.setdefault(key, []).append(state.name)
            meta[key] = ("unreachable", None, status_text(state).split(":")[0], "")
            continue
        if state.diagnosis is None:
            continue
        if not state.diagnosis.findings and unseen(state.result):
            key = ("partial",)
            members.setdefault(key, []).append(state.name)
            meta[key] = ("warning", None, "probe incomplete", "no findings in what it could see")
            continue
        if not state.diagnosis.findings:
            key = ("healthy",)
            members.setdefault(key, []).append(state.name)
            meta[key] = ("healthy", None, "no findings", "")
            continue
        seen: set[tuple[str, ...]] = set()
        for finding in state.diagnosis.findings:
            cause, consequence = _cause(finding, state)
            key = (finding.id, cause)
            if key in seen:
                continue
            seen.add(key)
            members.setdefault(key, []).append(state.name)
            meta[key] = (finding.severity, finding.id, cause, consequence)
    groups = []
    for key, names in members.items():
        severity, finding_id, cause, consequence = meta[key]
        head = f"{_plural(len(names))}: {cause}" if cause else _plural(len(names))
        label = f"{head} → {consequence}" if consequence else head
        groups.append(FindingGroup(key, label, severity, finding_id, tuple(names)))
    groups.sort(key=lambda g: (_GROUP_RANK[g.severity], -len(g.hosts), g.label))
    return tuple(groups)


def marked_group(states: Iterable[HostState]) -> FindingGroup | None:
    """The marked hosts as one group for the fleet fix: the finding most of them share (the
    more severe on a tie); hosts without it stay in the group and are listed as skipped."""
    states = list(states)
    counts: dict[str, int] = {}
    meta: dict[str, Finding] = {}
    for state in states:
        for finding in state.diagnosis.findings if state.diagnosis else ():
            if finding.id not in counts:
                meta[finding.id] = finding
            counts[finding.id] = counts.get(finding.id, 0) + 1
    if not counts:
        return None
    best = min(counts, key=lambda f: (-counts[f], SEVERITY_ORDER[meta[f].severity], f))
    finding = meta[best]
    label = f"{_plural(len(states))} marked: {finding.id} on {counts[best]} — {finding.title}"
    names = tuple(s.name for s in states)
    return FindingGroup(("marked", best), label, finding.severity, best, names)
