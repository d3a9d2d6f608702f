"""pro6000-compat's nvcc cannot compile, but its flashinfer-jit-cache serves the modules, so
no finding fires (issue 22 item 25): the table and the replay tab say the JIT cache covers it
instead of a red "cannot compile"; a host whose nvcc cannot compile without one still does."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from tui.core.tables.flashinfer_prebuilt import replay_coverage
from tui.ui.fleet_state import flashinfer_verdict
from tui.ui.screens.host import HostScreen
from tui.ui.widgets.fleet_table import FleetTable
from tui.ui.widgets.replay_view import ReplayView

from .conftest import demo_subset, make_app, probe_all, settle


async def test_the_jit_cache_is_named_where_nvcc_cannot_compile(demo_cache: Path) -> None:
    app = make_app(demo_subset(demo_cache, ("pro6000-compat",)))
    async with app.run_test(size=(200, 50)) as pilot:
        await probe_all(pilot)
        state = app.fleet.states["pro6000-compat"]
        (replay,) = [r for r in state.diagnosis.flashinfer if r.compiles is False]
        assert replay.check_cuda_arch == "pass"
        assert "jit-nvcc-missing" not in {f.id for f in state.diagnosis.findings}
        table = app.screen.query_one("#hosts-table", FleetTable)
        assert table.cell("pro6000-compat", "verdict") == "ok (JIT cache)"
        # control: the same probe without the JIT cache is a red "cannot compile" again
        bare = dataclasses.replace(
            state.facts,
            pythons=tuple(
                dataclasses.replace(p, flashinfer_jit_cache_version=None)
                for p in state.facts.pythons
            ),
        )
        covered = replay_coverage(bare, replay)
        assert covered is not None and covered.covered is False
        assert flashinfer_verdict(replay, bool(covered.covered)) == "cannot compile"
        app.open_host("pro6000-compat")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        await pilot.press("e")
        await pilot.pause()
        text = str(app.screen.query_one(ReplayView).render())
        assert "nvcc can compile      no — not needed: flashinfer-jit-cache 0.6.8+cu130" in text
