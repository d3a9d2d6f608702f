"""UI settings: defaults, the env override, and errors that name the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.core import locations
from tui.ui.config import CONFIG_ENV, ConfigError, Settings, config_path, load_settings, save_theme


def test_missing_file_gives_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    assert config_path() == locations.config_dir() / "config.yaml"
    assert load_settings() == Settings()


def test_env_override_and_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "ui.yaml"
    cfg.write_text("theme: nord\nconcurrency: 4\n")
    monkeypatch.setenv(CONFIG_ENV, str(cfg))
    assert config_path() == cfg
    assert load_settings() == Settings(theme="nord", concurrency=4)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("themes: nord\n", "unknown setting 'themes'"),
        ("concurrency: lots\n", "setting 'concurrency' must be a int, got 'lots'"),
        ("concurrency: true\n", "setting 'concurrency' must be a int"),
        ("concurrency: 0\n", "'concurrency' must be at least 1"),
        ("- a list\n", "expected a mapping of settings, got list"),
        ("theme: [unclosed\n", "not valid YAML"),
    ],
)
def test_bad_config_names_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_settings(cfg)
    assert str(info.value).startswith(str(cfg))
    assert message in str(info.value)


def test_yaml_error_has_line_number(tmp_path: Path) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text("theme: nord\nconcurrency: [1,\n")
    with pytest.raises(ConfigError, match=rf"^{cfg}:\d+: not valid YAML"):
        load_settings(cfg)


def test_save_theme_keeps_other_settings(tmp_path: Path) -> None:
    cfg = tmp_path / "sub" / "config.yaml"
    save_theme("gruvbox", cfg)
    assert load_settings(cfg) == Settings(theme="gruvbox")
    cfg.write_text("concurrency: 3\n")
    save_theme("nord", cfg)
    assert load_settings(cfg) == Settings(theme="nord", concurrency=3)
