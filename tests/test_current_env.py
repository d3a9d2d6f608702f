"""The `local` target is judged in the current process environment (serving processes and
units still first), and says where a login shell would resolve the toolkit differently."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from probes import probe_env, probe_script
from tui.cli import main
from tui.core.facts import Facts
from tui.core.facts.build import facts_from_output
from tui.core.judge.diagnosis import diagnose
from tui.core.rules.subject import judging_context
from tui.demo import fakehost

C128 = "/usr/local/cuda-12.8"
C130 = "/usr/local/cuda-13.0"
VENV = "/root/venv_sglang211"


def spec(current: str, *, service: bool = False) -> fakehost.FakeHostSpec:
    """ct201 without (or with) its service; the shell has `module load`ed ``current`` while
    ~/.bashrc (what a login shell runs) still exports CUDA 12.8."""
    base = fakehost.reference_ct200(with_cuda13=True, service=service)
    env = {**base.env, "CUDA_HOME": current, "PATH": f"{current}/bin:{VENV}/bin:/usr/bin:/bin"}
    return dataclasses.replace(base, env=env)


def probe(tmp_path: Path, s: fakehost.FakeHostSpec, session: str | None) -> Facts:
    fake = fakehost.build_fake_host(tmp_path / "h", s)
    env = {"SHELL": "/bin/sh", "LANG": "C", **fake.env}
    env.update(
        probe_env(
            fake.pythons,
            root=str(fake.root),
            tree_exec=True,
            step_timeout_s=5,
            session=session,
        )
    )
    out = subprocess.run(
        ["sh", "-s"], input=probe_script(), env=env, capture_output=True, text=True, timeout=120
    ).stdout
    return facts_from_output(out)


def ids(f: Facts) -> dict[str, str]:
    return {x.id: x.severity for x in diagnose(f).findings}


def test_the_current_environment_judges_local(tmp_path: Path) -> None:
    f = probe(tmp_path, spec(C130), "current")
    assert (f.contexts[0].kind, f.contexts[0].label) == ("current", "current shell")
    py = f.pythons[0]
    assert judging_context(f, py).kind == "current"  # not the login shell's CUDA 12.8
    assert ids(f) == {"toolkit-shadowed": "info"}
    (note,) = diagnose(f).findings
    assert note.evidence == (
        "current environment: CUDA_HOME=/usr/local/cuda-13.0 → CUDA 13.0",
        "login shell: CUDA_HOME=/usr/local/cuda-12.8 → CUDA 12.8",
    )


def test_findings_in_the_current_environment_say_what_a_login_shell_does(tmp_path: Path) -> None:
    base = spec(C128)
    bashrc = {"/root/.bashrc": f"export CUDA_HOME={C130}\nexport PATH={C130}/bin:$PATH\n"}
    f = probe(tmp_path, dataclasses.replace(base, files=bashrc), "current")
    d = diagnose(f)
    arch = d.finding("flashinfer-arch-rejected")
    assert arch is not None and arch.severity == "critical"
    assert arch.evidence[-1] == (
        "a login shell resolves CUDA_HOME=/usr/local/cuda-13.0 → CUDA 13.0 instead of "
        "CUDA_HOME=/usr/local/cuda-12.8 → CUDA 12.8"
    )


def test_a_serving_process_still_comes_first(tmp_path: Path) -> None:
    f = probe(tmp_path, spec(C130, service=True), "current")
    served = next(p for p in f.pythons if p.source == "process")
    assert judging_context(f, served).kind == "process"
    assert ids(f)["flashinfer-arch-rejected"] == "critical"  # the server still runs 12.8


def test_without_the_session_flag_the_login_shell_judges_as_before(tmp_path: Path) -> None:
    f = probe(tmp_path, spec(C130), None)
    assert f.contexts[0].kind == "ssh"
    assert ids(f)["flashinfer-arch-rejected"] == "critical"


def test_the_local_target_probes_its_own_environment(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "local", "--json"]) in (0, 1, 2)
    (host,) = json.loads(capsys.readouterr().out)
    assert host["facts"]["contexts"][0]["kind"] == "current"


@pytest.mark.sshd
def test_over_ssh_the_session_is_not_the_users_shell(
    ssh_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = fakehost.build_fake_host(tmp_path / "h", spec(C130))
    entry = {
        "name": "h",
        "ssh": ssh_env.alias,
        "root": str(fake.root),
        "simulate": "tree",
        "env": fake.env,
        "python": list(fake.pythons),
    }
    inv = tmp_path / "hosts.yaml"
    inv.write_text(yaml.safe_dump({"hosts": [entry]}))
    main(["--hosts", str(inv), "diagnose", "--json"])
    (host,) = json.loads(capsys.readouterr().out)
    assert host["facts"]["contexts"][0]["kind"] == "ssh"
    assert {f["id"] for f in host["findings"]} >= {"flashinfer-arch-rejected"}
    assert "toolkit-shadowed" not in {f["id"] for f in host["findings"]}
