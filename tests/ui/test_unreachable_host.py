"""A host that was never reached has no findings to show and nothing to fix or validate: the
host screen says why, and neither the footer nor the keys offer a fix or a validation."""

from __future__ import annotations

from tui.core.hosts import Host
from tui.ui.screens.host import HostScreen
from tui.ui.widgets.finding_view import FindingView

from .conftest import make_app, probe_all, settle


def _offered(app) -> set[str]:
    return {b.binding.action for b in app.screen.active_bindings.values()}


async def test_unreachable_host_screen_says_not_reached(demo_hosts: tuple[Host, ...]) -> None:
    app = make_app(demo_hosts)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await probe_all(pilot)
        app.open_host("gone-dark")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        text = str(app.screen.query_one(FindingView).render())
        assert "No findings" not in text
        assert "Not reached" in text and "no answer" in text
        offered = _offered(app)
        assert "fix" not in offered and "validate" not in offered
        assert "probe" in offered
        app.clear_notifications()
        await pilot.press("f")  # says why instead of doing nothing
        await pilot.pause()
        messages = [n.message for n in app._notifications]
        assert messages and "No fix proposed" not in messages[-1]
        assert "Not reached" in messages[-1]


async def test_healthy_host_offers_no_fix_but_validation(demo_hosts: tuple[Host, ...]) -> None:
    app = make_app(demo_hosts)
    async with app.run_test(size=(120, 40)) as pilot:
        await probe_all(pilot)
        app.open_host("h100-node")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        offered = _offered(app)
        assert "validate" in offered and "fix" not in offered
        await pilot.press("escape")
        app.open_host("ct200")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        assert {"fix", "validate"} <= _offered(app)
