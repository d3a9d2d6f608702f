"""Sorting by a column that is off screen still shows the order (issue 22 item 23): the
header's edge names the sorted column at 80 columns, and goes once it is in view."""

from __future__ import annotations

from tui.core.hosts import Host
from tui.ui.screens.hosts import HostsScreen
from tui.ui.widgets.fleet_table import FleetTable

from .conftest import make_app, probe_all


async def test_an_off_screen_sort_column_is_named_at_the_edge(
    demo_hosts: tuple[Host, ...],
) -> None:
    app = make_app(demo_hosts)
    async with app.run_test(size=(80, 24)) as pilot:
        await probe_all(pilot)
        table = app.screen.query_one("#hosts-table", FleetTable)
        screen = app.screen
        assert isinstance(screen, HostsScreen)
        assert table.sort_cue() is None  # Host: always in view
        screen.sort_column = "flashinfer"
        await pilot.pause()
        header = table.render_line(0).text.rstrip()
        assert header.endswith(" FlashInfer ▲ →"), header  # the scrollbar's cells stay clear
        assert "Reason" in header  # the columns in view keep their place
        await pilot.press("r")
        await pilot.pause()
        assert table.render_line(0).text.rstrip().endswith(" FlashInfer ▼ →")
        keys = [k for k, _ in table.columns]
        start = table.column_start(keys.index("flashinfer"))
        table.scroll_to(x=start - table.column_start(1), animate=False)  # first after Host
        await pilot.pause()
        assert table.sort_cue() is None  # in view: its own header carries ▼
        assert table.render_line(0).text.startswith(" Host ")
        assert "  FlashInfer ▼  " in table.render_line(0).text
        screen.sort_column = "status"  # scrolled past, to the left
        await pilot.pause()
        header = table.render_line(0).text.rstrip()
        assert header.startswith(" Host ") and header.endswith(" ← Status ▼"), header
