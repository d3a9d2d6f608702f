"""Pilot tests on the demo fleet: real fake-host trees, the real local probe, the real diagnosis."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Input, Log, Static, Tree

from tui.core import locations
from tui.core.hosts import Host
from tui.core.run.runner import ProbeResult, Session
from tui.ui.messages import ProbeActivity, ProbeFinished
from tui.ui.palette import FleetCommands
from tui.ui.screens.help import HelpScreen
from tui.ui.screens.host import HostScreen
from tui.ui.screens.hosts import HostsScreen
from tui.ui.screens.message import MessageScreen
from tui.ui.screens.transcripts import TranscriptsScreen
from tui.ui.widgets.cuda_compare import CudaComparison
from tui.ui.widgets.fleet_table import FleetTable
from tui.ui.widgets.replay_view import ReplayView

from .conftest import all_probed, make_app, probe_all, settle


def _table_rows(app) -> list[str]:
    return list(app.screen.query_one("#hosts-table", FleetTable).row_names)


async def test_probe_all_reports_every_host(demo_hosts: tuple[Host, ...]) -> None:
    messages: list[object] = []
    app = make_app(demo_hosts)
    async with app.run_test(size=(160, 40), message_hook=messages.append) as pilot:
        assert {s.status for s in app.fleet} == {"idle"}
        await probe_all(pilot)
        fleet = app.fleet
        assert fleet["gone-dark"].status == "unreachable"
        assert "no answer" in (fleet["gone-dark"].error or "")
        for name in ("ct200", "h100-node", "b200-old-driver", "rtx5090-cu124", "no-driver"):
            assert fleet[name].status == "done", (name, fleet[name].error)
            assert fleet[name].diagnosis is not None
        ids = {f.id: f.severity for f in fleet["ct200"].diagnosis.findings}
        assert ids.get("flashinfer-arch-rejected") == "critical"
        # fixes carry the fix engine's plan for this host: exact commands, root where it writes
        # the service's systemd drop-in (the same as `detective-tui fix … --dry-run`)
        fixes = {x.id: x for f in fleet["ct200"].diagnosis.findings for x in f.fixes}
        arch = fixes["set-flashinfer-arch-list"]
        assert arch.needs_root and any("sglang.service.d" in c for c in arch.commands)
        assert not [f for f in fleet["h100-node"].diagnosis.findings if f.severity != "info"]
        assert "no-nvidia-driver" in {f.id for f in fleet["no-driver"].diagnosis.findings}
        assert "driver-too-old-for-torch" in {
            f.id for f in fleet["b200-old-driver"].diagnosis.findings
        }
        finished = [m.result.host.name for m in messages if isinstance(m, ProbeFinished)]
        assert sorted(finished) == sorted(h.name for h in demo_hosts)
        # streamed output is coalesced: far fewer activity messages handled than lines received
        activity = sum(isinstance(m, ProbeActivity) for m in messages)
        lines = sum(len(app.probe_output(h.name)) for h in demo_hosts)
        assert 0 < activity < lines
        # the table shows the verdicts
        table = app.screen.query_one("#hosts-table", FleetTable)
        assert table.cell("ct200", "worst") == "critical"
        assert table.cell("ct200", "verdict") == "rejects GPU"
        assert table.cell("ct200", "jit") == "12.8"
        assert table.cell("h100-node", "worst") in ("none", "info")
        # the Status says what happened, the Reason why
        assert table.cell("gone-dark", "status") == "unreachable"
        assert table.cell("gone-dark", "reason") == "no answer (simulated demo host)"


async def test_group_by_finding_view(demo_hosts: tuple[Host, ...]) -> None:
    app = make_app(demo_hosts)
    async with app.run_test(size=(160, 40)) as pilot:
        await probe_all(pilot)
        await pilot.press("g")
        tree = app.screen.query_one("#groups-tree", Tree)
        groups = {
            str(node.label): [str(c.label) for c in node.children] for node in tree.root.children
        }
        rejected = [k for k in groups if "SM 12.0 + nvcc 12.8 → FlashInfer drops the GPU" in k]
        assert rejected, groups
        assert "ct200" in groups[rejected[0]]
        assert any(k.endswith("unreachable") and groups[k] == ["gone-dark"] for k in groups)
        healthy = [k for k in groups if "no findings" in k]
        assert healthy and "h100-node" in groups[healthy[0]]
        # the first group listed is the most severe
        first = next(iter(groups))
        assert "unreachable" in first or "critical" in first or "drops" in first
        # selecting a host in a group opens it
        tree.focus()
        node = tree.root.children[list(groups).index(rejected[0])]
        tree.move_cursor(node.children[groups[rejected[0]].index("ct200")])
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        assert app.screen.host_name == "ct200"


async def test_filter_and_sort(demo_hosts: tuple[Host, ...]) -> None:
    app = make_app(demo_hosts)
    async with app.run_test(size=(160, 40)) as pilot:
        await probe_all(pilot)
        await pilot.press("slash")
        box = app.screen.query_one("#filter", Input)
        assert box.display and box.has_focus
        await pilot.press(*"tag:hopper")
        await pilot.pause()
        assert _table_rows(app) == [
            "h100-cpu-torch",
            "h100-node",
            "h100-stub",
            "h100-torchvision",
            "h100-visible",
            "h200-hgx",
            "vllm-ctr-lost",
        ]
        box.value = "finding:flashinfer-arch-rejected"
        await pilot.pause()
        assert "ct200" in _table_rows(app) and "h100-node" not in _table_rows(app)
        box.value = "bogus:thing"
        await pilot.pause()
        error = app.screen.query_one("#filter-error", Static)
        assert error.display and "unknown filter key 'bogus'" in str(error.render())
        await pilot.press("escape")
        await pilot.pause()
        assert not box.display and len(_table_rows(app)) == len(demo_hosts)
        # sort by worst severity: not reached (nothing known) first, then critical hosts
        screen = app.screen
        assert isinstance(screen, HostsScreen)
        screen.sort_column = "worst"
        await pilot.pause()
        rows = _table_rows(app)
        assert rows[0] == "gone-dark"
        assert app.fleet[rows[1]].diagnosis.worst() == "critical"
        await pilot.press("r")
        await pilot.pause()
        assert _table_rows(app)[-1] == "gone-dark"


async def test_host_screen_tells_the_reference_story(reference_hosts: tuple[Host, ...]) -> None:
    app = make_app(reference_hosts)
    async with app.run_test(size=(120, 40)) as pilot:
        await probe_all(pilot)
        app.open_host("ct200")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        screen = app.screen
        boxes = {b.key: b for b in screen.query_one(CudaComparison).boxes}
        assert boxes["driver"].value == "13.0" and boxes["driver"].severity is None
        assert boxes["torch"].value == "13.0"
        assert boxes["path"].value == "12.8"
        assert boxes["jit"].value == "12.8" and boxes["jit"].severity == "critical"
        assert "/usr/local/cuda-12.8" in boxes["jit"].detail
        replay = str(screen.query_one(ReplayView).render())
        assert "TARGET_CUDA_ARCHS" in replay and "(empty)" in replay
        assert "SM 12.x requires CUDA >= 12.9" in replay
        fixes = screen.query_one("#fixes", DataTable)
        assert fixes.row_count > 0
        await pilot.press("o")
        log = screen.query_one("#output", Log)
        assert log.line_count > 10 and log.has_focus
        await pilot.press("escape")
        assert isinstance(app.screen, HostsScreen)


async def test_read_only_hides_fixes(reference_hosts: tuple[Host, ...]) -> None:
    app = make_app(reference_hosts, read_only=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await probe_all(pilot)
        app.open_host("ct200")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        actions = {b.binding.action for b in app.screen.active_bindings.values()}
        assert "fix" not in actions and "validate" not in actions and "probe" in actions
        title = str(app.screen.query_one("#host-title").render())  # a probed host, not a capture
        assert "captured output" not in title and "probed just now" in title
        titles = [c[0] for c in FleetCommands(app.screen)._all()]
        assert not [t for t in titles if t.startswith("Fix ")]
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        help_rows = app.screen.query_one("#help-keys", DataTable)
        texts = [str(help_rows.get_row_at(i)[2]) for i in range(help_rows.row_count)]
        assert "Re-probe this host" in texts
        assert "Preview and apply the selected fix" not in texts
        assert "Validate FlashInfer's sampling kernels on this host's GPU" not in texts


async def test_palette_lists_bindings_hosts_findings_and_fixes(
    demo_hosts: tuple[Host, ...],
) -> None:
    app = make_app(demo_hosts)
    async with app.run_test(size=(120, 40)) as pilot:
        await probe_all(pilot)
        titles = [c[0] for c in FleetCommands(app.screen)._all()]
        assert "Probe all (P)" in titles and "Groups (g)" in titles
        assert "Open host ct200" in titles and "Probe host gone-dark" in titles
        assert [t for t in titles if t.startswith("ct200: ")]
        fixes = [t for t in titles if t.startswith("Fix ct200: ")]
        assert fixes and len(fixes) == len(set(fixes))  # a fix two findings propose: once
        provider = FleetCommands(app.screen)
        hits = [str(h.text) async for h in provider.search("set-flashinfer-arch-list")]
        assert "Fix ct200: set-flashinfer-arch-list — " in "\n".join(hits), hits
        await pilot.press("ctrl+p")
        await pilot.press(*"Open host ct200")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        assert app.screen.host_name == "ct200"


async def test_help_lists_every_key(demo_hosts: tuple[Host, ...]) -> None:
    app = make_app(demo_hosts)
    async with app.run_test(size=(120, 50)) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        table = app.screen.query_one("#help-keys", DataTable)
        actions = {str(table.get_row_at(i)[2]) for i in range(table.row_count)}
        for binding in (*HostsScreen.BINDINGS, *HostScreen.BINDINGS, *app.BINDINGS):
            assert (binding.tooltip or binding.description) in actions
        await pilot.press("escape")
        assert isinstance(app.screen, HostsScreen)


async def test_save_session_and_transcripts(reference_hosts: tuple[Host, ...]) -> None:
    app = make_app(reference_hosts)
    async with app.run_test(size=(120, 40)) as pilot:
        await probe_all(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        exports = sorted((locations.state_dir() / "exports").iterdir())
        names = [p.name for p in exports]
        assert names == ["20260102T030405-report.md", "20260102T030405-session.jsonl"]
        report = exports[0].read_text()
        assert "ct200" in report and "flashinfer-arch-rejected" in report
        assert '"kind": "probe"' in exports[1].read_text()
        await pilot.press("escape")  # the dialog that says where it saved
        await pilot.press("t")
        await settle(pilot, lambda: isinstance(app.screen, TranscriptsScreen))
        options = app.screen.query_one("#sessions")
        assert options.option_count >= 1
        assert str(options.get_option_at_index(0).prompt).startswith("●")


class _BrokenForOneHost(Session):
    async def probe(self, host: Host, on_progress=None) -> ProbeResult:
        if host.name == "h100-node":
            raise RuntimeError("transport exploded")
        return await super().probe(host, on_progress)


async def test_one_failing_worker_is_reported_and_others_continue(
    reference_hosts: tuple[Host, ...],
) -> None:
    app = make_app(reference_hosts, session_factory=lambda: _BrokenForOneHost())
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await probe_all(pilot)
        assert app.fleet["h100-node"].status == "probe-failed"
        assert app.fleet["ct200"].status == "done"
        assert any("transport exploded" in n.message for n in app._notifications)
        assert isinstance(app.screen, HostsScreen)


async def test_error_outside_probes_opens_one_readable_message(
    reference_hosts: tuple[Host, ...], tmp_path: Path, monkeypatch
) -> None:
    app = make_app(reference_hosts)
    async with app.run_test(size=(120, 40)) as pilot:
        await probe_all(pilot)
        blocker = tmp_path / "not-a-dir"
        blocker.write_text("")
        monkeypatch.setenv("XDG_STATE_HOME", str(blocker))
        await pilot.press("ctrl+s")
        await settle(pilot, lambda: isinstance(app.screen, MessageScreen))
        assert app.screen.title_text == "Save session failed"
        assert "Error" in app.screen.body and "Traceback" not in app.screen.body


async def test_fix_key_opens_the_wizard_for_the_selected_fix(
    reference_hosts: tuple[Host, ...],
) -> None:
    from tui.ui.screens.fix_wizard import FixWizardScreen

    app = make_app(reference_hosts)
    async with app.run_test(size=(120, 40)) as pilot:
        await probe_all(pilot)
        app.open_host("ct200")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        finding = app.fleet["ct200"].diagnosis.findings[0]
        await pilot.press("f")
        await settle(pilot, lambda: isinstance(app.screen, FixWizardScreen))
        wizard = app.screen
        assert wizard.plan.fix_id == finding.fixes[0].id
        assert wizard.host.name == "ct200"
        await pilot.press("escape")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        # from the what-if tab, the highlighted row is the fix that opens
        await pilot.press("w")
        fixes = app.screen.query_one("#fixes", DataTable)
        fixes.move_cursor(row=2)
        await pilot.press("f")
        await settle(pilot, lambda: isinstance(app.screen, FixWizardScreen))
        assert app.screen.plan.fix_id == str(fixes.get_row_at(2)[0])
        await pilot.press("escape")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        # the same fix from any tab: the replay tab opens the What-if row under the cursor
        await pilot.press("e")
        await pilot.press("f")
        await settle(pilot, lambda: isinstance(app.screen, FixWizardScreen))
        assert app.screen.plan.fix_id == str(fixes.get_row_at(2)[0])
        await pilot.press("escape")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        # F goes back to the Findings tab; highlighting a finding moves the What-if cursor
        # to the fix it proposes, which f then opens from any tab
        screen = app.screen
        await pilot.press("F")
        assert screen.query_one("#host-tabs").active == "tab-findings"
        findings = app.fleet["ct200"].diagnosis.findings
        last = max(i for i, f in enumerate(findings) if f.fixes)
        screen.query_one("#findings").highlighted = last
        await pilot.pause()
        await pilot.press("o")
        await pilot.press("f")
        await settle(pilot, lambda: isinstance(app.screen, FixWizardScreen))
        assert app.screen.plan.fix_id == findings[last].fixes[0].id


async def test_hosts_table_keys_and_mouse(demo_hosts: tuple[Host, ...]) -> None:
    app = make_app(demo_hosts)
    async with app.run_test(size=(160, 40)) as pilot:
        table = app.screen.query_one("#hosts-table", FleetTable)
        assert table.has_focus and table.cursor_name == "b200-old-driver"
        await pilot.press("down", "down", "down")
        assert table.cursor_name == "gone-dark"
        await pilot.press("ctrl+end")  # end jumps sideways (test_columns)
        assert table.cursor_name == max(h.name for h in demo_hosts)  # sorted by name
        await pilot.click(FleetTable, offset=(3, 2))  # the ct200 row (header is line 0)
        assert table.cursor_name == "ct200"
        await pilot.click(FleetTable, offset=(3, 2))  # clicking the selected row opens it
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        assert app.screen.host_name == "ct200"
        await pilot.press("escape")
        await pilot.click(FleetTable, offset=(20, 0))  # the Status header sorts by status
        assert app.screen.sort_column == "status"


async def test_validate_shows_the_verdict(reference_hosts: tuple[Host, ...]) -> None:
    app = make_app(reference_hosts)
    async with app.run_test(size=(120, 40)) as pilot:
        await probe_all(pilot)
        app.open_host("ct200")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        await pilot.press("v")
        await settle(pilot, lambda: isinstance(app.screen, MessageScreen))
        dialog = app.screen
        # the demo host has no GPU and no real torch: FlashInfer cannot be exercised here
        assert dialog.title_text == "Sampling kernels on ct200: skipped"
        assert dialog.severity == "warning" and dialog.markdown
        assert dialog.body.strip()


async def test_probe_a_whole_group(reference_hosts: tuple[Host, ...]) -> None:
    app = make_app(reference_hosts)
    async with app.run_test(size=(160, 40)) as pilot:
        await probe_all(pilot)
        await pilot.press("g")
        tree = app.screen.query_one("#groups-tree", Tree)
        healthy = next(n for n in tree.root.children if "no findings" in str(n.label))
        tree.move_cursor(healthy)
        before = {s.name: s.result for s in app.fleet}

        def probed_again() -> set[str]:
            return {s.name for s in app.fleet if s.result is not before[s.name]}

        await pilot.press("p")  # a demo probe can end before the next frame: judge by results
        await settle(pilot, lambda: bool(probed_again()) and all_probed(app))
        assert probed_again() == set(healthy.data.hosts) == {"h100-node"}
