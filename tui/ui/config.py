"""UI settings: theme, probe concurrency, probing on start and every N minutes, when a probe
is stale, the hosts table's columns — from one YAML file.

Looked up at ``$DETECTIVE_TUI_CONFIG`` (tests), else ``<XDG config>/detective-tui/config.yaml``.
A missing file means the defaults; a malformed one is an error naming the file and the key.
``reprobe_minutes`` is overridden for one run by ``--reprobe-minutes`` or
``$DETECTIVE_TUI_REPROBE_MINUTES`` (the command line first), ``columns`` by ``--columns`` or
``$DETECTIVE_TUI_COLUMNS`` (``host,status,gpu``). A setting changed from the TUI is
written whole through a temp file and a rename: a full disk or a kill leaves the old file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from pathlib import Path

import yaml

from tui.core import locations
from tui.ui.fleet_state import COLUMNS

CONFIG_ENV = "DETECTIVE_TUI_CONFIG"
REPROBE_ENV = "DETECTIVE_TUI_REPROBE_MINUTES"
COLUMNS_ENV = "DETECTIVE_TUI_COLUMNS"
COLUMN_KEYS = tuple(key for key, _ in COLUMNS)


PROBE_ON_START = ("auto", "yes", "no")


class ConfigError(Exception):
    pass


@dataclass(frozen=True)
class Settings:
    theme: str = "textual-dark"
    concurrency: int = 16  # hosts probed at the same time by the TUI
    probe_on_start: str = "auto"  # yes | no | auto: yes for the demo fleet and `local` alone
    reprobe_minutes: int = 0  # probe every host again every N minutes (0: never)
    stale_minutes: int = 60  # a probe older than this is marked stale (0: never)
    columns: tuple[str, ...] = ()  # the hosts table's columns in order (empty: all, as shipped)

    @classmethod
    def from_mapping(cls, data: object, source: str) -> Settings:
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise ConfigError(
                f"{source}: expected a mapping of settings, got {type(data).__name__}"
            )
        known = {f.name: f for f in fields(cls)}
        values: dict[str, object] = {}
        for key, value in data.items():
            if key not in known:
                raise ConfigError(
                    f"{source}: unknown setting {key!r}; known settings: {', '.join(known)}"
                )
            if key == "columns":
                values[key] = parse_columns(value, f"{source}: setting 'columns'")
                continue
            expected = type(getattr(cls(), key))
            if not isinstance(value, expected) or isinstance(value, bool) != (expected is bool):
                raise ConfigError(
                    f"{source}: setting {key!r} must be a {expected.__name__}, got {value!r}"
                )
            values[key] = value
        settings = cls(**values)  # type: ignore[arg-type]
        if settings.concurrency < 1:
            raise ConfigError(f"{source}: setting 'concurrency' must be at least 1")
        for key in ("reprobe_minutes", "stale_minutes"):
            if getattr(settings, key) < 0:
                raise ConfigError(f"{source}: setting {key!r} must be 0 (off) or more")
        if settings.probe_on_start not in PROBE_ON_START:
            raise ConfigError(
                f"{source}: setting 'probe_on_start' must be one of {', '.join(PROBE_ON_START)}, "
                f"got {settings.probe_on_start!r}"
            )
        return settings


def parse_columns(value: object, where: str) -> tuple[str, ...]:
    """A list of column keys (or ``host,status,gpu``), each known and once."""
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of column names, got {value!r}")
    for key in value:
        if key not in COLUMN_KEYS:
            raise ConfigError(f"{where}: unknown column {key!r}; known: {', '.join(COLUMN_KEYS)}")
    if len(set(value)) != len(value):
        raise ConfigError(f"{where}: a column is named twice in {value!r}")
    return tuple(value)


def shown_columns(columns: tuple[str, ...]) -> tuple[str, ...]:
    """The columns the table shows: ``columns`` (all when empty), Host always, first."""
    return ("host", *(k for k in columns or COLUMN_KEYS if k != "host"))


def config_path() -> Path:
    override = os.environ.get(CONFIG_ENV)
    if override:
        return Path(override)
    return locations.config_dir() / "config.yaml"


def load_settings(path: Path | None = None) -> Settings:
    path = path or config_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Settings()
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror}") from e
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ConfigError(f"{where}: not valid YAML: {getattr(e, 'problem', e)}") from e
    return Settings.from_mapping(data, str(path))


def save_setting(key: str, value: object, path: Path | None = None) -> Path:
    """Remember one setting (keeps the file's other settings); returns the file written.
    Raises ``ConfigError`` for a value the file could not be read back with, ``OSError`` when
    it cannot be written (the old file is kept)."""
    path = path or config_path()
    current = load_settings(path)
    data = {f.name: getattr(current, f.name) for f in fields(Settings)}
    data[key] = value
    data = {k: list(v) if isinstance(v, tuple) else v for k, v in data.items()}
    Settings.from_mapping(data, str(path))  # the file must load again
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with tmp.open("w", encoding="utf-8") as fh:
            fh.write(yaml.safe_dump(data, sort_keys=True))
            fh.flush()
            os.fsync(fh.fileno())
        tmp.replace(path)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise
    return path


def save_theme(theme: str, path: Path | None = None) -> None:
    """Remember the chosen theme (keeps the file's other settings)."""
    save_setting("theme", theme, path)


def reprobe_override(cli: int | None) -> tuple[int, str] | None:
    """``reprobe_minutes`` for this run from the command line or the environment, and which
    one said it; None: the config file's value holds."""
    if cli is not None:
        if cli < 0:
            raise ConfigError("--reprobe-minutes must be 0 (off) or more")
        return cli, "--reprobe-minutes"
    raw = os.environ.get(REPROBE_ENV)
    if raw is None or not raw.strip():
        return None
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise ConfigError(f"{REPROBE_ENV}={raw!r}: use a whole number of minutes, 0 for never")
    return value, REPROBE_ENV


def columns_override(cli: str | None) -> tuple[tuple[str, ...], str] | None:
    """``columns`` for this run from ``--columns`` or the environment, and which one said it;
    None: the config file's value holds."""
    if cli is not None:
        return parse_columns(cli, "--columns"), "--columns"
    raw = os.environ.get(COLUMNS_ENV)
    if raw is None or not raw.strip():
        return None
    return parse_columns(raw, COLUMNS_ENV), COLUMNS_ENV
