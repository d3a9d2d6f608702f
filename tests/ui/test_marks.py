"""Marks (space, as in k9s and htop): p probes the marked hosts, f opens the fleet fix on them
(the finding most of them share), ctrl+s reports on them only."""

from __future__ import annotations

from tui.core import locations
from tui.core.hosts import Host
from tui.ui.screens.fleet_fix import FleetFixScreen
from tui.ui.screens.message import MessageScreen
from tui.ui.widgets.fleet_table import MARK, FleetTable

from .conftest import all_probed, make_app, probe_all, settle


async def test_mark_probe_fix_and_export_the_marked_hosts(demo_hosts: tuple[Host, ...]) -> None:
    app = make_app(demo_hosts)
    async with app.run_test(size=(120, 36)) as pilot:
        await probe_all(pilot)
        screen = app.screen
        table = screen.query_one("#hosts-table", FleetTable)
        table.cursor_row = table.row_names.index("ct200")
        await pilot.press("space")  # marks ct200, moves to ct201
        assert table.cursor_name == "ct201"
        await pilot.press("space")
        table.cursor_row = table.row_names.index("h100-node")
        await pilot.press("space", "space")  # h100-node, then the row under it
        assert screen.marked == {"ct200", "ct201", "h100-node", "no-driver"}
        table.cursor_row = table.row_names.index("no-driver")
        await pilot.press("space")  # unmark
        assert screen.marked == {"ct200", "ct201", "h100-node"}
        assert table.render_line(1 + table.row_names.index("ct200")).text.startswith(MARK)
        assert not table.render_line(1 + table.row_names.index("b200-old-driver")).text.startswith(
            MARK
        )
        assert "3 marked" in str(screen.query_one("#hosts-title").render())

        await pilot.press("p")
        await pilot.pause()
        assert {s.name for s in app.fleet if s.busy} == {"ct200", "ct201", "h100-node"}
        await settle(pilot, lambda: all_probed(app))

        await pilot.press("ctrl+s")
        await settle(pilot, lambda: isinstance(app.screen, MessageScreen))
        assert "the 3 marked hosts" in app.screen.body
        report = (locations.state_dir() / "exports" / "20260102T030405-report.md").read_text()
        rows = [ln.split(" | ")[0] for ln in report.splitlines() if ln.startswith("| ")][1:]
        assert sorted(rows) == ["| ct200", "| ct201", "| h100-node"]
        await pilot.press("escape")

        await pilot.press("f")  # the table view: f works on the marked hosts
        await settle(pilot, lambda: isinstance(app.screen, FleetFixScreen))
        fix = app.screen
        assert fix.finding_id == "flashinfer-arch-rejected"
        assert [s.name for s in fix.states] == ["ct200", "ct201", "h100-node"]
