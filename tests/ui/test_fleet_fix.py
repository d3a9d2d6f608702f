"""Fleet fixes in the TUI: a finding group → one fix → per-host preview → confirm → results.

Every test builds its own demo fleet under ``tmp_path`` (never the session's shared demo
trees, never a user's cache): the fixes really write into those trees, through the real
local transport, and the real probe and diagnosis judge the result.
"""

from __future__ import annotations

import hashlib
import shlex
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from textual.widgets import Collapsible, DataTable, Tree
from textual.widgets.data_table import ColumnKey, RowKey

from tui.core.hosts import Host
from tui.core.run.fix_render import outcome_text
from tui.core.run.fleet_group import fix_choices, plan_group
from tui.ui.grouping import FindingGroup
from tui.ui.screens.fleet_fix import FleetFixScreen
from tui.ui.screens.help import HelpScreen
from tui.ui.screens.hosts import HostsScreen

from .conftest import all_probed, cursor_on_group, demo_subset, host_root, make_app, settle


@pytest.fixture
def fleet(tmp_path: Path) -> tuple[Host, ...]:
    """A private demo fleet of only the hosts these tests need:
    the group's two hosts, a healthy host outside it and the unreachable one."""
    return demo_subset(tmp_path / "trees", ("ct200", "ct201", "h100-node", "gone-dark"))


FINDING = "flashinfer-arch-rejected"
DROPIN_DIR = "etc/systemd/system/sglang.service.d"


def tree_digest(root: Path) -> dict[str, str]:
    base = Path(root)
    return {
        str(p.relative_to(base)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(base.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


async def _grouped(pilot) -> FindingGroup:
    return await cursor_on_group(pilot, FINDING, {"ct200", "ct201"})


async def _open(pilot) -> FleetFixScreen:
    await _grouped(pilot)
    await pilot.press("f")
    await settle(pilot, lambda: isinstance(pilot.app.screen, FleetFixScreen))
    return pilot.app.screen


def _choice_rows(screen: FleetFixScreen) -> list[tuple[str, str]]:
    table = screen.query_one("#fleet-choices", DataTable)
    return [
        (str(table.get_cell(key, "fix")), str(table.get_cell(key, "hosts"))) for key in table.rows
    ]


async def _choose(pilot, screen: FleetFixScreen, fix_id: str) -> None:
    table = screen.query_one("#fleet-choices", DataTable)
    table.move_cursor(row=[c.fix_id for c in screen.choices].index(fix_id))
    await pilot.press("enter")
    await settle(pilot, lambda: screen.stage == "preview")


async def _apply(pilot, screen: FleetFixScreen) -> None:
    await pilot.press("a")
    await settle(pilot, lambda: screen.stage == "done" and all_probed(pilot.app))


def _results(screen: FleetFixScreen) -> dict[str, tuple[str, str]]:
    table = screen.query_one("#fleet-hosts", DataTable)
    return {
        key.value: (str(table.get_cell(key, "result")), str(table.get_cell(key, "worst")))
        for key in table.rows
    }


async def test_fix_a_group_end_to_end(fleet: tuple[Host, ...]) -> None:
    app = make_app(fleet)
    roots = {n: host_root(fleet, n) for n in ("ct200", "ct201", "h100-node")}
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _open(pilot)
        assert app.fleet["ct200"].diagnosis.worst() == "critical"
        # the union of the fixes proposed for the finding, with their host counts
        rows = dict(_choice_rows(screen))
        assert rows["set-flashinfer-arch-list"] == "2/2"
        assert rows["use-installed-toolkit"] == "1/2"  # only ct201 has CUDA 13.0 installed
        assert _choice_rows(screen)[0][0] == "set-flashinfer-arch-list"
        detail = str(screen.query_one("#fleet-choice").render())
        assert detail.startswith("Set FLASHINFER_CUDA_ARCH_LIST='12.0a'")
        assert "Proposed on ct200, ct201" in detail
        before = {n: tree_digest(r) for n, r in roots.items()}
        probed = {n: app.fleet[n].result for n in roots}

        await _choose(pilot, screen, "set-flashinfer-arch-list")
        titles = [str(c.title) for c in screen.query(Collapsible)]
        assert [t.split(":")[0] for t in titles] == ["ct200", "ct201"]
        texts = [i.plan and "\n".join(i.plan.preview_commands()) for i in screen.items]
        for name, text in zip(("ct200", "ct201"), texts, strict=True):
            # each host's own exact commands, its paths resolved inside its tree
            assert f"dt_in_root {shlex.quote(str(roots[name]))} /{DROPIN_DIR}" in text
            assert "FLASHINFER_CUDA_ARCH_LIST=12.0a" in text
        assert {n: tree_digest(r) for n, r in roots.items()} == before  # nothing ran yet

        await _apply(pilot, screen)
        results = _results(screen)
        assert results["ct200"][0] == results["ct201"][0] == "fixed"
        # the arch list resolves the critical finding; the CUDA-major warning stays
        assert results["ct200"][1] == "critical → warning"
        for name in ("ct200", "ct201"):
            dropin = Path(roots[name], DROPIN_DIR, "50-detective-tui-arch-list.conf")
            assert "FLASHINFER_CUDA_ARCH_LIST=12.0a" in dropin.read_text()
        assert tree_digest(roots["h100-node"]) == before["h100-node"]
        notes = str(screen.query_one("#fleet-undo").render())
        for r in screen.results:
            name = r.item.host.name
            assert f"Undo {name}: detective-tui fix {name} --undo {r.outcome.record}" in notes
        # which processes still run the old environment, and what restarts them
        assert (
            "Restart pending on ct200, ct201: sglang.service (pid 4242 on ct200, 4242 on ct201) "
            "still runs with the old environment it started with" in notes
        )
        assert "r restarts sglang.service there (systemctl restart sglang.service)" in notes

        # the hosts were probed again. The honest verdict: sglang.service still runs with
        # the old environment until it restarts, so the running process is still critical
        # and the group stays until the restart
        for name in ("ct200", "ct201"):
            assert app.fleet[name].result is not probed[name]
            assert app.fleet[name].diagnosis.worst() == "critical"
            (result,) = [r for r in screen.results if r.item.host.name == name]
            assert result.outcome.pending_restart == ("sglang.service",)
            assert "restart pending: sglang.service" in result.detail
        assert app.fleet["h100-node"].result is probed["h100-node"]  # not in the group

        # r: restart the pending units, previewed and confirmed like the fix (Esc: not now)
        await pilot.press("r")
        await settle(pilot, lambda: screen.stage == "preview")
        await pilot.press("escape")
        await settle(pilot, lambda: screen.stage == "done")
        assert screen.kind == "fix" and _results(screen)["ct200"][0] == "fixed"
        await pilot.press("r")
        await settle(pilot, lambda: screen.stage == "preview")
        assert screen.kind == "restart"
        assert [str(c.title).split(":")[0] for c in screen.query(Collapsible)] == ["ct200", "ct201"]
        assert all(i.plan.fix_id == "restart" for i in screen.items)
        assert "systemctl restart sglang.service" in screen.items[0].plan.preview_commands()[0]
        await _apply(pilot, screen)
        results = _results(screen)
        assert results["ct200"][0] == results["ct201"][0] == "restarted"
        restarted = next(r for r in screen.results if r.item.host.name == "ct200")
        # the demo host's own systemctl shim restarted it (never this machine's systemctl)
        assert "changed — restarted sglang.service" in outcome_text(restarted.outcome)
        assert restarted.outcome.record is None  # a restart has nothing to undo
        notes = str(screen.query_one("#fleet-undo").render())
        assert "Undo ct200: detective-tui fix ct200 --undo" in notes  # the fix's undo stays
        await pilot.press("escape")
        await settle(pilot, lambda: isinstance(app.screen, HostsScreen))


async def test_a_host_that_cannot_be_planned_does_not_block_the_others(
    fleet: tuple[Host, ...],
) -> None:
    app = make_app(fleet)
    ct200, ct201 = host_root(fleet, "ct200"), host_root(fleet, "ct201")
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _open(pilot)
        before = tree_digest(ct200)
        probed = {n: app.fleet[n].result for n in ("ct200", "ct201")}
        await _choose(pilot, screen, "use-installed-toolkit")
        preview = screen.query_one("#fleet-preview")
        reasons = [str(w.render()) for w in preview.query(".unplanned")]
        assert reasons == [
            "ct200: not planned: use-installed-toolkit was not proposed here (proposed: "
            "set-flashinfer-arch-list, sampling-backend-fallback, install-cuda-toolkit-pip, "
            "upgrade-flashinfer, clear-flashinfer-jit-cache)"
        ]
        assert [str(c.title).split(":")[0] for c in screen.query(Collapsible)] == ["ct201"]
        await _apply(pilot, screen)
        results = _results(screen)
        assert results["ct200"] == ("skipped", "—")
        assert results["ct201"] == ("fixed", "critical → none")
        assert tree_digest(ct200) == before
        assert "CUDA_HOME=/usr/local/cuda-13.0" in "".join(
            p.read_text() for p in Path(ct201, DROPIN_DIR).glob("50-detective-tui-*.conf")
        )
        # only the host the fix ran on is probed again
        assert app.fleet["ct201"].result is not probed["ct201"]
        assert app.fleet["ct200"].result is probed["ct200"]


async def test_a_planning_bug_on_one_host_does_not_stop_the_others(
    fleet: tuple[Host, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tui.core.run import fleet as fleet_fixes

    real = fleet_fixes.build_plan

    def build_plan(facts, host: Host, *args, **kwargs):
        if host.name == "ct200":
            raise KeyError("a builder bug")
        return real(facts, host, *args, **kwargs)

    monkeypatch.setattr(fleet_fixes, "build_plan", build_plan)
    app = make_app(fleet)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _open(pilot)
        await _choose(pilot, screen, "set-flashinfer-arch-list")
        reasons = [str(w.render()) for w in screen.query(".unplanned")]
        assert reasons == ["ct200: not planned: internal error: KeyError('a builder bug')"]
        await _apply(pilot, screen)
        assert _results(screen)["ct201"][0] == "fixed"
        assert _results(screen)["ct200"][0] == "not planned"


async def test_a_failing_host_does_not_stop_the_others(fleet: tuple[Host, ...]) -> None:
    ct201 = host_root(fleet, "ct201")
    dropins = ct201 / DROPIN_DIR
    if dropins.is_dir():
        shutil.rmtree(dropins)
    dropins.write_text("not a directory\n")  # the drop-in step cannot write here
    app = make_app(fleet)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _open(pilot)
        await _choose(pilot, screen, "set-flashinfer-arch-list")
        assert len(screen.query(Collapsible)) == 2
        await _apply(pilot, screen)
        results = _results(screen)
        assert results["ct200"][0] == "fixed"
        assert results["ct201"][0] == "failed"
        failed = next(r for r in screen.results if r.item.host.name == "ct201")
        assert "step 1" in failed.detail or "failed" in failed.detail.lower(), failed.detail
        # the failure's detail wraps within the screen instead of running off its edge
        table = screen.query_one("#fleet-hosts")
        detail = table.columns[ColumnKey("detail")]
        right = sum(c.get_render_width(table) for c in table.columns.values())
        assert right <= app.size.width and detail.width < len(failed.detail)
        assert table.rows[RowKey("ct201")].height > 1
        log = "\n".join(screen.query_one("#fleet-output").lines)
        assert "[ct200] ── step 1/2" in log and "[ct201] ── step 1/2" in log
        assert app.fleet["ct201"].diagnosis.worst() == "critical"


async def test_read_only_has_no_fleet_fix(fleet: tuple[Host, ...]) -> None:
    app = make_app(fleet, read_only=True)
    async with app.run_test(size=(160, 45)) as pilot:
        await _grouped(pilot)
        screen = app.screen
        assert "f" not in screen.active_bindings or not screen.active_bindings["f"].enabled
        await pilot.press("f")
        await pilot.pause()
        assert isinstance(app.screen, HostsScreen)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert not [t for t in titles if t.startswith("Fix every host")]
        await pilot.press("question_mark")
        await settle(pilot, lambda: isinstance(app.screen, HelpScreen))
        table = app.screen.query_one("#help-keys", DataTable)
        actions = [str(table.get_row_at(i)[2]) for i in range(table.row_count)]
        assert not [a for a in actions if "Fix every host" in a]


async def test_palette_offers_each_finding_group(fleet: tuple[Host, ...]) -> None:
    app = make_app(fleet)
    async with app.run_test(size=(160, 45)) as pilot:
        group = await _grouped(pilot)
        assert app.screen.active_bindings["f"].enabled
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        title = f"Fix every host in group: {group.label}"
        assert title in commands
        assert not [t for t in commands if "no findings" in t or "unreachable" in t]
        commands[title].callback()
        await settle(pilot, lambda: isinstance(app.screen, FleetFixScreen))
        assert app.screen.label == group.label
        await pilot.press("escape")
        await settle(pilot, lambda: isinstance(app.screen, HostsScreen))
        # f on a host of a group fixes its group; on the unreachable group there is none
        tree = app.screen.query_one("#groups-tree", Tree)
        node = next(n for n in tree.root.children if n.data == group)
        tree.move_cursor(node.children[1])
        await pilot.press("f")
        await settle(pilot, lambda: isinstance(app.screen, FleetFixScreen))
        assert app.screen.label == group.label
        await pilot.press("escape")
        await settle(pilot, lambda: isinstance(app.screen, HostsScreen))
        tree = app.screen.query_one("#groups-tree", Tree)
        gone = next(n for n in tree.root.children if n.data.severity == "unreachable")
        tree.move_cursor(gone)
        await pilot.press("f")
        await pilot.pause()
        assert isinstance(app.screen, HostsScreen)


async def test_choices_and_plans_from_the_app_state(fleet: tuple[Host, ...]) -> None:
    app = make_app(fleet)
    async with app.run_test(size=(160, 45)) as pilot:
        await _grouped(pilot)
        states = [app.fleet["ct200"], app.fleet["ct201"], app.fleet["gone-dark"]]
    choices = {c.fix_id: c for c in fix_choices(FINDING, states)}
    toolkit = choices["use-installed-toolkit"]
    assert toolkit.hosts == ("ct201",) and set(toolkit.resolves) == {
        FINDING,
        "nvcc-torch-major-mismatch",
    }
    # a demo host has no dpkg/apt-get stand-ins: the apt install would run on this machine
    assert "install-cuda-toolkit-apt" not in choices
    assert not choices["set-flashinfer-arch-list"].params_vary  # 12.0a on both
    # a diagnosis older than the facts: the toolkit it proposed is gone → the reason, per host
    ct201 = states[1]
    facts = replace(
        ct201.facts, toolkits=tuple(t for t in ct201.facts.toolkits if "13.0" not in t.home)
    )
    stale = replace(ct201, result=replace(ct201.result, facts=facts))
    items = plan_group(FINDING, "use-installed-toolkit", [stale, states[0], states[2]], "s")
    assert items[0].plan is None and not items[0].skipped
    assert "no CUDA toolkit was found at /usr/local/cuda-13.0 on ct201" in (items[0].error or "")
    assert items[1].skipped and "was not proposed here" in (items[1].error or "")
    assert items[2].unreachable and "no answer" in (items[2].error or "")


async def test_the_choices_fit_80_columns(fleet: tuple[Host, ...]) -> None:
    """The Resolves column lists every finding a fix resolves, one a line, and the choices
    table needs no horizontal scrolling on an 80x24 terminal."""
    app = make_app(fleet)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(pilot)
        table = screen.query_one("#fleet-choices", DataTable)
        await pilot.pause()
        assert table.virtual_size.width <= table.scrollable_content_region.width
        cell = str(table.get_cell("use-installed-toolkit", "resolves"))
        assert cell.splitlines() == [FINDING, "nvcc-torch-major-mismatch"]


def _last_line_shown(log) -> bool:
    """The log's last line is on screen, above its horizontal scrollbar (long lines)."""
    rows = log.scrollable_content_region.height
    return log.line_count == 0 or log.scroll_offset.y + rows >= log.line_count


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_the_log_shows_its_last_line(fleet: tuple[Host, ...], size: tuple[int, int]) -> None:
    """Once the run is done (the results table takes most of the screen), the log still
    shows its newest lines, not hidden under the horizontal scrollbar its long lines bring
    (at 80x24 its border and that scrollbar left one row).
    (Status growing to its longest value: test_quit_and_recovery.)"""
    two = tuple(h for h in fleet if h.name in ("ct200", "ct201"))
    app = make_app(two)
    async with app.run_test(size=size) as pilot:
        screen = await _open(pilot)
        await _choose(pilot, screen, "set-flashinfer-arch-list")
        await _apply(pilot, screen)
        await pilot.pause()
        log = screen.query_one("#fleet-output")
        if size[0] < 100:
            assert log.max_scroll_x > 0  # the long lines: a horizontal scrollbar
        assert log.line_count > 3 and _last_line_shown(log), (log.scroll_offset, log.size)
        # and the line before it: the border and the scrollbar leave two rows at least
        assert log.scrollable_content_region.height >= 2


@pytest.mark.slow  # two demo hosts probed, one fixed: ~20 s
async def test_rolling_one_at_a_time_stops_at_the_first_failure(
    fleet: tuple[Host, ...],
) -> None:
    ct200, ct201 = host_root(fleet, "ct200"), host_root(fleet, "ct201")
    dropins = ct200 / DROPIN_DIR
    if dropins.is_dir():
        shutil.rmtree(dropins)
    dropins.write_text("not a directory\n")  # ct200, the first host, fails
    before = tree_digest(ct201)
    app = make_app(fleet)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _open(pilot)
        title = screen.query_one("#fleet-title")
        assert "all at once" in str(title.render())
        await pilot.press("n", "s")  # the setting, before a run: 1 at a time, stop on failure
        assert (screen.at_once, screen.stop_on_failure) == (1, True)
        assert "1 host at a time, stop at the first failure" in str(title.render())
        await _choose(pilot, screen, "set-flashinfer-arch-list")
        assert screen.run is not None and screen.run.rollout == screen.rollout
        await _apply(pilot, screen)
        results = _results(screen)
        assert (results["ct200"][0], results["ct201"][0]) == ("failed", "not started")
        assert tree_digest(ct201) == before  # never touched
        not_started = next(r for r in screen.results if r.item.host.name == "ct201")
        assert not_started.detail == "not started: the run stopped after ct200 failed"
        await pilot.press("n")  # the setting is for before a run
        assert screen.at_once == 1
