"""The hosts table's columns: chosen in a modal (`C`, in the palette), applied at once and
saved as `columns` in config.yaml through a temp file and a rename; `--columns` or
`DETECTIVE_TUI_COLUMNS` for one run, named; `Home`/`End` jump sideways to the first/last
column (`ctrl+home`/`ctrl+end`: the first/last row)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
import yaml
from textual.widgets import SelectionList

from tui.core.hosts import Host
from tui.ui.config import (
    COLUMNS_ENV,
    CONFIG_ENV,
    ConfigError,
    Settings,
    load_settings,
    parse_columns,
)
from tui.ui.launch import build_app
from tui.ui.screens.columns import ColumnsScreen
from tui.ui.widgets.fleet_table import FleetTable

from .conftest import make_app, settle


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config" / "config.yaml"
    path.parent.mkdir()
    path.write_text("stale_minutes: 30\n")
    monkeypatch.setenv(CONFIG_ENV, str(path))
    monkeypatch.delenv(COLUMNS_ENV, raising=False)
    return path


def _keys(app) -> list[str]:
    return [k for k, _ in app.screen.query_one("#hosts-table", FleetTable).columns]


def test_the_file_names_known_columns_only(config: Path) -> None:
    config.write_text("columns: [host, gpu, driver]\n")
    assert load_settings(config).columns == ("host", "gpu", "driver")
    config.write_text("columns: [host, gpux]\n")
    with pytest.raises(ConfigError, match="'columns': unknown column 'gpux'; known: host, status"):
        load_settings(config)
    config.write_text("columns: [gpu, gpu]\n")
    with pytest.raises(ConfigError, match="a column is named twice"):
        load_settings(config)
    config.write_text("columns: gpu\n")  # one word is a list of one
    assert load_settings(config).columns == ("gpu",)
    with pytest.raises(ConfigError, match="must be a list of column names, got 3"):
        parse_columns(3, "x")


async def test_choose_apply_and_save(demo_hosts: tuple[Host, ...], config: Path) -> None:
    hosts = tuple(h for h in demo_hosts if h.name in {"ct200", "h100-node"})
    app = make_app(hosts, settings=Settings(columns=("gpu", "status", "driver")))
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        assert _keys(app) == ["host", "gpu", "status", "driver"]  # Host always first
        await pilot.press("C")
        await settle(pilot, lambda: isinstance(app.screen, ColumnsScreen))
        listing = app.screen.query_one(SelectionList)
        assert [o.value for o in listing.options][:3] == ["gpu", "status", "driver"]
        assert set(listing.selected) == {"gpu", "status", "driver"}
        await pilot.press("escape")  # nothing changes
        assert _keys(app) == ["host", "gpu", "status", "driver"]
        assert "columns" not in config.read_text()
        await pilot.press("C")
        await settle(pilot, lambda: isinstance(app.screen, ColumnsScreen))
        listing = app.screen.query_one(SelectionList)
        listing.highlighted = 0
        await pilot.press("space")  # hide GPU
        await pilot.press("down", "right_square_bracket")  # Status after Driver
        await pilot.press("down", "space")  # show Worst (the first hidden one)
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, ColumnsScreen)
        assert _keys(app) == ["host", "driver", "status", "worst"]
        table = app.screen.query_one("#hosts-table", FleetTable)
        assert table.row_names and table.cell("ct200", "driver") == ""  # not probed yet
        saved = yaml.safe_load(config.read_text())
        assert saved["columns"] == ["host", "driver", "status", "worst"]
        assert saved["stale_minutes"] == 30  # the file's other settings kept
        assert not list(config.parent.glob("*.tmp"))
        assert list(app._notifications)[-1].message == (
            f"Columns Host, Driver, Status, Worst; saved to {config}"
        )
        await pilot.press("s", "s")  # sorting walks the columns shown
        assert app.screen.sort_column == "status"
        await pilot.press("C")  # r brings every column back, in the shipped order
        await settle(pilot, lambda: isinstance(app.screen, ColumnsScreen))
        await pilot.press("r", "enter")
        await pilot.pause()
        assert _keys(app)[:4] == ["host", "status", "worst", "reason"] and len(_keys(app)) == 12


async def test_a_config_that_does_not_load_is_left_alone(
    demo_hosts: tuple[Host, ...], config: Path
) -> None:
    config.write_text("columns: [host, sm\n")  # not YAML: left alone
    app = make_app(demo_hosts[:1], columns_from=COLUMNS_ENV)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await pilot.press("C")
        await settle(pilot, lambda: isinstance(app.screen, ColumnsScreen))
        body = str(app.screen.query_one("#columns-body").render())
        assert f"came from {COLUMNS_ENV}, which wins at the next start" in body
        app.screen.query_one(SelectionList).highlighted = 0
        await pilot.press("space", "enter")  # hide Status
        await pilot.pause()
        assert "status" not in _keys(app)
        message = list(app._notifications)[-1].message
        assert message.startswith("Columns Host, Worst, Reason,") and (
            f"for this session only: {config}:2: not valid YAML" in message
        )
    assert config.read_text() == "columns: [host, sm\n"


def test_command_line_then_environment_then_file(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config.write_text("columns: [host, sm]\n")

    def app(cli: str | None):
        args = argparse.Namespace(demo=True, read_only=False, reprobe_minutes=None, columns=cli)
        built = build_app(args)
        return built.settings.columns, built.columns_from

    assert app(None) == (("host", "sm"), None)
    monkeypatch.setenv(COLUMNS_ENV, "gpu,driver")
    assert app(None) == (("gpu", "driver"), COLUMNS_ENV)
    assert app("status") == (("status",), "--columns")
    with pytest.raises(ConfigError, match="--columns: unknown column 'nope'"):
        app("nope")


async def test_home_and_end_jump_sideways(demo_hosts: tuple[Host, ...]) -> None:
    app = make_app(demo_hosts)
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.screen.query_one("#hosts-table", FleetTable)
        await pilot.pause()
        assert table.max_scroll_x > 0  # twelve columns do not fit in 80
        await pilot.press("end")
        assert table.scroll_offset.x == table.max_scroll_x and table.cursor_row == 0
        await pilot.press("home")
        assert table.scroll_offset.x == 0
        await pilot.press("ctrl+end")
        assert table.cursor_row == len(demo_hosts) - 1
        await pilot.press("ctrl+home")
        assert table.cursor_row == 0
