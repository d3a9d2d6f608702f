"""Fixes executed for real over a loopback OpenSSH sshd against fake host trees.

The reference host (SM 12.0, CUDA_HOME=/usr/local/cuda-12.8, torch cu130, FlashInfer 0.6.8,
sglang.service) also has /usr/local/cuda-13.0: pointing the unit and the venv at it must turn
the critical verdict into none after a re-probe, and undo must bring the verdict back.
Each fix here is judged by the verdict before and after; how the steps themselves run (a
failure, sudo, the apt tools, the transcript, the wizard) is in test_fix_exec_steps.py.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest
from conftest import SSHEnv
from fix_exec_host import (
    ACTIVATE,
    DROPIN,
    VENV,
    critical,
    fake_ct200,
    session,
    severities,
    systemctl_calls,
)

from tui.core.fixes import build_plan
from tui.core.fixes.restart import restart_plan
from tui.core.fixes.undo import list_records, load_record, mark_undone, undo_plan
from tui.core.hosts import Host
from tui.core.judge.diagnosis import diagnose
from tui.core.run.fix_executor import apply_plan, outcome_summary
from tui.core.run.fix_render import outcome_text
from tui.core.run.outcome_words import status_line
from tui.demo.fakehost import build_fake_host, reference_ct200

pytestmark = pytest.mark.sshd


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
