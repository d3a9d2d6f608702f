"""Where detective-tui keeps its files, in one place.

Config, state and cache directories are ``platformdirs``': an absolute
``XDG_CONFIG_HOME`` / ``XDG_STATE_HOME`` / ``XDG_CACHE_HOME`` wins on Linux and macOS alike
(relative values are ignored, as the XDG spec says); without them Linux uses ``~/.config``,
``~/.local/state`` and ``~/.cache``, macOS ``~/Library/Application Support`` (config and
state) and ``~/Library/Caches``. Where the XDG spec alone decides (an absolute variable; on
Linux, its default under an absolute ``HOME``) they are computed here as ``platformdirs``
computes them, without importing it (a few ms of every command's start-up);
``tests/test_locations.py`` compares the two. On macOS an inventory at
``~/.config/detective-tui/hosts.yaml`` (the XDG path, as earlier releases used there) is still
found.

Two overrides serve tests and unusual setups: ``DETECTIVE_TUI_KNOWN_HOSTS`` (the known_hosts
file read and appended to) and ``DETECTIVE_TUI_SSH_CONFIG`` (the OpenSSH client config handed
to asyncssh). Values are read on each call, so a test that changes the environment sees its
change.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP = "detective-tui"
PLATFORM = sys.platform  # (tests set another)
XDG_CONFIG_FALLBACK = Path(".config") / APP  # under $HOME: the XDG default, on every platform
# platformdirs' name of each directory: its XDG variable, and the spec's default under HOME
XDG_DIRS = {
    "user_config_dir": ("XDG_CONFIG_HOME", ".config"),
    "user_state_dir": ("XDG_STATE_HOME", ".local/state"),
    "user_cache_dir": ("XDG_CACHE_HOME", ".cache"),
}


def _user_dir(kind: str) -> Path:
    """This platform's ``kind`` directory for the app (created by the code that writes to
    it); ``platformdirs`` is imported only where more than the XDG spec decides."""
    var, default = XDG_DIRS[kind]
    if PLATFORM != "win32" and os.path.isabs(base := os.environ.get(var, "")):
        return Path(base) / APP
    home = os.environ.get("HOME", "")
    linux = PLATFORM.startswith("linux") and not hasattr(sys, "getandroidapilevel")
    if linux and "ANDROID_DATA" not in os.environ and os.path.isabs(home):
        return Path(home) / default / APP
    import platformdirs

    return Path(getattr(platformdirs.PlatformDirs(APP, appauthor=False), kind))


def config_dir() -> Path:
    return _user_dir("user_config_dir")


def state_dir() -> Path:
    return _user_dir("user_state_dir")


def cache_dir() -> Path:
    return _user_dir("user_cache_dir")


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
