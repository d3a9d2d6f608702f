"""A reader that goes away (`detective-tui … | head -1`): every command exits 141, as a program
killed by SIGPIPE, with no traceback — text output included (Rich's console would exit 1)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SSHEnv

from tui.core import exitcodes
from tui.core.records.transcript import Transcript

REPO = Path(__file__).resolve().parents[1]


def run_with_closed_stdout(*args: str) -> subprocess.CompletedProcess[bytes]:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before anything is written, as after `head` exits
    try:
        return subprocess.run(
            [sys.executable, "-m", "tui.cli", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            cwd=REPO,
            timeout=300,
        )
    finally:
        os.close(write_end)


def assert_broken_pipe(proc: subprocess.CompletedProcess[bytes]) -> None:
    err = proc.stderr.decode()
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert proc.returncode == exitcodes.BROKEN_PIPE, (proc.returncode, err[-2000:])


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    """What the commands read: a recorded session (`transcript`), the demo host ct200's probe
    output as another engine captures it (`ingest`), an MPI hostfile (`import`)."""
    with Transcript.open_session() as tr:
        tr.record("cli", command="probe", targets=["ct200"])
    script = tmp_path / "probe.sh"
    script.write_text(
        subprocess.run(
            [sys.executable, "-m", "tui.cli", "probe-script", "--demo", "ct200"],
            capture_output=True, text=True, check=True, cwd=REPO,
        ).stdout
    )  # fmt: skip
    captured = tmp_path / "captured"
    captured.mkdir()
    with (captured / "ct200").open("w") as out:
        subprocess.run(["sh", str(script)], stdout=out, check=True, timeout=120)
    hostfile = tmp_path / "hostfile"
    hostfile.write_text("node1 slots=8\nnode2 slots=8\n")
    return {"session": tr.path, "captured": captured, "hostfile": hostfile}


COMMANDS = {
    "help": ("--help",),
    "probe --help": ("probe", "--help"),
    "probe": ("--demo", "probe", "ct200"),
    "probe --json": ("--demo", "probe", "ct200", "--json"),
    "diagnose": ("--demo", "diagnose", "ct200"),
    "diagnose --json": ("--demo", "diagnose", "ct200", "--json"),
    "diagnose --markdown": ("--demo", "diagnose", "ct200", "--markdown"),
    "fix --dry-run": ("--demo", "fix", "ct201", "use-installed-toolkit", "--dry-run"),
    "fix --dry-run --json": (
        *("--demo", "fix", "ct201", "use-installed-toolkit"),
        *("--dry-run", "--json"),
    ),
    "fix --history": ("--demo", "fix", "ct201", "--history"),
    "fix --history --json": ("--demo", "fix", "ct201", "--history", "--json"),
    "validate": ("--demo", "validate", "ct201"),
    "validate --json": ("--demo", "validate", "ct201", "--json"),
    "transcript list": ("transcript", "list"),
    "transcript show": ("transcript", "show", "{session}"),
    "transcript export": ("transcript", "export", "{session}", "--format", "html"),
    "probe-script": ("--demo", "probe-script", "ct200"),
    "ingest": ("ingest", "{captured}"),
    "ingest --json": ("ingest", "{captured}", "--json"),
    "ingest --markdown": ("ingest", "{captured}", "--markdown"),
    "import": ("import", "hostfile", "{hostfile}", "--output", "-"),
    "export prometheus": ("--demo", "export", "prometheus", "ct200"),
    "check": ("--demo", "check", "ct200", "--format", "nagios"),
    "explain": ("--demo", "explain", "ct200", "--unit", "sglang.service"),
    "explain --json": ("--demo", "explain", "ct200", "--unit", "sglang.service", "--json"),
}


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_exits_141_when_its_reader_is_gone(
    name: str, inputs: dict[str, Path]
) -> None:
    args = [a.format(**inputs) for a in COMMANDS[name]]
    assert_broken_pipe(run_with_closed_stdout(*args))


def test_trust_exits_141_when_its_reader_is_gone(ssh_env: SSHEnv) -> None:
    assert_broken_pipe(run_with_closed_stdout("trust", ssh_env.alias, "--yes"))


def test_a_shell_pipeline_into_head_gets_141() -> None:
    """`detective-tui diagnose ct200 | head -1` as a shell runs it (text output, more than a
    pipe holds after head has gone)."""
    proc = subprocess.run(
        ["bash", "-c", f"{sys.executable} -m tui.cli --demo diagnose --all | head -1 >/dev/null;"
         ' echo "${PIPESTATUS[0]}"'],
        capture_output=True, text=True, cwd=REPO, timeout=300,
    )  # fmt: skip
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout.strip() == str(exitcodes.BROKEN_PIPE), proc.stderr[-2000:]
