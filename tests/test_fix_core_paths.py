"""The fix paths both front ends share (``tui.core.fixes``): one planner that takes the
chosen finding's proposal, one restart after a run, one after-undo verdict, and a verdict
that says why a run was not probed again."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tui.core.facts import Facts
from tui.core.fixes.plan import FixPlan
from tui.core.fixes.restart import restart_after
from tui.core.hosts import Host
from tui.core.judge.diagnosis import Diagnosis, diagnose
from tui.core.run import fleet
from tui.core.run.fix_executor import FixOutcome
from tui.core.run.fleet import plan_fleet
from tui.core.run.outcome_words import status_line, undo_restored, verdict_lines
from tui.core.run.runner import Session
from tui.demo.fleet import demo_fleet

FIX = "use-installed-toolkit"
FIRST, CHOSEN = "flashinfer-arch-rejected", "nvcc-torch-major-mismatch"


async def _ct201(tmp_path: Path) -> tuple[Host, Facts]:
    host = next(h for h in demo_fleet(tmp_path / "trees") if h.name == "ct201")
    async with Session() as session:
        facts = (await session.probe(host)).facts
    assert facts is not None
    return host, facts


def _first_proposes(diagnosis: Diagnosis, path: str) -> Diagnosis:
    """The diagnosis with the first finding proposing ``FIX`` for another toolkit."""
    first = diagnosis.findings[0]
    assert first.id == FIRST and CHOSEN in [f.id for f in diagnosis.findings]
    fixes = tuple(replace(f, params={"path": path}) if f.id == FIX else f for f in first.fixes)
    return replace(diagnosis, findings=(replace(first, fixes=fixes), *diagnosis.findings[1:]))


@pytest.mark.parametrize(
    ("finding", "path"), [(CHOSEN, "/usr/local/cuda-13.0"), (FIRST, "/usr/local/cuda-12.8")]
)
async def test_a_fleet_fix_plans_with_the_chosen_findings_proposal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, finding: str, path: str
) -> None:
    """Two findings propose the same fix with different parameters: the plan follows the
    finding the user chose (the CLI's ``--finding``, the TUI's group), not the first one."""
    host, facts = await _ct201(tmp_path)
    crafted = _first_proposes(diagnose(facts, host), "/usr/local/cuda-12.8")
    monkeypatch.setattr(fleet, "diagnose", lambda *_args, **_kw: crafted)
    async with Session() as session:
        (item,) = await plan_fleet(session, [host], FIX, {}, finding=finding, stamp="s")
    assert item.plan is not None, item.error
    assert dict(item.plan.params) == {"path": path}


def _outcome(fix_id: str = "set-flashinfer-arch-list", **kw: object) -> FixOutcome:
    plan = FixPlan(fix_id=fix_id, host=Host("h1"), params={}, steps=(), verify_gone=(), sudo=True)
    return FixOutcome(plan=plan, steps=(), **kw)  # type: ignore[arg-type]


def test_no_verdict_after_says_why_there_was_no_reprobe() -> None:
    failed = _outcome(error="re-probe failed: timed out", reprobe_error="timed out")
    assert "Findings after: unknown (the re-probe failed: timed out)" in verdict_lines(failed)
    quit_ = _outcome(error="not started: detective-tui was quit", stopped=True)
    assert "detective-tui was quit before the re-probe" in verdict_lines(quit_)[-1]
    refused = _outcome(error="needs root and sudo asks for a password")
    assert "no step ran" in verdict_lines(refused)[-1]


def test_the_after_undo_verdict_is_unknown_without_a_reprobe() -> None:
    """An undo that was not probed again cannot claim the verdict changed or came back."""
    undo = _outcome("undo:set-flashinfer-arch-list", reprobe_error="connection lost")
    assert undo.applied and undo_restored(undo, ("flashinfer-arch-rejected",)) is None
    status = status_line(undo, ("flashinfer-arch-rejected",))
    assert status == "Undone: the verdict now is unknown: the re-probe failed: connection lost."


def test_restart_after_a_run_goes_through_the_runs_sudo() -> None:
    ran = _outcome(pending_restart=("sglang.service",))
    plan = restart_after(ran, "r1")
    assert plan is not None and plan.sudo and plan.stamp == "r1"
    assert plan.params["units"] == "sglang.service"
    assert restart_after(_outcome()) is None  # nothing pending
    assert restart_after(_outcome(error="step 1 failed", pending_restart=("a.service",))) is None
