"""The demo's red-to-green story in the TUI: ct201 (CUDA 13.0 installed, sglang.service still on
12.8) is fixed with one fix, its service restarted from the wizard, and the fleet is no longer
critical — through the real local probe of a private demo tree whose ``systemctl`` shim really
gives the service's fake process the unit's new environment.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from textual.widgets import DataTable

from tui.core.hosts import Host
from tui.demo.fakehost import SYSTEMCTL_LOG
from tui.ui.screens.fix_wizard import FixWizardScreen
from tui.ui.screens.host import HostScreen

from .conftest import demo_subset, host_root, make_app, probe_all, settle


@pytest.fixture
def fleet(tmp_path: Path) -> tuple[Host, ...]:
    """A private demo fleet of only the hosts these tests need:
    ct201, ct200 (which must stay untouched) and a healthy host."""
    return demo_subset(tmp_path / "trees", ("ct200", "ct201", "h100-node"))


FIX = "use-installed-toolkit"


def _process_env(root: Path, pid: int) -> dict[str, str]:
    raw = (root / f"proc/{pid}/environ").read_bytes().decode()
    return dict(item.split("=", 1) for item in raw.split("\0") if item)


async def test_fix_and_restart_turn_ct201_from_critical_to_not_critical(
    fleet: tuple[Host, ...],
) -> None:
    root = host_root(fleet, "ct201")
    app = make_app(fleet)
    async with app.run_test(size=(160, 45)) as pilot:
        await probe_all(pilot)
        assert app.fleet["ct201"].diagnosis.worst() == "critical"

        app.open_host("ct201")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        await pilot.press("w")
        fixes = app.screen.query_one("#fixes", DataTable)
        ids = [str(fixes.get_row_at(i)[0]) for i in range(fixes.row_count)]
        fixes.move_cursor(row=ids.index(FIX))
        await pilot.press("f")
        await settle(pilot, lambda: isinstance(app.screen, FixWizardScreen))
        wizard = app.screen
        assert wizard.plan.fix_id == FIX

        await pilot.press("a")
        await settle(pilot, lambda: wizard.stage == "done")
        assert wizard.outcome is not None and wizard.outcome.ok
        assert wizard.restart_units == ("sglang.service",)
        assert _process_env(root, 4242)["CUDA_HOME"] == "/usr/local/cuda-12.8"  # not restarted

        await pilot.press("r")  # the restart is shown first; Apply (a) confirms it
        assert wizard.pending is not None and wizard.pending.fix_id == "restart"
        shim = shlex.quote(f"{root}/usr/bin/systemctl")
        assert f"{shim} restart sglang.service" in wizard.pending.preview_commands()[0]
        await pilot.press("a")
        await settle(
            pilot, lambda: wizard.stage == "done" and wizard.outcome.plan.fix_id == "restart"
        )
        assert [r.status for r in wizard.outcome.steps] == ["changed"]
        log = (root / SYSTEMCTL_LOG.lstrip("/")).read_text().splitlines()
        assert log == ["daemon-reload", "restart sglang.service"]
        assert _process_env(root, 4242)["CUDA_HOME"] == "/usr/local/cuda-13.0"

        probed = app.fleet["ct201"].result
        await pilot.press("escape")  # close: the app probes ct201 again
        await settle(
            pilot,
            lambda: app.fleet["ct201"].result is not probed and not app.fleet["ct201"].busy,
        )
        assert not isinstance(app.screen, FixWizardScreen)
        worst = app.fleet["ct201"].diagnosis.worst()
        assert worst != "critical", app.fleet["ct201"].diagnosis.findings
        assert app.fleet["ct200"].diagnosis.worst() == "critical"  # the other host is untouched
