"""Issue 22 item 10: a venv made without pip (``uv venv``, the way vLLM's docs install it) is
offered ``install-cuda-toolkit-pip`` with a first step that adds the pip its Python bundles
(``python -m ensurepip``), undone by removing it again; a venv with pip gets no such step.

The host is the demo's pro6000-no-nvcc tree (a real venv of this machine's Python, torch
2.11.0+cu130's real version.py, the real 580.95.05 nvidia-smi capture), probed by the real
probe; the step and its undo run for real with that venv's Python."""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
from pathlib import Path

import pytest

from tui.core.facts import Facts
from tui.core.fixes import build_plan
from tui.core.fixes.plan import parse_flags
from tui.core.hosts import Host
from tui.core.run.runner import Session
from tui.demo import fakehost, neighbours

PIP = "install-cuda-toolkit-pip"


@pytest.fixture(scope="module")
def no_pip_host(tmp_path_factory: pytest.TempPathFactory) -> tuple[Host, Facts, str]:
    fake = fakehost.build_fake_host(
        tmp_path_factory.mktemp("np") / "root", neighbours.jit_without_nvcc()
    )
    host = Host(
        name="np",
        local=True,
        root=str(fake.root),
        env=fake.env,
        python=fake.pythons,
        simulate="tree",
    )

    async def probe() -> Facts:
        async with Session() as session:
            result = await session.probe(host)
        assert result.facts is not None, result.error
        return result.facts

    facts = asyncio.run(probe())
    (python,) = fake.pythons
    seen = [p.has_pip for p in facts.pythons if p.path == python]  # inventory and the server
    assert seen and set(seen) == {False}  # the probe saw a venv without pip
    return host, facts, python


def test_the_plan_adds_pip_first(no_pip_host: tuple[Host, Facts, str]) -> None:
    host, facts, python = no_pip_host
    plan = build_plan(facts, host, PIP, {}, python, stamp="t1")
    first, install = plan.steps[0], plan.steps[1]
    assert first.title.startswith("Add pip to /opt/sglang")
    assert "-m ensurepip --default-pip" in first.command and not first.needs_root
    assert "-m pip install" in install.command
    assert "-m pip uninstall -y pip" in (first.undo or "")


def test_a_venv_with_pip_gets_no_such_step(no_pip_host: tuple[Host, Facts, str]) -> None:
    host, facts, python = no_pip_host
    with_pip = dataclasses.replace(
        facts,
        pythons=tuple(dataclasses.replace(p, has_pip=True) for p in facts.pythons),
    )
    plan = build_plan(with_pip, host, PIP, {}, python, stamp="t2")
    assert "ensurepip" not in plan.steps[0].command


def _sh(command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # the real ensurepip installs pip into the venv: 5-15 s
def test_ensurepip_step_and_its_undo_run_for_real(no_pip_host: tuple[Host, Facts, str]) -> None:
    host, facts, python = no_pip_host
    step = build_plan(facts, host, PIP, {}, python, stamp="t3").steps[0]
    real_python = str(Path(host.root or "") / python.lstrip("/"))
    assert _sh(f"{real_python} -m pip --version").returncode != 0

    done = _sh(step.command)
    assert done.returncode == 0, done.stderr
    assert parse_flags(done.stdout).changed == ("added pip with ensurepip",)
    assert _sh(f"{real_python} -m pip --version").returncode == 0
    again = _sh(step.command)  # idempotent: a second run changes nothing
    assert parse_flags(again.stdout).unchanged == ("pip is already there",)

    undone = _sh(step.undo or "")
    assert undone.returncode == 0, undone.stderr
    assert parse_flags(undone.stdout).changed == ("removed the pip this fix added",)
    assert _sh(f"{real_python} -m pip --version").returncode != 0
