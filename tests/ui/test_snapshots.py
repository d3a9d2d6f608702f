"""SVG snapshots of the main screens (fixed size, no animation, fixed clock).

Create or update with ``pytest tests/ui/test_snapshots.py --snapshot-update``; the files live in
``tests/ui/__snapshots__`` (docs/screenshots/ holds copies of some, for the README).
"""

from __future__ import annotations

import pytest
from factsmaker import make_facts

from tui.core.fixes import build_plan
from tui.core.hosts import Host
from tui.ui.screens.fix_wizard import FixWizardScreen
from tui.ui.screens.hostkey import HostKeyScreen
from tui.ui.widgets.fleet_table import FleetTable
from tui.ui.widgets.host_detail import HostDetail

from .conftest import make_app, probe_all, settle

SIZE = (120, 36)
SIZES = {"80x24": (80, 24), "200x50": (200, 50)}


async def _probe_all(pilot) -> None:
    await probe_all(pilot)
    pilot.app.clear_notifications()
    await pilot.pause()


def test_hosts_screen(snap_compare, demo_hosts: tuple[Host, ...]) -> None:
    assert snap_compare(make_app(demo_hosts), terminal_size=SIZE, run_before=_probe_all)


@pytest.mark.parametrize("size", list(SIZES))
def test_hosts_with_detail_pane(snap_compare, demo_hosts: tuple[Host, ...], size: str) -> None:
    async def run_before(pilot) -> None:
        await _probe_all(pilot)
        table = pilot.app.screen.query_one("#hosts-table", FleetTable)
        table.cursor_row = table.row_names.index("ct200")
        pane = pilot.app.screen.query_one(HostDetail)
        await settle(pilot, lambda: str(pane.render()).startswith("ct200"))

    assert snap_compare(make_app(demo_hosts), terminal_size=SIZES[size], run_before=run_before)


def test_groups_view(snap_compare, demo_hosts: tuple[Host, ...]) -> None:
    async def run_before(pilot) -> None:
        await _probe_all(pilot)
        await pilot.press("g")

    assert snap_compare(make_app(demo_hosts), terminal_size=SIZE, run_before=run_before)


def test_reference_host_screen(snap_compare, demo_hosts: tuple[Host, ...]) -> None:
    async def run_before(pilot) -> None:
        await _probe_all(pilot)
        pilot.app.open_host("ct200")
        await settle(pilot)

    assert snap_compare(make_app(demo_hosts), terminal_size=SIZE, run_before=run_before)


def test_reference_replay_tab(snap_compare, demo_hosts: tuple[Host, ...]) -> None:
    async def run_before(pilot) -> None:
        await _probe_all(pilot)
        pilot.app.open_host("ct200")
        await settle(pilot)
        await pilot.press("e")

    assert snap_compare(make_app(demo_hosts), terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize("size", list(SIZES))
def test_fix_wizard_preview(snap_compare, demo_hosts: tuple[Host, ...], size: str) -> None:
    """The reference host as an SSH host (no demo tree paths in the commands)."""
    host = Host(name="ct200", ssh="root@10.1.2.200")
    plan = build_plan(
        make_facts(), host, "set-flashinfer-arch-list", {"value": "12.0a"}, None, stamp="20260102"
    )

    async def run_before(pilot) -> None:
        pilot.app.push_screen(FixWizardScreen(host, plan, pilot.app.session))
        await settle(pilot)

    assert snap_compare(make_app(demo_hosts), terminal_size=SIZES[size], run_before=run_before)


def test_host_key_modal(snap_compare, demo_hosts: tuple[Host, ...]) -> None:
    async def run_before(pilot) -> None:
        pilot.app.push_screen(
            HostKeyScreen(
                "gpu-7",
                "[10.1.2.207]:2222",
                "ssh-ed25519",
                "SHA256:0hQ2ZCkBL7lQm4xH3Xhj4vM1tQ3q9Ue6m8Yc0g9H5dI",
                "/root/.ssh/known_hosts",
            )
        )
        await settle(pilot)

    assert snap_compare(make_app(demo_hosts), terminal_size=SIZE, run_before=run_before)


def test_help_screen(snap_compare, demo_hosts: tuple[Host, ...]) -> None:
    assert snap_compare(make_app(demo_hosts), terminal_size=SIZE, press=["question_mark"])


@pytest.mark.parametrize("size", list(SIZES))
def test_help_screen_sizes(snap_compare, demo_hosts: tuple[Host, ...], size: str) -> None:
    assert snap_compare(make_app(demo_hosts), terminal_size=SIZES[size], press=["question_mark"])
