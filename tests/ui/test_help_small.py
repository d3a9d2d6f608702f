"""Help at 80x24: every row can be reached with the keys, and it lists the keys of the hosts
table (enter), the fix wizard and the fleet fix (a, u, r)."""

from __future__ import annotations

from textual.widgets import DataTable

from tui.core.hosts import Host
from tui.ui.screens.help import HelpScreen

from .conftest import make_app, settle


def _rows(table: DataTable) -> list[tuple[str, str, str]]:
    return [tuple(str(c) for c in table.get_row_at(i)) for i in range(table.row_count)]


async def test_help_scrolls_to_every_row_at_80x24(demo_hosts: tuple[Host, ...]) -> None:
    app = make_app(demo_hosts)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await settle(pilot, lambda: isinstance(app.screen, HelpScreen))
        table = app.screen.query_one("#help-keys", DataTable)
        assert table.has_focus
        rows = _rows(table)
        keys = {(where, key) for where, key, _ in rows}
        assert ("Hosts", "enter") in keys, sorted(keys)
        for key in ("a", "u", "r"):
            assert ("Fix wizard", key) in keys and ("Fleet fix", key) in keys
        for key in ("v", "o", "w", "e"):
            assert ("Host", key) in keys
        assert table.max_scroll_y > 0  # more rows than fit: they must be reachable
        await pilot.press(*["down"] * len(rows))
        await pilot.pause()
        assert table.cursor_row == len(rows) - 1
        assert table.scroll_y == table.max_scroll_y
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_read_only_help_has_no_fix_keys(demo_hosts: tuple[Host, ...]) -> None:
    app = make_app(demo_hosts, read_only=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await settle(pilot, lambda: isinstance(app.screen, HelpScreen))
        rows = _rows(app.screen.query_one("#help-keys", DataTable))
        wheres = {where for where, _, _ in rows}
        assert "Fix wizard" not in wheres and "Fleet fix" not in wheres
        assert ("Hosts", "enter", "Open host") in rows
