"""``reprobe_minutes`` from the TUI (ctrl+r, in the palette): applied at once, written to the
config file (its other settings kept), the run's ``--reprobe-minutes`` / environment override
named; a config file that cannot be read back is left alone and the interval holds for the
session only."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
import yaml

from tui.core.hosts import Host
from tui.ui.config import CONFIG_ENV, REPROBE_ENV, ConfigError, load_settings
from tui.ui.launch import build_app
from tui.ui.palette import FleetCommands
from tui.ui.screens.reprobe import ReprobeScreen

from .conftest import make_app, settle


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config" / "config.yaml"
    path.parent.mkdir()
    path.write_text("stale_minutes: 30\n")
    monkeypatch.setenv(CONFIG_ENV, str(path))
    monkeypatch.delenv(REPROBE_ENV, raising=False)
    return path


async def _set(pilot, text: str) -> None:
    await pilot.press("ctrl+r")
    await settle(pilot, lambda: isinstance(pilot.app.screen, ReprobeScreen))
    await pilot.press("ctrl+a", "ctrl+k", *text, "enter")
    await pilot.pause()


async def test_set_apply_and_save(demo_hosts: tuple[Host, ...], config: Path) -> None:
    app = make_app(demo_hosts)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        titles = [c[0] for c in FleetCommands(app.screen)._all()]
        assert "Re-probe interval (^r)" in titles or "Re-probe interval (ctrl+r)" in titles
        await _set(pilot, "99999")  # past a week: said, and the dialog stays
        assert isinstance(app.screen, ReprobeScreen)
        assert "from 0 (never) to 10080" in str(app.screen.query_one("#reprobe-error").render())
        await pilot.press("escape")
        await _set(pilot, "5")
        assert not isinstance(app.screen, ReprobeScreen)
        assert app.reprobe_s == 300 and app._reprobe_timer is not None
        assert yaml.safe_load(config.read_text())["stale_minutes"] == 30  # kept
        assert load_settings(config).reprobe_minutes == 5
        assert list(app._notifications)[-1].message == (
            f"Re-probing every 5 min; saved to {config}"
        )
        await _set(pilot, "0")
        assert app.reprobe_s == 0 and app._reprobe_timer is None
        assert load_settings(config).reprobe_minutes == 0
        assert list(app._notifications)[-1].message.startswith("Re-probing never; saved")


async def test_an_override_is_named(demo_hosts: tuple[Host, ...], config: Path) -> None:
    app = make_app(demo_hosts, reprobe_s=420.0, reprobe_from="--reprobe-minutes")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await pilot.press("ctrl+r")
        await settle(pilot, lambda: isinstance(app.screen, ReprobeScreen))
        body = str(app.screen.query_one("#reprobe-body").render())
        assert "Now: every 7 min" in body and "came from --reprobe-minutes" in body
        await pilot.press("escape")
        await _set(pilot, "2")
        assert app.reprobe_s == 120
        assert "(--reprobe-minutes still wins at the next start)" in (
            list(app._notifications)[-1].message
        )


async def test_a_bad_config_file_is_left_alone(demo_hosts: tuple[Host, ...], config: Path) -> None:
    config.write_text("reprobe_minutes: [1\n")  # not YAML
    app = make_app(demo_hosts)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await _set(pilot, "3")
        assert app.reprobe_s == 180  # for this session
        message = list(app._notifications)[-1].message
        assert message.startswith(
            f"Re-probing every 3 min for this session only: {config}:2: not valid YAML"
        )
    assert config.read_text() == "reprobe_minutes: [1\n"


def test_command_line_then_environment_then_file(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config.write_text("reprobe_minutes: 9\n")

    def app(cli: int | None):
        return build_app(argparse.Namespace(demo=True, read_only=False, reprobe_minutes=cli))

    assert (app(None).reprobe_s, app(None).reprobe_from) == (540, None)
    monkeypatch.setenv(REPROBE_ENV, "4")
    assert (app(None).reprobe_s, app(None).reprobe_from) == (240, REPROBE_ENV)
    assert (app(7).reprobe_s, app(7).reprobe_from) == (420, "--reprobe-minutes")
    monkeypatch.setenv(REPROBE_ENV, "soon")
    with pytest.raises(ConfigError, match=f"{REPROBE_ENV}='soon': use a whole number"):
        app(None)
