"""The write-ahead fix journal: intent before each step, outcome after, on disk before acting.

A fix run's journal is its undo record (``tui.core.fixes.undo``), version 2, in
``$XDG_STATE_HOME/detective-tui/fixes/<host>/<stamp>-<fix>.json``:

1. before the first step, the whole plan is written: every step's exact command, its undo,
   what it may change, status ``pending``; the run holds ``<id>.lock`` (``flock``) until it ends;
2. before each step: that step ``running`` (its undo is then already in the record's undo
   list, so a ``kill -9`` during the step leaves an undoable record);
3. after each step: ``changed`` / ``unchanged`` / ``done``, or ``unknown`` when it failed or
   was cut (it may have changed what it says), or ``not-run`` (sudo refused, never connected);
4. at the end: ``done``, ``failed`` or ``stopped`` (the TUI was quit: the rest ``not-run``). A
   run the journal proves changed nothing is moved aside (``.nochange``): nothing to undo.

Every write is temp + fsync + rename + fsync of the directory (``tui.core.durable``); a write
that fails (full disk) stops the run before the next step. A record left ``running`` whose
lock nobody holds was cut: the next run shows it. Undoing a record journals into the same file
(``undo_run``) and moves it aside (``.undone``) when the undo applied. Each write is also a
``fix-journal`` event in the session transcript.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from tui.core import durable
from tui.core.fixes.plan import FixPlan
from tui.core.fixes.undo import (
    UNDO_STATUSES,
    UndoError,
    UndoRecord,
    UndoRun,
    load_record,
    lock_path,
    mark_undone,
    new_record,
    records_dir,
    undo_steps_of,
)

EventSink = Callable[..., None]  # Session.record


class JournalError(Exception):
    """The journal cannot be written (or the record is busy): nothing more may run."""


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class FixJournal:
    """The journal of one fix run on one host (see the module docstring)."""

    def __init__(self, record: UndoRecord, lock: durable.RunLock, event: EventSink) -> None:
        self.record = record
        self._lock = lock
        self._event = event

    @classmethod
    def open(cls, plan: FixPlan, findings_before: tuple[str, ...], event: EventSink) -> FixJournal:
        """Reserve a record id, take its lock and write the plan, durably; every step pending."""
        directory = records_dir(plan.host.name)
        base = f"{plan.stamp}-{plan.fix_id}"
        try:
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            n = 1
            while True:
                record_id = base if n == 1 else f"{base}-{n}"
                path = directory / f"{record_id}.json"
                taken = any(path.with_suffix(s).exists() for s in (".json", ".undone", ".nochange"))
                lock = None if taken else durable.RunLock.create(lock_path(directory, record_id))
                if lock is not None:
                    break
                n += 1
        except OSError as exc:
            raise JournalError(
                f"cannot write the fix journal in {directory}: {exc.strerror or exc}"
            ) from exc
        record = replace(
            new_record(plan, record_id, path, now()),
            findings_before=findings_before,
            pid=os.getpid(),
            live=True,
        )
        journal = cls(record, lock, event)
        try:
            journal._write(step=None)
        except JournalError:
            lock.release()
            raise
        return journal

    @property
    def path(self) -> Path:
        return self.record.path

    def _write(self, step: int | None) -> None:
        r = self.record
        r = self.record = replace(r, steps=undo_steps_of(r.journal), updated=now())
        try:
            durable.write_json(r.path, r.to_json())
        except durable.DurableWriteError as exc:
            raise JournalError(f"cannot write the fix journal: {exc}") from exc
        entry = r.journal[step - 1] if step else None
        self._event(
            "fix-journal",
            host=r.host,
            fix=r.fix_id,
            record=r.id,
            path=str(r.path),
            state=r.state,
            step=step,
            status=entry.status if entry else None,
            title=entry.title if entry else None,
            may_change=entry.changes if entry else None,
        )

    def _set(self, index: int, **changes: object) -> None:
        journal = list(self.record.journal)
        journal[index - 1] = replace(journal[index - 1], **changes)  # type: ignore[arg-type]
        self.record = replace(self.record, journal=tuple(journal))

    def started(self, index: int) -> None:
        """The intent: step ``index`` is about to run (durable before it does)."""
        self._set(index, status="running", started=now())
        self._write(index)

    def finished(
        self,
        index: int,
        status: str,
        *,
        exit_status: int | None = None,
        error: str | None = None,
        reports: tuple[str, ...] = (),
    ) -> None:
        self._set(
            index,
            status=status,
            finished=now(),
            exit_status=exit_status,
            error=error,
            reports=reports,
        )
        self._write(index)

    def not_run(self, indices: list[int], why: str) -> None:
        for index in indices:
            self._set(index, status="not-run", error=why)
        if indices:
            self._write(indices[0])

    @property
    def changed_anything(self) -> bool:
        return any(s.status in UNDO_STATUSES for s in self.record.journal)

    def close(self, state: str, error: str | None) -> str | None:
        """Write the end state and release the lock. Returns the record id when there is
        something to undo; a run the journal proves changed nothing is moved aside."""
        self.record = replace(self.record, state=state, error=error, live=False)
        try:
            self._write(step=None)
            if not self.changed_anything:
                durable.move_durably(self.path, self.path.with_suffix(".nochange"))
                return None
            return self.record.id
        except OSError as exc:
            raise JournalError(f"cannot write the fix journal {self.path}: {exc}") from exc
        finally:
            self._lock.release()


class UndoJournal:
    """The journal of an undo: in the record it undoes (``undo_run``), under its lock."""

    def __init__(self, record: UndoRecord, lock: durable.RunLock, event: EventSink) -> None:
        self.record = record
        self._lock = lock
        self._event = event

    @classmethod
    def open(cls, record: UndoRecord, plan: FixPlan, event: EventSink) -> UndoJournal:
        lock = durable.RunLock.take(record.lock_path)
        if lock is None:
            raise JournalError(
                f"{record.id} on {record.host} is being worked on by another detective-tui "
                f"(pid {record.pid}); wait for it to end, then look at fix {record.host} --history"
            )
        try:
            fresh = load_record(record.host, str(record.path))
        except UndoError as exc:
            lock.release()
            raise JournalError(str(exc)) from exc
        run = UndoRun(
            state="running", started=now(), steps=tuple((s.title, "pending") for s in plan.steps)
        )
        journal = cls(replace(fresh, undo_run=run, live=True), lock, event)
        try:
            journal._write(step=None)
        except JournalError:
            lock.release()
            raise
        return journal

    def _write(self, step: int | None) -> None:
        r = self.record
        assert r.undo_run is not None
        try:
            durable.write_json(r.path, r.to_json())
        except durable.DurableWriteError as exc:
            raise JournalError(f"cannot write the undo journal: {exc}") from exc
        self._event(
            "fix-journal",
            host=r.host,
            fix=f"undo:{r.fix_id}",
            record=r.id,
            path=str(r.path),
            state=r.undo_run.state,
            step=step,
            status=r.undo_run.steps[step - 1][1] if step else None,
            title=r.undo_run.steps[step - 1][0] if step else None,
        )

    def _set(self, index: int, status: str, **changes: object) -> None:
        run = self.record.undo_run
        assert run is not None
        steps = list(run.steps)
        steps[index - 1] = (steps[index - 1][0], status)
        self.record = replace(
            self.record,
            undo_run=replace(run, steps=tuple(steps), **changes),  # type: ignore[arg-type]
        )

    def started(self, index: int) -> None:
        self._set(index, "running")
        self._write(index)

    def finished(
        self,
        index: int,
        status: str,
        *,
        exit_status: int | None = None,
        error: str | None = None,
        reports: tuple[str, ...] = (),
    ) -> None:
        self._set(index, status)
        self._write(index)

    def not_run(self, indices: list[int], why: str) -> None:
        for index in indices:
            self._set(index, "not-run")
        if indices:
            self._write(indices[0])

    def close(self, state: str, error: str | None) -> str | None:
        """An undo that applied moves the record aside (``.undone``); otherwise the record
        keeps ``undo_run`` with where it stopped, and ``--undo`` runs it again."""
        run = self.record.undo_run
        assert run is not None
        self.record = replace(self.record, undo_run=replace(run, state=state, error=error))
        try:
            self._write(step=None)
            if state == "done":
                mark_undone(self.record)
            return None
        except OSError as exc:
            raise JournalError(f"cannot write the undo journal {self.record.path}: {exc}") from exc
        finally:
            self._lock.release()


Journal = FixJournal | UndoJournal
