"""The footer at 60 columns (issue 22 item 23): no key cut mid-word, `? Help` and `q Quit`
always there; keys that do not fit are left out whole and come back when the terminal grows."""

from __future__ import annotations

from textual.widgets._footer import FooterKey

from tui.core.hosts import Host
from tui.ui.footer_fit import FitFooter

from .conftest import make_app, probe_all, settle


def _keys(app) -> list[tuple[str, bool]]:
    """Each footer key's display and whether it is whole on screen."""
    width = app.size.width
    return [
        (k.key_display or k.key, k.region.right <= width)
        for k in app.screen.query_one(FitFooter).query(FooterKey)
    ]


async def test_help_and_quit_stay_and_nothing_is_cut(reference_hosts: tuple[Host, ...]) -> None:
    app = make_app(reference_hosts)
    async with app.run_test(size=(60, 20)) as pilot:
        await probe_all(pilot)
        await settle(pilot, lambda: _keys(app) and all(whole for _, whole in _keys(app)))
        shown = [k for k, _ in _keys(app)]
        assert shown[-2:] == ["?", "q"] and "/" in shown
        assert "s" not in shown  # left out whole, not cut to "s Sor"
        await pilot.resize_terminal(120, 30)
        await settle(pilot, lambda: "s" in [k for k, _ in _keys(app)])
        assert all(whole for _, whole in _keys(app))
