"""``diagnose(facts)``: findings (most severe first, each with what-if-checked fixes) and the
FlashInfer replays, for one host."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tui.core.facts import Facts
from tui.core.findings import SEVERITY_ORDER, Finding, FlashInferReplay, Severity
from tui.core.fixes import FixError, build_plan
from tui.core.hosts import Host
from tui.core.rules import evaluate
from tui.core.whatif import plan_fixes

PLAN_STAMP = "diagnosis"  # plans built for preview only; `fix` builds its own with a real stamp


@dataclass(frozen=True)
class Diagnosis:
    findings: tuple[Finding, ...]
    flashinfer: tuple[FlashInferReplay, ...]

    def worst(self) -> Severity | None:
        if not self.findings:
            return None
        return min((f.severity for f in self.findings), key=lambda s: SEVERITY_ORDER[s])

    def finding(self, finding_id: str, python: str | None = None) -> Finding | None:
        for f in self.findings:
            if f.id == finding_id and (python is None or f.python == python):
                return f
        return None


def diagnose(facts: Facts, host: Host | None = None) -> Diagnosis:
    """Pure: the same facts give the same diagnosis. With ``host``, each fix carries the exact
    commands the fix engine would run there (and is dropped if the engine cannot plan it)."""
    findings, replays = evaluate(facts)
    commands = None
    if host is not None:

        def commands(
            f: Facts, fix_id: str, params: Mapping[str, str], python: str | None
        ) -> tuple[bool, tuple[str, ...]] | None:
            try:
                plan = build_plan(f, host, fix_id, params, python, stamp=PLAN_STAMP)
            except FixError:
                return None
            return plan.needs_root, plan.preview_commands()

    return Diagnosis(plan_fixes(facts, findings, commands), replays)
