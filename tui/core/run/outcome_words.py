"""How a run's result is worded: a fix, an undo and a restart say different things.

A fix is judged by what it resolved or brought; an undo by whether the verdict is back to
what it was before the fix (its undo record keeps that); a restart by what the running
service says before and after it. The CLI, the fix wizard and the fleet screens share these.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from tui.core.facts import Facts
from tui.core.fixes.plan import FixPlan
from tui.core.run.fix_executor import FixOutcome

Kind = Literal["fix", "undo", "restart"]
UNDO_PREFIX = "undo:"  # an undo plan's fix_id: "undo:<fix id>"
RESTART_ID = "restart"  # a restart plan's fix_id


def plan_kind(plan: FixPlan) -> Kind:
    if plan.fix_id.startswith(UNDO_PREFIX):
        return "undo"
    if plan.fix_id == RESTART_ID:
        return "restart"
    return "fix"


def run_heading(plan: FixPlan) -> str:
    """``Fix X on H for PY (k=v)`` / ``Undo X on H (record R)`` / ``Restart U on H``."""
    kind = plan_kind(plan)
    if kind == "restart":
        return f"Restart {plan.params.get('units', '')} on {plan.host.name}".replace("  ", " ")
    params = " ".join(f"{k}={v}" for k, v in plan.params.items() if k != "record")
    where = f" for {plan.python}" if plan.python else ""
    if kind == "undo":
        record = plan.params.get("record")
        tail = f" (record {record})" if record else ""
        return f"Undo {plan.fix_id.removeprefix(UNDO_PREFIX)} on {plan.host.name}{where}{tail}"
    return f"Fix {plan.fix_id} on {plan.host.name}{where}" + (f" ({params})" if params else "")


def _ids(ids: Sequence[str]) -> str:
    return ", ".join(ids) or "none"


def _findings(when: str, worst: str | None, ids: Sequence[str]) -> str:
    if not ids:
        return f"{when} none"
    return f"{when} {', '.join(ids)} (worst: {worst})"


def no_reprobe_reason(outcome: FixOutcome) -> str:
    """Why a run has no verdict after it: the host was not probed again, and why not."""
    if outcome.reprobe_error is not None:
        return f"the re-probe failed: {outcome.reprobe_error}"
    if outcome.stopped:
        return "detective-tui was quit before the re-probe; the next probe tells"
    if not outcome.steps:
        return "no step ran, so the host was not probed again"
    return "the host was not probed again"


def undo_restored(outcome: FixOutcome, before_fix: Sequence[str] | None) -> bool | None:
    """After an undo: is the verdict back to the one its record saw before the fix? None
    when that cannot be told: the undo did not apply, no re-probe, or ``before_fix`` unknown."""
    if before_fix is None or not outcome.applied or outcome.facts_after is None:
        return None
    return set(before_fix) == set(outcome.findings_after)


def verdict_lines(outcome: FixOutcome, before_fix: Sequence[str] | None = None) -> list[str]:
    """The verdict part of a run's outcome. ``before_fix``: for an undo, the problems its
    record saw before the fix (None: unknown)."""
    kind = plan_kind(outcome.plan)
    if kind == "restart":
        before = _findings(
            "Running service before the restart:", outcome.worst_before, outcome.findings_before
        )
        if outcome.facts_after is None:
            return [before, f"After the restart: unknown ({no_reprobe_reason(outcome)})"]
        after = _findings(
            "Running service after the restart:", outcome.worst_after, outcome.findings_after
        )
        return [before, after]
    before_label = "Findings before the undo:" if kind == "undo" else "Findings before:"
    after_label = "Findings after the undo: " if kind == "undo" else "Findings after: "
    out = [_findings(before_label, outcome.worst_before, outcome.findings_before)]
    if outcome.facts_after is None:
        out.append(f"{after_label.rstrip()} unknown ({no_reprobe_reason(outcome)})")
        return out
    out.append(_findings(after_label, outcome.worst_after, outcome.findings_after))
    if kind == "undo":
        restored = undo_restored(outcome, before_fix)
        if restored:
            out.append(f"Back to the verdict before the fix: {_ids(before_fix or ())}")
        elif restored is not None:
            out.append(
                f"Not the verdict before the fix: then {_ids(before_fix or ())}, "
                f"now {_ids(outcome.findings_after)}"
            )
        return out
    if outcome.resolved and outcome.applied and outcome.not_running:
        out.append(
            f"Not running now: {', '.join(outcome.not_running)}; gone for its next start, "
            "not seen fixed in a running process: " + ", ".join(outcome.resolved)
        )
    elif outcome.resolved and outcome.applied:
        out.append("Fixed: " + ", ".join(outcome.resolved))
    elif outcome.resolved:
        out.append(
            "Gone now, but NOT fixed — the fix did not complete: " + ", ".join(outcome.resolved)
        )
    if outcome.unresolved:
        out.append("NOT fixed: " + ", ".join(outcome.unresolved))
    if outcome.introduced:
        out.append("NEW problems after the fix: " + ", ".join(outcome.introduced))
    return out


def serving_pids(facts: Facts | None, units: Sequence[str]) -> tuple[str, ...]:
    """The serving processes of ``units`` in a probe: ``pid 4242 sglang.launch_server``."""
    if facts is None:
        return ()
    return tuple(c.label for c in facts.contexts if c.pid is not None and c.unit in units)


def some(items: Sequence[str], shown: int = 3) -> str:
    """``a, b, c +2 more``: a list that stays one readable line."""
    more = f" +{len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(items[:shown]) + more


def still_runs(units: Sequence[str], environment: str) -> str:
    """``sglang.service still runs with the old environment it started with``."""
    verb = "runs" if len(units) == 1 else "run"
    return f"{', '.join(units)} still {verb} with {environment} it started with"


def restart_note(outcome: FixOutcome) -> str | None:
    """Which units (and which of their processes) still run the environment from before this
    run, and what restarts them, if any."""
    units = outcome.pending_restart
    if not units:
        return None
    undo = plan_kind(outcome.plan) == "undo"
    env = "the fixed environment" if undo else "the old environment"
    running = serving_pids(outcome.facts_after, units)
    who = still_runs(units, env)
    if running:
        who = who.replace(" still", f" ({some(running)}) still", 1)
    return f"Restart pending: {who}; the verdict above is for its next start, once restarted."


def status_line(outcome: FixOutcome, before_fix: Sequence[str] | None = None) -> str:
    """One line for the wizard's status bar: what happened, in the words of its kind."""
    kind = plan_kind(outcome.plan)
    if not outcome.applied:
        verb = {"fix": "Stopped", "undo": "Undo stopped", "restart": "Restart stopped"}[kind]
        return f"{verb}: {outcome.error}"
    restart = " Restart (r) so the service starts with it." if outcome.pending_restart else ""
    if kind == "restart":
        units = outcome.plan.params.get("units", "the units")
        if outcome.facts_after is None:
            return f"Restarted {units}; its verdict is unknown: {no_reprobe_reason(outcome)}."
        now = _ids(outcome.findings_after)
        was = _ids(outcome.findings_before)
        return f"Restarted {units}. The running service now: {now} (before the restart: {was})."
    if kind == "undo":
        restored = undo_restored(outcome, before_fix)
        if outcome.facts_after is None:
            back = f"the verdict now is unknown: {no_reprobe_reason(outcome)}"
        elif restored:
            back = f"back to the verdict before the fix ({_ids(before_fix or ())})"
        elif restored is not None:
            back = f"before the fix: {_ids(before_fix or ())}; now: {_ids(outcome.findings_after)}"
        else:
            back = f"now: {_ids(outcome.findings_after)}"
        return f"Undone: {back}.{restart}"
    if outcome.unresolved:
        return "Applied, but these findings remain: " + ", ".join(outcome.unresolved)
    if outcome.introduced:
        return "Applied, but it brought new problems: " + ", ".join(outcome.introduced)
    fixed = f"Fixed: {', '.join(outcome.resolved)}." if outcome.resolved else "Done."
    if outcome.resolved and outcome.not_running:
        fixed = (
            f"Applied, but {', '.join(outcome.not_running)} is not running now: "
            f"{', '.join(outcome.resolved)} gone for its next start only."
        )
    if outcome.pending_restart:
        return fixed + " Restart (r) so the service starts with the new environment."
    return fixed + (" Undo (u) reverses it." if outcome.record else "")
