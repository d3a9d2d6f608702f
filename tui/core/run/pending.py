"""Work left to do on a host: a restart the last fix (or undo) left pending, or a fix that was
started and never finished.

A restart is pending when the newest run on the host changed a systemd unit whose running
service still has the environment from before (``FixOutcome.pending_restart``); the next
run on the host replaces it. An interrupted fix comes from the fix journal, read only through
``tui.core.fixes.undo.unfinished`` (cut or stopped mid-run, not yet undone or accepted).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tui.core.fixes import undo
from tui.core.run.fix_executor import FixOutcome
from tui.core.run.outcome_words import UNDO_PREFIX

Kind = Literal["restart", "interrupted", "failed"]  # failed: and may have changed something


@dataclass(frozen=True)
class PendingWork:
    kind: Kind
    units: tuple[str, ...] = ()  # restart: the units still running the old environment
    fix_id: str | None = None  # the run (restart) or the fix (interrupted, failed) it comes from
    record: str | None = None  # interrupted, failed: the journal/undo record id
    step: str = ""  # failed: " at step 2 of 3"
    sudo: bool = False  # the run went through sudo (so does the restart)

    @property
    def label(self) -> str:
        """A few words for the hosts table's Status column."""
        return {"restart": "restart pending", "failed": "fix failed"}.get(
            self.kind, "fix interrupted"
        )

    @property
    def undoes(self) -> bool:
        """Its work is the undo of a journal record (interrupted or failed), not a restart."""
        return self.kind != "restart"

    @property
    def detail(self) -> str:
        """One line for the Reason column and the detail pane."""
        if self.kind == "restart":
            units = ", ".join(self.units)
            return f"restart {units} (R): it still runs with the old environment it started with"
        if self.kind == "failed":
            return (
                f"{self.fix_id or 'a fix'} failed{self.step} and may have changed something; "
                f"R undoes it (record {self.record})"
            )
        return f"{self.fix_id or 'a fix'} stopped before it finished (record {self.record})"


def after_run(outcome: FixOutcome) -> PendingWork | None:
    """The restart a run left pending, or the undo of a run that failed after changing (or
    maybe changing) something; None: nothing left to do."""
    fix_id = outcome.plan.fix_id
    if (
        not outcome.applied
        and outcome.record is not None
        and fix_id != "restart"
        and not fix_id.startswith(UNDO_PREFIX)
    ):
        failed = next((i for i, s in enumerate(outcome.steps, 1) if s.status == "failed"), None)
        step = f" at step {failed} of {len(outcome.plan.steps)}" if failed else ""
        return PendingWork("failed", fix_id=fix_id, record=outcome.record, step=step)
    if not outcome.applied or not outcome.pending_restart:
        return None
    return PendingWork(
        "restart",
        units=outcome.pending_restart,
        fix_id=outcome.plan.fix_id,
        sudo=outcome.plan.sudo,
    )


def interrupted(host_name: str) -> tuple[PendingWork, ...]:
    """Fixes the journal says were cut or stopped mid-run on the host, newest first (an
    unreadable record is left to ``fix --history`` to report)."""
    try:
        records = undo.unfinished(host_name)
    except OSError:
        return ()
    return tuple(
        PendingWork(
            "failed" if r.failed_with_changes else "interrupted",
            fix_id=r.fix_id,
            record=r.id,
            step=f" at step {r.step_at} of {len(r.journal)}" if r.step_at else "",
        )
        for r in records
    )
