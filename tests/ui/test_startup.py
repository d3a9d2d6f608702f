"""What ``detective-tui`` (no sub-command) opens: inventory, demo fleet, and startup errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.cli import build_parser, main
from tui.core import exitcodes
from tui.demo.fleet import DEMO_HOSTS
from tui.ui.launch import DEMO_NOTICE, build_app

from .conftest import settle

DEMO_NAMES = [d.name for d in DEMO_HOSTS]


@pytest.fixture(autouse=True)
def _no_local_inventory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Run where there is no ./hosts.yaml (the XDG dirs are per-test already)."""
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)


def test_demo_flag_opens_the_demo_fleet() -> None:
    app = build_app(build_parser().parse_args(["--demo"]))
    assert list(app.fleet.order) == DEMO_NAMES
    assert app.notice == DEMO_NOTICE
    assert not app.read_only


def test_no_inventory_means_local_plus_demo() -> None:
    app = build_app(build_parser().parse_args(["--read-only"]))
    assert list(app.fleet.order) == ["local", *DEMO_NAMES]
    assert "No inventory found" in (app.notice or "")
    assert app.read_only


def test_inventory_hosts_only(tmp_path: Path) -> None:
    inv = tmp_path / "hosts.yaml"
    inv.write_text("hosts:\n  - name: box\n    ssh: root@10.1.2.3\n  - name: me\n    local: true\n")
    app = build_app(build_parser().parse_args(["--hosts", str(inv)]))
    assert list(app.fleet.order) == ["box", "me"]
    assert app.notice is None


BAD_INVENTORY = """\
hosts:
  - name: box
    ssh: root@10.1.2.4
  - name: gpu1
    ssh: root@10.1.2.3
    pyhton: /usr/bin/python3
    tgas: [a]
  - name: box
    local: true
"""


async def test_bad_inventory_entries_are_rows_and_the_good_hosts_load(tmp_path: Path) -> None:
    """A typo'd key does not stop the TUI: the good host loads, each bad entry is a row whose
    Status and Reason give its file:line error, the notice lists every error at once, and a
    probe of the bad row connects nowhere."""
    inv = tmp_path / "hosts.yaml"
    inv.write_text(BAD_INVENTORY)
    app = build_app(build_parser().parse_args(["--hosts", str(inv)]))
    assert list(app.fleet.order) == ["box", "gpu1", "hosts.yaml:8"]
    notice = app.notice or ""
    assert "3 error(s)" in notice
    for where, what in (
        (6, "'pyhton' is unknown (did you mean 'python'?)"),
        (7, "'tgas'"),
        (8, "'box' is used twice"),
    ):
        assert f"{inv}:{where}: " in notice and what in notice
    assert app.fleet["gpu1"].status == "bad-inventory"  # before any probe
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        assert app.fleet["box"].status == "idle"  # an SSH inventory: no probe on start
        bad = app.fleet["gpu1"]
        assert bad.status == "bad-inventory"
        assert bad.row.status == "inventory error"
        assert bad.row.reason.startswith(f"{inv}:6: key 'pyhton' is unknown")
        app.request_probe(("gpu1",))
        await settle(pilot, lambda: not app.fleet["gpu1"].busy)
        result = app.fleet["gpu1"].result
        assert result is not None and result.error_kind == "bad-inventory"
        assert app.fleet["gpu1"].status == "bad-inventory"
        assert "'tgas'" in (result.error or "")


def test_bad_config_exits_3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text("concurrency: many\n")
    monkeypatch.setenv("DETECTIVE_TUI_CONFIG", str(cfg))
    assert main(["--demo"]) == exitcodes.USAGE
    assert f"{cfg}: setting 'concurrency' must be a int" in capsys.readouterr().err


def test_unknown_theme_falls_back_with_a_notice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text("theme: no-such-theme\n")
    monkeypatch.setenv("DETECTIVE_TUI_CONFIG", str(cfg))
    app = build_app(build_parser().parse_args(["--demo"]))
    assert app.theme == "textual-dark"
    assert "Unknown theme 'no-such-theme'" in (app.notice or "")


async def test_theme_choice_is_saved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "config.yaml"
    monkeypatch.setenv("DETECTIVE_TUI_CONFIG", str(cfg))
    app = build_app(build_parser().parse_args(["--demo"]))
    async with app.run_test() as pilot:
        app.theme = "nord"
        await pilot.pause()
    assert "theme: nord" in cfg.read_text()
