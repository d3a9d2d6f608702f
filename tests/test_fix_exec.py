"""Fixes executed for real over a loopback OpenSSH sshd against fake host trees.

The reference host (SM 12.0, CUDA_HOME=/usr/local/cuda-12.8, torch cu130, FlashInfer 0.6.8,
sglang.service) also has /usr/local/cuda-13.0: pointing the unit and the venv at it must turn
the critical verdict into none after a re-probe, and undo must bring the verdict back.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

import pytest
from conftest import SSHEnv

from tui.core.facts import Facts
from tui.core.fixes import build_plan
from tui.core.fixes.plan import FixPlan, Step
from tui.core.fixes.restart import restart_plan
from tui.core.fixes.steplock import with_step_lock
from tui.core.fixes.undo import list_records, load_record, mark_undone, undo_plan
from tui.core.hosts import Host
from tui.core.judge.diagnosis import diagnose
from tui.core.records.transcript import Transcript, read_events
from tui.core.run.fix_executor import apply_plan, outcome_summary
from tui.core.run.fix_render import outcome_text
from tui.core.run.outcome_words import status_line
from tui.core.run.runner import Session
from tui.demo.fakehost import SYSTEMCTL_LOG, build_fake_host, fixture_text, reference_ct200

pytestmark = pytest.mark.sshd

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
    fake = build_fake_host(dest, spec)
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


async def test_use_installed_toolkit_fixes_the_reference_host_and_undo_restores(
    tmp_path: Path, ssh_env: SSHEnv
) -> None:
    host = fake_ct200(tmp_path / "ct200 root", ssh_env.alias)
    root = Path(host.root or "")
    activate = root / VENV.lstrip("/") / "bin/activate"
    async with session(ssh_env) as s:
        before = (await s.probe(host)).facts
        assert before is not None
        assert "flashinfer-arch-rejected" in critical(before)
        assert "nvcc-torch-major-mismatch" in {f.id for f in diagnose(before).findings}
        plan = build_plan(before, host, "use-installed-toolkit", {"path": "/usr/local/cuda-13.0"})
        assert plan.units == ("sglang.service",)
        lines: list[str] = []
        outcome = await apply_plan(s, host, plan, lines.append, before=before)
        text = outcome_text(outcome)
        assert outcome.applied, text
        assert [r.status for r in outcome.steps] == ["changed", "changed"]
        # the live lines read as words; the markers the executor counts stay out of sight
        assert not any("@@dt" in line for line in lines), lines
        assert "changed: 50-detective-tui-cuda.conf written" in lines
        assert "flashinfer-arch-rejected" in outcome.findings_before
        assert "flashinfer-arch-rejected" in outcome.resolved
        assert outcome.unresolved == ()
        assert outcome.ok
        assert outcome.worst_before == "critical"
        assert outcome.worst_after is None  # nothing at all is left for the fixed service
        assert outcome.pending_restart == ("sglang.service",)  # pid 4242 still has 12.8
        assert systemctl_calls(root) == ["daemon-reload"]  # the fake host's shim, no restart
        unit_change = next(c for c in outcome.contexts if c.label.startswith("pid 4242"))
        assert unit_change.before["CUDA_HOME"] == "/usr/local/cuda-12.8"
        assert unit_change.after["CUDA_HOME"] == "/usr/local/cuda-13.0"
        assert "check fail" in (unit_change.verdict_before or "")
        assert "targets 12.0f → check pass" in (unit_change.verdict_after or "")
        assert (root / DROPIN).is_file()
        assert "export CUDA_HOME=/usr/local/cuda-13.0" in activate.read_text()
        live = outcome.facts_after
        assert live is not None

        again = await apply_plan(s, host, plan, before=live)
        assert [r.status for r in again.steps] == ["unchanged", "unchanged"]
        assert again.record is None

        (record,) = list_records("ct200")
        assert record.id == outcome.record
        undo = undo_plan(record, host, sudo=False, stamp="20261129-130000")
        undone = await apply_plan(s, host, undo, record_undo=False)
        assert undone.applied, outcome_text(undone)
        assert [r.status for r in undone.steps] == ["changed", "changed"]
        mark_undone(record)
        assert set(undone.findings_after) == set(outcome.findings_before)
        assert "flashinfer-arch-rejected" in undone.findings_after
        assert undone.worst_after == "critical"
        assert not (root / DROPIN).exists()
        assert activate.read_text() == ACTIVATE
        assert list_records("ct200") == []


def systemctl_calls(root: Path) -> list[str]:
    log = root / SYSTEMCTL_LOG.lstrip("/")
    return log.read_text().splitlines() if log.exists() else []


def severities(facts: Facts) -> dict[str, str]:
    return {f.id: f.severity for f in diagnose(facts).findings}


async def test_restart_after_the_fix_turns_the_probe_green_and_after_undo_red_again(
    tmp_path: Path, ssh_env: SSHEnv
) -> None:
    """ct201 of the demo: CUDA 13.0 installed, the service still on 12.8. The fix alone leaves
    the running process critical; the fake host's systemctl restart gives it the unit's new
    environment, so the next probe is green; undo and restart bring the critical back."""
    host = fake_ct200(tmp_path / "ct201 root", ssh_env.alias)
    root = Path(host.root or "")
    async with session(ssh_env) as s:
        before = (await s.probe(host)).facts
        assert before is not None
        assert severities(before)["flashinfer-arch-rejected"] == "critical"
        plan = build_plan(before, host, "use-installed-toolkit", {"path": "/usr/local/cuda-13.0"})
        fixed = await apply_plan(s, host, plan, before=before)
        assert fixed.ok and fixed.pending_restart == ("sglang.service",), outcome_text(fixed)
        live = (await s.probe(host)).facts
        assert live is not None and severities(live)["flashinfer-arch-rejected"] == "critical"

        restart = restart_plan(host, fixed.pending_restart, sudo=False, stamp="r1")
        restarted = await apply_plan(s, host, restart, record_undo=False)
        assert [r.status for r in restarted.steps] == ["changed"], outcome_text(restarted)
        assert systemctl_calls(root) == ["daemon-reload", "restart sglang.service"]
        after = (await s.probe(host)).facts
        assert after is not None
        worst = set(severities(after).values()) & {"critical", "warning"}
        assert worst == set(), severities(after)
        (service,) = [c for c in after.contexts if c.pid == 4242]
        assert service.vars["CUDA_HOME"] == "/usr/local/cuda-13.0"

        record = load_record("ct200", fixed.record or "")
        undone = await apply_plan(
            s, host, undo_plan(record, host, sudo=False, stamp="u1"), record_undo=False
        )
        assert undone.applied and undone.pending_restart == ("sglang.service",)
        again = await apply_plan(
            s,
            host,
            restart_plan(host, undone.pending_restart, sudo=False, stamp="r2"),
            record_undo=False,
        )
        assert [r.status for r in again.steps] == ["changed"], outcome_text(again)
        red = (await s.probe(host)).facts
        assert red is not None
        assert severities(red)["flashinfer-arch-rejected"] == "critical"
        (service,) = [c for c in red.contexts if c.pid == 4242]
        assert service.vars["CUDA_HOME"] == "/usr/local/cuda-12.8"


async def test_undoing_a_variable_only_the_fix_set_is_judged_after_a_restart(
    tmp_path: Path, ssh_env: SSHEnv
) -> None:
    """set-flashinfer-arch-list, restarted, then undone: the running server has the variable
    only because the removed drop-in gave it, so its next start is without it — the undo is
    judged critical again with a restart pending (not "warning → warning", nothing to
    restart), and the restart proves it."""
    host = fake_ct200(tmp_path / "ct200 root", ssh_env.alias)
    async with session(ssh_env) as s:
        before = (await s.probe(host)).facts
        assert before is not None
        plan = build_plan(before, host, "set-flashinfer-arch-list", {"value": "12.0a"})
        fixed = await apply_plan(s, host, plan, before=before)
        assert fixed.ok and fixed.pending_restart == ("sglang.service",), outcome_text(fixed)
        restart = restart_plan(host, fixed.pending_restart, sudo=False, stamp="r1")
        assert (await apply_plan(s, host, restart, record_undo=False)).applied
        live = (await s.probe(host)).facts
        assert live is not None and "flashinfer-arch-rejected" not in severities(live)
        (service,) = [c for c in live.contexts if c.pid == 4242]
        assert service.vars["FLASHINFER_CUDA_ARCH_LIST"] == "12.0a"

        record = load_record("ct200", fixed.record or "")
        undone = await apply_plan(
            s, host, undo_plan(record, host, sudo=False, stamp="u1"), before=live,
            record_undo=False,
        )  # fmt: skip
        assert undone.applied, outcome_text(undone)
        assert undone.pending_restart == ("sglang.service",), outcome_text(undone)
        assert undone.worst_after == "critical", outcome_text(undone)
        assert "flashinfer-arch-rejected" in undone.findings_after
        again = restart_plan(host, undone.pending_restart, sudo=False, stamp="r2")
        assert (await apply_plan(s, host, again, record_undo=False)).applied
        red = (await s.probe(host)).facts
        assert red is not None
        assert severities(red)["flashinfer-arch-rejected"] == "critical"
        (service,) = [c for c in red.contexts if c.pid == 4242]
        assert "FLASHINFER_CUDA_ARCH_LIST" not in service.vars


async def test_clear_jit_cache_moves_the_directory(tmp_path: Path, ssh_env: SSHEnv) -> None:
    host = fake_ct200(tmp_path / "root", ssh_env.alias)
    root = Path(host.root or "")
    cache = root / "root/.cache/flashinfer"
    (cache / "0.6.8/cached_ops/sampling").mkdir(parents=True, exist_ok=True)
    (cache / "0.6.8/cached_ops/sampling/sampling.so").write_text("built by nvcc 12.8")
    async with session(ssh_env) as s:
        before = (await s.probe(host)).facts
        assert before is not None
        plan = build_plan(before, host, "clear-flashinfer-jit-cache", {}, stamp="20261129-140000")
        outcome = await apply_plan(s, host, plan, before=before)
        assert outcome.applied and [r.status for r in outcome.steps] == ["changed"]
        moved = root / "root/.cache/flashinfer.moved-20261129-140000"
        assert (moved / "0.6.8/cached_ops/sampling/sampling.so").read_text() == "built by nvcc 12.8"
        assert not cache.exists()
        after = outcome.facts_after
        assert after is not None
        assert all(not p.jit_cache_dirs for p in after.pythons)
        record = load_record("ct200", "last")
        undone = await apply_plan(
            s, host, undo_plan(record, host, sudo=False, stamp="x"), record_undo=False
        )
        assert undone.applied
        assert (cache / "0.6.8/cached_ops/sampling/sampling.so").is_file()


async def test_a_failing_step_stops_the_plan_and_reports_what_changed(
    tmp_path: Path, ssh_env: SSHEnv
) -> None:
    host = fake_ct200(tmp_path / "root", ssh_env.alias)
    root = Path(host.root or "")
    marker = root / "etc/marker.conf"
    plan = FixPlan(
        fix_id="use-installed-toolkit",
        host=host,
        params={},
        steps=(
            Step(
                title="Write a marker",
                command=f"printf x > '{marker}'\necho '@@dt changed marker written'",
                undo=f"rm -f '{marker}'",
                changes="writes /etc/marker.conf",
                needs_root=False,
            ),
            Step(
                title="Fail",
                command="echo 'about to fail' >&2\nfalse\necho 'never printed'",
                undo=None,
                changes="nothing",
                needs_root=False,
            ),
            Step(
                title="Never runs",
                command=f"printf y > '{root}/etc/never'",
                undo=None,
                changes="nothing",
                needs_root=False,
            ),
        ),
        verify_gone=("flashinfer-arch-rejected",),
        stamp="20261129-150000",
    )
    async with session(ssh_env) as s:
        outcome = await apply_plan(s, host, plan)
    assert [r.status for r in outcome.steps] == ["changed", "failed", "not-run"]
    assert not outcome.applied and not outcome.ok
    assert outcome.error == "step 2 (Fail) failed: exit status 1: about to fail"
    assert "never printed" not in outcome.steps[1].output
    assert "about to fail" in outcome.steps[1].output
    assert marker.read_text() == "x" and not (root / "etc/never").exists()
    text = outcome_text(outcome)
    assert "Stopped: step 2 (Fail) failed" in text
    assert "Changed so far: writes /etc/marker.conf" in text
    assert f"Undo: detective-tui fix ct200 --undo {outcome.record}" in text
    record = load_record("ct200", outcome.record or "")
    assert [s.title for s in record.steps] == ["Write a marker"]


async def test_sudo_that_wants_a_password_is_reported_not_waited_for(
    tmp_path: Path, ssh_env: SSHEnv
) -> None:
    host = fake_ct200(tmp_path / "root", ssh_env.alias)
    fake_bin = tmp_path / "fake bin"
    fake_bin.mkdir()
    sudo = fake_bin / "sudo"
    sudo.write_text("#!/bin/sh\necho 'sudo: a password is required' >&2\nexit 1\n")
    sudo.chmod(0o755)
    host = dataclasses.replace(host, env={**host.env, "PATH": f"{fake_bin}:{host.env['PATH']}"})
    async with session(ssh_env) as s:
        before = (await s.probe(host)).facts
        assert before is not None
        as_user = dataclasses.replace(
            before, host=dataclasses.replace(before.host, is_root=False, user="ubuntu")
        )
        plan = build_plan(as_user, host, "use-installed-toolkit", {"path": "/usr/local/cuda-13.0"})
        assert plan.sudo and plan.preview_commands()[0].startswith("sudo -n sh -c ")
        outcome = await apply_plan(s, host, plan, before=as_user)
    assert [r.status for r in outcome.steps] == ["failed", "not-run"]
    assert "sudo on ct200 needs a password" in (outcome.error or "")
    assert outcome.record is None


FAKE_TOOL = """#!/bin/sh
echo "$(basename "$0") $*" >> "$DT_FAKE_LOG"
"""


def fake_apt_tools(bin_dir: Path, root: Path) -> None:
    """curl, dpkg and apt-get that only record their arguments (and act out their effect)."""
    nvcc_banner = fixture_text("nvcc/nvcc-13.0.88.txt")
    scripts = {
        "curl": FAKE_TOOL + 'while [ $# -gt 0 ]; do [ "$1" = -o ] && : > "$2"; shift; done\n',
        "dpkg": FAKE_TOOL
        + f'state="{root}/var/lib/dpkg/cuda-keyring"\n'
        + 'case "$1" in -s) [ -e "$state" ] ;; -i) mkdir -p "${state%/*}"; : > "$state" ;; esac\n',
        "apt-get": FAKE_TOOL
        + 'case "$*" in *"install -y --no-install-recommends cuda-toolkit-13-0"*)\n'
        + f'  mkdir -p "{root}/usr/local/cuda-13.0/bin"\n'
        + f"  cat > \"{root}/usr/local/cuda-13.0/bin/nvcc\" <<'NVCC'\n"
        + f"#!/bin/sh\ncat <<'EOF'\n{nvcc_banner.rstrip()}\nEOF\nNVCC\n"
        + f'  chmod 755 "{root}/usr/local/cuda-13.0/bin/nvcc" ;;\nesac\n',
    }
    for name, text in scripts.items():
        path = bin_dir / name
        path.write_text(text)
        path.chmod(0o755)


async def test_apt_install_runs_the_distro_commands(tmp_path: Path, ssh_env: SSHEnv) -> None:
    host = fake_ct200(tmp_path / "root", ssh_env.alias, with_cuda13=False)
    root = Path(host.root or "")
    fake_bin = tmp_path / "fake-bin"
    fake_bin.mkdir()
    fake_apt_tools(fake_bin, root)
    log = tmp_path / "calls.log"
    env = {**host.env, "DT_FAKE_LOG": str(log)}
    # the tree's stand-ins, named by the host object as the demo's are (never found on PATH)
    tools = {t: str(fake_bin / t) for t in ("curl", "dpkg", "apt-get")}
    host = dataclasses.replace(host, env=env, standins={**host.standins, **tools})
    async with session(ssh_env) as s:
        before = (await s.probe(host)).facts
        assert before is not None
        plan = build_plan(before, host, "install-cuda-toolkit-apt", {})
        outcome = await apply_plan(s, host, plan, before=before)
        assert outcome.applied, outcome_text(outcome)
        calls = log.read_text().splitlines()
        tmp = calls[1].split(" -o ")[1].split("/cuda-keyring")[0]
        url = (
            "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/"
            "cuda-keyring_1.1-1_all.deb"
        )
        assert [c.replace(tmp, "TMP") for c in calls] == [
            "dpkg -s cuda-keyring",
            f"curl -fsSL -o TMP/cuda-keyring_1.1-1_all.deb {url}",
            "dpkg -i TMP/cuda-keyring_1.1-1_all.deb",
            "apt-get update",
            "apt-get install -y --no-install-recommends cuda-toolkit-13-0",
        ]
        assert not os.path.exists(tmp)  # the downloaded .deb is cleaned up
        assert [r.status for r in outcome.steps] == [
            "changed",
            "done",
            "changed",
            "changed",
            "changed",
        ]
        after = outcome.facts_after
        assert after is not None and after.toolkit_at("/usr/local/cuda-13.0") is not None
        assert "flashinfer-arch-rejected" in outcome.resolved and outcome.ok

        log.unlink()
        again = await apply_plan(s, host, plan, before=after)
        assert [r.status for r in again.steps] == [
            "unchanged",
            "done",
            "unchanged",
            "unchanged",
            "unchanged",
        ]
        assert log.read_text().splitlines() == ["dpkg -s cuda-keyring", "apt-get update"]


async def test_fix_wizard_previews_applies_and_undoes(tmp_path: Path) -> None:
    from textual.app import App
    from textual.widgets import Log

    from tui.ui.screens.fix_wizard import FixWizardScreen

    host = dataclasses.replace(fake_ct200(tmp_path / "root", "unused"), ssh=None, local=True)
    root = Path(host.root or "")
    async with Session() as s:
        facts = (await s.probe(host)).facts
        assert facts is not None
        plan = build_plan(facts, host, "use-installed-toolkit", {"path": "/usr/local/cuda-13.0"})
        wizard = FixWizardScreen(host, plan, s, before=facts)

        class WizardApp(App[None]):
            def on_mount(self) -> None:
                self.push_screen(wizard)

        app = WizardApp()
        async with app.run_test(size=(120, 40)) as pilot:
            assert wizard.stage == "preview" and not (root / DROPIN).exists()
            await pilot.press("a")
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert wizard.stage == "done"
            assert wizard.outcome is not None and wizard.outcome.ok
            assert wizard.restart_units == ("sglang.service",)
            assert (root / DROPIN).is_file()
            assert any("step 1/2" in line for line in wizard.query_one(Log).lines)

            await pilot.press("u")  # shows the undo commands; Apply confirms them
            assert wizard.pending is not None and not wizard.query_one("#apply").disabled
            await pilot.press("a")
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert wizard.record is None and not (root / DROPIN).exists()
            assert wizard.outcome is not None and wizard.outcome.applied
            assert "flashinfer-arch-rejected" in wizard.outcome.findings_after
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen is not wizard


async def test_the_transcript_holds_the_plan_every_command_and_the_outcome(
    tmp_path: Path, ssh_env: SSHEnv
) -> None:
    host = fake_ct200(tmp_path / "root", ssh_env.alias)
    with Transcript(tmp_path / "session.jsonl") as transcript:
        async with Session(
            transcript=transcript, known_hosts=ssh_env.known_hosts, ssh_config=ssh_env.ssh_config
        ) as s:
            before = (await s.probe(host)).facts
            assert before is not None
            plan = build_plan(before, host, "set-flashinfer-arch-list", {"value": "12.0a"})
            outcome = await apply_plan(s, host, plan, before=before)
    assert outcome.applied and "flashinfer-arch-rejected" in outcome.resolved
    events = read_events(tmp_path / "session.jsonl")
    kinds = [e["kind"] for e in events]
    start = kinds.index("fix-start")
    assert kinds.index("fix-outcome") > start
    assert events[start]["commands"] == list(plan.preview_commands())
    ran = [e for e in events[start:] if e["kind"] == "command" and e.get("purpose") == "script"]
    scripts = {e.get("script") for e in ran}
    # each previewed command ran exactly, under the host tree's step lock
    assert {with_step_lock(host, c) for c in plan.preview_commands()} <= scripts
    (final,) = [e for e in events if e["kind"] == "fix-outcome"]
    assert final["ok"] is True and final["resolved"] == ["flashinfer-arch-rejected"]


async def test_root_steps_are_refused_up_front_when_sudo_needs_a_password(
    tmp_path: Path, ssh_env: SSHEnv
) -> None:
    host = fake_ct200(tmp_path / "root", ssh_env.alias)
    async with session(ssh_env) as s:
        before = (await s.probe(host)).facts
        assert before is not None
        as_user = dataclasses.replace(
            before,
            host=dataclasses.replace(
                before.host, is_root=False, user="ubuntu", sudo_nopasswd=False
            ),
        )
        plan = build_plan(as_user, host, "use-installed-toolkit", {"path": "/usr/local/cuda-13.0"})
        outcome = await apply_plan(s, host, plan, before=as_user)
    assert [r.status for r in outcome.steps] == ["not-run", "not-run"]
    assert "sudo on ct200 asks for a password" in (outcome.error or "")
    assert not (Path(host.root or "") / DROPIN).exists()


async def test_sampling_fallback_rewrites_execstart_and_undo_brings_the_verdict_back(
    tmp_path: Path, ssh_env: SSHEnv
) -> None:
    from tui.core.fixes.unitenv import parse_exec_start

    host = fake_ct200(tmp_path / "root", ssh_env.alias)
    root = Path(host.root or "")
    dropin = root / "etc/systemd/system/sglang.service.d/50-detective-tui-sampling.conf"
    unit = (root / "etc/systemd/system/sglang.service").read_text()
    async with session(ssh_env) as s:
        before = (await s.probe(host)).facts
        assert before is not None
        plan = build_plan(before, host, "sampling-backend-fallback", {})
        assert plan.exec_units == ("sglang.service",)
        outcome = await apply_plan(s, host, plan, before=before)
        assert outcome.ok, outcome_text(outcome)
        assert outcome.resolved == ("flashinfer-arch-rejected",)
        # the finding stays as info (sampling avoids FlashInfer); the toolkit mismatch stays
        assert outcome.findings_after == ("nvcc-torch-major-mismatch",)
        assert outcome.worst_after == "warning"
        assert outcome.pending_restart == ("sglang.service",)
        assert parse_exec_start([unit, dropin.read_text()]) == (
            f"{VENV}/bin/python3 -m sglang.launch_server --model-path /models/Kimi-K2.6"
            " --tp 8 --port 30000 --sampling-backend pytorch"
        )
        (change,) = outcome.contexts
        assert change.after["command line"].endswith("--sampling-backend pytorch")
        assert "--sampling-backend" not in change.before["command line"]

        # the fake host's systemctl restart gives the main process the new ExecStart; its
        # retitled workers keep their titles
        restart = restart_plan(host, outcome.pending_restart, sudo=False, stamp="r")
        assert (await apply_plan(s, host, restart, record_undo=False)).applied
        after = (await s.probe(host)).facts
        assert after is not None
        (service,) = [c for c in after.contexts if c.pid == 4242]
        assert (service.cmdline or "").endswith("--port 30000 --sampling-backend pytorch")
        assert (root / "proc/4300/cmdline").read_bytes() == b"sglang::scheduler_TP0\0"
        assert severities(after).get("flashinfer-arch-rejected") != "critical"

        record = load_record("ct200", outcome.record or "")
        undone = await apply_plan(
            s, host, undo_plan(record, host, sudo=False, stamp="u"), record_undo=False
        )
        assert undone.applied and not dropin.exists()
        assert "flashinfer-arch-rejected" in undone.findings_after
        assert undone.worst_after == "critical"


async def test_a_fix_that_brings_a_new_problem_is_not_reported_as_fixed(
    tmp_path: Path, ssh_env: SSHEnv
) -> None:
    from tui.demo.fakehost import DriverSpec

    spec = reference_ct200(with_cuda13=True)
    driver_570 = DriverSpec(  # its highest CUDA is 12.8
        table_fixture="nvidia-smi/nvidia-smi-rtx5090-570.124.06.txt", proc_version="570.124.06"
    )
    spec = dataclasses.replace(spec, driver=driver_570)
    fake = build_fake_host(tmp_path / "root", spec)
    host = Host(
        name="ct200",
        ssh=ssh_env.alias,
        root=str(fake.root),
        simulate="tree",
        env=fake.env,
        python=fake.pythons,
        standins=fake.standins,
    )
    async with session(ssh_env) as s:
        before = (await s.probe(host)).facts
        assert before is not None
        assert before.driver.driver_cuda == "12.8"
        plan = build_plan(before, host, "use-installed-toolkit", {"path": "/usr/local/cuda-13.0"})
        outcome = await apply_plan(s, host, plan, before=before)
    assert outcome.applied and "flashinfer-arch-rejected" in outcome.resolved
    assert outcome.introduced == ("driver-too-old-for-nvcc",)
    assert not outcome.ok
    assert "NEW problems after the fix: driver-too-old-for-nvcc" in outcome_text(outcome)


async def test_without_a_service_the_venv_activation_is_what_gets_fixed_and_judged(
    tmp_path: Path, ssh_env: SSHEnv
) -> None:
    spec = reference_ct200(with_cuda13=True, service=False)
    spec = dataclasses.replace(spec, files={**spec.files, f"{VENV}/bin/activate": ACTIVATE})
    fake = build_fake_host(tmp_path / "root", spec)
    host = Host(
        name="ct200",
        ssh=ssh_env.alias,
        root=str(fake.root),
        simulate="tree",
        env=fake.env,
        python=fake.pythons,
        standins=fake.standins,
    )
    async with session(ssh_env) as s:
        before = (await s.probe(host)).facts
        assert before is not None
        plan = build_plan(before, host, "use-installed-toolkit", {"path": "/usr/local/cuda-13.0"})
        assert plan.units == () and plan.activate == f"{VENV}/bin/activate"
        outcome = await apply_plan(s, host, plan, before=before)
    assert outcome.ok, outcome_text(outcome)
    assert "flashinfer-arch-rejected" in outcome.resolved
    (change,) = outcome.contexts
    assert change.label == f"venv activated ({VENV}/bin/activate)"
    assert change.before["CUDA_HOME"] == "/usr/local/cuda-12.8"  # from the session's env
    assert change.after["CUDA_HOME"] == "/usr/local/cuda-13.0"
    assert change.after["PATH"].startswith(f"/usr/local/cuda-13.0/bin:{VENV}/bin:")
    assert "targets 12.0f → check pass" in (change.verdict_after or "")
    assert outcome.pending_restart == ()


async def test_fix_wizard_survives_a_crashing_run(tmp_path: Path) -> None:
    from textual.app import App

    from tui.ui.screens.fix_wizard import FixWizardScreen

    class BrokenSession(Session):
        async def run_script(self, *args: object, **kwargs: object):  # type: ignore[override]
            raise RuntimeError("transport bug")

    host = dataclasses.replace(fake_ct200(tmp_path / "root", "unused"), ssh=None, local=True)
    async with BrokenSession() as s:
        facts = (await s.probe(host)).facts
        assert facts is not None
        plan = build_plan(facts, host, "use-installed-toolkit", {"path": "/usr/local/cuda-13.0"})
        wizard = FixWizardScreen(host, plan, s, before=facts)

        class WizardApp(App[None]):
            def on_mount(self) -> None:
                self.push_screen(wizard)

        app = WizardApp()
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.press("a")
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert wizard.stage == "failed"
            assert not wizard.query_one("#close").disabled
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen is not wizard


async def test_a_fix_whose_serving_process_died_is_not_called_fixed(
    tmp_path: Path, ssh_env: SSHEnv
) -> None:
    """ "Fixed" is said only of a serving process that still runs (issue 19): pid 4242 exits
    (its proc/4242 goes) as the first step starts; the outcome names it as not running."""
    host = fake_ct200(tmp_path / "root", ssh_env.alias)
    proc = Path(host.root or "") / "proc" / "4242"
    assert proc.is_dir()

    def on_line(line: str) -> None:
        if line.startswith("── step 1/"):  # the serving process exits as the fix starts
            shutil.rmtree(proc)

    async with session(ssh_env) as s:
        before = (await s.probe(host)).facts
        assert before is not None
        plan = build_plan(before, host, "use-installed-toolkit", {"path": "/usr/local/cuda-13.0"})
        outcome = await apply_plan(s, host, plan, on_line, before=before)
    assert not proc.exists()
    assert outcome.applied
    assert "flashinfer-arch-rejected" in outcome.resolved
    # its scheduler children (pids 4300-4307, still in the unit) are not the serving process
    assert outcome.not_running == ("sglang.service (pid 4242)",)
    text = outcome_text(outcome)
    assert "Fixed:" not in text
    assert "Not running now: sglang.service (pid 4242); gone for its next start" in text
    assert status_line(outcome).startswith("Applied, but sglang.service (pid 4242) is not running")
    assert outcome_summary(outcome)["not_running"] == ["sglang.service (pid 4242)"]
