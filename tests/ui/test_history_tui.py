"""The host screen's History tab (h): the timeline of the demo ct200 — its simulated probe
from before it broke and the probe now, each with its verdict and what changed; and c on the
hosts screen, which compares the two marked hosts."""

from __future__ import annotations

from textual.widgets import TabbedContent

from tui.core.hosts import Host
from tui.ui.screens.host import HostScreen
from tui.ui.screens.message import MessageScreen
from tui.ui.widgets.fleet_table import FleetTable
from tui.ui.widgets.history_view import HistoryView

from .conftest import make_app, probe_all, settle


async def test_history_tab_and_compare_two_marked_hosts(
    reference_hosts: tuple[Host, ...],
) -> None:
    app = make_app(reference_hosts)
    async with app.run_test(size=(120, 36)) as pilot:
        await probe_all(pilot)
        table = app.screen.query_one("#hosts-table", FleetTable)

        await pilot.press("c")  # nothing marked: says what to do
        await pilot.pause()
        assert any("Mark two hosts" in n.message for n in app._notifications)

        for name in ("ct200", "h100-node"):
            table.cursor_row = table.row_names.index(name)
            await pilot.press("space")
        await pilot.press("c")
        await settle(pilot, lambda: isinstance(app.screen, MessageScreen))
        body = app.screen.body
        assert app.screen.title_text == "ct200 → h100-node: what differs"
        assert "driver CUDA 13.0 → 12.8" in body
        assert "findings gone: " in body and "flashinfer-arch-rejected" in body
        await pilot.press("escape")

        app.open_host("ct200")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        screen = app.screen
        await pilot.press("h")
        assert screen.query_one("#host-tabs", TabbedContent).active == "tab-history"
        await settle(pilot, lambda: screen.history_entries is not None)
        entries = screen.history_entries
        assert [e["verdict"] for e in entries] == ["critical", "none"]
        assert "torch 2.9.0+cu130 → 2.9.1+cu130" in entries[0]["changed"]
        shown = str(screen.query_one(HistoryView).render())
        assert (
            "critical" in shown
            and "→ CUDA_HOME /usr/local/cuda-13.0 → /usr/local/cuda-12.8" in shown
        )


async def test_a_history_that_cannot_be_kept_is_one_warning(demo_hosts: tuple[Host, ...]) -> None:
    from tui.core.records.history import store_path

    store_path(demo=True).mkdir(parents=True)  # a directory where the file should be
    hosts = tuple(h for h in demo_hosts if h.name in ("ct200", "h100-node", "ct201"))
    app = make_app(hosts)
    async with app.run_test(size=(120, 36)) as pilot:
        await probe_all(pilot)
        await pilot.pause()
        said = [n.message for n in app._notifications if "history not kept" in n.message]
        assert len(said) == 1, said  # three hosts, one reason: said once
        assert all(s.status == "done" for s in app.fleet)  # the probes themselves stand
