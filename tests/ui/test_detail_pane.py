"""The detail pane (lazygit-style): the selected host's four CUDAs, top finding and fix beside
the table when wide, under it at 80x24; it follows the cursor and d hides it."""

from __future__ import annotations

import pytest

from tui.core.hosts import Host
from tui.ui.widgets.fleet_table import FleetTable
from tui.ui.widgets.host_detail import HostDetail

from .conftest import make_app, probe_all, settle


@pytest.mark.parametrize(("size", "beside"), [((80, 24), False), ((200, 50), True)])
async def test_pane_follows_the_cursor_and_reflows(
    reference_hosts: tuple[Host, ...], size: tuple[int, int], beside: bool
) -> None:
    app = make_app(reference_hosts)
    async with app.run_test(size=size) as pilot:
        await probe_all(pilot)
        table = app.screen.query_one("#hosts-table", FleetTable)
        pane = app.screen.query_one(HostDetail)
        table.cursor_row = table.row_names.index("ct200")
        await settle(pilot, lambda: str(pane.render()).startswith("ct200"))  # once it rests
        text = str(pane.render())
        assert text.startswith("ct200")
        assert "driver 13.0 · torch 13.0 · PATH nvcc 12.8 · JIT 12.8 ✗" in text
        assert "CRITICAL" in text and "SM 12.0 + nvcc 12.8 → FlashInfer drops the GPU" in text
        assert "fix: set-flashinfer-arch-list" in text
        if beside:
            assert pane.region.x >= table.region.right and pane.region.height > 20
        else:
            assert pane.region.y >= table.region.bottom and pane.region.width == size[0]
            assert table.region.height >= 10  # the table keeps most of the screen
        await pilot.press("down")
        await settle(pilot, lambda: str(pane.render()).startswith(table.cursor_name))
        await pilot.press("d")
        await pilot.pause()
        assert not pane.display and table.region.height > 10


def test_the_target_is_shown_only_where_it_says_more_than_the_name() -> None:
    from datetime import datetime, timezone

    from textual.content import Content

    from tui.ui.fleet_state import HostState
    from tui.ui.widgets.host_detail import detail_parts

    now = datetime(2026, 1, 2, tzinfo=timezone.utc)
    plain = Content.assemble(*detail_parts(HostState(Host(name="gpu1")), now)).plain
    assert plain.splitlines()[0] == "gpu1"
    aliased = Content.assemble(*detail_parts(HostState(Host(name="gpu1", ssh="ops@10.0.0.7")), now))
    assert aliased.plain.splitlines()[0] == "gpu1  ops@10.0.0.7"
