"""The real probe on a fake host, the ways the tests share: the probe script run here on the
tree (``probe_tree``, ``judged``; ``run_probe`` by sh or bash, returning the facts and the raw
output), and ``diagnose --json`` over an inventory of
fake-host entries (``entry``; with ``ssh=`` an entry goes through a real sshd, the
``ssh_env`` fixture's alias)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from probes import probe_env, probe_script
from tui.cli import main
from tui.core.facts import Facts
from tui.core.facts.build import facts_from_output
from tui.core.hosts import Host
from tui.core.judge.diagnosis import diagnose
from tui.core.judge.judged import Judged
from tui.core.run.runner import ProbeResult
from tui.demo import fakehost


def probe_tree(fake: fakehost.FakeHost | Path, step_timeout_s: float | None = None) -> str:
    """The probe's output on a fake host's tree (or a bare tree: no interpreters, this
    machine's PATH), run here as the local transport runs it."""
    if isinstance(fake, Path):
        env = {"PATH": os.environ["PATH"], "HOME": "/root"}
        root, pythons = fake, ()
    else:
        env = dict(fake.env)
        root, pythons = fake.root, fake.pythons
    env = {"SHELL": "/bin/sh", "LANG": "C", **env}
    extra = {} if step_timeout_s is None else {"step_timeout_s": step_timeout_s}
    env.update(probe_env(pythons, root=str(root), tree_exec=True, **extra))
    out = subprocess.run(
        ["sh", "-s"], input=probe_script(), env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def probed(fake: fakehost.FakeHost | Path) -> Facts:
    return facts_from_output(probe_tree(fake))


def judged(tmp_path: Path, name: str, spec: fakehost.FakeHostSpec) -> Judged:
    """The host ``spec`` built under ``tmp_path/name``, probed and diagnosed."""
    fake = fakehost.build_fake_host(tmp_path / name, spec)
    facts = probed(fake)
    host = Host(name=name, local=True, root=str(fake.root), simulate="tree")
    return Judged(ProbeResult(host, facts), diagnose(facts, host))


def entry(tmp_path: Path, name: str, spec: fakehost.FakeHostSpec, **extra: Any) -> dict:
    """An inventory entry for the fake host ``spec`` (local, or ``ssh=ALIAS``…)."""
    fake = fakehost.build_fake_host(tmp_path / f"{name} root", spec)
    found = {
        "name": name,
        "root": str(fake.root),
        "simulate": "tree",
        "env": fake.env,
        "python": list(fake.pythons),
    }
    return {**found, **extra} if extra else {**found, "local": True}


def diagnose_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], *entries: dict, args: tuple = ()
) -> tuple[int, list[dict]]:
    """``diagnose --json`` over an inventory of ``entries``: (exit code, the hosts)."""
    inv = tmp_path / "hosts.yaml"
    inv.write_text(yaml.safe_dump({"hosts": list(entries)}))
    code = main(["--hosts", str(inv), "diagnose", "--json", *args])
    return code, json.loads(capsys.readouterr().out)


def run_probe(
    fake: fakehost.FakeHost,
    *,
    shell: str = "sh",
    step_timeout_s: int = 5,
    pythons: tuple[str, ...] | None = None,
) -> tuple[Facts, str]:
    env = {"SHELL": "/bin/sh", "LANG": "C", **fake.env}
    env.update(
        probe_env(
            fake.pythons if pythons is None else pythons,
            root=str(fake.root),
            tree_exec=True,
            step_timeout_s=step_timeout_s,
        )
    )
    proc = subprocess.run(
        [shutil.which(shell) or shell, "-s"],
        input=probe_script(),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return facts_from_output(proc.stdout), proc.stdout
