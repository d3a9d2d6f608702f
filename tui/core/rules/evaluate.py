"""The rules: pure functions from facts to findings, one record per finding id.

Each interpreter is judged in the environment it really runs under (``tui.core.rules.subject``).
Every finding names that environment, carries ``evidence`` (the exact paths, versions and
variables that made it fire) and an ``explanation`` that tells the causal chain. The rules
themselves live in the finding records (``tui.core.findings.registry``); thresholds and tables
are data in ``tui.core.tables.support_matrix``, ``tui.core.tables.ptxas_targets`` and
``tui.core.tables.flashinfer_eras``; fixes are added later by ``tui.core.judge.diagnosis``
(what-if), so findings here have none.
"""

from __future__ import annotations

from tui.core.facts import Facts
from tui.core.findings import SEVERITY_ORDER, Finding, FlashInferReplay, toolkit_shadowed
from tui.core.findings.registry import RULES
from tui.core.rules.subject import subjects


def evaluate(facts: Facts) -> tuple[tuple[Finding, ...], tuple[FlashInferReplay, ...]]:
    """All findings (without fixes), most severe first, and the FlashInfer replays."""
    subs = subjects(facts)
    findings = [f for rule in RULES for f in rule(facts, subs)]
    findings = toolkit_shadowed.annotate(facts, subs, findings)
    findings.sort(key=lambda f: SEVERITY_ORDER[f.severity])
    replays = tuple(s.replay for s in subs if s.replay is not None)
    return tuple(findings), replays
