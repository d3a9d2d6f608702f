"""A fix cannot change the shell detective-tui was started from.

On ``local`` the probe judges the caller's own environment (the "current" context). A fix
that edits the venv's ``activate`` or the login profile changes what the next activation or
login gets, never a shell that is already running; judging it in the current environment
would report "NOT fixed" for a change that is right. So such a change is verified in the
context it applies to (the venv activated afresh, a fresh login shell), and the operator is
told where the old value comes from and what to run in the current shell.
"""

from __future__ import annotations

import dataclasses
import shlex

from tui.core.facts import EnvContext, Facts
from tui.core.fixes.plan import FixPlan

CURRENT = "current"


def _current(facts: Facts) -> EnvContext | None:
    return next((c for c in facts.contexts if c.kind == CURRENT), None)


def applies_elsewhere(plan: FixPlan, activate: EnvContext | None) -> bool:
    """Does ``plan`` change an environment other than the current shell: the venv's
    ``activate`` (read on the host as ``activate``) or the login profile?"""
    return activate is not None or plan.profile


def in_changed_context(facts: Facts, plan: FixPlan, activate: EnvContext | None) -> Facts:
    """``facts`` without the current shell's context when the change applies elsewhere, so
    the interpreter is judged where the change applies (the activated venv, a login shell)."""
    if _current(facts) is None or not applies_elsewhere(plan, activate):
        return facts
    kept = tuple(c for c in facts.contexts if c.kind != CURRENT)
    return dataclasses.replace(facts, contexts=kept)


def _login(facts: Facts, activate: EnvContext | None) -> EnvContext | None:
    skip = activate.label if activate is not None else None
    return next((c for c in facts.contexts if c.kind == "login" and c.label != skip), None)


def current_shell_lines(
    live: Facts, plan: FixPlan, activate: EnvContext | None, judged_after: Facts
) -> tuple[str, ...]:
    """Where the current shell's value of each variable the fix sets comes from, the context
    the change was verified in, and what to run in the current shell; empty when the current
    shell already has what the fix sets, or the fix applies to it (no venv, no profile)."""
    current = _current(live)
    if current is None or not applies_elsewhere(plan, activate):
        return ()
    verified = (
        judged_after.context(activate.label) if activate is not None else _login(judged_after, None)
    )
    if verified is None:
        return ()
    keys = [k for k in plan.env_keys if current.vars.get(k) != verified.vars.get(k)]
    if not keys:
        return ()
    login = _login(live, activate)
    out = []
    for k in keys:
        old = current.vars.get(k)
        if k == "PATH" or old is None:
            continue
        by_login = login.vars.get(k) if login is not None else None
        if by_login == old:
            also = "a login shell has it too"
        else:
            also = f"a login shell has {k}={by_login}" if by_login else "a login shell has none"
        out.append(
            f"{k}={old} comes from the shell detective-tui was started from ({also}); "
            "no fix can change a shell that is already running."
        )
    where = (
        f"the venv activated afresh ({plan.activate})"
        if activate is not None
        else "a fresh login shell"
    )
    out.append(f"Verified in {where}, where the change applies.")
    if activate is not None and plan.activate:
        run = f". {shlex.quote(plan.activate)}"
    else:
        run = 'exec "$SHELL" -l'
    exports = " ".join(f"{k}={shlex.quote(verified.vars[k])}" for k in keys if k in verified.vars)
    tail = f" (or: export {exports})" if exports else ""
    out.append(f"In the current shell, run: {run}{tail}")
    return tuple(out)
