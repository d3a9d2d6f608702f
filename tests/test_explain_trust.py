"""``explain --container`` / ``--unit`` on a running host run the engine (``docker``,
``podman``) or ``journalctl`` only when the probe's trust rule lets them (the rule is probe.sh's
own ``trust_check``, ``probes.trust_prelude``): an untrusted stand-in — in a world-writable
directory, or owned by another uid — is never executed (its marker file stays absent), the
reason is said and explain exits 3; a trusted one runs under its deadline."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tui.cli import main
from tui.core import exitcodes
from tui.core.hosts import Host
from tui.core.run.symptom_source import NOT_TRUSTED, read_script

PROGRAMS = [("container", "docker"), ("container", "crictl"), ("unit", "journalctl")]
LINE = "RuntimeError: FlashInfer requires GPUs with sm75 or higher"


def stand_in(bin_dir: Path, name: str, marker: Path) -> Path:
    """A ``name`` that leaves ``marker`` when it runs and prints the error line."""
    bin_dir.mkdir(exist_ok=True)
    prog = bin_dir / name
    prog.write_text(f"#!/bin/sh\n: > {marker}\necho '{LINE}'\n")
    prog.chmod(0o755)
    return prog


def run_read(kind: str, path: str) -> subprocess.CompletedProcess[str]:
    script = read_script(Host(name="rh", local=True), kind, "sglang")  # type: ignore[arg-type]
    env = {"PATH": f"{path}:/usr/bin:/bin", "LC_ALL": "C"}
    return subprocess.run(["sh", "-s"], input=script, env=env, capture_output=True, text=True)


@pytest.mark.parametrize(("kind", "program"), PROGRAMS)
def test_a_trusted_program_runs(tmp_path: Path, kind: str, program: str) -> None:
    marker = tmp_path / "ran"
    stand_in(tmp_path / "bin", program, marker)
    done = run_read(kind, str(tmp_path / "bin"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == LINE
    assert marker.exists()


@pytest.mark.parametrize(("kind", "program"), PROGRAMS)
def test_a_world_writable_directory_is_not_run(tmp_path: Path, kind: str, program: str) -> None:
    marker = tmp_path / "ran"
    bad = tmp_path / "ww"
    stand_in(bad, program, marker)
    bad.chmod(0o777)
    done = run_read(kind, str(bad))
    assert done.returncode == NOT_TRUSTED
    assert f"{program} {bad}/{program} not run: {bad} is writable by group or others" in (
        done.stderr
    )
    assert not marker.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another uid needs root")
def test_another_users_program_is_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    prog = stand_in(tmp_path / "bin", "docker", marker)
    os.chown(prog, 65534, 65534)
    done = run_read("container", str(tmp_path / "bin"))
    assert done.returncode == NOT_TRUSTED
    assert f"{prog} is owned by uid 65534, neither root nor the probing user" in done.stderr
    assert not marker.exists()


@pytest.mark.sshd
def test_explain_over_real_sshd_never_runs_an_untrusted_docker(
    ssh_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "ran"
    bad = tmp_path / "ww"
    stand_in(bad, "docker", marker)
    bad.chmod(0o777)
    host = {"name": "rh", "ssh": ssh_env.alias, "env": {"PATH": f"{bad}:/usr/bin:/bin"}}
    inv = tmp_path / "hosts.yaml"
    inv.write_text(yaml.safe_dump({"hosts": [host]}))
    code = main(["--hosts", str(inv), "explain", "rh", "--container", "sglang", "--json"])
    err = capsys.readouterr().err
    assert code == exitcodes.USAGE
    assert "container sglang on rh: docker" in err
    assert "is writable by group or others" in err
    assert "nothing was run: give the text with --text" in err
    assert not marker.exists()
