"""Group a fleet by finding: "12 hosts: SM 12.0 + nvcc 12.8 → FlashInfer drops the GPU" — or by
GPU model, driver or inventory tag.

Hosts share a finding group when they have the same finding for the same cause (the values
named in the cause template), so a fleet of mixed toolkits splits into one group per toolkit.
GPU model and driver groups come from each host's last probe (a host not probed or not reached
is in the "unknown" group); tags from the inventory. A host is in every group that applies (a
host with an H100 and an A100 is in both model groups, one with two tags in both tag groups).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from tui.core.findings import SEVERITY_ORDER, Finding
from tui.core.rules.completeness import unseen
from tui.ui.fleet_state import HostState, short_gpu_name, status_text
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


# what the groups view can group by, in the order `b` cycles through them; the header's word
GROUPINGS: Mapping[str, str] = MappingProxyType(
    {"finding": "finding", "gpu": "GPU model", "driver": "driver", "tag": "tag"}
)
ATTRIBUTE_GROUPINGS = frozenset(GROUPINGS) - {"finding"}  # groups of hosts, not of findings
UNKNOWN = "unknown: not probed or not reached"


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


def _values(state: HostState, by: str) -> tuple[str, ...]:
    """The group names a host belongs to under ``by`` (``gpu``, ``driver``, ``tag``)."""
    if by == "tag":
        return state.host.tags or ("no tag",)
    facts = state.facts  # the last probe's, also while the host is probed again
    if facts is None:
        return (UNKNOWN,)
    if by == "gpu":
        models = dict.fromkeys(short_gpu_name(g.name) for g in facts.gpus)
        return tuple(models) or ("no GPU seen",)
    driver = facts.driver
    if driver.driver_version is None:
        return (f"no driver ({driver.state})",)
    cuda = f" (CUDA {driver.max_cuda})" if driver.max_cuda else ""
    return (f"driver {driver.driver_version}{cuda}",)


def _worst(states: Iterable[HostState]) -> str:
    """The group's colour: its worst host (a host not reached first, as in the table)."""
    worst = "healthy"
    for state in states:
        if state.status not in ("done", "idle") and not state.busy:
            return "unreachable"
        for finding in state.diagnosis.findings if state.diagnosis else ():
            if _GROUP_RANK[finding.severity] < _GROUP_RANK[worst]:
                worst = finding.severity
    return worst


def _counts(states: Iterable[HostState]) -> str:
    """ "2 critical, 1 warning": the hosts by their worst finding."""
    counts: dict[str, int] = {}
    for state in states:
        findings = state.diagnosis.findings if state.diagnosis else ()
        if findings:
            worst = min((f.severity for f in findings), key=lambda s: SEVERITY_ORDER[s])
            counts[worst] = counts.get(worst, 0) + 1
    return ", ".join(f"{n} {s}" for s, n in sorted(counts.items(), key=lambda c: _GROUP_RANK[c[0]]))


def _natural(text: str) -> tuple[object, ...]:
    """ "driver 550.163.01" before "driver 580.95.05", "H20" before "H100": numbers as numbers."""
    return tuple(int(p) if i % 2 else p.lower() for i, p in enumerate(re.split(r"(\d+)", text)))


def group_by(states: Iterable[HostState], by: str) -> tuple[FindingGroup, ...]:
    """The fleet grouped by ``by`` (a key of ``GROUPINGS``). Attribute groups are ordered by
    name (versions as numbers), the unknown group last; their hosts keep the fleet's order."""
    if by == "finding":
        return group_by_finding(states)
    members: dict[str, list[HostState]] = {}
    for state in states:
        for value in _values(state, by):
            members.setdefault(value, []).append(state)
    groups = []
    for value, hosts in members.items():
        counts = _counts(hosts)
        label = f"{_plural(len(hosts))}: {value}" + (f" · {counts}" if counts else "")
        names = tuple(s.name for s in hosts)
        groups.append(FindingGroup((by, value), label, _worst(hosts), None, names))
    groups.sort(key=lambda g: (g.key[1] == UNKNOWN, _natural(g.key[1])))
    return tuple(groups)


def marked_group(states: Iterable[HostState], what: str = "marked") -> FindingGroup | None:
    """The marked hosts (or an attribute group's, ``what`` naming it) as one group for the
    fleet fix: the finding most of them share (the more severe on a tie); hosts without it
    stay in the group and are listed as skipped."""
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
    label = f"{_plural(len(states))} {what}: {finding.id} on {counts[best]} — {finding.title}"
    names = tuple(s.name for s in states)
    return FindingGroup(("marked", best), label, finding.severity, best, names)
