"""Fix routing: fixes, undos, pending restarts, fleet fixes and validation, each to its screen
or worker; fixes left unfinished by an earlier run are offered for undo on start.

Message handlers here follow Textual's naming convention (``_on_<message>``), not ``@on``: only
classes built by Textual's metaclass collect ``@on`` handlers, and this mixin is a plain class.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from tui.core import locations
from tui.core.hosts import Host
from tui.ui.grouping import FindingGroup
from tui.ui.messages import (
    FixRequested,
    PendingRequested,
    RunsFinished,
    UndoRecordRequested,
    UndoRequested,
    ValidateRequested,
    ValidationFinished,
)
from tui.ui.screens.hosts import HostsScreen
from tui.ui.screens.message import MessageScreen

if TYPE_CHECKING:
    from tui.core.run.fix_executor import FixOutcome

# The fix, undo, report and validation modules are imported where first used.


class FixControl:
    """``DetectiveApp``'s fixes (its ``_hosts``, ``fleet``, ``session`` and ``read_only``)."""

    # -- unfinished fixes from an earlier run -----------------------------------------------------
    async def _find_unfinished(self) -> None:
        if not (locations.state_dir() / "fixes").is_dir():  # no fix ever ran here
            return
        from tui.core.fixes.undo import unfinished

        names = list(self._hosts)
        found = await asyncio.to_thread(lambda: [r for n in names for r in unfinished(n)])
        if found:
            from tui.ui.screens.recovery import RecoveryScreen

            self.session.record(
                "fix-unfinished", records=[{"host": r.host, "record": r.id} for r in found]
            )
            self.push_screen(RecoveryScreen(found))

    def _on_undo_record_requested(self, message: UndoRecordRequested) -> None:
        """The recovery screen's undo: the fix wizard with that record's undo plan."""
        from tui.core.fixes import make_stamp
        from tui.core.fixes.undo import UndoError, require_undo_order, undo_plan
        from tui.ui.screens.fix_wizard import FixWizardScreen

        record = message.record
        host = self._hosts.get(record.host)
        if host is None:
            self.notify(f"{record.host} is not in this inventory.", severity="warning")
            return
        try:
            require_undo_order(record)
        except UndoError as exc:
            self.notify(str(exc), severity="error", timeout=15)
            return
        sudo = record.sudo if record.sudo is not None else True
        plan = undo_plan(record, host, sudo=sudo, stamp=make_stamp())
        self.push_screen(
            FixWizardScreen(host, plan, self.session, undoing=record),
            partial(self._fix_closed, record.host),
        )

    # -- fixes, undos, restarts -------------------------------------------------------------------
    def request_fix(
        self, name: str, fix_id: str, params: dict[str, str], python: str | None
    ) -> None:
        self.post_message(FixRequested(name, fix_id, params, python))

    def _on_fix_requested(self, message: FixRequested) -> None:
        if self.read_only:
            self.notify("Read-only mode: fixes are disabled.", severity="warning")
            return
        from tui.core.fixes import FixError, build_plan
        from tui.ui.screens.fix_wizard import FixWizardScreen

        state = self.fleet[message.host]
        if state.facts is None:
            self.notify(f"Probe {message.host} first.", severity="warning")
            return
        try:
            plan = build_plan(
                state.facts, state.host, message.fix_id, message.params, python=message.python
            )
        except FixError as exc:
            self.notify(f"{message.fix_id} on {message.host}: {exc}", severity="error", timeout=10)
            return
        self.session.record(
            "fix-opened", host=message.host, fix=message.fix_id, params=message.params
        )
        self.push_screen(
            FixWizardScreen(state.host, plan, self.session, before=state.facts),
            partial(self._fix_closed, message.host),
        )

    def _fix_closed(self, name: str, outcome: FixOutcome | None) -> None:
        """After an applied fix (or undo), probe again so every screen shows the new verdict."""
        if outcome is not None:
            self._runs_finished(((name, outcome),))
            self.request_probe((name,))

    def _on_runs_finished(self, message: RunsFinished) -> None:
        self._runs_finished(message.outcomes)

    def _runs_finished(self, outcomes: Sequence[tuple[str, FixOutcome | None]]) -> None:
        """The newest run on a host says what it left pending (a restart, or nothing)."""
        from tui.core.run.pending import after_run

        changed = [
            replace(self.fleet[name], pending=after_run(outcome))
            for name, outcome in outcomes
            if outcome is not None and name in self._hosts
        ]
        if changed:
            self.fleet = self.fleet.updated(*changed)

    async def _read_journal(self) -> None:
        """Fixes that were cut or stopped mid-run (a crash, kill -9, a dropped link), marked in
        the table until they are undone or accepted."""
        from tui.core.run.pending import interrupted

        found = await asyncio.to_thread(lambda: {name: interrupted(name) for name in self._hosts})
        changed = [replace(self.fleet[n], pending=w[0]) for n, w in found.items() if w]
        if changed:  # the recovery dialog says so too; the table keeps it in view
            self.fleet = self.fleet.updated(*changed)

    def _on_undo_requested(self, message: UndoRequested) -> None:
        if self.read_only:
            self.notify("Read-only mode: undo is disabled.", severity="warning")
            return
        from tui.ui.screens.undo_marked import UndoMarkedScreen

        hosts = [self._hosts[n] for n in message.hosts if n in self._hosts]
        self.push_screen(UndoMarkedScreen(hosts, self.session))

    def _on_pending_requested(self, message: PendingRequested) -> None:
        """Preview the pending work's plan in the fix wizard: the restart, or the undo of the
        unfinished fix (as the recovery dialog's undo)."""
        if self.read_only:
            self.notify("Read-only mode: restarts and undos are disabled.", severity="warning")
            return
        from tui.core.fixes import make_stamp
        from tui.core.fixes.restart import restart_pending
        from tui.core.fixes.undo import UndoError, load_record
        from tui.ui.screens.fix_wizard import FixWizardScreen

        state = self.fleet[message.host]
        work = state.pending
        if work is None:
            return
        self.session.record("pending-opened", host=state.name, work=work.kind)
        if work.undoes:
            try:
                record = load_record(state.name, work.record or "last")
            except UndoError as exc:
                self.notify(str(exc), severity="error", timeout=10)
                return
            self.post_message(UndoRecordRequested(record))
            return
        plan = restart_pending(state.host, work, state.facts, make_stamp())
        self.push_screen(
            FixWizardScreen(state.host, plan, self.session), partial(self._fix_closed, state.name)
        )

    def open_fleet_fix(self, group: FindingGroup) -> None:
        """The fleet fix screen for a finding group; the hosts are probed again after a run."""
        if self.read_only:
            self.notify("Read-only mode: fixes are disabled.", severity="warning")
            return
        if group.finding_id is None:
            self.notify("This group has no finding to fix.", severity="warning")
            return
        from tui.ui.screens.fleet_fix import FleetFixScreen

        states = [self.fleet[n] for n in group.hosts if n in self._hosts]
        self.push_screen(FleetFixScreen(group.finding_id, group.label, states, self.session))

    def _on_hosts_screen_fleet_fix_requested(self, message: HostsScreen.FleetFixRequested) -> None:
        self.open_fleet_fix(message.group)

    def _on_validate_requested(self, message: ValidateRequested) -> None:
        if self.read_only:
            self.notify("Read-only mode: validation (it compiles on the host) is disabled.")
            return
        host = self._hosts[message.host]
        self.notify(f"Validating FlashInfer's sampling kernels on {host.name}…", timeout=4)
        self.run_worker(
            self._validate(host, message.python),
            name=f"validate {host.name}",
            group="validate",
            exit_on_error=False,
        )

    async def _validate(self, host: Host, python: str | None) -> None:
        from tui.core.run.validate import validate_host

        facts = self.fleet[host.name].facts
        result = await validate_host(self.session, host, facts, python=python)
        self.post_message(ValidationFinished(host.name, result))

    def _on_validation_finished(self, message: ValidationFinished) -> None:
        from tui.core.run.validate_markdown import validation_markdown

        result = message.result
        verdict = getattr(result, "verdict", "error")
        severity = {"pass": "success", "partial": "warning", "skipped": "warning"}.get(
            verdict, "error"
        )
        self.push_screen(
            MessageScreen(
                f"Sampling kernels on {message.host}: {verdict}",
                validation_markdown(result),
                severity=severity,
                markdown=True,
            )
        )
