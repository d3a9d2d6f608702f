"""The smaller things an all-day user trips over: the groups view starts with a cursor, keys
that are off say why, the palette lists each command once and calls demo hosts demo hosts,
and ctrl+s shows where it saved."""

from __future__ import annotations

from textual.widgets import Tree

from tui.core import locations
from tui.core.hosts import Host
from tui.ui.palette import FleetCommands
from tui.ui.screens.fleet_fix import FleetFixScreen
from tui.ui.screens.host import HostScreen
from tui.ui.screens.message import MessageScreen

from .conftest import make_app, probe_all, settle


async def test_group_view_starts_on_a_group_to_fix(reference_hosts: tuple[Host, ...]) -> None:
    app = make_app(reference_hosts)
    async with app.run_test(size=(120, 36)) as pilot:
        await probe_all(pilot)
        await pilot.press("g")
        await pilot.pause()
        node = app.screen.query_one("#groups-tree", Tree).cursor_node
        assert node is not None and node.data.finding_id is not None
        await pilot.press("f")
        await settle(pilot, lambda: isinstance(app.screen, FleetFixScreen))
        assert app.screen.finding_id == node.data.finding_id


async def test_keys_that_are_off_say_why(reference_hosts: tuple[Host, ...]) -> None:
    app = make_app(reference_hosts, read_only=True)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await probe_all(pilot)
        app.clear_notifications()
        await pilot.press("f")  # the table view: a group fix needs a group
        await pilot.pause()
        assert "Read-only mode" in list(app._notifications)[-1].message
        app.open_host("ct200")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        shells: list[str] = []
        app.open_shell = shells.append  # type: ignore[method-assign]
        for key in ("f", "v", "S"):
            app.clear_notifications()
            await pilot.press(key)
            await pilot.pause()
            assert [n.message for n in app._notifications] == [
                "Read-only mode (--read-only): fixes, validation and shells are off."
            ], key
        app.pop_screen()
        await pilot.pause()
        app.clear_notifications()
        await pilot.press("S")  # the hosts table: no shell either
        await pilot.pause()
        assert [n.message for n in app._notifications] == [
            "Read-only mode (--read-only): no shell on a host."
        ]
        assert shells == []


async def test_palette_lists_each_command_once(demo_hosts: tuple[Host, ...]) -> None:
    app = make_app(demo_hosts)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        commands = FleetCommands(app.screen)._all()
        system = [c.title for c in app.get_system_commands(app.screen)]
        titles = [t for t, _, _ in commands] + system
        bare = [t.rsplit(" (", 1)[0] for t in titles]
        assert len(bare) == len(set(bare)), sorted(b for b in bare if bare.count(b) > 1)
        helps = {t: h for t, h, _ in commands}
        assert helps["Reverse (r)"] == "Reverse the sort order"
        assert helps["Open host ct200"].startswith("demo (simulated)")
        assert "Help (?)" in helps and "Filter (/)" in helps


async def test_save_session_shows_where(reference_hosts: tuple[Host, ...]) -> None:
    app = make_app(reference_hosts)
    async with app.run_test(size=(80, 24)) as pilot:
        await probe_all(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot, lambda: isinstance(app.screen, MessageScreen))
        report = locations.state_dir() / "exports" / "20260102T030405-report.md"
        assert app.screen.title_text == "Session saved"
        assert str(report) in app.screen.body and report.is_file()
        assert "session.jsonl" in app.screen.body


async def test_f_on_a_host_row_opens_the_fix_of_its_top_finding(
    reference_hosts: tuple[Host, ...],
) -> None:
    from tui.ui.screens.fix_wizard import FixWizardScreen
    from tui.ui.widgets.fleet_table import FleetTable

    app = make_app(reference_hosts)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await probe_all(pilot)
        table = app.screen.query_one("#hosts-table", FleetTable)
        table.cursor_row = table.row_names.index("ct200")
        await pilot.press("f")
        await settle(pilot, lambda: isinstance(app.screen, FixWizardScreen))
        top = next(f for f in app.fleet["ct200"].diagnosis.findings if f.fixes)
        assert (app.screen.host.name, app.screen.plan.fix_id) == ("ct200", top.fixes[0].id)
        await pilot.press("escape")
        await settle(pilot, lambda: not isinstance(app.screen, FixWizardScreen))
        table.cursor_row = table.row_names.index("h100-node")  # healthy: says so
        app.clear_notifications()
        await pilot.press("f")
        await pilot.pause()
        assert list(app._notifications)[-1].message == (
            "Nothing to fix on h100-node: no finding proposes one."
        )
