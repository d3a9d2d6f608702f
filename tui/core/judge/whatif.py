"""What-if: simulate a fix on a copy of the facts, re-run the rules, see what it resolves.

``apply_fix`` returns the facts as the fix would leave the host — including the serving
process's environment after its restart, since that is where FlashInfer reads ``CUDA_HOME``.
``plan_fixes`` proposes, for each finding, its record's candidate fixes with the parameters
each fix's record tries on the host, keeps those whose simulation really makes the finding go
away (``resolves`` is computed, never written by hand) and orders them least invasive first
(each ``Fix`` record of ``tui.core.fixes.registry``: its simulation, choices, title, order).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

from packaging.version import InvalidVersion, Version

from tui.core.facts import Facts
from tui.core.findings import Finding, FixSuggestion
from tui.core.findings.registry import FINDINGS
from tui.core.fixes.registry import BY_ID as FIXES
from tui.core.fixes.simulate import python_env, touched
from tui.core.rules.evaluate import evaluate

# which fixes can help with which finding (the what-if decides whether they really do), and
# the follow-ups added after one that does: each finding record's ``fixes``/``follow_ups``
CANDIDATES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {f.id: f.fixes for f in FINDINGS if f.fixes}
)
FOLLOW_UPS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {f.id: f.follow_ups for f in FINDINGS if f.follow_ups}
)

PlanCommands = Callable[
    [Facts, str, Mapping[str, str], "str | None"], "tuple[bool, tuple[str, ...]] | None"
]


def apply_fix(
    facts: Facts, fix_id: str, params: Mapping[str, str], python: str | None = None
) -> Facts:
    """The facts as ``fix_id`` with ``params`` would leave the host (servers restarted)."""
    fix = FIXES.get(fix_id)
    if fix is None:
        raise ValueError(f"unknown fix {fix_id!r}")
    py = python_env(facts, python)
    return fix.simulate(facts, params, py, touched(facts, py))


# -- proposing fixes -------------------------------------------------------------------------


def _problems(findings: Sequence[Finding]) -> set[tuple[str, str | None]]:
    return {(f.id, f.python) for f in findings if f.severity in ("critical", "warning")}


def _criticals(findings: Sequence[Finding]) -> set[tuple[str, str | None]]:
    return {(f.id, f.python) for f in findings if f.severity == "critical"}


class _Planner:
    def __init__(self, facts: Facts, findings: Sequence[Finding], commands: PlanCommands | None):
        self.facts = facts
        self.before = _problems(findings)
        self.before_critical = _criticals(findings)
        self.commands = commands
        self._after: dict[tuple, tuple[Finding, ...]] = {}

    def after(
        self, fix_id: str, params: Mapping[str, str], python: str | None
    ) -> tuple[Finding, ...]:
        key = (fix_id, tuple(sorted(params.items())), python)
        if key not in self._after:
            fixed = apply_fix(self.facts, fix_id, params, python)
            self._after[key] = evaluate(fixed)[0]
        return self._after[key]

    def resolves(
        self, fix_id: str, params: Mapping[str, str], python: str | None
    ) -> tuple[str, ...] | None:
        """Finding ids the fix makes go away; ``None`` when it brings a new critical one."""
        after = self.after(fix_id, params, python)
        if _criticals(after) - self.before_critical:
            return None
        remaining = _problems(after)
        gone = [fid for fid, py in sorted(self.before) if (fid, py) not in remaining]
        return tuple(dict.fromkeys(gone))

    # the proposal ------------------------------------------------------------------------

    def suggestion(
        self, fix_id: str, params: Mapping[str, str], python: str | None, resolves: tuple[str, ...]
    ) -> FixSuggestion | None:
        needs_root, commands = FIXES[fix_id].needs_root, ()
        if self.commands is not None:
            planned = self.commands(self.facts, fix_id, params, python)
            if planned is None:
                return None  # the fix engine cannot do it on this host
            needs_root, commands = planned
        return FixSuggestion(
            id=fix_id,
            title=FIXES[fix_id].title(self.facts, params, python),
            params=params,
            resolves=resolves,
            needs_root=needs_root,
            commands=commands,
        )

    def fixes_for(self, finding: Finding) -> tuple[FixSuggestion, ...]:
        if finding.severity == "info":
            return ()
        python = finding.python
        out: list[FixSuggestion] = []
        for fix_id in CANDIDATES.get(finding.id, ()):
            ranked: list[tuple[tuple, dict[str, str], tuple[str, ...]]] = []
            for params in FIXES[fix_id].choices(self.facts, python):
                resolves = self.resolves(fix_id, params, python)
                if resolves is None or finding.id not in resolves:
                    continue
                left = self.after(fix_id, params, python)
                score = (
                    len(_criticals(left)),
                    len(_problems(left)),
                    -len(resolves),
                    -_version_key(self.facts, params.get("path")),
                )
                ranked.append((score, params, resolves))
            if ranked:
                _score, params, resolves = min(ranked, key=lambda r: r[0])
                made = self.suggestion(fix_id, params, python, resolves)
                if made is not None:
                    out.append(made)
        for follow_up in FOLLOW_UPS.get(finding.id, ()) if out else ():
            for params in FIXES[follow_up].choices(self.facts, python):
                made = self.suggestion(follow_up, params, python, ())
                if made is not None:
                    out.append(made)
        out.sort(key=lambda f: FIXES[f.id].order)
        return tuple(out)


def _version_key(facts: Facts, home: str | None) -> float:
    tk = facts.toolkit_at(home) if home else None
    try:
        v = Version(tk.version) if tk and tk.version else None
    except InvalidVersion:
        v = None
    return v.major * 1000 + v.minor if v else 0


def plan_fixes(
    facts: Facts, findings: Sequence[Finding], commands: PlanCommands | None = None
) -> tuple[Finding, ...]:
    """``findings`` with their fixes filled in (see the module docstring)."""
    planner = _Planner(facts, findings, commands)
    return tuple(dataclasses.replace(f, fixes=planner.fixes_for(f)) for f in findings)
