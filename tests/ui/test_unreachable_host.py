"""A host that was never reached has no findings to show and nothing to fix or validate: the
host screen says why, and neither the footer nor the keys offer a fix or a validation."""

from __future__ import annotations

from tui.core.hosts import Host
from tui.ui.screens.host import HostScreen
from tui.ui.widgets.finding_view import FindingView

from .conftest import make_app, probe_all, settle


def _offered(app) -> set[str]:
    return {b.binding.action for b in app.screen.active_bindings.values()}


async def test_unreachable_host_screen_says_not_reached(reference_hosts: tuple[Host, ...]) -> None:
    app = make_app(reference_hosts)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await probe_all(pilot)
        app.open_host("gone-dark")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        text = str(app.screen.query_one(FindingView).render())
        assert "No findings" not in text
        assert "Not reached" in text  # the error itself is the headline, said once
        assert "no answer" in str(app.screen.query_one("#host-headline").render())
        offered = _offered(app)
        assert "fix" not in offered and "validate" not in offered
        assert "probe" in offered
        app.clear_notifications()
        await pilot.press("f")  # says why instead of doing nothing
        await pilot.pause()
        messages = [n.message for n in app._notifications]
        assert messages and "No fix proposed" not in messages[-1]
        assert "Not reached" in messages[-1]


async def test_healthy_host_offers_no_fix_but_validation(reference_hosts: tuple[Host, ...]) -> None:
    app = make_app(reference_hosts)
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


async def test_every_tab_of_an_unreachable_host_says_not_reached_once(
    reference_hosts: tuple[Host, ...],
) -> None:
    """Replay, GPUs now, Probe output and What-if say the host was not reached (not "no
    FlashInfer installed", "not probed yet", blank, bare headers); the error is said once."""
    from textual.widgets import DataTable, Log, Static

    from tui.ui.widgets.gpu_view import GpuView
    from tui.ui.widgets.replay_view import ReplayView

    app = make_app(reference_hosts)
    async with app.run_test(size=(80, 24)) as pilot:
        await probe_all(pilot)
        app.open_host("gone-dark")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        screen = app.screen
        replay = str(screen.query_one(ReplayView).render())
        assert replay.startswith("Not reached: nothing is known about its FlashInfer")
        assert "No interpreter" not in replay
        gpus = str(screen.query_one(GpuView).render())
        assert gpus.startswith("Not reached: nothing is known about its GPUs")
        output = screen.query_one("#output", Log).lines
        assert output == ["# demo (simulated): no probe output — no answer (simulated demo host)"]
        fixes = screen.query_one("#fixes", DataTable)
        assert fixes.row_count == 1
        assert str(fixes.get_row_at(0)[0]) == "not reached: nothing to fix"
        error = "no answer (simulated demo host)"
        said = [
            str(screen.query_one(sel, Static).render()) for sel in ("#host-title", "#host-headline")
        ] + [str(screen.query_one(FindingView).render())]
        assert sum(t.count(error) for t in said) == 1, said
