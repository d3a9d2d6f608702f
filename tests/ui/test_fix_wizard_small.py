"""The fix wizard at 80x24: the whole preview can be scrolled, the live output keeps its newest
lines after the run, and a failed step says why (the pip install on ct200, whose demo pip is
a package without its code)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.containers import VerticalScroll
from textual.widgets import Log, Static

from tui.core.fixes import build_plan
from tui.core.hosts import Host
from tui.ui.screens.fix_wizard import FixWizardScreen
from tui.ui.screens.host import HostScreen

from .conftest import demo_subset, make_app, probe_all, settle


@pytest.fixture
def fleet(tmp_path: Path) -> tuple[Host, ...]:
    """A private demo fleet of only the hosts these tests need:
    ct200 and a healthy host."""
    return demo_subset(tmp_path / "trees", ("ct200", "h100-node"))


SMALL = (80, 24)
PIP = "install-cuda-toolkit-pip"


async def test_preview_scrolls_and_output_keeps_its_end(fleet: tuple[Host, ...]) -> None:
    app = make_app(fleet)
    async with app.run_test(size=SMALL) as pilot:
        await probe_all(pilot)
        app.open_host("ct200")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        await pilot.press("f")
        await settle(pilot, lambda: isinstance(app.screen, FixWizardScreen))
        wizard = app.screen
        preview = wizard.query_one("#fix-preview", VerticalScroll)
        assert preview.size.height >= 8, preview.size
        assert preview.max_scroll_y > 0 and preview.show_vertical_scrollbar
        assert preview.has_focus  # so the arrow keys scroll it
        await pilot.press("end")
        await pilot.pause()
        assert preview.scroll_y == preview.max_scroll_y

        await pilot.press("a")
        await settle(pilot, lambda: wizard.stage in ("done", "failed"))
        await pilot.pause()
        log = wizard.query_one("#fix-output", Log)
        assert log.size.height >= 4, log.size
        assert log.max_scroll_y > 0 and log.scroll_y == log.max_scroll_y  # the newest lines
        verdict = wizard.query_one("#fix-verdict", VerticalScroll)
        assert verdict.size.height >= 4 and verdict.has_focus


async def test_failed_step_says_why_at_80_columns(fleet: tuple[Host, ...]) -> None:
    app = make_app(fleet)
    async with app.run_test(size=SMALL) as pilot:
        await probe_all(pilot)
        state = app.fleet["ct200"]
        fixes = {x.id for f in state.diagnosis.findings for x in f.fixes}
        assert PIP in fixes  # the demo venv has pip, as `python -m venv` gives (issue 22 #10)
        venv = next(p for p in state.facts.pythons if p.flashinfer_version)
        assert venv.has_pip is True
        # the demo's pip is a package without its code: the install step fails and says why
        plan = build_plan(state.facts, state.host, PIP, {}, venv.path)
        wizard = FixWizardScreen(state.host, plan, app.session, before=state.facts)
        app.push_screen(wizard)
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot, lambda: wizard.stage in ("done", "failed"))
        status = str(wizard.query_one("#fix-status", Static).render())
        assert "No module named pip" in status, status
        assert wizard.query_one("#fix-status").size.height >= 2
