"""nvidia-smi's table and its one --query-gpu call start together on both probe paths (issue
18): each waits on the driver's initialisation, so the probe waits once. The real probe on a
fake ct200 whose nvidia-smi stand-in's table call cannot end before the query call has started
(they meet on a FIFO): one after the other, the table call would meet its deadline instead.
The records are those of the plain stand-in, byte for byte and in the same order."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from probes import probe_env, probe_script
from tui.demo import fakehost

SMI = re.compile(r"^@@DT1\t(?:smi|smirc|smipath|timeout|cut|notrun)\t.*$", re.MULTILINE)
# the table call (no argument) reads the FIFO, the one --query-gpu call (state and fabric
# fields together) writes it: neither ends until both have started
MEET = """[ -p "$d/meet" ] && case "$*" in
  "") read -r _ <"$d/meet" ;;
  --query-gpu=*utilization.gpu*fabric.state*) echo go >"$d/meet" ;;
esac
"""


def probe(env_of: dict[str, str], path: str) -> str:
    env = {"SHELL": "/bin/sh", "LANG": "C", "PATH": os.environ["PATH"], **env_of}
    env["DT_PROBE_PATH"] = path
    proc = subprocess.run(
        ["sh", "-s"], input=probe_script(), capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("path", ["sh", "py"])
def test_the_table_and_the_query_call_run_together(tmp_path: Path, path: str) -> None:
    fake = fakehost.build_fake_host(tmp_path / "root", fakehost.reference_ct200(service=False))
    env = {**fake.env}
    env.update(probe_env(fake.pythons, root=str(fake.root), tree_exec=True, step_timeout_s=3))
    plain = probe(env, path)
    shim = fake.root / "usr/bin/nvidia-smi"
    text = shim.read_text()
    head, sep, rest = text.partition('[ -f "$d/hang" ]')
    assert sep, "the fake nvidia-smi changed: no hang line to put the meeting before"
    shim.write_text(head + MEET + sep + rest)
    os.mkfifo(fake.root / "usr/share/detective-tui-fake/nvidia-smi/meet")
    together = probe(env, path)

    records = SMI.findall(together)
    assert "@@DT1\tsmirc\ttable\t0" in records and "@@DT1\tsmirc\tquery\t0" in records
    assert not [r for r in records if r.startswith("@@DT1\ttimeout")]
    assert records == SMI.findall(plain)
