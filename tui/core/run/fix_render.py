"""Plain-text views of plans and outcomes, shared by the CLI and the fix wizard."""

from __future__ import annotations

from collections.abc import Sequence

from tui.core.fixes.plan import FixPlan
from tui.core.run.fix_executor import FixOutcome
from tui.core.run.outcome_words import restart_note, run_heading, verdict_lines

STATUS_WORDS = {
    "changed": "changed",
    "unchanged": "nothing to do",
    "done": "done",
    "failed": "FAILED",
    "not-run": "not run",
}


def plan_heading(plan: FixPlan) -> str:
    return run_heading(plan)


def preview_text(plan: FixPlan, *, heading: bool = True) -> str:
    """The plan as the user confirms it: every exact command, what it changes, its undo."""
    out = [plan_heading(plan)] if heading else []
    if plan.needs_root:
        out.append(
            "Needs root: root steps run through `sudo -n`."
            if plan.sudo
            else "Needs root (you are)."
        )
    for i, step in enumerate(plan.steps, 1):
        root = "  [root]" if step.needs_root else ""
        out += [
            "",
            f"Step {i}/{len(plan.steps)}: {step.title}{root}",
            f"  changes: {step.changes}",
            "  command:",
            plan.effective_command(step),
        ]
        if step.undo is not None:
            out += ["  undo:", step.undo]
    if plan.verify_gone:
        out += ["", "After a re-probe these findings must be gone: " + ", ".join(plan.verify_gone)]
    if plan.notes:
        out += ["", "Notes:", *(f"  - {n}" for n in plan.notes)]
    return "\n".join(out).strip("\n")


def changed_lines(outcome: FixOutcome) -> list[str]:
    """What the run changed, what it may have changed (a step that failed or was cut after it
    started), and "Nothing was changed." only when every step proves it. Silent for a run
    that completed."""
    if not outcome.error:
        return []
    changed, uncertain = outcome.changed, outcome.uncertain
    out = []
    if changed:
        out.append("Changed so far: " + "; ".join(s.step.changes for s in changed))
    for s in uncertain:
        said = f" (it reported: {'; '.join(s.changed_flags)})" if s.changed_flags else ""
        out.append(f"May have changed — {s.step.title} did not finish{said}: {s.step.changes}")
    if outcome.nothing_changed:
        out.append("Nothing was changed.")
    return out


def outcome_text(outcome: FixOutcome, before_fix: Sequence[str] | None = None) -> str:
    """Per step result, before/after per changed environment, the verdict, and how to undo.
    ``before_fix``: for an undo, the problems its record saw before the fix."""
    plan = outcome.plan
    out = [plan_heading(plan)]
    for i, s in enumerate(outcome.steps, 1):
        word = STATUS_WORDS[s.status]
        if s.status == "failed":
            word += " (never started)" if s.untouched else " (may have changed something)"
        line = f"  {i}. {s.step.title}: {word}"
        if s.reports:
            line += " — " + "; ".join(s.reports)
        out.append(line)
    if outcome.error:
        out += ["", f"Stopped: {outcome.error}"]
    out += changed_lines(outcome)
    for c in outcome.contexts:
        out += ["", f"{c.label}:"]
        for k in sorted(set(c.before) | set(c.after)):
            before, after = c.before.get(k, "(unset)"), c.after.get(k, "(unset)")
            out.append(f"  {k}: {before}" + (f"  →  {after}" if after != before else "  (same)"))
        if c.verdict_before or c.verdict_after:
            out.append(f"  before: {c.verdict_before or '?'}")
            out.append(f"  after:  {c.verdict_after or '?'}")
    out.append("")
    out += verdict_lines(outcome, before_fix)
    for problem in outcome.unit_problems:
        out.append(f"Will NOT start: {problem}")
    note = restart_note(outcome)
    if note:
        out.append(note)
    out += outcome.current_shell
    if outcome.record:
        demo = " --demo" if plan.host.demo else ""
        out.append(f"Undo: detective-tui fix {plan.host.name} --undo {outcome.record}{demo}")
    return "\n".join(out)
