"""Pending work per host: after a fix without its restart, the hosts table says "restart
pending" (not just red) and R previews and runs the restart; a fix the journal says never
finished is shown as "fix interrupted"."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from textual.widgets import DataTable

from tui.core import locations
from tui.core.hosts import Host
from tui.core.run import pending
from tui.ui.screens.fix_wizard import FixWizardScreen
from tui.ui.screens.host import HostScreen
from tui.ui.screens.hosts import HostsScreen
from tui.ui.screens.message import MessageScreen
from tui.ui.widgets.fleet_table import FleetTable

from .conftest import demo_subset, make_app, probe_all, settle


@pytest.fixture
def fleet(tmp_path: Path) -> tuple[Host, ...]:
    """A private demo fleet of only the hosts these tests need:
    ct200, ct201 and a healthy host."""
    return demo_subset(tmp_path / "trees", ("ct200", "ct201", "h100-node"))


FIX = "use-installed-toolkit"


async def test_restart_pending_is_shown_and_one_key_runs_it(fleet: tuple[Host, ...]) -> None:
    app = make_app(fleet)
    async with app.run_test(size=(120, 36)) as pilot:
        await probe_all(pilot)
        app.open_host("ct201")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        await pilot.press("w")
        fixes = app.screen.query_one("#fixes", DataTable)
        ids = [str(fixes.get_row_at(i)[0]) for i in range(fixes.row_count)]
        fixes.move_cursor(row=ids.index(FIX))
        await pilot.press("f")
        await settle(pilot, lambda: isinstance(app.screen, FixWizardScreen))
        wizard = app.screen
        await pilot.press("a")
        await settle(pilot, lambda: wizard.stage == "done")
        assert wizard.restart_units == ("sglang.service",)
        await pilot.press("escape")  # closed without the restart
        await settle(
            pilot, lambda: isinstance(app.screen, HostScreen) and not app.fleet["ct201"].busy
        )
        await pilot.press("escape")
        await settle(pilot, lambda: isinstance(app.screen, HostsScreen))

        work = app.fleet["ct201"].pending
        assert work is not None and work.kind == "restart" and work.units == ("sglang.service",)
        table = app.screen.query_one("#hosts-table", FleetTable)
        assert table.cell("ct201", "status") == "restart pending"
        assert table.cell("ct201", "reason").startswith(
            "restart sglang.service (R): it still runs with the old environment it started with"
        )
        columns = [k for k, _ in table.columns]
        assert "yellow" in str(table._cells["ct201"][columns.index("status")].style)
        assert table.cell("ct200", "status") != "restart pending"

        table.cursor_row = table.row_names.index("ct201")
        await pilot.press("R")
        await settle(pilot, lambda: isinstance(app.screen, FixWizardScreen))
        wizard = app.screen
        assert wizard.plan.fix_id == "restart"  # previewed, nothing ran yet
        await pilot.press("a")
        await settle(pilot, lambda: wizard.stage == "done")
        await pilot.press("escape")
        await settle(
            pilot,
            lambda: isinstance(app.screen, HostsScreen) and not app.fleet["ct201"].busy,
        )
        assert app.fleet["ct201"].pending is None
        assert app.fleet["ct201"].diagnosis.worst() != "critical"
        assert table.cell("ct201", "status") != "restart pending"

        # the saved report lists what was done in the session
        await pilot.press("ctrl+s")
        await settle(pilot, lambda: isinstance(app.screen, MessageScreen))
        report = (locations.state_dir() / "exports" / "20260102T030405-report.md").read_text()
        actions = report[
            report.index("## Actions taken") : report.index(
                "## ", report.index("## Actions taken") + 3
            )
        ]
        assert "**ct201**: fix `use-installed-toolkit`" in actions
        assert "restart pending: sglang.service" in actions
        assert "**ct201**: restart sglang.service — running service now:" in actions


def test_interrupted_fixes_come_from_the_journal(monkeypatch: pytest.MonkeyPatch) -> None:
    records = [
        SimpleNamespace(
            id="r2", fix_id="set-flashinfer-arch-list", failed_with_changes=False, step_at=None
        )
    ]
    monkeypatch.setattr(pending.undo, "unfinished", lambda host: records)
    (work,) = pending.interrupted("ct200")
    assert (work.kind, work.record, work.label) == ("interrupted", "r2", "fix interrupted")
    assert "set-flashinfer-arch-list stopped before it finished" in work.detail


async def test_a_failed_fix_that_may_have_changed_something_is_pending(
    fleet: tuple[Host, ...],
) -> None:
    """A fix that FAILED after a step that may have changed something shows as "fix failed"
    (not "probed just now"), R previews its undo, and a new session finds it in the journal."""
    import dataclasses
    from functools import partial

    from tui.core.fixes import build_plan

    app = make_app(fleet)
    async with app.run_test(size=(120, 36)) as pilot:
        await probe_all(pilot)
        state = app.fleet["ct200"]
        venv = next(p for p in state.facts.pythons if p.flashinfer_version)
        # facts from before the probe looked for pip: the pip install runs, and fails
        older = dataclasses.replace(
            state.facts,
            pythons=tuple(dataclasses.replace(p, has_pip=None) for p in state.facts.pythons),
        )
        plan = build_plan(older, state.host, "install-cuda-toolkit-pip", {}, venv.path)
        wizard = FixWizardScreen(state.host, plan, app.session, before=older)
        app.push_screen(wizard, partial(app._fix_closed, "ct200"))
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot, lambda: wizard.stage == "failed")
        record = wizard.record
        assert record is not None  # the failed step may have changed something
        await pilot.press("escape")
        await settle(
            pilot, lambda: isinstance(app.screen, HostsScreen) and not app.fleet["ct200"].busy
        )
        work = app.fleet["ct200"].pending
        assert work is not None and (work.kind, work.record) == ("failed", record)
        table = app.screen.query_one("#hosts-table", FleetTable)
        assert table.cell("ct200", "status") == "fix failed"
        reason = table.cell("ct200", "reason")
        assert reason.startswith("install-cuda-toolkit-pip failed at step 1 of ")
        assert "may have changed something; R undoes it" in reason
        table.cursor_row = table.row_names.index("ct200")
        await pilot.press("R")
        await settle(pilot, lambda: isinstance(app.screen, FixWizardScreen))
        assert app.screen.plan.fix_id == "undo:install-cuda-toolkit-pip"  # previewed only

    (found,) = pending.interrupted("ct200")  # the next session reads it from the journal
    assert (found.kind, found.record, found.label) == ("failed", record, "fix failed")
