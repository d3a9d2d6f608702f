"""How a fix plan's steps run over a loopback sshd against the fake reference host: a failing
step stops the plan, sudo that wants a password is reported (or refused up front), the apt fix
runs the distribution's tools, the transcript holds every command, and the fix wizard drives a
run, its undo and a crashing one.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
from conftest import SSHEnv
from fix_exec_host import (
    DROPIN,
    fake_ct200,
    session,
)

from tui.core.fixes import build_plan
from tui.core.fixes.plan import FixPlan, Step
from tui.core.fixes.steplock import with_step_lock
from tui.core.fixes.undo import load_record
from tui.core.records.transcript import Transcript, read_events
from tui.core.run.fix_executor import apply_plan
from tui.core.run.fix_render import outcome_text
from tui.core.run.runner import Session
from tui.demo.fakehost import fixture_text

pytestmark = pytest.mark.sshd


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
