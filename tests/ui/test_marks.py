"""Marks (space, as in k9s and htop): p probes the marked hosts, f opens the fleet fix on them
(the finding most of them share), ctrl+s reports on them only."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Tree

from tui.core import locations
from tui.core.hosts import Host
from tui.ui.screens.fleet_fix import FleetFixScreen
from tui.ui.screens.message import MessageScreen
from tui.ui.widgets.fleet_table import MARK, FleetTable

from .conftest import all_probed, cursor_on_group, demo_subset, make_app, probe_all, settle

# the hosts these tests mark, one without the finding (no-driver) and one never marked
MARKED = ("ct200", "ct201", "h100-node", "no-driver", "b200-old-driver")


@pytest.fixture
def marked_hosts(demo_cache: Path) -> tuple[Host, ...]:
    """The hosts the tests mark, on the shared trees (these tests change none of them)."""
    return demo_subset(demo_cache, MARKED)


@pytest.fixture
def fleet(tmp_path: Path) -> tuple[Host, ...]:
    """Private trees: the undo test fixes and undoes ct200 and ct201."""
    return demo_subset(tmp_path / "trees", ("ct200", "ct201", "h100-node"))


async def test_mark_probe_fix_and_export_the_marked_hosts(marked_hosts: tuple[Host, ...]) -> None:
    app = make_app(marked_hosts)
    async with app.run_test(size=(120, 36)) as pilot:
        await probe_all(pilot)
        screen = app.screen
        table = screen.query_one("#hosts-table", FleetTable)
        table.cursor_row = table.row_names.index("ct200")
        await pilot.press("space")  # marks ct200, moves to ct201
        assert table.cursor_name == "ct201"
        await pilot.press("space")
        table.cursor_row = table.row_names.index("h100-node")
        await pilot.press("space")
        table.cursor_row = table.row_names.index("no-driver")
        await pilot.press("space")
        assert screen.marked == {"ct200", "ct201", "h100-node", "no-driver"}
        table.cursor_row = table.row_names.index("no-driver")
        await pilot.press("space")  # unmark
        assert screen.marked == {"ct200", "ct201", "h100-node"}
        assert table.render_line(1 + table.row_names.index("ct200")).text.startswith(MARK)
        assert not table.render_line(1 + table.row_names.index("b200-old-driver")).text.startswith(
            MARK
        )
        assert "3 marked" in str(screen.query_one("#hosts-title").render())

        before = {s.name: s.result for s in app.fleet}

        def probed_again() -> set[str]:
            return {s.name for s in app.fleet if s.result is not before[s.name]}

        await pilot.press("p")  # a demo probe can end before the next frame: judge by results
        await settle(pilot, lambda: len(probed_again()) >= 3 and all_probed(app))
        assert probed_again() == {"ct200", "ct201", "h100-node"}

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
        status = str(fix.query_one("#fleet-status").render())  # 2 of the 3 have it
        assert "on the 2 of the 3 host(s) that have it" in status, status


async def test_undo_the_marked_hosts(fleet: tuple[Host, ...]) -> None:
    from textual.widgets import Collapsible, DataTable

    from tui.core.fixes.undo import list_records
    from tui.ui.screens.hosts import HostsScreen
    from tui.ui.screens.undo_marked import UndoMarkedScreen

    app = make_app(fleet)
    async with app.run_test(size=(120, 36)) as pilot:
        await probe_all(pilot)
        table = app.screen.query_one("#hosts-table", FleetTable)
        for name in ("ct200", "ct201", "h100-node"):
            table.cursor_row = table.row_names.index(name)
            await pilot.press("space")
        await pilot.press("f")
        await settle(pilot, lambda: isinstance(app.screen, FleetFixScreen))
        fix = app.screen
        choices = fix.query_one("#fleet-choices", DataTable)
        choices.move_cursor(row=[c.fix_id for c in fix.choices].index("set-flashinfer-arch-list"))
        await pilot.press("enter")
        await settle(pilot, lambda: fix.stage == "preview")
        await pilot.press("a")
        await settle(pilot, lambda: fix.stage == "done" and all_probed(app))
        assert len(list_records("ct200")) == len(list_records("ct201")) == 1
        assert app.fleet["ct200"].pending is not None  # the fix left the restart pending
        await pilot.press("escape")
        await settle(pilot, lambda: isinstance(app.screen, HostsScreen))

        await pilot.press("u")  # the three marked hosts
        await settle(pilot, lambda: isinstance(app.screen, UndoMarkedScreen))
        undo = app.screen
        await settle(pilot, lambda: undo.stage == "preview")
        titles = [str(c.title) for c in undo.query(Collapsible)]
        assert [t.split(":")[0] for t in titles] == ["ct200", "ct201"]
        assert "set-flashinfer-arch-list" in titles[0]
        reasons = [str(w.render()) for w in undo.query("#undo-preview > Static")]
        assert any(r.startswith("h100-node: nothing to undo") for r in reasons), reasons
        await pilot.press("a")
        await settle(pilot, lambda: undo.stage == "done" and all_probed(app))
        assert {r.item.host.name: r.status for r in undo.results} == {
            "ct200": "undone",
            "ct201": "undone",
            "h100-node": "skipped",
        }
        assert list_records("ct200") == list_records("ct201") == []
        # undone before any restart: the service never had it, nothing is pending any more
        assert app.fleet["ct200"].pending is None


async def test_space_in_the_groups_view_marks_the_group(marked_hosts: tuple[Host, ...]) -> None:
    """space on a group marks all its hosts (the README's promise); the group stays open."""
    app = make_app(marked_hosts)
    async with app.run_test(size=(120, 36)) as pilot:
        group = await cursor_on_group(pilot, "flashinfer-arch-rejected", {"ct200", "ct201"})
        screen = app.screen
        tree = screen.query_one("#groups-tree", Tree)
        node = tree.cursor_node
        assert node is not None
        expanded = node.is_expanded
        await pilot.press("space")
        assert screen.marked == frozenset(group.hosts)
        assert tree.cursor_node is node and node.is_expanded == expanded
        await pilot.press("space")
        assert screen.marked == frozenset()
