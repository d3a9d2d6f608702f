"""A reader that stops early (`detective-tui … | head`) gets no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tui.core import exitcodes

REPO = Path(__file__).resolve().parents[1]


def test_closed_stdout_is_not_a_traceback(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before anything is written, as after `head` exits
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "tui.cli", "--demo", "diagnose", "ct200", "--markdown"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            env=env,
            cwd=REPO,
            timeout=120,
        )
    finally:
        os.close(write_end)
    err = proc.stderr.decode()
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert proc.returncode == exitcodes.BROKEN_PIPE
