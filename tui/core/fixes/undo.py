"""Undo records: what a fix changed (or may have changed) on a host and how to reverse it.

One JSON file per fix run under ``$XDG_STATE_HOME/detective-tui/fixes/<host>/``. Since
version 2 the record is also the fix's write-ahead journal (``tui.core.records.fix_journal``): it
is written before the first step runs and after every step, and holds each step's exact
command, its undo, what it may change and its outcome. ``steps`` is always the list of undo
commands to run, newest first: steps that reported a change, and steps that failed or were cut
(``unknown``: they may have changed something, and every undo command checks the host's state
before acting). Version 1 records (``steps`` only) are read as before.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tui.core import durable, locations
from tui.core.fixes.plan import STEP_DEADLINE_S, FixPlan, Step
from tui.core.hosts import Host

RECORD_VERSION = 2

# Journal step statuses. ``pending``/``running`` are what a live run writes; read back from a
# run that is no longer alive, ``running`` means cut mid-step (``unknown``) and ``pending``
# means never started.
UNDO_STATUSES = ("changed", "unknown", "running")  # may have changed: reversed by undo
FINAL_STATES = ("done", "failed", "stopped")


class UndoError(Exception):
    """No such undo record, or it cannot be read; the message says which and where."""


@dataclass(frozen=True)
class UndoStep:
    title: str
    command: str  # the raw undo command (sudo is added by the plan, as for the fix)
    needs_root: bool
    deadline_s: float = STEP_DEADLINE_S  # the step's own: a pip undo reinstalls for as long


@dataclass(frozen=True)
class JournalStep:
    """One step of a fix as the journal holds it: intent first, outcome after."""

    step: int  # 1-based
    title: str
    command: str  # exactly as run (sudo-wrapped where needed)
    undo: str | None
    needs_root: bool
    changes: str  # what it may change, in words (files, backups, packages)
    deadline_s: float
    status: str = "pending"  # pending running changed unchanged done unknown not-run
    started: str | None = None
    finished: str | None = None
    exit_status: int | None = None
    error: str | None = None
    reports: tuple[str, ...] = ()  # what it said it changed / left alone

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "title": self.title,
            "command": self.command,
            "undo": self.undo,
            "needs_root": self.needs_root,
            "changes": self.changes,
            "deadline_s": self.deadline_s,
            "status": self.status,
            "started": self.started,
            "finished": self.finished,
            "exit_status": self.exit_status,
            "error": self.error,
            "reports": list(self.reports),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> JournalStep:
        return cls(
            step=int(data["step"]),
            title=data["title"],
            command=data["command"],
            undo=data.get("undo"),
            needs_root=bool(data["needs_root"]),
            changes=data.get("changes", ""),
            deadline_s=float(data.get("deadline_s", 0)),
            status=data["status"],
            started=data.get("started"),
            finished=data.get("finished"),
            exit_status=data.get("exit_status"),
            error=data.get("error"),
            reports=tuple(data.get("reports", ())),
        )


@dataclass(frozen=True)
class UndoRun:
    """An undo of this record in progress or ended without success."""

    state: str  # running, failed, stopped
    started: str
    steps: tuple[tuple[str, str], ...]  # (title, status)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "started": self.started,
            "steps": [{"title": t, "status": s} for t, s in self.steps],
            "error": self.error,
        }


@dataclass(frozen=True)
class UndoRecord:
    id: str
    host: str
    fix_id: str
    params: dict[str, str]
    python: str | None
    created: str
    steps: tuple[UndoStep, ...]
    units: tuple[str, ...]
    contexts: tuple[str, ...]
    activate: str | None
    profile: bool
    env_keys: tuple[str, ...]
    exec_units: tuple[str, ...]
    findings_before: tuple[str, ...]  # the verdict before the fix, to compare after undo
    path: Path
    # the journal (version 2); a version 1 record is a finished fix with no journal
    state: str = "done"  # running (or cut, when not live), done, failed, stopped
    journal: tuple[JournalStep, ...] = ()
    error: str | None = None
    pid: int | None = None
    sudo: bool | None = None
    updated: str | None = None
    marked_done: str | None = None  # the user accepted an unfinished fix as it is
    undo_run: UndoRun | None = None
    live: bool = field(default=False, compare=False)  # a process works on it right now

    @property
    def lock_path(self) -> Path:
        return lock_path(self.path.parent, self.id)

    @property
    def interrupted(self) -> bool:
        """The process running the fix died mid-run (kill -9, a closed laptop, a crash)."""
        return self.state == "running" and not self.live

    @property
    def undo_interrupted(self) -> bool:
        return self.undo_run is not None and self.undo_run.state == "running" and not self.live

    @property
    def failed_with_changes(self) -> bool:
        """The run failed after a step that changed or may have changed something (a failed
        first step that never started leaves no undo steps)."""
        return self.state == "failed" and bool(self.steps)

    @property
    def needs_attention(self) -> bool:
        """Cut, stopped or failed mid-run (and may have changed something), not yet undone or
        accepted: shown on the next run."""
        if self.marked_done:
            return self.undo_interrupted
        return (
            self.interrupted
            or self.state == "stopped"
            or self.failed_with_changes
            or self.undo_interrupted
        )

    @property
    def step_at(self) -> int | None:
        """The step the run ended at: the first that did not finish cleanly."""
        for s in self.journal:
            if s.status in ("running", "unknown", "pending", "not-run"):
                return s.step
        return None

    def effective_journal(self) -> tuple[JournalStep, ...]:
        """The journal as the truth stands now: a step a dead run left ``running`` is
        ``unknown`` (it may have changed what it says), ``pending`` is ``not-run``."""
        if self.live or self.state != "running":
            return self.journal
        cut = {"running": "unknown", "pending": "not-run"}
        return tuple(
            replace(s, status=cut[s.status], error=s.error or _cut_reason(s.status))
            if s.status in cut
            else s
            for s in self.journal
        )

    def state_text(self) -> str:
        """One phrase: done / interrupted at step 2 of 3 / failed at … / undo interrupted …"""
        total = len(self.journal)
        at = self.step_at
        where = f" at step {at} of {total}" if at is not None else ""
        if self.undo_run is not None and self.undo_run.state != "done":
            undo_state = "interrupted" if self.undo_interrupted else self.undo_run.state
            if self.undo_run.state == "running" and self.live:
                undo_state = "running now"
            return f"undo {undo_state}; run --undo again"
        if self.state == "running":
            text = f"running now{where} (pid {self.pid})" if self.live else f"INTERRUPTED{where}"
        elif self.state == "failed":
            text = f"FAILED{where}"
        elif self.state == "stopped":
            text = f"STOPPED before step {at} of {total} (detective-tui was quit)"
        else:
            text = "done"
        if self.marked_done and self.state != "done":
            text += f", marked done {self.marked_done}"
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "version": RECORD_VERSION,
            "id": self.id,
            "host": self.host,
            "fix": self.fix_id,
            "params": self.params,
            "python": self.python,
            "created": self.created,
            "steps": [
                {"title": s.title, "command": s.command, "needs_root": s.needs_root}
                for s in self.steps
            ],
            "units": list(self.units),
            "contexts": list(self.contexts),
            "activate": self.activate,
            "profile": self.profile,
            "env_keys": list(self.env_keys),
            "exec_units": list(self.exec_units),
            "findings_before": list(self.findings_before),
            "state": self.state,
            "error": self.error,
            "pid": self.pid,
            "sudo": self.sudo,
            "updated": self.updated,
            "marked_done": self.marked_done,
            "undo_run": self.undo_run.to_json() if self.undo_run else None,
            "journal": [s.to_json() for s in self.journal],
        }

    def summary_json(self) -> dict[str, Any]:
        """``to_json`` plus what a reader needs without reading the journal itself."""
        return {
            **self.to_json(),
            "live": self.live,
            "interrupted": self.interrupted,
            "needs_attention": self.needs_attention,
            "state_text": self.state_text(),
            "journal": [s.to_json() for s in self.effective_journal()],
        }


def _cut_reason(status: str) -> str:
    if status == "running":
        return "cut mid-step: the process running the fix stopped before the step reported"
    return "never started: the process running the fix stopped first"


def undo_steps_of(journal: Sequence[JournalStep]) -> tuple[UndoStep, ...]:
    """What undo runs, newest first: every step that changed or may have changed something."""
    return tuple(
        UndoStep(
            title=s.title,
            command=s.undo,
            needs_root=s.needs_root,
            deadline_s=s.deadline_s or STEP_DEADLINE_S,
        )
        for s in reversed(journal)
        if s.status in UNDO_STATUSES and s.undo is not None
    )


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", name) or "_"


def records_dir(host_name: str) -> Path:
    return locations.state_dir() / "fixes" / _safe(host_name)


def lock_path(directory: Path, record_id: str) -> Path:
    return directory / f"{record_id}.lock"


def new_record(plan: FixPlan, record_id: str, path: Path, created: str) -> UndoRecord:
    """The record of a run about to start: every step pending."""
    journal = tuple(
        JournalStep(
            step=i,
            title=s.title,
            command=plan.effective_command(s),
            undo=s.undo,
            needs_root=s.needs_root,
            changes=s.changes,
            deadline_s=s.deadline_s,
        )
        for i, s in enumerate(plan.steps, 1)
    )
    return UndoRecord(
        id=record_id,
        host=plan.host.name,
        fix_id=plan.fix_id,
        params=dict(plan.params),
        python=plan.python,
        created=created,
        steps=(),
        units=plan.units,
        contexts=plan.contexts,
        activate=plan.activate,
        profile=plan.profile,
        env_keys=plan.env_keys,
        exec_units=plan.exec_units,
        findings_before=(),
        path=path,
        state="running",
        journal=journal,
        sudo=plan.sudo,
        updated=created,
    )


def _load(path: Path) -> UndoRecord:
    try:
        data = _read(path)
        journal = tuple(JournalStep.from_json(s) for s in data.get("journal") or ())
        undo_run = data.get("undo_run")
        record = UndoRecord(
            id=data["id"],
            host=data["host"],
            fix_id=data["fix"],
            params=dict(data["params"]),
            python=data.get("python"),
            created=data["created"],
            steps=tuple(
                UndoStep(s["title"], s["command"], bool(s["needs_root"])) for s in data["steps"]
            ),
            units=tuple(data.get("units", ())),
            contexts=tuple(data.get("contexts", ())),
            activate=data.get("activate"),
            profile=bool(data.get("profile", False)),
            env_keys=tuple(data.get("env_keys", ())),
            exec_units=tuple(data.get("exec_units", ())),
            findings_before=tuple(data.get("findings_before", ())),
            path=path,
            state=data.get("state", "done"),
            journal=journal,
            error=data.get("error"),
            pid=data.get("pid"),
            sudo=data.get("sudo"),
            updated=data.get("updated"),
            marked_done=data.get("marked_done"),
            undo_run=UndoRun(
                state=undo_run["state"],
                started=undo_run["started"],
                steps=tuple((s["title"], s["status"]) for s in undo_run["steps"]),
                error=undo_run.get("error"),
            )
            if undo_run
            else None,
            live=durable.is_held(lock_path(path.parent, data["id"])),
        )
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise UndoError(f"{path}: not a readable undo record ({e})") from e
    if journal:  # the undo list follows the journal, as the truth stands now
        record = replace(record, steps=undo_steps_of(record.effective_journal()))
    return record


def _read(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return data


def list_records(host_name: str) -> list[UndoRecord]:
    """Undo records of a host, newest first (undone ones are moved aside and not listed)."""
    directory = records_dir(host_name)
    if not directory.is_dir():
        return []
    return [_load(p) for p in sorted(directory.glob("*.json"), reverse=True)]


def unfinished(host_name: str) -> list[UndoRecord]:
    """The records of ``host_name`` a person must decide about (cut or stopped mid-run);
    unreadable records are left to ``--history`` to report."""
    try:
        return [r for r in list_records(host_name) if r.needs_attention]
    except UndoError:
        return []


def load_record(host_name: str, ref: str) -> UndoRecord:
    """``ref`` is ``last``, a record id from ``--history``, or a path to a record file."""
    if ref == "last":
        records = list_records(host_name)
        if not records:
            raise UndoError(f"no fix to undo on {host_name} (nothing in {records_dir(host_name)})")
        return records[0]
    candidate = Path(ref)
    if candidate.suffix == ".json" and candidate.is_file():
        return _load(candidate)
    path = records_dir(host_name) / f"{ref}.json"
    if not path.is_file():
        known = ", ".join(r.id for r in list_records(host_name)) or "none"
        raise UndoError(f"no undo record {ref!r} for {host_name} (records: {known})")
    return _load(path)


def undo_plan(record: UndoRecord, host: Host, *, sudo: bool, stamp: str) -> FixPlan:
    """A plan whose steps are the record's undo commands (already newest first)."""
    steps = tuple(
        Step(
            title=f"Undo: {s.title}",
            command=s.command,
            undo=None,
            changes=f"reverses “{s.title}”",
            needs_root=s.needs_root,
            deadline_s=s.deadline_s,
        )
        for s in record.steps
    )
    notes = tuple(
        f"{u} keeps the fixed environment until it restarts (systemctl restart {u})."
        for u in record.units
    )
    return FixPlan(
        fix_id=f"undo:{record.fix_id}",
        host=host,
        params={"record": record.id},
        steps=steps,
        verify_gone=(),
        notes=notes,
        python=record.python,
        sudo=sudo,
        contexts=record.contexts,
        units=record.units,
        activate=record.activate,
        profile=record.profile,
        env_keys=record.env_keys,
        exec_units=record.exec_units,
        stamp=stamp,
    )


def mark_undone(record: UndoRecord) -> Path:
    """Move the record aside (``.undone``) so ``last`` means the newest fix still in place."""
    target = record.path.with_suffix(".undone")
    durable.move_durably(record.path, target)
    return target


def mark_done(record: UndoRecord, when: str) -> UndoRecord:
    """The user accepts an unfinished fix as it is: no longer shown as interrupted; it stays
    undoable (its undo covers every step that may have changed something)."""
    if record.live:
        raise UndoError(f"{record.id} on {record.host} is running now (pid {record.pid})")
    done = replace(record, marked_done=when)
    try:
        durable.write_json(record.path, done.to_json())
    except durable.DurableWriteError as exc:
        raise UndoError(str(exc)) from exc
    return done


def _shared(record: UndoRecord, other: UndoRecord) -> list[str]:
    """What ``other`` changed that ``record`` changed too: the same activate script or login
    profile (each fix's block, and its backup, in one file), or the same unit's environment
    variables or ExecStart (the same drop-in)."""
    shared = []
    if record.activate is not None and record.activate == other.activate:
        shared.append(record.activate)
    if record.profile and other.profile:
        shared.append("the login profile")
    if set(record.env_keys) & set(other.env_keys):
        shared += [f"{u}'s drop-in" for u in record.units if u in other.units]
    shared += [f"{u}'s ExecStart" for u in record.exec_units if u in other.exec_units]
    return shared


def require_undo_order(record: UndoRecord) -> None:
    """Refuse (``UndoError``) to undo ``record`` while a later fix still in place changed the
    same file: restoring this fix's backup would remove the later fix's block too, and undoing
    the later one afterwards would bring this one back. The message says which to undo first."""
    later: list[tuple[UndoRecord, list[str]]] = []
    for other in list_records(record.host):  # newest first
        if other.id == record.id:
            break
        shared = _shared(record, other)
        if shared:
            later.append((other, shared))
    if not later:
        return
    listed = "; ".join(f"{o.id} ({o.fix_id}: {', '.join(s)})" for o, s in later)
    first = later[-1][0] if len(later) == 1 else later[0][0]
    raise UndoError(
        f"{record.id} ({record.fix_id}) on {record.host} cannot be undone before the later "
        f"fix(es) that changed the same files: {listed}. Undo them first, newest first "
        f"(fix {record.host} --undo {first.id}), then this one; nothing was changed"
    )
