"""Undoing a fleet fix in the TUI: the fix run's results → ``u`` → per-host undo preview →
``a`` → results, re-probe, records marked undone → ``r`` restarts what the undo changed.

Every test builds its own demo fleet under ``tmp_path``: the fixes and their undos really
write into those trees through the real local transport, and the real probe and diagnosis
judge the result. The undo records live in the test's own XDG state dir.
"""

from __future__ import annotations

import shlex
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual.widgets import Collapsible, DataTable, Tree

from tui.core.fixes.undo import list_records, records_dir
from tui.core.hosts import Host
from tui.core.records.transcript import read_events
from tui.ui.grouping import FindingGroup
from tui.ui.screens.fleet_fix import FleetFixScreen
from tui.ui.screens.hosts import HostsScreen

from .conftest import all_probed, cursor_on_group, demo_subset, host_root, make_app, settle


@pytest.fixture
def fleet(tmp_path: Path) -> tuple[Host, ...]:
    """A private demo fleet of only the hosts these tests need:
    the group's two hosts, a healthy host outside it and the unreachable one."""
    return demo_subset(tmp_path / "trees", ("ct200", "ct201", "h100-node", "gone-dark"))


FINDING = "flashinfer-arch-rejected"
ARCH_DROPIN = "etc/systemd/system/sglang.service.d/50-detective-tui-arch-list.conf"
GROUP = ("ct200", "ct201")


async def _open(pilot) -> FleetFixScreen:
    """Probe everything, group by finding, open the fleet fix on the ct200/ct201 group."""
    await cursor_on_group(pilot, FINDING, set(GROUP))
    await pilot.press("f")
    await settle(pilot, lambda: isinstance(pilot.app.screen, FleetFixScreen))
    return pilot.app.screen


async def _fix(pilot, screen: FleetFixScreen, fix_id: str) -> None:
    table = screen.query_one("#fleet-choices", DataTable)
    table.move_cursor(row=[c.fix_id for c in screen.choices].index(fix_id))
    await pilot.press("enter")
    await settle(pilot, lambda: screen.stage == "preview")
    await _apply(pilot, screen)


async def _apply(pilot, screen: FleetFixScreen) -> None:
    await pilot.press("a")
    await settle(pilot, lambda: screen.stage == "done" and all_probed(pilot.app))


async def _press_to_preview(pilot, screen: FleetFixScreen, key: str) -> None:
    await pilot.press(key)
    await settle(pilot, lambda: screen.stage == "preview")


def _results(screen: FleetFixScreen) -> dict[str, tuple[str, str]]:
    table = screen.query_one("#fleet-hosts", DataTable)
    return {
        key.value: (str(table.get_cell(key, "result")), str(table.get_cell(key, "worst")))
        for key in table.rows
    }


def _offered(screen: FleetFixScreen, key: str) -> bool:
    binding = screen.active_bindings.get(key)
    return binding is not None and binding.enabled


def _palette(app) -> dict[str, Callable[[], Awaitable[object]]]:
    """The palette's commands for the screen's bindings: title → what it runs."""
    from tui.ui.palette import FleetCommands

    provider = FleetCommands(app.screen)
    return {title: run for title, _, run in provider._binding_commands()}


def _decisions(app) -> list[dict]:
    return [e for e in read_events(app.transcript_path) if e["kind"] == "decision"]


async def test_undo_a_group_fix_on_every_changed_host(fleet: tuple[Host, ...]) -> None:
    app = make_app(fleet)
    roots = {n: host_root(fleet, n) for n in GROUP}
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _open(pilot)
        assert not _offered(screen, "u")  # nothing ran yet
        await _fix(pilot, screen, "set-flashinfer-arch-list")
        assert {r for r, _ in _results(screen).values()} == {"fixed"}
        records = {r.item.host.name: r.outcome.record for r in screen.fixed}
        assert set(records) == set(GROUP) and all(records.values())
        assert _offered(screen, "u")
        assert "Undo on every changed host (u)" in _palette(app)

        # u: the undo preview, per host, before anything runs; Esc returns to the fix results
        await _press_to_preview(pilot, screen, "u")
        assert screen.kind == "undo"
        assert [str(c.title).split(":")[0] for c in screen.query(Collapsible)] == list(GROUP)
        for item, name in zip(screen.items, GROUP, strict=True):
            assert item.undo_record is not None and item.undo_record.id == records[name]
            text = "\n".join(item.plan.preview_commands())
            dropin_dir, dropin = ARCH_DROPIN.rsplit("/", 1)
            inside = f"dt_in_root {shlex.quote(str(roots[name]))} /{dropin_dir}"
            assert f'd="$({inside})"\nf="$d"/{dropin}' in text and 'rm -f "$f"' in text
            assert (roots[name] / ARCH_DROPIN).is_file()  # nothing ran yet
        await pilot.press("escape")
        await settle(pilot, lambda: screen.stage == "done")
        assert screen.kind == "fix" and _results(screen)["ct200"][0] == "fixed"
        no = [d for d in _decisions(app) if d.get("undo")]
        # one decision per host (each names its record), in the one field set
        assert {(d["action"], d["host"], d["undo"], d["answer"]) for d in no} == {
            ("undo", n, records[n], "no") for n in GROUP
        }

        before = {n: app.fleet[n].result for n in GROUP}
        await _palette(app)["Undo on every changed host (u)"]()  # as the palette runs it
        await settle(pilot, lambda: screen.stage == "preview" and screen.kind == "undo")
        await _apply(pilot, screen)
        results = _results(screen)
        # the verdict for the unit as it will start next time: warning with the arch list,
        # critical again without it
        assert results == {n: ("undone", "warning → critical") for n in GROUP}
        for name in GROUP:
            assert not (roots[name] / ARCH_DROPIN).exists()
            assert list_records(name) == []  # marked undone: `last` no longer finds it
            assert (records_dir(name) / f"{records[name]}.undone").is_file()
            # probed again: the finding is back in the fleet's verdict
            assert app.fleet[name].result is not before[name]
            assert FINDING in {f.id for f in app.fleet[name].diagnosis.findings}
            assert app.fleet[name].diagnosis.worst() == "critical"
        undone = next(r for r in screen.results if r.item.host.name == "ct200")
        assert "verdict as before the fix" in undone.detail
        notes = str(screen.query_one("#fleet-undo").render())
        assert "Undone on ct200, ct201" in notes and "--undo" not in notes
        log = "\n".join(screen.query_one("#fleet-output").lines)
        assert "── set-flashinfer-arch-list (undo) on ct200, ct201" in log
        assert "[ct201] ── step 1/1: Undo: Set FLASHINFER_CUDA_ARCH_LIST" in log
        yes = [d for d in _decisions(app) if d.get("undo") and d["answer"] == "yes"]
        assert {(d["host"], d["undo"]) for d in yes} == set(records.items())

        # nothing is left to undo, and the units were never restarted: nothing to restart
        assert not _offered(screen, "u") and not _offered(screen, "r")
        assert "Undo on every changed host (u)" not in _palette(app)
        await pilot.press("u")
        await pilot.pause()
        assert screen.stage == "done" and screen.kind == "undo"
        await pilot.press("escape")
        await settle(pilot, lambda: isinstance(app.screen, HostsScreen))


async def test_undo_after_a_restart_offers_the_restart_again(fleet: tuple[Host, ...]) -> None:
    """use-installed-toolkit runs on ct201 only; restarted it is green. The undo skips ct200
    (the fix changed nothing there), and leaves ct201's service running the fixed
    environment until ``r`` restarts it: then the fleet sees it critical again."""
    app = make_app(fleet)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _open(pilot)
        await _fix(pilot, screen, "use-installed-toolkit")
        assert _results(screen)["ct201"] == ("fixed", "critical → none")
        await _press_to_preview(pilot, screen, "r")
        await _apply(pilot, screen)
        assert screen.kind == "restart" and not app.fleet["ct201"].diagnosis.findings

        assert _offered(screen, "u")  # after the restart's results too
        await _press_to_preview(pilot, screen, "u")
        reasons = [str(w.render()) for w in screen.query(".unplanned")]
        assert reasons == ["ct200: nothing to undo: the fix changed nothing on ct200"]
        assert [str(c.title).split(":")[0] for c in screen.query(Collapsible)] == ["ct201"]
        await pilot.press("escape")  # back to the results on display: the restart's
        await settle(pilot, lambda: screen.stage == "done")
        assert screen.kind == "restart" and _results(screen)["ct201"][0] == "restarted"

        await _press_to_preview(pilot, screen, "u")
        await _apply(pilot, screen)
        assert _results(screen) == {
            "ct200": ("skipped", "—"),
            "ct201": ("undone", "none → critical"),
        }
        undone = next(r for r in screen.results if r.item.host.name == "ct201")
        assert undone.outcome.pending_restart == ("sglang.service",)
        notes = str(screen.query_one("#fleet-undo").render())
        assert (
            "Restart pending on ct201: sglang.service (pid 4242 on ct201) still runs with the fixed"
            in notes
        )
        # the running service still has the fixed environment, and the fleet judges it
        assert not app.fleet["ct201"].diagnosis.findings

        assert _offered(screen, "r")
        await _press_to_preview(pilot, screen, "r")
        assert screen.kind == "restart"
        assert [i.host.name for i in screen.items] == ["ct201"]
        await pilot.press("escape")  # back to the undo's results
        await settle(pilot, lambda: screen.stage == "done")
        assert screen.kind == "undo"
        await _press_to_preview(pilot, screen, "r")
        await _apply(pilot, screen)
        assert _results(screen)["ct201"][0] == "restarted"
        assert app.fleet["ct201"].diagnosis.worst() == "critical"
        assert FINDING in {f.id for f in app.fleet["ct201"].diagnosis.findings}

        # back in the groups view the cursor is on the group that was fixed (the runs
        # regrouped the fleet meanwhile), so the next f acts on it again
        await pilot.press("escape")
        await settle(pilot, lambda: isinstance(app.screen, HostsScreen) and all_probed(app))
        node = app.screen.query_one("#groups-tree", Tree).cursor_node
        assert isinstance(node.data, FindingGroup) and node.data.finding_id == FINDING


async def test_a_failing_undo_does_not_stop_the_others(fleet: tuple[Host, ...]) -> None:
    app = make_app(fleet)
    ct201 = host_root(fleet, "ct201")
    shim = ct201 / "usr/bin/systemctl"
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _open(pilot)
        await _fix(pilot, screen, "set-flashinfer-arch-list")
        records = {r.item.host.name: r.outcome.record for r in screen.fixed}
        working = shim.read_text()
        shim.write_text("#!/bin/sh\necho 'Failed to reload daemon: Access denied' >&2\nexit 1\n")

        await _press_to_preview(pilot, screen, "u")
        await _apply(pilot, screen)
        results = _results(screen)
        assert results["ct200"] == ("undone", "warning → critical")
        assert results["ct201"][0] == "failed"
        failed = next(r for r in screen.results if r.item.host.name == "ct201")
        assert "step 1" in failed.detail or "failed" in failed.detail.lower(), failed.detail
        assert "[ct201] Failed to reload daemon" in "\n".join(
            screen.query_one("#fleet-output").lines
        )
        # only the host whose undo applied has its record set aside
        assert list_records("ct200") == []
        assert [r.id for r in list_records("ct201")] == [records["ct201"]]
        notes = str(screen.query_one("#fleet-undo").render())
        assert f"Undo ct201: detective-tui fix ct201 --undo {records['ct201']}" in notes
        assert "Undone on ct200" in notes

        # u again: ct201 still has its record; ct200 is listed as already undone
        assert _offered(screen, "u")
        shim.write_text(working)
        await _press_to_preview(pilot, screen, "u")
        reasons = [str(w.render()) for w in screen.query(".unplanned")]
        assert reasons == [f"ct200: nothing to undo: {records['ct200']} is already undone"]
        await _apply(pilot, screen)
        assert _results(screen)["ct201"][0] == "undone"
        assert list_records("ct201") == []
        assert not _offered(screen, "u")


async def test_a_record_that_cannot_be_read_is_listed_with_the_reason(
    fleet: tuple[Host, ...],
) -> None:
    app = make_app(fleet)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _open(pilot)
        await _fix(pilot, screen, "set-flashinfer-arch-list")
        record = next(r for r in screen.fixed if r.item.host.name == "ct200").outcome.record
        (records_dir("ct200") / f"{record}.json").write_text("{ torn")
        await _press_to_preview(pilot, screen, "u")
        (reason,) = [str(w.render()) for w in screen.query(".unplanned")]
        assert reason.startswith(f"ct200: cannot be undone: {records_dir('ct200')}/{record}.json")
        assert "not a readable undo record" in reason
        await _apply(pilot, screen)
        results = _results(screen)
        assert results["ct200"] == ("not planned", "—")
        assert results["ct201"][0] == "undone"
        assert (host_root(fleet, "ct200") / ARCH_DROPIN).is_file()  # left as it was


async def test_read_only_offers_no_undo(fleet: tuple[Host, ...]) -> None:
    """The screen is not reachable under --read-only; if it were, u would still be hidden."""
    app = make_app(fleet)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _open(pilot)
        await _fix(pilot, screen, "set-flashinfer-arch-list")
        assert _offered(screen, "u")
        app.read_only = True
        screen.refresh_bindings()
        await pilot.pause()
        assert not _offered(screen, "u")
        assert "Undo on every changed host (u)" not in _palette(app)
        await pilot.press("u")
        await pilot.pause()
        assert screen.stage == "done" and screen.kind == "fix"


async def test_back_from_a_fleet_fix_the_cursor_is_on_its_group(fleet: tuple[Host, ...]) -> None:
    """The cursor returns to the group the fleet fix was opened on, even when the rebuilds
    while it ran left it on another group (they fall back to the first fixable one)."""
    app = make_app(fleet)
    async with app.run_test(size=(160, 45)) as pilot:
        await cursor_on_group(pilot, FINDING, set(GROUP))
        tree = app.screen.query_one("#groups-tree", Tree)
        groups = [n for n in tree.root.children if isinstance(n.data, FindingGroup)]
        other = next(n for n in reversed(groups) if n.data.finding_id not in (None, FINDING))
        await pilot.press("f")
        await settle(pilot, lambda: isinstance(app.screen, FleetFixScreen))
        tree.move_cursor(other)  # where a rebuild meanwhile left it
        await pilot.press("escape")
        await settle(pilot, lambda: isinstance(app.screen, HostsScreen))
        node = tree.cursor_node
        assert isinstance(node.data, FindingGroup) and node.data.finding_id == FINDING
