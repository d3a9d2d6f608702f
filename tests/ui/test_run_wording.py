"""Undo and restart results are worded as what they are, not as fixes: an undo is judged by
whether the verdict is back to what it was before the fix, a restart by the running
service before and after it — on ct201 of a private demo fleet, through the real probe."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from tui.core.hosts import Host
from tui.ui.screens.fix_wizard import FixWizardScreen
from tui.ui.screens.fleet_fix import FleetFixScreen
from tui.ui.screens.host import HostScreen

from .conftest import all_probed, cursor_on_group, demo_subset, make_app, probe_all, settle


@pytest.fixture
def fleet(tmp_path: Path) -> tuple[Host, ...]:
    """A private demo fleet of only the hosts these tests need:
    ct201, ct200 (the other host of its group) and a healthy host."""
    return demo_subset(tmp_path / "trees", ("ct200", "ct201", "h100-node"))


FIX = "use-installed-toolkit"


def _status(wizard: FixWizardScreen) -> str:
    return str(wizard.query_one("#fix-status", Static).render())


def _verdict(wizard: FixWizardScreen) -> str:
    return str(wizard.query_one("#fix-verdict-text", Static).render())


async def _run(pilot, wizard: FixWizardScreen, key: str, kind: str) -> None:
    await pilot.press(key)
    if key != "a":
        await pilot.press("a")
    await settle(
        pilot,
        lambda: (
            wizard.stage in ("done", "failed")
            and wizard.outcome is not None
            and wizard.outcome.plan.fix_id.split(":")[0] == kind
        ),
    )


async def test_wizard_words_fix_restart_undo_and_restart(fleet: tuple[Host, ...]) -> None:
    app = make_app(fleet)
    async with app.run_test(size=(160, 45)) as pilot:
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

        await _run(pilot, wizard, "a", FIX)
        assert _status(wizard).startswith("Fixed: flashinfer-arch-rejected")

        await _run(pilot, wizard, "r", "restart")
        status, verdict = _status(wizard), _verdict(wizard)
        assert status.startswith("Restarted sglang.service. The running service now: none")
        assert "before the restart: flashinfer-arch-rejected" in status
        assert verdict.startswith("Restart sglang.service on ct201")
        assert "Running service before the restart: flashinfer-arch-rejected" in verdict
        assert "Findings before: none" not in verdict

        await _run(pilot, wizard, "u", "undo")
        status, verdict = _status(wizard), _verdict(wizard)
        assert "new problems" not in status.lower() and "Applied" not in status
        assert status.startswith("Undone: back to the verdict before the fix")
        assert "Restart (r)" in status
        assert verdict.startswith(f"Undo {FIX} on ct201")
        assert "NEW problems" not in verdict
        assert "Back to the verdict before the fix: flashinfer-arch-rejected" in verdict
        assert (
            "sglang.service (pid 4242 sglang.launch_server) still runs with the fixed " in verdict
        )

        await _run(pilot, wizard, "r", "restart")
        status = _status(wizard)
        assert status.startswith("Restarted sglang.service. The running service now: flashinfer")
        assert "(before the restart: none)" in status


async def test_fleet_restart_after_undo_reads_restarted(fleet: tuple[Host, ...]) -> None:
    app = make_app(fleet)
    async with app.run_test(size=(160, 45)) as pilot:
        await cursor_on_group(pilot, "flashinfer-arch-rejected", {"ct200", "ct201"})
        await pilot.press("f")
        await settle(pilot, lambda: isinstance(app.screen, FleetFixScreen))
        screen = app.screen
        table = screen.query_one("#fleet-choices", DataTable)
        table.move_cursor(row=[c.fix_id for c in screen.choices].index(FIX))

        async def step(key: str) -> None:
            await pilot.press(key)
            await settle(pilot, lambda: screen.stage == "preview")
            await pilot.press("a")
            await settle(pilot, lambda: screen.stage == "done" and all_probed(app))

        await step("enter")
        await step("r")
        assert {r.item.host.name: r.status for r in screen.results} == {"ct201": "restarted"}
        await step("u")
        await step("r")
        (result,) = screen.results
        assert result.status == "restarted", result.detail
        assert "running service now: flashinfer-arch-rejected" in result.detail
        assert "new:" not in result.detail
        assert "not fixed" not in str(screen.query_one("#fleet-status", Static).render())
