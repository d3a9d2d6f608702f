"""The hosts table as an operator reads it all day, at 80x24 and wider: nothing that matters is
cut off, every red row says why, sorting says how, the filter says when nothing matches, and
demo hosts never pass for machines."""

from __future__ import annotations

from textual.widgets import DataTable, Footer, Input, Static, Tree
from textual.widgets._footer import FooterKey

from tui.core.hosts import Host
from tui.ui.screens.host import HostScreen
from tui.ui.screens.hosts import HostsScreen
from tui.ui.widgets.fleet_table import FleetTable

from .conftest import make_app, probe_all, settle

SMALL = (80, 24)


def _line(table: FleetTable, name: str) -> str:
    return table.render_line(1 + table.row_names.index(name)).text


def _footer_keys(app) -> set[str]:
    """The keys the footer shows whole on screen."""
    width = app.size.width
    return {
        k.key_display or k.key
        for k in app.screen.query_one(Footer).query(FooterKey)
        if k.region.width and k.region.right <= width
    }


async def test_nothing_that_matters_is_cut_at_80_columns(demo_hosts: tuple[Host, ...]) -> None:
    app = make_app(demo_hosts)
    async with app.run_test(size=SMALL) as pilot:
        await probe_all(pilot)
        table = app.screen.query_one("#hosts-table", FleetTable)
        # the Status says what happened, whole; the Reason says why, in the first screenful
        gone = _line(table, "gone-dark")
        assert "unreachable " in gone and "unreachable: no…" not in gone
        assert "no answer (simulated demo host)" in gone
        assert "critical  SM 12.0 + nvcc 12.8" in _line(table, "ct200")
        assert {"q", "?", "P"} <= _footer_keys(app)
        # scrolled right, the Host column stays put
        table.scroll_to(x=40, animate=False)
        await pilot.pause()
        assert table.scroll_offset.x == 40
        assert _line(table, "ct200").startswith(" ct200 ")
        line = _line(table, "ct200")
        assert "12.0  13.0" in line and "probed" not in line  # SM, Drv CUDA came in

        # groups: a label too long for the screen ends in "…", cut where it must be
        await pilot.press("g")
        await pilot.pause()
        tree = app.screen.query_one("#groups-tree", Tree)
        lines = [tree.render_line(y).text.rstrip() for y in range(tree.last_line + 1)]
        long = [ln for ln in lines if "CUDA" in ln and "→" in ln]
        assert long and all(ln.endswith("…") or len(ln) < 80 for ln in long), lines
        await pilot.press("g")

        # the host screen: the whole header (wraps to two lines), e and w in the footer
        app.open_host("ct201")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        title = app.screen.query_one("#host-title", Static)
        text = str(title.render())
        # said as the table says it, not "done at 03:04:05"
        assert "probed just now" in text and "done at" not in text and "(SM 12.0)" in text
        assert title.size.height == 2
        assert {"e", "w", "q", "f", "v", "o"} <= _footer_keys(app)
        # the what-if table: Resolves wraps within the screen instead of running off it
        await pilot.press("w")
        fixes = app.screen.query_one("#fixes", DataTable)
        index = fixes.get_column_index("resolves")
        widths = [c.get_render_width(fixes) for c in fixes.ordered_columns]
        assert sum(widths[: index + 1]) <= 80
        row = next(
            r
            for r in fixes.ordered_rows
            if "nvcc-torch-major-mismatch" in str(fixes.get_cell(r.key, "resolves"))
        )
        assert row.height > 1  # wrapped, not cut
        # one row per distinct fix: the toolkit switch both findings propose is listed once,
        # naming both
        shown = [
            (str(fixes.get_cell(r.key, "fix")), str(fixes.get_cell(r.key, "params")))
            for r in fixes.ordered_rows
        ]
        assert len(shown) == len(set(shown)), shown
        shared = [
            str(fixes.get_cell(r.key, "finding"))
            for r in fixes.ordered_rows
            if str(fixes.get_cell(r.key, "fix")) == "use-installed-toolkit"
        ]
        assert shared == ["flashinfer-arch-rejected, nvcc-torch-major-mismatch"]


async def test_rows_say_why_and_sorting_says_how(demo_hosts: tuple[Host, ...]) -> None:
    app = make_app(demo_hosts)
    async with app.run_test(size=(160, 40), notifications=True) as pilot:
        await probe_all(pilot)
        table = app.screen.query_one("#hosts-table", FleetTable)
        screen = app.screen
        assert isinstance(screen, HostsScreen)
        for name in ("ct200", "b200-old-driver", "rtx5090-cu124", "no-driver"):
            assert table.cell(name, "worst") == "critical"
            assert table.cell(name, "reason"), name
        assert table.cell("b200-old-driver", "reason").startswith(
            "driver CUDA 12.9 < torch CUDA 13.0 → torch cannot initialise CUDA"
        )
        row = table._cells["b200-old-driver"]
        columns = [k for k, _ in table.columns]
        verdict = row[columns.index("verdict")]
        assert verdict.plain == "ok" and "green" not in str(verdict.style)  # beside critical
        healthy = table._cells["h100-node"][columns.index("verdict")]
        assert "green" in str(healthy.style)
        status = row[columns.index("status")]
        assert status.plain == "probed just now" and "green" not in str(status.style)

        screen.sort_column = "worst"
        await pilot.pause()
        assert table.row_names[0] == "gone-dark"  # not reached: above the critical ones
        assert table.render_line(0).text.split()[:6].count("▲") == 1
        assert "Worst ▲" in table.render_line(0).text
        app.clear_notifications()
        await pilot.press("r")
        await pilot.pause()
        assert "Worst ▼" in table.render_line(0).text
        assert table.row_names[-1] == "gone-dark"
        assert [n.message for n in app._notifications] == ["Sorted by Worst, reversed"]


async def test_filter_counts_and_says_no_match(demo_hosts: tuple[Host, ...]) -> None:
    app = make_app(demo_hosts)
    async with app.run_test(size=(160, 40)) as pilot:
        await probe_all(pilot)
        table = app.screen.query_one("#hosts-table", FleetTable)
        await pilot.press("slash")
        box = app.screen.query_one("#filter", Input)
        title = app.screen.query_one("#hosts-title")
        box.value = "finding:"
        await pilot.pause()
        shown = len(table.row_names)
        assert 0 < shown < len(demo_hosts)
        assert f"showing {shown}" in str(title.render())
        for query in ("torch:cu130", "torch:2.9.1"):
            box.value = query
            await pilot.pause()
            assert "ct200" in table.row_names, query
        box.value = "zzqx"
        await pilot.pause()
        assert table.row_names == ()
        no_match = app.screen.query_one("#no-match", Static)
        assert no_match.display and "No host matches 'zzqx'" in str(no_match.render())
        assert "showing 0" in str(title.render())
        box.value = "finding:nope"  # a typo of an id: said so, not "no host matches"
        await pilot.pause()
        error = app.screen.query_one("#filter-error", Static)
        assert error.display and str(error.render()).startswith("unknown finding id 'nope'")
        box.value = "-tag:demo|blackwell driver:<580"
        await pilot.pause()
        assert not error.display
        assert set(table.row_names) == {
            s.name
            for s in app.fleet
            if not {"demo", "blackwell"} & set(s.host.tags)
            and s.row.driver
            and int(s.row.driver.split(".")[0]) < 580
        }
        box.value = "driver:<580"
        await pilot.pause()
        assert "b200-old-driver" in table.row_names and "ct200" not in table.row_names
        await pilot.press("escape")
        await pilot.pause()
        assert not no_match.display


async def test_demo_hosts_do_not_pass_for_machines(demo_hosts: tuple[Host, ...]) -> None:
    app = make_app(demo_hosts)
    async with app.run_test(size=(160, 40)) as pilot:
        title = str(app.screen.query_one("#hosts-title").render())
        assert title.startswith("Demo fleet") and f"{len(demo_hosts)} simulated hosts" in title
    mixed = (Host(name="zeta", ssh="zeta.example"), *demo_hosts)
    app = make_app(mixed)
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        title = str(app.screen.query_one("#hosts-title").render())
        assert f"1 host + {len(demo_hosts)} demo (simulated)" in title
        table = app.screen.query_one("#hosts-table", FleetTable)
        assert table.row_names[0] == "zeta"  # real hosts first, whatever the sort
        assert "italic" in str(table._cells["ct200"][0].style)
        assert "italic" not in str(table._cells["zeta"][0].style)


async def test_vi_keys_move_the_cursor_in_the_table_and_the_groups(
    demo_hosts: tuple[Host, ...],
) -> None:
    """j/k, G, ctrl+d/ctrl+u as in k9s, htop and less: in the hosts table and the groups view."""
    app = make_app(demo_hosts)
    async with app.run_test(size=SMALL) as pilot:
        await probe_all(pilot)
        table = app.screen.query_one("#hosts-table", FleetTable)
        table.focus()
        assert table.cursor_row == 0
        await pilot.press("j", "j")
        assert table.cursor_row == 2
        await pilot.press("k")
        assert table.cursor_row == 1
        await pilot.press("G")
        assert table.cursor_row == len(table.row_names) - 1
        await pilot.press("ctrl+u")
        page_up = table.cursor_row
        assert 0 <= page_up < len(table.row_names) - 2
        await pilot.press("ctrl+d")
        assert table.cursor_row == len(table.row_names) - 1

        await pilot.press("g")
        await pilot.pause()
        tree = app.screen.query_one("#groups-tree", Tree)
        start = tree.cursor_line
        await pilot.press("j")
        assert tree.cursor_line == start + 1
        await pilot.press("k")
        assert tree.cursor_line == start
        await pilot.press("G")
        assert tree.cursor_line == tree.last_line > start
