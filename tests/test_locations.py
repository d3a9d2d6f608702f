"""``tui.core.locations`` computes the XDG directories itself where the spec alone decides, as
``platformdirs`` does (compared here, on this platform, for each way the variables and HOME
can be set), and leaves every other case to ``platformdirs``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import platformdirs
import pytest

from tui.core import locations

KINDS = {"user_config_dir": locations.config_dir, "user_state_dir": locations.state_dir,
         "user_cache_dir": locations.cache_dir}  # fmt: skip


@pytest.mark.parametrize("xdg", ["absolute", "relative", "empty", "unset"])
@pytest.mark.parametrize("home", ["/home/u", "/home/u/", "/", "relative", "unset"])
def test_the_directories_are_platformdirs_ones(
    xdg: str, home: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var, _ in locations.XDG_DIRS.values():
        value = {"absolute": str(tmp_path / var), "relative": "rel/dir", "empty": ""}.get(xdg)
        if value is None:
            monkeypatch.delenv(var, raising=False)
        else:
            monkeypatch.setenv(var, value)
    if home == "unset":
        monkeypatch.delenv("HOME", raising=False)
    else:
        monkeypatch.setenv("HOME", home)
    for kind, ours in KINDS.items():
        theirs = Path(getattr(platformdirs.PlatformDirs(locations.APP, appauthor=False), kind))
        assert ours() == theirs, (kind, xdg, home)


def test_a_command_start_computes_them_without_platformdirs(tmp_path: Path) -> None:
    code = ("import sys; from tui.core import locations; locations.cache_dir(); "
            "locations.default_inventory(); print('platformdirs' in sys.modules)")  # fmt: skip
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=Path(__file__).parents[1],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert proc.stdout.strip() == "False"
