"""Where detective-tui keeps its files, in one place.

Config, state and cache directories come from ``platformdirs``: an absolute
``XDG_CONFIG_HOME`` / ``XDG_STATE_HOME`` / ``XDG_CACHE_HOME`` wins on Linux and macOS alike
(relative values are ignored, as the XDG spec says); without them Linux uses ``~/.config``,
``~/.local/state`` and ``~/.cache``, macOS ``~/Library/Application Support`` (config and
state) and ``~/Library/Caches``. On macOS an inventory at ``~/.config/detective-tui/hosts.yaml``
(the XDG path, as earlier releases used there) is still found.

Two overrides serve tests and unusual setups: ``DETECTIVE_TUI_KNOWN_HOSTS`` (the known_hosts
file read and appended to) and ``DETECTIVE_TUI_SSH_CONFIG`` (the OpenSSH client config handed
to asyncssh). Values are read on each call, so a test that changes the environment sees its
change.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP = "detective-tui"
XDG_CONFIG_FALLBACK = Path(".config") / APP  # under $HOME: the XDG default, on every platform


def _dirs() -> platformdirs.PlatformDirs:
    """This platform's directories for the app (created by the code that writes to them)."""
    return platformdirs.PlatformDirs(APP, appauthor=False)


def config_dir() -> Path:
    return Path(_dirs().user_config_dir)


def state_dir() -> Path:
    return Path(_dirs().user_state_dir)


def cache_dir() -> Path:
    return Path(_dirs().user_cache_dir)


def sessions_dir() -> Path:
    """Transcripts: one JSONL file per session."""
    return state_dir() / "sessions"


def default_inventory() -> Path:
    """``hosts.yaml`` in the config dir. Where that dir is not ``~/.config/detective-tui``
    (macOS without ``XDG_CONFIG_HOME``) and holds none, an existing
    ``~/.config/detective-tui/hosts.yaml`` instead."""
    path = config_dir() / "hosts.yaml"
    legacy = Path.home() / XDG_CONFIG_FALLBACK / "hosts.yaml"
    xdg_set = os.path.isabs(os.environ.get("XDG_CONFIG_HOME", ""))
    if not xdg_set and not path.is_file() and legacy.is_file():
        return legacy
    return path


def known_hosts_file() -> Path:
    """The known_hosts file host keys are checked against and `trust` appends to."""
    override = os.environ.get("DETECTIVE_TUI_KNOWN_HOSTS")
    return Path(override) if override else Path.home() / ".ssh" / "known_hosts"


def ssh_config_file() -> Path | None:
    """The OpenSSH client config to honour, or None when there is none."""
    override = os.environ.get("DETECTIVE_TUI_SSH_CONFIG")
    path = Path(override) if override else Path.home() / ".ssh" / "config"
    return path if path.is_file() else None
