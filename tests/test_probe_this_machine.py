"""The real probe run on this machine as it is (no root prefix): its CUDA 13.0 toolkit where it
has one, and every pyenv interpreter here with the serving process the suite runs.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from probes import probe_env, probe_script
from tui.core.facts.build import facts_from_output

CUDA13 = Path("/usr/local/cuda-13.0/bin/nvcc")


@pytest.mark.skipif(
    not os.access(CUDA13, os.X_OK), reason="no /usr/local/cuda-13.0 on this machine"
)
def test_probe_on_this_machine_finds_cuda13() -> None:
    env = {**os.environ, **probe_env([], step_timeout_s=10)}
    proc = subprocess.run(
        ["sh", "-s"], input=probe_script(), capture_output=True, text=True, env=env, timeout=120
    )
    facts = facts_from_output(proc.stdout)
    assert facts.probe.complete and facts.probe.root is None
    tk = facts.toolkit_at("/usr/local/cuda-13.0")
    assert (tk.version, tk.full_version) == ("13.0", "13.0.88")


PYENV = Path.home() / ".pyenv" / "versions"
OLD_AND_NEW = sorted(PYENV.glob("[23].*/bin/python[23].*[0-9]")) if PYENV.is_dir() else []


@pytest.mark.skipif(not OLD_AND_NEW, reason="no pyenv interpreters on this machine")
def test_snippet_on_every_python_here(serving_process_on_this_machine) -> None:
    """pyfacts.py runs on 3.8+ (3.6 too); Python 2 gives a clear error, not a crash. This
    machine is probed as it is: the serving processes on it (the suite runs one) add their own
    interpreters, which are not the ones asked for."""
    env = {**os.environ, **probe_env([str(p) for p in OLD_AND_NEW], step_timeout_s=20)}
    out = subprocess.run(
        ["sh", "-s"], input=probe_script(), capture_output=True, text=True, env=env, timeout=300
    ).stdout
    facts = facts_from_output(out)
    assert any(c.kind == "process" and "sglang" in (c.cmdline or "") for c in facts.contexts)
    asked = [py for py in facts.pythons if py.source == "inventory"]
    assert len(asked) == len(OLD_AND_NEW)
    for path, py in zip(OLD_AND_NEW, asked, strict=True):
        minor = path.name.removeprefix("python")
        if minor.startswith("2."):
            assert py.version is None and py.error.startswith("not a Python 3.6+"), py
        else:
            assert py.error is None and py.version.startswith(minor + "."), py
            assert py.prefix == str(path.parent.parent), py
