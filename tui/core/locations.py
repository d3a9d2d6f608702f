"""Where detective-tui keeps its files (XDG base directories), in one place.

Every path honours the XDG variables (``XDG_CONFIG_HOME``, ``XDG_STATE_HOME``,
``XDG_CACHE_HOME``) and two overrides used by tests and unusual setups:
``DETECTIVE_TUI_KNOWN_HOSTS`` (the known_hosts file read and appended to) and
``DETECTIVE_TUI_SSH_CONFIG`` (the OpenSSH client config handed to asyncssh).
Values are read on each call, so a test that changes the environment sees its change.
"""

from __future__ import annotations

import os
from pathlib import Path

APP = "detective-tui"


def _xdg(var: str, fallback: str) -> Path:
    value = os.environ.get(var, "")
    # The XDG spec says relative values are invalid and must be ignored.
    if value and os.path.isabs(value):
        return Path(value)
    return Path.home() / fallback


def config_dir() -> Path:
    return _xdg("XDG_CONFIG_HOME", ".config") / APP


def state_dir() -> Path:
    return _xdg("XDG_STATE_HOME", ".local/state") / APP


def cache_dir() -> Path:
    return _xdg("XDG_CACHE_HOME", ".cache") / APP


def sessions_dir() -> Path:
    """Transcripts: one JSONL file per session."""
    return state_dir() / "sessions"


def default_inventory() -> Path:
    return config_dir() / "hosts.yaml"


def known_hosts_file() -> Path:
    """The known_hosts file host keys are checked against and `trust` appends to."""
    override = os.environ.get("DETECTIVE_TUI_KNOWN_HOSTS")
    return Path(override) if override else Path.home() / ".ssh" / "known_hosts"


def ssh_config_file() -> Path | None:
    """The OpenSSH client config to honour, or None when there is none."""
    override = os.environ.get("DETECTIVE_TUI_SSH_CONFIG")
    path = Path(override) if override else Path.home() / ".ssh" / "config"
    return path if path.is_file() else None
