"""Undo records: what a fix changed on a host and the exact commands that reverse it.

One JSON file per applied fix under ``$XDG_STATE_HOME/detective-tui/fixes/<host>/``. Only
steps that reported a change are recorded, newest step first, so undoing never touches
what a guard found already in place.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui.core import locations
from tui.core.fixes.plan import FixPlan, Step
from tui.core.hosts import Host

if TYPE_CHECKING:
    from tui.core.fixes.executor import StepResult

RECORD_VERSION = 1


class UndoError(Exception):
    """No such undo record, or it cannot be read; the message says which and where."""


@dataclass(frozen=True)
class UndoStep:
    title: str
    command: str  # the raw undo command (sudo is added by the plan, as for the fix)
    needs_root: bool


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
        }


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", name) or "_"


def records_dir(host_name: str) -> Path:
    return locations.state_dir() / "fixes" / _safe(host_name)


def save_record(
    plan: FixPlan, results: Sequence[StepResult], findings_before: Sequence[str]
) -> str:
    """Persist the undo of every changed step; returns the record id."""
    steps = tuple(
        UndoStep(title=r.step.title, command=r.step.undo, needs_root=r.step.needs_root)
        for r in reversed(results)
        if r.status == "changed" and r.step.undo is not None
    )
    record_id = f"{plan.stamp}-{plan.fix_id}"
    directory = records_dir(plan.host.name)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{record_id}.json"
    n = 1
    while path.exists():
        n += 1
        record_id = f"{plan.stamp}-{plan.fix_id}-{n}"
        path = directory / f"{record_id}.json"
    record = UndoRecord(
        id=record_id,
        host=plan.host.name,
        fix_id=plan.fix_id,
        params=dict(plan.params),
        python=plan.python,
        created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        steps=steps,
        units=plan.units,
        contexts=plan.contexts,
        activate=plan.activate,
        profile=plan.profile,
        env_keys=plan.env_keys,
        exec_units=plan.exec_units,
        findings_before=tuple(findings_before),
        path=path,
    )
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record.to_json(), indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return record_id


def _load(path: Path) -> UndoRecord:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return UndoRecord(
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
        )
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise UndoError(f"{path}: not a readable undo record ({e})") from e


def list_records(host_name: str) -> list[UndoRecord]:
    """Undo records of a host, newest first (undone ones are moved aside and not listed)."""
    directory = records_dir(host_name)
    if not directory.is_dir():
        return []
    return [_load(p) for p in sorted(directory.glob("*.json"), reverse=True)]


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
    record.path.replace(target)
    return target
