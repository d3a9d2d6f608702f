"""SVG snapshots of the main screens (fixed size, no animation, fixed clock).

Create or update with ``pytest tests/ui/test_snapshots.py --snapshot-update``; the files live in
``tests/ui/__snapshots__``.
"""

from __future__ import annotations

from tui.core.hosts import Host
from tui.ui.screens.hostkey import HostKeyScreen

from .conftest import make_app, probe_all, settle

SIZE = (120, 36)


async def _probe_all(pilot) -> None:
    await probe_all(pilot)
    pilot.app.clear_notifications()
    await pilot.pause()


def test_hosts_screen(snap_compare, demo_hosts: tuple[Host, ...]) -> None:
    assert snap_compare(make_app(demo_hosts), terminal_size=SIZE, run_before=_probe_all)


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
