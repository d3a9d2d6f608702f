"""Plain-text views of undo records and their journals, shared by the CLI and the TUI."""

from __future__ import annotations

import shlex

from tui.core.fixes.undo import UndoRecord

STEP_WORDS = {
    "pending": "not started yet",
    "running": "running now",
    "changed": "changed",
    "unchanged": "nothing to do",
    "done": "done",
    "unknown": "UNKNOWN — may have changed",
    "not-run": "not run",
}


def record_line(r: UndoRecord) -> str:
    """``ID  CREATED  FIX PARAMS  (N step(s) to undo)``, plus the state when not done."""
    params = " ".join(f"{k}={v}" for k, v in r.params.items())
    state = r.state_text()
    tail = "" if state == "done" else f"  [{state}]"
    return f"{r.id}  {r.created}  {r.fix_id} {params}  ({len(r.steps)} step(s) to undo){tail}"


def journal_lines(r: UndoRecord, indent: str = "  ") -> list[str]:
    """Each journaled step: status, what it reported, what it may change, why it stopped."""
    out = []
    for s in r.effective_journal():
        line = f"{indent}{s.step}. {s.title}: {STEP_WORDS.get(s.status, s.status)}"
        if s.reports:
            line += " — " + "; ".join(s.reports)
        out.append(line)
        if s.status in ("unknown", "running"):
            out.append(f"{indent}   may have changed: {s.changes}")
        if s.error and s.status != "not-run":
            out.append(f"{indent}   {s.error}")
    if r.undo_run is not None and r.undo_run.state != "done":
        steps = ", ".join(f"{t}: {STEP_WORDS.get(s, s)}" for t, s in r.undo_run.steps)
        out.append(f"{indent}undo started {r.undo_run.started}: {steps}")
    return out


def commands(r: UndoRecord) -> dict[str, str]:
    """The CLI commands that inspect, undo and accept this record."""
    host = shlex.quote(r.host)
    return {
        "inspect": f"detective-tui fix {host} --history",
        "undo": f"detective-tui fix {host} --undo {r.id}",
        "mark done": f"detective-tui fix {host} --mark-done {r.id}",
    }


def unfinished_notice(r: UndoRecord) -> str:
    """``fix X on HOST was interrupted at step 2 of 3`` and what to do about it."""
    total = len(r.journal)
    at = r.step_at
    where = f" at step {at} of {total}" if at is not None else ""
    if r.undo_interrupted:
        what = f"the undo of fix {r.fix_id} on {r.host} was interrupted"
    elif r.state == "stopped":
        before = f" before step {at} of {total}" if at is not None else ""
        what = f"fix {r.fix_id} on {r.host} was stopped{before} when detective-tui was quit"
    elif r.state == "failed":
        what = f"fix {r.fix_id} on {r.host} FAILED{where} and may have changed something"
    else:
        what = f"fix {r.fix_id} on {r.host} was interrupted{where}"
    undo = len(r.steps)
    lines = [f"{what} ({r.id}); {undo} step(s) may need undoing."]
    lines += [f"  {k}: {v}" for k, v in commands(r).items()]
    return "\n".join(lines)
