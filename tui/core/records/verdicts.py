"""One host's verdict as fleet plumbing reads it: up or not, whether the probe saw everything,
its findings (id and severity), its stack, and when it was probed.

``export prometheus`` (``tui.core.records.prometheus``) and ``check`` (``tui.core.records.checks``)
both render these. Every string in a ``HostVerdict`` has been through ``tui.core.redact`` already;
a host whose probe could not see everything is never "healthy": ``complete`` is False and the
reasons are in ``unseen``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from tui.core.findings import SEVERITY_ORDER
from tui.core.judge.host_stack import STACK_KEYS, stack
from tui.core.judge.judged import Judged
from tui.core.redact import redact, redact_text
from tui.core.rules.completeness import unseen

__all__ = ["STACK_KEYS", "FindingBrief", "HostVerdict", "host_verdict"]


@dataclass(frozen=True)
class FindingBrief:
    id: str
    severity: str
    title: str


@dataclass(frozen=True)
class HostVerdict:
    host: str
    up: bool  # reached and read (False: unreachable, a refused host key, no facts at all)
    unseen: tuple[str, ...]  # why the probe may have missed something (empty: it saw it all)
    findings: tuple[FindingBrief, ...]  # most severe first, one per (id, severity)
    stack: Mapping[str, str] | None  # host_stack.STACK_KEYS → version ("" unknown); None: no facts
    probed_at: float  # Unix time the probe ended
    error_kind: str | None = None  # ProbeResult.error_kind ("unreachable", "bad-inventory"…)

    @property
    def complete(self) -> bool:
        return self.up and not self.unseen

    def worst(self) -> FindingBrief | None:
        return self.findings[0] if self.findings else None


def host_verdict(judged: Judged, probed_at: float) -> HostVerdict:
    """The verdict of one judged probe, redacted."""
    result = judged.result
    facts = result.facts
    up = result.reachable and facts is not None
    briefs: dict[tuple[str, str], FindingBrief] = {}
    for f in judged.diagnosis.findings if judged.diagnosis else ():
        briefs.setdefault((f.id, f.severity), FindingBrief(f.id, f.severity, f.title))
    ordered = sorted(briefs.values(), key=lambda b: SEVERITY_ORDER[b.severity])  # stable
    versions = None
    if facts is not None:
        values = stack(facts, judged.diagnosis)
        versions = MappingProxyType(redact({k: v or "" for k, v in values.items()}))
    return HostVerdict(
        host=redact_text(result.host.name),
        up=up,
        unseen=tuple(redact_text(r) for r in unseen(result)),
        findings=tuple(FindingBrief(b.id, b.severity, redact_text(b.title)) for b in ordered),
        stack=versions,
        probed_at=probed_at,
        error_kind=result.error_kind,
    )
