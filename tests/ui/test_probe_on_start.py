"""Probing without being asked: on start (a setting; on for the demo and this machine, off for
an SSH inventory) and every N minutes; the table says how old each probe is."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.cli import build_parser
from tui.core.hosts import Host
from tui.ui.config import CONFIG_ENV
from tui.ui.launch import build_app
from tui.ui.widgets.fleet_table import FleetTable

from .conftest import all_probed, make_app, settle


@pytest.fixture(autouse=True)
def _no_local_inventory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)


def test_setting_decides_probe_on_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert build_app(build_parser().parse_args(["--demo"])).probe_on_start
    assert build_app(build_parser().parse_args([])).probe_on_start  # local + the demo
    inv = tmp_path / "hosts.yaml"
    inv.write_text("hosts:\n  - name: box\n    ssh: root@10.1.2.3\n")
    app = build_app(build_parser().parse_args(["--hosts", str(inv)]))
    assert not app.probe_on_start and app.reprobe_s == 0
    cfg = tmp_path / "config.yaml"
    cfg.write_text("probe_on_start: 'yes'\nreprobe_minutes: 5\n")
    monkeypatch.setenv(CONFIG_ENV, str(cfg))
    app = build_app(build_parser().parse_args(["--hosts", str(inv)]))
    assert app.probe_on_start and app.reprobe_s == 300
    cfg.write_text("probe_on_start: 'no'\n")
    assert not build_app(build_parser().parse_args(["--demo"])).probe_on_start
    cfg.write_text("probe_on_start: sometimes\n")
    with pytest.raises(Exception, match="'probe_on_start' must be one of auto, yes, no"):
        build_app(build_parser().parse_args(["--demo"]))


async def test_probes_on_start_and_again_periodically(demo_hosts: tuple[Host, ...]) -> None:
    app = make_app(demo_hosts, probe_on_start=True, reprobe_s=2.0)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, lambda: all_probed(app))  # no key pressed
        first = app.fleet["ct200"].result
        table = app.screen.query_one("#hosts-table", FleetTable)
        assert table.cell("ct200", "status") == "probed just now"
        await settle(pilot, lambda: app.fleet["ct200"].result not in (first, None))
