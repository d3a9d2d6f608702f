"""Help is context-first and whole at 80x24 (issue 22 item 23): the keys of the screen it
was opened on come first, then the keys that work everywhere, then the other screens'; its
space line says what the README says (p, f, u and ctrl+s act on the marked hosts)."""

from __future__ import annotations

from textual.widgets import DataTable

from tui.core.hosts import Host
from tui.ui.screens.help import HelpScreen
from tui.ui.screens.host import HostScreen

from .conftest import make_app, settle


def _wheres(app) -> list[str]:
    table = app.screen.query_one("#help-keys", DataTable)
    wheres = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
    return list(dict.fromkeys(wheres))


def _action(app, where: str, key: str) -> str:
    table = app.screen.query_one("#help-keys", DataTable)
    rows = [tuple(str(c) for c in table.get_row_at(i)) for i in range(table.row_count)]
    return next(a for w, k, a in rows if (w, k) == (where, key))


async def test_the_current_screens_keys_come_first(demo_hosts: tuple[Host, ...]) -> None:
    app = make_app(demo_hosts)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await settle(pilot, lambda: isinstance(app.screen, HelpScreen))
        await settle(pilot, lambda: app.screen.query_one("#help-keys", DataTable).row_count)
        assert _wheres(app)[:3] == ["Hosts", "Everywhere", "Host"]
        table = app.screen.query_one("#help-keys", DataTable)
        # nothing cut at 80x24: the actions wrap within the dialog, no sideways scrolling
        assert table.virtual_size.width <= table.scrollable_content_region.width
        assert table.max_scroll_x == 0
        assert "p, f, u and ctrl+s then act on the marked hosts" in _action(app, "Hosts", "space")
        await pilot.press("escape")
        app.open_host("ct200")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        await pilot.press("question_mark")
        await settle(pilot, lambda: isinstance(app.screen, HelpScreen))
        await settle(pilot, lambda: app.screen.query_one("#help-keys", DataTable).row_count)
        assert _wheres(app)[:3] == ["Host", "Everywhere", "Hosts"]
