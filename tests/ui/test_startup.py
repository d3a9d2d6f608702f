"""What ``detective-tui`` (no sub-command) opens: inventory, demo fleet, and startup errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.cli import build_parser, main
from tui.core import exitcodes
from tui.demo.fleet import DEMO_HOSTS
from tui.ui.app import DEMO_NOTICE, build_app

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


def test_bad_inventory_exits_3_naming_file_and_line(tmp_path: Path, capsys) -> None:
    inv = tmp_path / "hosts.yaml"
    inv.write_text("hosts:\n  - name: box\n    pyhton: /usr/bin/python3\n")
    assert main(["--hosts", str(inv)]) == exitcodes.USAGE
    err = capsys.readouterr().err
    assert f"{inv}:3" in err and "pyhton" in err


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
