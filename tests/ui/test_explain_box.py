"""The explain box (``x``): an error pasted on the hosts screen is explained for the selected
host on its last probe — state first (the screen's ``explanation``), then what it shows
(redacted); the key is in the palette and the help on both screens."""

from __future__ import annotations

from textual.widgets import Static, TextArea

from tui.core.hosts import Host
from tui.ui.palette import FleetCommands
from tui.ui.screens.explain import PROMPT, ExplainScreen
from tui.ui.screens.host import HostScreen
from tui.ui.screens.hosts import HostsScreen
from tui.ui.widgets.fleet_table import FleetTable

from .conftest import make_app, settle

ERROR = (
    "[2026-12-01 14:01:58] server_args=ServerArgs(api_key='sk-demo-secret-value')\n"
    "RuntimeError: FlashInfer requires GPUs with sm75 or higher\n"
)


async def test_paste_an_error_and_see_its_cause(demo_hosts: tuple[Host, ...]) -> None:
    app = make_app(demo_hosts)
    async with app.run_test(size=(120, 40)) as pilot:
        app.request_probe(("ct200",))
        await settle(pilot, lambda: app.fleet["ct200"].status == "done")
        table = app.screen.query_one("#hosts-table", FleetTable)
        table.cursor_row = table.row_names.index("ct200")
        await pilot.pause()
        assert table.cursor_name == "ct200"
        titles = [c[0] for c in FleetCommands(app.screen)._all()]
        assert "Explain (x)" in titles
        await pilot.press("x")
        await settle(pilot, lambda: isinstance(app.screen, ExplainScreen))
        box = app.screen
        assert str(box.query_one("#explain-result", Static).render()) == PROMPT
        box.query_one("#explain-text", TextArea).insert(ERROR)
        await settle(pilot, lambda: box.explanation is not None)
        assert box.explanation.host == "ct200"
        assert box.explanation.explained_by == ("flashinfer-arch-rejected",)
        shown = str(box.query_one("#explain-result", Static).render())
        assert "✔ confirmed  flashinfer-arch-rejected" in shown
        assert "sk-demo-secret-value" not in shown
        await pilot.press("escape")
        await settle(pilot, lambda: isinstance(app.screen, HostsScreen))


async def test_an_unprobed_host_is_judged_from_the_text(demo_hosts: tuple[Host, ...]) -> None:
    app = make_app(demo_hosts)
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_host("h100-node")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        assert "Explain (x)" in [c[0] for c in FleetCommands(app.screen)._all()]
        await pilot.press("x")
        await settle(pilot, lambda: isinstance(app.screen, ExplainScreen))
        box = app.screen
        box.query_one("#explain-text", TextArea).insert(ERROR)
        await settle(pilot, lambda: box.explanation is not None)
        assert box.explanation.host is None and "not probed yet" in box.explanation.source
        statuses = {c.status for e in box.explanation.errors for c in e.causes}
        assert statuses == {"possible"}


async def test_the_host_screen_shows_the_units_symptom(demo_hosts: tuple[Host, ...]) -> None:
    app = make_app(demo_hosts)
    async with app.run_test(size=(120, 40)) as pilot:
        names = ("ct200", "h100-node")
        app.request_probe(names)
        await settle(pilot, lambda: {app.fleet[n].status for n in names} == {"done"})
        app.open_host("ct200")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        line = app.screen.query_one("#host-symptoms", Static)
        assert line.display
        assert str(line.render()) == (
            "symptom: sglang.service 2026-12-01 14:01: 'RuntimeError: FlashInfer requires GPUs "
            "with sm75 or higher' ← flashinfer-arch-rejected"
        )
        await pilot.press("escape")
        app.open_host("h100-node")
        await settle(pilot, lambda: getattr(app.screen, "host_name", "") == "h100-node")
        assert not app.screen.query_one("#host-symptoms", Static).display
