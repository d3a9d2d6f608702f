"""One host: the four-way CUDA comparison, findings, the FlashInfer replay, fixes, live GPU
state, its history, raw output."""

from __future__ import annotations

import shlex
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Log, OptionList, Static, TabbedContent, TabPane
from textual.widgets.option_list import Option

from tui.core.findings import Finding, FixSuggestion
from tui.core.hosts import Host
from tui.core.judge.explain import symptom_line, symptoms
from tui.core.judge.judged import Judged
from tui.core.redact import redact_text
from tui.core.rules.completeness import partial_verdict, unseen
from tui.ui.cuda_boxes import cuda_boxes
from tui.ui.disabled import ExplainsDisabledKeys
from tui.ui.fleet_state import (
    FleetState,
    HostState,
    gpu_summary,
    sm_summary,
    status_text,
    status_word,
)
from tui.ui.footer_fit import FitFooter, fit_footer
from tui.ui.freshness import probed_text
from tui.ui.messages import FixRequested, ProbeRequested, ValidateRequested
from tui.ui.story import headline
from tui.ui.widgets.cuda_compare import CudaComparison
from tui.ui.widgets.finding_view import NO_FINDINGS, FindingView, severity_label
from tui.ui.widgets.gpu_view import REFRESH_S as GPU_REFRESH_S
from tui.ui.widgets.gpu_view import GpuView
from tui.ui.widgets.history_view import HistoryView
from tui.ui.widgets.redacted_log import RedactedLog
from tui.ui.widgets.replay_view import ReplayView

HEADLINE_STYLE = {
    "critical": "bold $error",
    "warning": "bold $warning",
    "info": "$primary",
    "healthy": "bold $success",
}

OUTPUT_HEADER = (
    "# {target}: probes/probe.sh run with `sh -s`, one record per line "
    "(@@DT1 <kind> <fields…>); exact commands and timings are in the session transcript (t)"
)

AGE_REFRESH_S = 30.0  # how often the title's "probed 3m ago" is brought up to date
RESOLVES_MIN_WIDTH = 16  # the what-if table's Resolves column wraps, at least this wide

# actions that write on the host, hidden by --read-only: a fix, and the sampling validation
# (it JIT-compiles FlashInfer's kernels into the host's cache)
CHANGES_HOST = frozenset({"fix", "validate", "shell"})  # a shell can change anything
READ_ONLY_HIDDEN = frozenset({"host.fix", "host.validate", "host.shell"})  # binding ids

# the widget that takes the focus when a tab is shown (focus left in a hidden tab pulls it back)
TAB_FOCUS = {
    "tab-findings": "#findings",
    "tab-replay": "#replay-scroll",
    "tab-fixes": "#fixes",
    "tab-output": "#output",
    "tab-gpus": "#gpus-scroll",
    "tab-history": "#history-scroll",
}


def no_findings_text(state: HostState | None, *, with_error: bool = True) -> str:
    """What the findings pane says when there is no finding to show, and why (``with_error``
    False: without the error itself, which the screen's headline already says)."""
    if state is None or state.status == "idle":
        return "Not probed yet: press p to probe this host."
    if state.busy:
        return "Probing… the findings appear when the probe ends."
    if state.facts is None:
        why = f" ({state.error or status_text(state)})" if with_error else ""
        return (
            f"Not reached{why}, so nothing is known about this host: no findings, nothing "
            "to fix or validate. Press p to try again."
        )
    if reasons := unseen(state.result):
        return f"{partial_verdict(reasons)} Press p to probe again."
    return NO_FINDINGS


class HostScreen(ExplainsDisabledKeys, Screen[None]):
    AUTO_FOCUS = "#findings"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="host.back", show=False),
        Binding("p", "probe", "Probe", id="host.probe", tooltip="Re-probe this host"),
        Binding("f", "fix", "Fix…", id="host.fix", tooltip="Preview and apply the selected fix"),
        Binding(
            "v",
            "validate",
            "Validate",
            id="host.validate",
            tooltip="Validate FlashInfer's sampling kernels on this host's GPU",
        ),
        Binding(
            "F",
            "show_tab('tab-findings')",
            "Findings",
            id="host.findings",
            show=False,
            tooltip="Back to the Findings tab",
        ),
        Binding("o", "show_tab('tab-output')", "Output", id="host.output", tooltip="Probe output"),
        Binding("w", "show_tab('tab-fixes')", "What-if", id="host.whatif", tooltip="What-if fixes"),
        Binding(
            "e",
            "show_tab('tab-replay')",
            "Replay",
            id="host.replay",
            tooltip="FlashInfer replay",
        ),
        Binding(
            "n",
            "show_tab('tab-gpus')",
            "GPUs now",
            id="host.gpus",
            show=False,
            tooltip="Live GPU state: utilisation, memory, temperature, compute processes",
        ),
        Binding(
            "N",
            "refresh_gpus",
            "Refresh GPUs",
            id="host.gpus_refresh",
            show=False,
            tooltip="Read the live GPU state again now (nvidia-smi only, under a deadline); "
            "GPUs now also refreshes itself while shown",
        ),
        Binding(
            "h",
            "show_tab('tab-history')",
            "History",
            id="host.history",
            show=False,
            tooltip="This host's earlier probes: verdicts, and what changed each time",
        ),
        Binding(
            "y",
            "copy",
            "Copy",
            id="host.copy",
            show=False,
            tooltip="Copy the selected finding (Findings tab) or fix command (What-if tab)",
        ),
        Binding(
            "S",
            "shell",
            "Shell",
            id="host.shell",
            show=False,
            tooltip="Open an SSH session to this host; the TUI comes back when it ends",
        ),
        Binding(
            "x",
            "explain",
            "Explain",
            id="host.explain",
            show=False,
            tooltip="Paste an error and see it explained for this host",
        ),
    ]

    def __init__(self, host_name: str) -> None:
        super().__init__()
        self.host_name = host_name
        self._state: HostState | None = None
        self._findings: tuple[Finding, ...] = ()
        self._fixes: tuple[tuple[Finding, FixSuggestion], ...] = ()
        self._fix_findings: tuple[tuple[str, ...], ...] = ()  # per row: the findings proposing it
        self._lines_shown = 0
        self.history_entries: list[dict[str, object]] | None = None  # as last read

    def compose(self) -> ComposeResult:
        yield Static(id="host-title")
        yield Static(id="host-headline")
        yield Static(id="host-symptoms")
        yield CudaComparison(id="cuda-compare")
        with TabbedContent(id="host-tabs"):
            with TabPane("Findings", id="tab-findings"):
                yield OptionList(id="findings")
                with VerticalScroll(id="finding-scroll"):
                    yield FindingView(id="finding")
            with TabPane("FlashInfer replay", id="tab-replay"), VerticalScroll(id="replay-scroll"):
                yield ReplayView(id="replay")
            with TabPane("Fixes (what-if)", id="tab-fixes"):
                yield DataTable(id="fixes", cursor_type="row")
            with TabPane("GPUs now", id="tab-gpus"), VerticalScroll(id="gpus-scroll"):
                yield GpuView(id="gpus")
            with TabPane("History", id="tab-history"), VerticalScroll(id="history-scroll"):
                yield HistoryView(id="history")
            with TabPane("Probe output", id="tab-output"):
                yield RedactedLog(id="output", max_lines=20_000)
        yield FitFooter()

    def on_mount(self) -> None:
        self.watch(self.app, "fleet", self._fleet_changed)
        self.set_interval(AGE_REFRESH_S, self._refresh_title)  # "probed 3m ago" ages
        self.set_interval(GPU_REFRESH_S, self._gpu_tick)

    def on_resize(self) -> None:
        fit_footer(self)
        if self._findings:
            self._fill_fixes()  # the Resolves column wraps to the new width

    # -- data down --------------------------------------------------------------------------
    def _fleet_changed(self, fleet: FleetState) -> None:
        state = fleet.states.get(self.host_name)
        if state is None or state is self._state:
            return
        previous, self._state = self._state, state
        self._show_title(state)
        self._show_output(state)
        if (
            previous is None
            or previous.diagnosis is not state.diagnosis
            or previous.result is not state.result
            or previous.busy != state.busy
        ):
            self._show_story(state)

    def _show_title(self, state: HostState) -> None:
        """Name, where, status and GPUs first; the tags last (the title wraps to two lines
        on a narrow terminal rather than cutting what matters)."""
        host = state.host
        parts: list[str | tuple[str, str]] = [(host.name, "bold")]
        if getattr(self.app, "captured", False):  # --ingest: nothing is reached from here
            parts.append(("  captured output", "dim"))
        elif host.target != host.name:  # an ssh alias named like the host says nothing more
            parts.append(("  " + host.target, "dim"))
        parts.append("  · " + self._status_words(state))
        facts = state.facts
        scope = facts.container.scope if facts is not None else None
        whose = f"{scope}'s GPUs: " if scope else ""  # what it was given, not the node's
        if facts is not None and facts.gpus:
            parts.append(f"  · {whose}{gpu_summary(facts)} (SM {sm_summary(facts)})")
        elif scope:
            parts.append(f"  · {whose}none")
        if host.tags:
            parts.append(("  [" + ", ".join(host.tags) + "]", "dim"))
        shown = [redact_text(p) if isinstance(p, str) else (redact_text(p[0]), p[1]) for p in parts]
        self.query_one("#host-title", Static).update(Content.assemble(*shown))

    def _status_words(self, state: HostState) -> str:
        """As the hosts table says it: ``probed 2m ago`` (``partial: …`` first), the status
        alone while busy (not the previous probe's time), a host not reached at what time
        (its error is the headline, said once)."""
        if state.busy or state.finished_at is None:
            return status_word(state)
        if state.facts is None:
            return f"{status_word(state)} at {state.finished_at:%H:%M:%S}"
        probed = probed_text(state, self.app.clock())
        text = status_text(state)
        return probed if text == "done" else f"{text} · {probed}"

    def _refresh_title(self) -> None:
        if self._state is not None:
            self._show_title(self._state)

    def _show_story(self, state: HostState) -> None:
        facts, diagnosis = state.facts, state.diagnosis
        compare = self.query_one(CudaComparison)
        compare.display = facts is not None
        if facts is not None:
            compare.boxes = cuda_boxes(facts, diagnosis)
        severity, line = headline(diagnosis, unseen(state.result))
        if facts is None:
            severity = "critical" if state.error else "info"
            if state.busy:
                line = "Probing… (the Probe output tab shows it live)"
            else:
                line = state.error or "Not probed yet: press p to probe this host."
        self.query_one("#host-headline", Static).update(
            Content.styled(redact_text(line), HEADLINE_STYLE.get(severity, ""))
        )
        self._show_symptoms(state)
        self._findings = diagnosis.findings if diagnosis else ()
        options = self.query_one("#findings", OptionList)
        options.clear_options()
        options.add_options(
            Option(Content.assemble(severity_label(f.severity), " ", f.title), id=f.id)
            for f in self._findings
        )
        options.display = bool(self._findings)
        view = self.query_one(FindingView)
        view.empty = no_findings_text(state, with_error=False)
        view.finding = self._findings[0] if self._findings else None
        if self._findings:
            options.highlighted = 0
        replay = self.query_one(ReplayView)
        replay.facts = state.facts
        replay.replays = diagnosis.flashinfer if diagnosis else ()
        not_known = (  # every tab of a host not reached says so, not "none installed"
            no_findings_text(state, with_error=False).split(",")[0] + ": nothing is known "
            "about {what} here. Press p to try again."
            if facts is None and not state.busy and state.status != "idle"
            else None
        )
        if not_known is not None:
            replay.update(not_known.format(what="its FlashInfer"))
        empty = not_known and not_known.format(what="its GPUs")
        self.query_one(GpuView).show(facts, empty, state.finished_at)
        if self.query_one("#host-tabs", TabbedContent).active == "tab-history":
            self._load_history()
        self._fill_fixes()
        self.refresh_bindings()

    @on(TabbedContent.TabActivated, "#host-tabs")
    def _tab_shown(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "tab-history":
            self._load_history()

    def _load_history(self) -> None:
        """Read the host's history off the event loop (a demo host's is seeded on first read,
        which probes) and show it when read."""
        if self._state is None or self._state.busy:
            return
        self.query_one(HistoryView).show(None)
        self.run_worker(
            self._read_history, thread=True, exclusive=True, group="history", exit_on_error=False
        )

    def _read_history(self) -> None:
        from tui.core.records.history import HistoryError
        from tui.core.records.history_view import entries
        from tui.demo.history import host_snapshots

        view = self.query_one(HistoryView)
        assert self._state is not None
        try:
            listed = entries(host_snapshots(self._state.host))
        except HistoryError as exc:
            self.app.call_from_thread(view.show, None, f"The history cannot be read: {exc}")
            return
        self.app.call_from_thread(self._history_read, listed)

    def _history_read(self, listed: list[dict[str, object]]) -> None:
        self.history_entries = listed
        self.query_one(HistoryView).show(listed)

    def _show_symptoms(self, state: HostState) -> None:
        """The serving units' errors from their journals, each with the findings behind it."""
        widget = self.query_one("#host-symptoms", Static)
        found = []
        facts = state.facts
        if state.result is not None and state.diagnosis is not None and facts and facts.log_lines:
            found = symptoms(Judged(state.result, state.diagnosis))
        lines = [f"symptom: {symptom_line(s)}" for s in found if s["primary"]]
        widget.display = bool(lines)
        widget.update(Content(redact_text("\n".join(lines))))

    def _fill_fixes(self) -> None:
        """Fix, Root, then Resolves wrapped to what the screen has left (never cut off at the
        edge), then Params and the finding, which scroll in from the right."""
        table = self.query_one("#fixes", DataTable)
        row = table.cursor_row
        table.clear(columns=True)
        # one row per distinct fix (id and params): two findings proposing the same change
        # share it, and the row names both
        rows: dict[tuple[str, str], tuple[Finding, FixSuggestion]] = {}
        proposed_by: dict[tuple[str, str], list[str]] = {}
        for f in self._findings:
            for fix in f.fixes:
                key = (fix.id, repr(sorted(fix.params.items())))
                rows.setdefault(key, (f, fix))
                proposed_by.setdefault(key, []).append(f.id)
        self._fixes = tuple(rows.values())
        self._fix_findings = tuple(tuple(ids) for ids in proposed_by.values())
        findings_of = [", ".join(dict.fromkeys(ids)) for ids in proposed_by.values()]
        fix_width = max((len(fix.id) for _, fix in self._fixes), default=3)
        resolves = [", ".join(fix.resolves) or "—" for _, fix in self._fixes]
        room = self.size.width - fix_width - 4 - 3 * 2 * table.cell_padding - 2
        width = max(RESOLVES_MIN_WIDTH, min(room, max((len(r) for r in resolves), default=8)))
        table.add_column("Fix", key="fix")
        table.add_column("Root", key="root")
        table.add_column("Resolves", key="resolves", width=width)
        table.add_column("Params", key="params")
        table.add_column("For finding", key="finding")
        if not self._fixes:  # never bare headers: say why there is nothing to choose
            why = "no finding proposes a fix"
            if self._state is not None and self._state.facts is None:
                why = "not reached: nothing to fix" if self._state.error else "not probed yet"
            table.add_row(Text(why, style="dim"), "", "", "", "", key="none")
        for i, (_finding, fix) in enumerate(self._fixes):
            table.add_row(
                Text(fix.id, style="bold"),
                "yes" if fix.needs_root else "no",
                resolves[i],
                redact_text(" ".join(f"{k}={v}" for k, v in fix.params.items())),
                findings_of[i],
                key=str(i),
                height=None,
            )
        if 0 < row < len(self._fixes):
            table.move_cursor(row=row)

    def _show_output(self, state: HostState) -> None:
        log = self.query_one("#output", Log)
        lines = self.app.probe_output(self.host_name)
        if len(lines) < self._lines_shown or (self._lines_shown == 0 and lines):
            log.clear()
            log.write_line(OUTPUT_HEADER.format(target=state.host.target))
            self._lines_shown = 0
        if len(lines) > self._lines_shown:
            log.write_lines(lines[self._lines_shown :])
            self._lines_shown = len(lines)
        elif not lines and not state.busy and state.facts is None:
            log.clear()
            why = state.error.splitlines()[0] if state.error else "not probed yet (p)"
            log.write_line(f"# {state.host.target}: no probe output — {why}")

    @on(OptionList.OptionHighlighted, "#findings")
    def _finding_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        """The What-if cursor follows the finding to the fix it proposes first, so f opens the
        same fix from every tab."""
        finding = self._findings[event.option_index]
        self.query_one(FindingView).finding = finding
        row = next((i for i, ids in enumerate(self._fix_findings) if finding.id in ids), None)
        if row is not None:
            self.query_one("#fixes", DataTable).move_cursor(row=row)

    # -- selection --------------------------------------------------------------------------
    def select_finding(self, finding_id: str) -> None:
        self.action_show_tab("tab-findings")
        for i, f in enumerate(self._findings):
            if f.id == finding_id:
                self.query_one("#findings", OptionList).highlighted = i
                return

    def _selected_fix(self) -> tuple[Finding, FixSuggestion] | None:
        """The What-if table's row under the cursor, whatever the tab (it follows the
        highlighted finding); on the Findings tab, none when that finding proposes none."""
        if self.query_one("#host-tabs", TabbedContent).active == "tab-findings":
            highlighted = self.query_one("#findings", OptionList).highlighted
            if highlighted is None or not self._findings[highlighted].fixes:
                return None
        row = self.query_one("#fixes", DataTable).cursor_row
        return self._fixes[row] if 0 <= row < len(self._fixes) else None

    # -- actions --------------------------------------------------------------------------------
    def action_back(self) -> None:
        self.dismiss()

    def action_show_tab(self, tab: str) -> None:
        self.query_one("#host-tabs", TabbedContent).active = tab
        self.query_one(TAB_FOCUS[tab]).focus()

    def _gpu_tick(self) -> None:
        """While GPUs now is shown: read the state again (one read at a time), else age it."""
        shown = self.query_one("#host-tabs", TabbedContent).active == "tab-gpus"
        reading = any(w.group == "gpu-now" and not w.is_finished for w in self.workers)
        if shown and not reading and self.check_action("refresh_gpus", ()):
            self.action_refresh_gpus()
        elif shown:
            self.query_one(GpuView).redraw()

    def action_refresh_gpus(self) -> None:
        if self._state is not None:
            host = self._state.host
            self.run_worker(self._read_gpus(host), group="gpu-now", exit_on_error=False)

    async def _read_gpus(self, host: Host) -> None:
        from tui.core.run.gpu_now import read_gpu_now  # imports the runner: not before it is used

        fresh = await read_gpu_now(self.app.session, host, self.app.clock())
        self.query_one(GpuView).refreshed(fresh)

    def action_probe(self) -> None:
        self.post_message(ProbeRequested((self.host_name,)))

    def action_shell(self) -> None:
        self.app.open_shell(self.host_name)

    def action_explain(self) -> None:
        self.app.open_explain(self.host_name)

    def action_copy(self) -> None:
        """The fix command on the What-if tab; the finding (as in the report) elsewhere."""
        state = self._state
        tabs = self.query_one("#host-tabs", TabbedContent)
        chosen = self._selected_fix()
        if tabs.active == "tab-fixes" and chosen is not None:
            _, fix = chosen
            params = " ".join(shlex.quote(f"{k}={v}") for k, v in fix.params.items())
            demo = " --demo" if state is not None and state.host.demo else ""
            line = f"detective-tui fix {self.host_name} {fix.id} {params}".rstrip() + demo
            self.app.copy_text(line, f"the {fix.id} command")
            return
        highlighted = self.query_one("#findings", OptionList).highlighted
        if state is None or state.result is None or highlighted is None or not self._findings:
            self.notify("No finding to copy.", severity="warning")
            return
        from tui.core.records.issue_report import finding_markdown
        from tui.core.records.report import host_json  # imports the runner: not before it is used

        data = host_json(state.result, state.diagnosis)
        finding = data["findings"][highlighted]
        self.app.copy_text("\n".join(finding_markdown(finding)).strip(), f"{finding['id']}")

    def action_fix(self) -> None:
        if self._state is None or self._state.facts is None:
            self.notify(no_findings_text(self._state), severity="warning")
            return
        chosen = self._selected_fix()
        if chosen is None:
            self.notify("No fix proposed for the selected finding.", severity="warning")
            return
        finding, fix = chosen
        self.post_message(FixRequested(self.host_name, fix.id, dict(fix.params), finding.python))

    def action_validate(self) -> None:
        python = None
        if self._state is not None and self._state.diagnosis and self._state.diagnosis.flashinfer:
            python = self._state.diagnosis.flashinfer[0].python
        self.post_message(ValidateRequested(self.host_name, python))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in CHANGES_HOST and getattr(self.app, "read_only", False):
            return False
        if action == "fix":  # offered only where a finding proposes a fix
            return bool(self._fixes)
        if action == "validate":  # it runs the host's own interpreter: only on a probed host
            return self._state is not None and self._state.facts is not None
        if action == "refresh_gpus":  # captured output (--ingest) is never reached
            state = self._state
            facts = state.facts if state is not None else None
            return not getattr(self.app, "captured", False) and facts is not None
        return True

    def disabled_reason(self, action: str) -> str | None:
        if action in CHANGES_HOST and getattr(self.app, "read_only", False):
            return "Read-only mode (--read-only): fixes, validation and shells are off."
        if action == "refresh_gpus" and getattr(self.app, "captured", False):
            return "Captured output (--ingest): nothing is reached from here."
        if self._state is None or self._state.facts is None:
            return no_findings_text(self._state)
        if action == "fix":
            return "No finding on this host proposes a fix."
        return None
