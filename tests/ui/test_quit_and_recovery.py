"""Quitting with a fix in flight, and recovering an unfinished fix on the next start.

The fleet fix runs for real on a private demo fleet (local transport, the real probe); ct201's
``systemctl`` is wrapped by a shim that holds its first call (the daemon-reload of step 1)
until the test releases it, so ``q`` lands while a step is in flight.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from step_shims import CHILD_STANDINS, host_digest, shim_systemctl
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey

from tui.core.fixes.undo import list_records, records_dir
from tui.core.hosts import Host
from tui.core.records.transcript import read_events
from tui.ui.screens.confirm import ConfirmScreen
from tui.ui.screens.fix_wizard import FixWizardScreen
from tui.ui.screens.fleet_fix import FleetFixScreen
from tui.ui.screens.recovery import RecoveryScreen

from .conftest import cursor_on_group, demo_subset, host_root, make_app, settle


@pytest.fixture
def fleet(tmp_path: Path) -> tuple[Host, ...]:
    """A private demo fleet of only the hosts these tests need:
    the group ct200/ct201 and a healthy host."""
    return demo_subset(tmp_path / "trees", ("ct200", "ct201", "h100-node"))


FINDING = "flashinfer-arch-rejected"
FIX = "set-flashinfer-arch-list"


async def _until(predicate, within_s: float = 120.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + within_s
    while not predicate():
        if loop.time() > end:
            raise AssertionError("the expected state never came")
        await asyncio.sleep(0.02)


async def test_q_during_a_fleet_fix_asks_and_leaves_a_complete_journal(
    fleet: tuple[Host, ...], tmp_path: Path
) -> None:
    shim = shim_systemctl(host_root(fleet, "ct201"), tmp_path / "shim", call=1, mode="hold")
    app = make_app(fleet)
    async with app.run_test(size=(160, 45)) as pilot:
        await cursor_on_group(pilot, FINDING, {"ct200", "ct201"})
        await pilot.press("f")
        await settle(pilot, lambda: isinstance(app.screen, FleetFixScreen))
        screen = app.screen
        table = screen.query_one("#fleet-choices", DataTable)
        table.move_cursor(row=[c.fix_id for c in screen.choices].index(FIX))
        await pilot.press("enter")
        await settle(pilot, lambda: screen.stage == "preview")
        await pilot.press("a")
        await shim.wait_reached_async()  # ct201 is inside step 1 now
        hosts = screen.query_one("#fleet-hosts", DataTable)
        await _until(lambda: str(hosts.get_cell("ct201", "status")).startswith("step 1/2"))
        await pilot.pause()
        longest = max(len(str(hosts.get_cell(h, "status"))) for h in ("ct200", "ct201"))
        # the Status column grew with its values (it kept the first one's width: "step 1/")
        assert hosts.columns[ColumnKey("status")].content_width >= longest

        await pilot.press("q")
        await _until(lambda: isinstance(app.screen, ConfirmScreen))
        body = str(app.screen.query_one("#confirm-body").render())
        assert "ct201: set-flashinfer-arch-list: step 1/2" in body
        await pilot.press("n")  # stay: the run goes on
        await _until(lambda: app.screen is screen)
        assert screen.stage == "running" and app.return_code is None

        await pilot.press("q")
        await _until(lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await pilot.pause()
        assert app.return_code is None  # the step in flight is not abandoned
        shim.release()
        await _until(lambda: app.return_code is not None)
        transcript = app.transcript_path

    (ct201,) = list_records("ct201")
    assert ct201.state == "stopped" and not ct201.live
    assert [s.status for s in ct201.journal] == ["changed", "not-run"]
    assert "detective-tui was quit" in (ct201.journal[1].error or "")
    assert not [s for r in (*list_records("ct200"), ct201) for s in r.journal if s.status in
                ("pending", "running")]  # fmt: skip
    saved = json.loads(ct201.path.read_text())
    assert saved["state"] == "stopped"
    assert [j["status"] for j in saved["journal"]] == ["changed", "not-run"]
    events = read_events(transcript)
    quits = [e for e in events if e["kind"] == "decision" and e.get("action") == "quit"]
    assert [q["answer"] for q in quits] == ["no", "yes"]
    assert ("ct201", 2, "not-run") in [
        (e["host"], e["step"], e["status"]) for e in events if e["kind"] == "fix-journal"
    ]


def _kill_a_cli_fix_mid_step(fleet: tuple[Host, ...], tmp_path: Path) -> dict[str, str]:
    """``detective-tui fix ct201 set-flashinfer-arch-list --yes`` killed with SIGKILL inside
    step 1; the step then runs to its end without its client. Returns ct201's files before."""
    root = host_root(fleet, "ct201")
    shim = shim_systemctl(root, tmp_path / "shim", call=1, mode="hold")
    before = host_digest(root)
    ct201 = next(h for h in fleet if h.name == "ct201")
    entry = {"name": "ct201", "local": True, "root": ct201.root, "env": dict(ct201.env)}
    entry["simulate"] = "tree"  # the demo's own tree: its nvidia-smi and systemctl may run
    if ct201.python:
        entry["python"] = list(ct201.python)
    inv = tmp_path / "hosts.yaml"
    inv.write_text(yaml.safe_dump({"hosts": [entry]}))
    code = CHILD_STANDINS + "import sys; from tui.cli import main; sys.exit(main(sys.argv[1:]))"
    argv = ["fix", "ct201", FIX, "--yes", "--hosts", str(inv)]
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *argv],
        env=os.environ.copy(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        asyncio.run(shim.wait_reached_async(300))
    finally:
        proc.kill()
        proc.wait(60)
    assert proc.returncode == -signal.SIGKILL
    shim.release()
    asyncio.run(_file(shim.finished(1)))
    return before


async def _file(path: Path) -> None:
    await _until(path.exists)


async def test_an_interrupted_fix_is_shown_on_start_and_undone_from_there(
    fleet: tuple[Host, ...], tmp_path: Path
) -> None:
    before = await asyncio.to_thread(_kill_a_cli_fix_mid_step, fleet, tmp_path)
    (record,) = list_records("ct201")
    assert record.interrupted

    app = make_app(fleet)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot, lambda: isinstance(app.screen, RecoveryScreen))
        table = app.screen.query_one("#recovery-table", DataTable)
        assert [str(c) for c in table.get_row_at(0)] == ["ct201", FIX, "INTERRUPTED at step 1 of 2"]
        what = str(app.screen.query_one("#recovery-what").render())
        assert what.startswith(f"fix {FIX} on ct201 was interrupted at step 1 of 2 ({record.id})")
        await pilot.press("i")
        await pilot.pause()
        shown = str(app.screen.query_one("#message-body").query_one("Static").render())
        assert "1. Set FLASHINFER_CUDA_ARCH_LIST for sglang.service: UNKNOWN" in shown
        await pilot.press("escape")
        await settle(pilot, lambda: isinstance(app.screen, RecoveryScreen))

        await pilot.press("u")  # the wizard with the record's undo: preview, then Apply
        await settle(pilot, lambda: isinstance(app.screen, FixWizardScreen))
        wizard = app.screen
        assert wizard.plan.fix_id == f"undo:{FIX}"
        await pilot.press("a")
        await settle(pilot, lambda: wizard.stage == "done")
        assert wizard.outcome is not None and wizard.outcome.applied
    assert list_records("ct201") == []
    assert (records_dir("ct201") / f"{record.id}.undone").is_file()
    assert host_digest(host_root(fleet, "ct201")) == before


async def test_mark_done_accepts_an_interrupted_fix_and_keeps_it_undoable(
    fleet: tuple[Host, ...], tmp_path: Path
) -> None:
    await asyncio.to_thread(_kill_a_cli_fix_mid_step, fleet, tmp_path)
    app = make_app(fleet)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot, lambda: isinstance(app.screen, RecoveryScreen))
        await pilot.press("d")
        await settle(pilot, lambda: not isinstance(app.screen, RecoveryScreen))
    (record,) = list_records("ct201")
    assert record.marked_done and not record.needs_attention
    assert record.steps  # still undoable
    app = make_app(fleet)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        assert not isinstance(app.screen, RecoveryScreen)  # not asked again


async def test_q_and_help_in_the_fix_wizard_and_a_quit_dialog_that_follows_the_run(
    fleet: tuple[Host, ...], tmp_path: Path
) -> None:
    """In the single-host wizard `?` opens the help and `q` asks (a modal stops the app's
    keys); the quit dialog follows the run as it goes — the step running, then that the fix
    finished — instead of the step it saw when it opened."""
    from tui.ui.screens.help import HelpScreen

    shim = shim_systemctl(host_root(fleet, "ct201"), tmp_path / "shim", call=1, mode="hold")
    app = make_app(fleet)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("P")
        await settle(pilot, lambda: all(not s.busy and s.status != "idle" for s in app.fleet))
        state = app.fleet["ct201"]
        finding, proposal = next(
            (f, x) for f in state.diagnosis.findings for x in f.fixes if x.id == FIX
        )
        app.request_fix("ct201", FIX, dict(proposal.params), finding.python)
        await settle(pilot, lambda: isinstance(app.screen, FixWizardScreen))
        wizard = app.screen
        footer_keys = {k for k, b in wizard.active_bindings.items() if b.binding.show}
        assert {"question_mark", "q"} <= footer_keys
        await pilot.press("question_mark")
        await settle(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        await settle(pilot, lambda: app.screen is wizard)

        await pilot.press("a")
        await shim.wait_reached_async()  # inside step 1
        await pilot.press("q")
        await _until(lambda: isinstance(app.screen, ConfirmScreen))
        body = lambda: str(app.screen.query_one("#confirm-body").render())  # noqa: E731
        assert f"ct201: {FIX}: step 1/2 running" in body()
        shim.release()  # the run goes on with the dialog open
        await _until(lambda: "The fix has finished" in body())
        assert "step 1/2" not in body()
        await pilot.press("n")
        await _until(lambda: app.screen is wizard)
        assert wizard.stage == "done"
        await pilot.press("q")  # nothing runs now: q quits at once
        await _until(lambda: app.return_code is not None)
