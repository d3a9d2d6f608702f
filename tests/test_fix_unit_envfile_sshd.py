"""Fixes on a unit with an ``EnvironmentFile=``, run for real over a loopback OpenSSH sshd against
a fake reference host whose ``sglang.service`` reads ``/etc/default/sglang`` (CUDA 12.8) while
CUDA 13.0 is installed: an environment-only drop-in is not called fixed, the fix's own
environment file wins and undo restores, a missing required file is reported.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from conftest import SSHEnv
from fix_exec_host import ct200_host, session, systemctl_calls
from unit_envfile_host import (
    DEFAULTS,
    DEFAULTS_TEXT,
    DROPIN,
    NEW_CUDA,
    OLD_CUDA,
    OUR_ENV_FILE,
    UNIT,
    UNIT_FILE,
    VENV,
)

from tui.core.facts import EnvContext, Facts
from tui.core.fixes import build_plan
from tui.core.fixes.restart import restart_plan
from tui.core.fixes.undo import list_records, mark_undone, undo_plan
from tui.core.fixes.unitenv import parse_environment_file
from tui.core.hosts import Host
from tui.core.judge.diagnosis import diagnose
from tui.core.run.fix_executor import apply_plan, outcome_summary
from tui.core.run.fix_render import outcome_text
from tui.core.run.runner import Session
from tui.demo.fakehost import build_fake_host, fake_systemctl, reference_ct200

# -- for real, over sshd: the reference host whose unit reads /etc/default/sglang --------------


def fake_ct200_with_env_file(dest: Path, ssh_alias: str, env_files: dict[str, str | None]) -> Host:
    spec = reference_ct200(with_cuda13=True)
    activate = f'VIRTUAL_ENV={VENV}\nexport VIRTUAL_ENV\nPATH="$VIRTUAL_ENV/bin:$PATH"\n'
    spec = dataclasses.replace(
        spec,
        files={**spec.files, f"{VENV}/bin/activate": activate},
        unit_env_files={UNIT: env_files},
    )
    return ct200_host(build_fake_host(dest, spec), ssh_alias)


def problems(facts: Facts) -> dict[str, str]:
    return {
        f.id: f.severity for f in diagnose(facts).findings if f.severity in ("critical", "warning")
    }


def service(facts: Facts) -> EnvContext:
    (ctx,) = [c for c in facts.contexts if c.pid == 4242]
    return ctx


def unit_context(facts: Facts) -> EnvContext:
    (ctx,) = [c for c in facts.contexts if c.kind == "unit"]
    return ctx


async def probe(s: Session, host: Host) -> Facts:
    facts = (await s.probe(host)).facts
    assert facts is not None
    return facts


@pytest.mark.sshd
async def test_an_environment_only_dropin_is_not_called_fixed_when_a_file_overrides_it(
    tmp_path: Path, ssh_env: SSHEnv
) -> None:
    """The plan shape from before: the next-start verdict now reads /etc/default/sglang, so it
    reports NOT fixed (the old verification said fixed), and a restart proves it right."""
    host = fake_ct200_with_env_file(tmp_path / "ct200", ssh_env.alias, {DEFAULTS: DEFAULTS_TEXT})
    root = Path(host.root or "")
    async with session(ssh_env) as s:
        before = await probe(s, host)
        assert unit_context(before).env_files == (DEFAULTS,)
        blind = dataclasses.replace(
            before,
            contexts=tuple(dataclasses.replace(c, env_files=()) for c in before.contexts),
        )
        plan = build_plan(blind, host, "use-installed-toolkit", {"path": NEW_CUDA})
        assert "EnvironmentFile" not in plan.steps[0].command  # today's drop-in, unchanged
        outcome = await apply_plan(s, host, plan, before=before)
        text = outcome_text(outcome)
        assert outcome.applied, text
        assert not outcome.ok, text
        assert "flashinfer-arch-rejected" in outcome.unresolved
        assert "NOT fixed: " in text and "flashinfer-arch-rejected" in text
        unit_change = next(c for c in outcome.contexts if c.label.startswith("pid 4242"))
        assert unit_change.after["CUDA_HOME"] == OLD_CUDA
        assert (root / DROPIN).is_file()
        # the probe reads unit files on its own (probe.sh): it agrees
        assert outcome.facts_after is not None
        assert unit_context(outcome.facts_after).vars["CUDA_HOME"] == OLD_CUDA

        restart = restart_plan(host, (UNIT,), sudo=False, stamp="r1")
        assert (await apply_plan(s, host, restart, record_undo=False)).applied
        live = await probe(s, host)
        assert service(live).vars["CUDA_HOME"] == OLD_CUDA
        assert problems(live)["flashinfer-arch-rejected"] == "critical"


@pytest.mark.sshd
async def test_use_installed_toolkit_wins_over_the_units_environment_file_and_undo_restores(
    tmp_path: Path, ssh_env: SSHEnv
) -> None:
    host = fake_ct200_with_env_file(tmp_path / "ct200", ssh_env.alias, {DEFAULTS: DEFAULTS_TEXT})
    root = Path(host.root or "")
    unit_file_before = (root / UNIT_FILE).read_text()
    async with session(ssh_env) as s:
        before = await probe(s, host)
        assert problems(before)["flashinfer-arch-rejected"] == "critical"
        plan = build_plan(before, host, "use-installed-toolkit", {"path": NEW_CUDA})
        assert f"EnvironmentFile=-/{OUR_ENV_FILE}" in plan.steps[0].command
        outcome = await apply_plan(s, host, plan, before=before)
        text = outcome_text(outcome)
        assert outcome.ok, text
        assert [r.status for r in outcome.steps] == ["changed", "changed"]
        assert "flashinfer-arch-rejected" in outcome.resolved
        assert outcome.worst_after is None
        assert outcome.unit_problems == ()
        assert outcome.pending_restart == (UNIT,)
        unit_change = next(c for c in outcome.contexts if c.label.startswith("pid 4242"))
        assert unit_change.before["CUDA_HOME"] == OLD_CUDA
        assert unit_change.after["CUDA_HOME"] == NEW_CUDA
        assert unit_change.after["PATH"].startswith(f"{NEW_CUDA}/bin:")
        assert outcome.facts_after is not None  # probe.sh's own reading of the unit agrees
        assert unit_context(outcome.facts_after).vars["CUDA_HOME"] == NEW_CUDA
        ours = (root / OUR_ENV_FILE).read_text()
        assert parse_environment_file(ours)["CUDA_HOME"] == NEW_CUDA
        assert (root / DEFAULTS.lstrip("/")).read_text() == DEFAULTS_TEXT  # theirs untouched
        assert (root / UNIT_FILE).read_text() == unit_file_before

        again = await apply_plan(s, host, plan, before=outcome.facts_after)
        assert [r.status for r in again.steps] == ["unchanged", "unchanged"]
        assert again.record is None and again.ok

        restart = restart_plan(host, outcome.pending_restart, sudo=False, stamp="r1")
        assert (await apply_plan(s, host, restart, record_undo=False)).applied
        assert systemctl_calls(root)[-1] == f"restart {UNIT}"
        green = await probe(s, host)
        assert service(green).vars["CUDA_HOME"] == NEW_CUDA
        assert problems(green) == {}

        (record,) = list_records("ct200")
        undone = await apply_plan(
            s, host, undo_plan(record, host, sudo=False, stamp="u1"), record_undo=False
        )
        assert undone.applied, outcome_text(undone)
        mark_undone(record)
        assert "flashinfer-arch-rejected" in undone.findings_after
        assert undone.worst_after == "critical"
        assert not (root / DROPIN).exists()
        assert not (root / OUR_ENV_FILE).exists()
        assert (root / UNIT_FILE).read_text() == unit_file_before
        restart = restart_plan(host, undone.pending_restart, sudo=False, stamp="r2")
        assert undone.pending_restart == (UNIT,)
        assert (await apply_plan(s, host, restart, record_undo=False)).applied
        red = await probe(s, host)
        assert service(red).vars["CUDA_HOME"] == OLD_CUDA
        assert problems(red)["flashinfer-arch-rejected"] == "critical"


@pytest.mark.sshd
async def test_a_missing_required_environment_file_is_reported_not_called_fixed(
    tmp_path: Path, ssh_env: SSHEnv
) -> None:
    host = fake_ct200_with_env_file(
        tmp_path / "ct200",
        ssh_env.alias,
        {DEFAULTS: DEFAULTS_TEXT, "/etc/default/sglang-local": None, "-/etc/default/opt": None},
    )
    root = Path(host.root or "")
    async with session(ssh_env) as s:
        before = await probe(s, host)
        plan = build_plan(before, host, "use-installed-toolkit", {"path": NEW_CUDA})
        outcome = await apply_plan(s, host, plan, before=before)
        text = outcome_text(outcome)
        assert outcome.applied and "flashinfer-arch-rejected" in outcome.resolved, text
        assert not outcome.ok
        (problem,) = outcome.unit_problems
        assert problem.startswith(
            f"{UNIT}: EnvironmentFile=/etc/default/sglang-local does not exist"
        )
        assert f"Will NOT start: {problem}" in text
        assert outcome_summary(outcome)["unit_problems"] == [problem]
    assert fake_systemctl(root, ["restart", UNIT]) == 1  # and the processes keep their env
    assert "CUDA_HOME=/usr/local/cuda-12.8" in (root / "proc/4242/environ").read_text()


def test_fake_hosts_refuse_env_files_for_a_unit_they_do_not_have(tmp_path: Path) -> None:
    spec = dataclasses.replace(
        reference_ct200(service=False), unit_env_files={UNIT: {DEFAULTS: DEFAULTS_TEXT}}
    )
    with pytest.raises(ValueError, match=r"sglang\.service, which has no unit file"):
        build_fake_host(tmp_path / "h", spec)
