"""The `local` target's own environment against a login shell's.

For ``local`` the probe runs in detective-tui's own environment — an activated conda env,
``module load cuda``, an exported ``CUDA_HOME``/``PATH`` — which is where the user's next
command runs, so interpreters are judged in it (serving processes and units still first).
Where a login shell (a new terminal, cron, a service started from it) would resolve the JIT
toolkit differently, this says so: an ``info`` ``toolkit-shadowed`` finding, and a line of
evidence on every finding judged in the current environment.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from tui.core.facts import EnvContext, Facts
from tui.core.findings import Finding
from tui.core.rulekit import finding
from tui.core.subject import subject_in, toolkit_identity

if TYPE_CHECKING:
    from tui.core.subject import Subject

FINDING_ID = "toolkit-shadowed"


def _contexts(facts: Facts) -> tuple[EnvContext | None, EnvContext | None]:
    current = next((c for c in facts.contexts if c.kind == "current"), None)
    login = next((c for c in facts.contexts if c.kind == "login"), None)
    return current, login


def _describe(s: Subject) -> str:
    tk = s.jit_toolkit
    version = f"CUDA {tk.version}" if tk is not None and tk.version else "no usable toolkit"
    return f"{s.jit_origin} → {version}"


def login_difference(facts: Facts, s: Subject) -> tuple[Subject, str] | None:
    """(the login shell's view, in words) when it resolves the JIT toolkit otherwise."""
    current, login = _contexts(facts)
    if current is None or login is None or s.context is not current:
        return None
    other = subject_in(facts, s.python, login)
    mine, theirs = s.jit_toolkit, other.jit_toolkit
    same = (mine is None and theirs is None) or (
        mine is not None
        and theirs is not None
        and toolkit_identity(mine) == toolkit_identity(theirs)
    )
    if same:
        return None
    return other, f"a login shell resolves {_describe(other)} instead of {_describe(s)}"


def rule_current_vs_login(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    seen: set[str | None] = set()
    for s in subs:
        found = login_difference(facts, s)
        key = s.python.path if s.python else None
        if found is None or key in seen:
            continue
        seen.add(key)
        other, words = found
        yield finding(
            FINDING_ID,
            "info",
            "Your current environment and a login shell use different CUDA toolkits",
            f"In this environment (where your next command runs) the JIT toolkit comes from "
            f"{_describe(s)}; {words.split(' instead of ')[0]}. What you run from this shell "
            "is judged above; a new terminal, cron, or a service started from a login shell "
            "gets the other one — make the setting permanent (profile, module file, the "
            "service's unit) if that is the one you want.",
            [f"current environment: {_describe(s)}", f"login shell: {_describe(other)}"],
            s,
        )


def annotate(facts: Facts, subs: Sequence[Subject], findings: Sequence[Finding]) -> list[Finding]:
    """Findings judged in the current environment get a line saying what a login shell does."""
    notes: dict[str | None, str] = {}
    for s in subs:
        found = login_difference(facts, s)
        if found is not None:
            notes[s.python.path if s.python else None] = found[1]
    return [
        dataclasses.replace(f, evidence=(*f.evidence, notes[f.python]))
        if f.python in notes and f.id != FINDING_ID and f.severity != "info"
        else f
        for f in findings
    ]
