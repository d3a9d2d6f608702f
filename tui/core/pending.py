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
from tui.core.fixes.executor import FixOutcome

Kind = Literal["restart", "interrupted"]


@dataclass(frozen=True)
class PendingWork:
    kind: Kind
    units: tuple[str, ...] = ()  # restart: the units still running the old environment
    fix_id: str | None = None  # the run (restart) or the fix (interrupted) it comes from
    record: str | None = None  # interrupted: the journal/undo record id
    sudo: bool = False  # the run went through sudo (so does the restart)

    @property
    def label(self) -> str:
        """A few words for the hosts table's Status column."""
        return "restart pending" if self.kind == "restart" else "fix interrupted"

    @property
    def detail(self) -> str:
        """One line for the Reason column and the detail pane."""
        if self.kind == "restart":
            return f"restart {', '.join(self.units)}: it still runs the old environment"
        return f"{self.fix_id or 'a fix'} stopped before it finished (record {self.record})"


def after_run(outcome: FixOutcome) -> PendingWork | None:
    """The restart a run left pending (None: nothing left to restart)."""
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
    return tuple(PendingWork("interrupted", fix_id=r.fix_id, record=r.id) for r in records)
