"""The reference host for fixes executed over a loopback sshd: a fake CT200 tree with a venv
activate script, a session on the test's sshd, and what its verdict and its systemctl shim say.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from conftest import SSHEnv

from tui.core.facts import Facts
from tui.core.hosts import Host
from tui.core.judge.diagnosis import diagnose
from tui.core.run.runner import Session
from tui.demo.fakehost import SYSTEMCTL_LOG, FakeHost, build_fake_host, reference_ct200

VENV = "/root/venv_sglang211"
ACTIVATE = f"""# This file must be used with "source bin/activate" *from bash*
deactivate () {{
    unset VIRTUAL_ENV
}}
VIRTUAL_ENV={VENV}
export VIRTUAL_ENV
PATH="$VIRTUAL_ENV/bin:$PATH"
export PATH
"""
DROPIN = "etc/systemd/system/sglang.service.d/50-detective-tui-cuda.conf"


def fake_ct200(dest: Path, ssh_alias: str, *, with_cuda13: bool = True) -> Host:
    spec = reference_ct200(with_cuda13=with_cuda13)
    spec = dataclasses.replace(spec, files={**spec.files, f"{VENV}/bin/activate": ACTIVATE})
    return ct200_host(build_fake_host(dest, spec), ssh_alias)


def ct200_host(fake: FakeHost, ssh_alias: str) -> Host:
    """The host entry for a built fake CT200 tree, reached over ``ssh_alias``."""
    return Host(
        name="ct200",
        ssh=ssh_alias,
        root=str(fake.root),
        simulate="tree",
        env=fake.env,
        python=fake.pythons,
        standins=fake.standins,
    )


def session(ssh_env: SSHEnv) -> Session:
    return Session(known_hosts=ssh_env.known_hosts, ssh_config=ssh_env.ssh_config)


def critical(facts: Facts) -> set[str]:
    return {f.id for f in diagnose(facts).findings if f.severity == "critical"}


def systemctl_calls(root: Path) -> list[str]:
    log = root / SYSTEMCTL_LOG.lstrip("/")
    return log.read_text().splitlines() if log.exists() else []


def severities(facts: Facts) -> dict[str, str]:
    return {f.id: f.severity for f in diagnose(facts).findings}
