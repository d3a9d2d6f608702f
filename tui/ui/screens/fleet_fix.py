"""One fix on every host of a finding group: choose → preview → confirm → live run → results.

``FleetFixScreen(finding_id, label, states, session)`` takes the group's host states as the
app knows them (their probe and diagnosis). The fixes offered are the union of what each
host's diagnosis proposed for the finding; each host is planned with its own proposed
parameters. A host where the fix was not proposed, or cannot be planned, or is not probed,
is listed with the reason and left out; the others go on. Each run (the fix, its restart,
its undo) is a ``tui.core.run.fix_session.FixSession``: ``a`` and Esc are its decisions, it
records them and runs the hosts (one failing host never stops the others, every command
lands in the transcript). Before a run starts, ``n`` sets how many hosts change at a time
and ``s`` whether the first failure stops the hosts not started yet (the title shows both;
those hosts end ``not started``). When a run ends the screen asks the app to probe the
hosts again, so the fleet table and the groups show the new verdicts. Where the fix left a
systemd unit running with the old environment, ``r`` previews and (after ``a``) runs the
restart on those hosts. ``u`` undoes the run on every host it changed, from the undo record
each host's fix saved: a per-host preview, ``a``, live status, results, a re-probe; a record
is marked undone only where its undo applied, and ``r`` then restarts the units the undo
changed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar, Literal

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Collapsible, DataTable, Log, Static
from textual.worker import Worker, WorkerState

from tui.core.fixes import make_stamp
from tui.core.redact import redact_text
from tui.core.run.fix_render import outcome_text, preview_text
from tui.core.run.fix_session import DEFAULT_AT_ONCE, FixSession, Rollout
from tui.core.run.fleet import FleetItem, HostFixResult
from tui.core.run.fleet_group import (
    FixChoice,
    fix_choices,
    plan_group,
    restart_lines,
    undo_lines,
    undoable,
)
from tui.ui.fleet_state import HostState
from tui.ui.footer_fit import FitFooter
from tui.ui.messages import ProbeRequested, RunsFinished
from tui.ui.screens.message import MessageScreen
from tui.ui.widgets.redacted_log import RedactedLog

if TYPE_CHECKING:
    from tui.core.run.runner import Session

Stage = Literal["choose", "planning", "preview", "running", "done", "failed"]
Kind = Literal["fix", "restart", "undo"]  # what the preview / run / results are about
KIND_SUFFIX = {"fix": "", "restart": " (restart)", "undo": " (undo)"}  # after the fix id

# HostFixResult.status → the word the result table shows, and its style
RESULT_WORDS = {
    "fixed": ("fixed", "bold green"),
    "applied": ("applied", "green"),
    "undone": ("undone", "bold green"),
    "restarted": ("restarted", "bold green"),
    "unresolved": ("not fixed", "bold yellow"),
    "failed": ("failed", "bold red"),
    "stopped": ("stopped (quit)", "bold yellow"),
    "not-planned": ("not planned", "yellow"),
    "not-started": ("not started", "yellow"),
    "skipped": ("skipped", "dim"),
    "unreachable": ("unreachable", "red"),
}
AT_ONCE_STEPS = (1, 2, 4)  # `n` cycles all at once → 1 → 2 → 4 → all at once
SEVERITY_STYLE = {"critical": "bold red", "warning": "bold yellow", "info": "cyan", "none": "green"}


def resolves_cell(resolves: Sequence[str]) -> str:
    """The Resolves column: one finding id a line (ids are long; side by side they run past
    an 80-column terminal)."""
    return "\n".join(resolves) or "nothing by itself"


def _worst(severity: str | None, known: bool = True) -> str:
    return (severity or "none") if known else "?"


def worst_cell(result: HostFixResult) -> Text:
    """``critical → none``: the worst finding before and after, for the fixed environments."""
    o = result.outcome
    if o is None:
        return Text("—", style="dim")
    before = _worst(o.worst_before)
    after = _worst(o.worst_after, o.facts_after is not None)
    return Text.assemble(
        (before, SEVERITY_STYLE.get(before, "")), " → ", (after, SEVERITY_STYLE.get(after, ""))
    )


def summary(results: Sequence[HostFixResult]) -> str:
    counts: dict[str, int] = {}
    for r in results:
        word = RESULT_WORDS[r.status][0]
        counts[word] = counts.get(word, 0) + 1
    return ", ".join(f"{n} {word}" for word, n in counts.items())


class FleetLine(Message):
    """One line of live output from one host of the run."""

    def __init__(self, host: str, line: str) -> None:
        super().__init__()
        self.host = host
        self.line = line


class FleetPlanned(Message):
    def __init__(self, items: list[FleetItem]) -> None:
        super().__init__()
        self.items = items


class FleetDone(Message):
    def __init__(self, results: list[HostFixResult]) -> None:
        super().__init__()
        self.results = results


DETAIL_MIN_WIDTH = 24  # the results' Detail column wraps, at least this wide


class FleetFixScreen(Screen[None]):
    DEFAULT_CSS = """
    #fleet-title { height: auto; padding: 0 1; background: $boost; }
    #fleet-status { height: auto; padding: 0 1; margin-bottom: 1; }
    #fleet-choices { height: 1fr; }
    #fleet-choice { height: auto; padding: 0 1; border-top: solid $primary-darken-2; }
    #fleet-hosts { height: auto; max-height: 50%; }
    #fleet-preview { height: 1fr; padding: 0 1; }
    #fleet-preview .unplanned { color: $warning; }
    #fleet-preview Collapsible { padding-bottom: 0; }
    #fleet-output { height: 1fr; min-height: 5; border: round $secondary; }
    #fleet-undo { height: auto; max-height: 8; padding: 0 1; }
    FleetFixScreen #fleet-choices, FleetFixScreen #fleet-choice, FleetFixScreen #fleet-preview,
    FleetFixScreen #fleet-hosts, FleetFixScreen #fleet-output,
    FleetFixScreen #fleet-undo { display: none; }
    FleetFixScreen.-choose #fleet-choices, FleetFixScreen.-choose #fleet-choice {
        display: block;
    }
    FleetFixScreen.-preview #fleet-preview { display: block; }
    FleetFixScreen.-running #fleet-hosts, FleetFixScreen.-running #fleet-output,
    FleetFixScreen.-done #fleet-hosts, FleetFixScreen.-done #fleet-output,
    FleetFixScreen.-done #fleet-undo { display: block; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "choose", "Preview", id="fleetfix.choose", priority=True),
        Binding("enter", "details", "Outcome", id="fleetfix.details", priority=True),
        Binding("a", "apply", "Apply to every planned host", id="fleetfix.apply"),
        Binding("r", "restart", "Restart units", id="fleetfix.restart"),
        Binding("u", "undo", "Undo on every changed host", id="fleetfix.undo"),
        Binding("n", "at_once", "Hosts at a time", id="fleetfix.at_once"),
        Binding("s", "stop_on_failure", "Stop on failure", id="fleetfix.stop_on_failure"),
        Binding("escape", "back", "Back", id="fleetfix.back"),
    ]

    stage: reactive[Stage] = reactive("choose", init=False)

    def __init__(
        self, finding_id: str, label: str, states: Sequence[HostState], session: Session
    ) -> None:
        super().__init__()
        self.finding_id = finding_id
        self.label = label
        self.states = tuple(states)
        self.session = session
        self.choices = fix_choices(finding_id, self.states)
        self.choice: FixChoice | None = None
        self.kind: Kind = "fix"
        self.run: FixSession | None = None  # what the preview shows and `a` runs
        self.runs: dict[Kind, FixSession] = {}  # the last run of each kind
        self.at_once: int | None = None  # hosts at a time (None: all, up to the concurrency)
        self.stop_on_failure = False
        self.items: list[FleetItem] = []  # the run's items
        self.results: list[HostFixResult] = []  # of the last run
        self.shown: Kind = "fix"  # what the results on display are about
        self.fixed: list[HostFixResult] = []  # of the fix run (its undo commands stay shown)
        self.undone_results: list[HostFixResult] = []  # of the last undo run
        self.undone: set[tuple[str, str]] = set()  # (host, record) undone from this screen
        self._last: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="fleet-title")
        yield Static(id="fleet-status")
        yield DataTable(id="fleet-choices", cursor_type="row")
        yield Static(id="fleet-choice")
        yield VerticalScroll(id="fleet-preview")
        yield DataTable(id="fleet-hosts", cursor_type="row")
        yield RedactedLog(id="fleet-output", highlight=False)
        yield Static(id="fleet-undo")
        yield FitFooter()

    def on_mount(self) -> None:
        table = self.query_one("#fleet-choices", DataTable)
        table.add_column("Fix", key="fix")
        table.add_column("Hosts", key="hosts")
        table.add_column("Root", key="root")
        table.add_column("Resolves", key="resolves")
        total = len(self.states)
        for choice in self.choices:
            table.add_row(
                Text(choice.fix_id, style="bold"),
                f"{len(choice.hosts)}/{total}",
                "yes" if choice.needs_root else "no",
                resolves_cell(choice.resolves),
                key=choice.fix_id,
                height=None,  # one line per finding it resolves: readable at 80 columns
            )
        self.session.record(
            "fleet-fix-opened", finding=self.finding_id, hosts=[s.name for s in self.states]
        )
        self.watch_stage("choose")

    # -- the rollout, set before a run --------------------------------------------------------
    @property
    def rollout(self) -> Rollout:
        concurrency = getattr(getattr(self.app, "settings", None), "concurrency", DEFAULT_AT_ONCE)
        return Rollout(self.at_once or concurrency, self.stop_on_failure)

    def _title(self) -> Content:
        setting = (
            "all at once (n: rolling, s: stop on failure)"
            if self.at_once is None and not self.stop_on_failure
            else self.rollout.describe()
        )
        return Content.assemble(
            ("Fix every host in group  ", "bold"), self.label, ("  ·  " + setting, "dim")
        )

    def action_at_once(self) -> None:
        if self.stage not in ("choose", "preview"):
            return
        steps = [None, *AT_ONCE_STEPS]
        self.at_once = steps[(steps.index(self.at_once) + 1) % len(steps)]
        self._rollout_changed()

    def action_stop_on_failure(self) -> None:
        if self.stage not in ("choose", "preview"):
            return
        self.stop_on_failure = not self.stop_on_failure
        self._rollout_changed()

    def _rollout_changed(self) -> None:
        if self.run is not None:
            self.run.rollout = self.rollout
        self.query_one("#fleet-title", Static).update(self._title())

    # -- stages ----------------------------------------------------------------------------
    def watch_stage(self, stage: Stage) -> None:
        shown = {"planning": "choose", "failed": "done"}.get(stage, stage)
        for name in ("choose", "preview", "running", "done"):
            self.set_class(shown == name, f"-{name}")
        focus = {
            "choose": "#fleet-choices",
            "preview": "#fleet-preview",
            "running": "#fleet-hosts",
            "done": "#fleet-hosts",
        }
        self.query_one(focus[shown]).focus()
        self._set_status(self._status_for(stage))
        self.refresh_bindings()

    def _status_for(self, stage: Stage) -> str:
        fix = self.choice.fix_id if self.choice else ""
        planned = sum(1 for i in self.items if i.plan is not None)
        if stage == "choose":
            if not self.choices:
                return f"No fix was proposed for {self.finding_id} on these hosts. Esc goes back."
            having = sum(
                1
                for st in self.states
                if st.diagnosis and any(f.id == self.finding_id for f in st.diagnosis.findings)
            )
            # marked hosts: only some may have the finding (the others are not changed)
            of = f" of the {len(self.states)}" if having != len(self.states) else ""
            return (
                f"Fixes proposed for {self.finding_id} on the {having}{of} host(s) that have "
                "it. Enter previews the selected one on them; nothing runs yet."
            )
        if stage == "planning":
            return f"Planning {fix} on every host…"
        what = fix if self.kind == "fix" else "the restart"
        if stage == "preview":
            if not planned and self.kind == "undo":
                return "Nothing can be undone on these hosts (reasons below). Esc goes back."
            if not planned:
                return f"{fix} cannot be applied to any host of this group (reasons below). Esc."
            back = "the fixes" if self.kind == "fix" else "the results"
            apply = f"undo {fix} on" if self.kind == "undo" else f"apply {what} to"
            return (
                f"Nothing has run yet. Press a to {apply} {planned} host(s) with the "
                f"commands below (one per host, Enter folds); Esc goes back to {back}."
            )
        if stage == "running":
            doing = f"Undoing {fix} on" if self.kind == "undo" else f"Applying {what} to"
            return (
                f"{doing} {planned} host(s)… every command and its output goes to "
                "the session transcript."
            )
        if stage == "failed":
            return "The run stopped with an internal error (see the message). Esc closes."
        return (
            f"{fix}{'' if self.kind == 'fix' else ' ' + self.kind}: {summary(self.results)}. "
            "The hosts are being probed again; Enter on a row shows its full outcome, Esc "
            "returns to the fleet."
        )

    def _set_status(self, text: str) -> None:
        self.query_one("#fleet-status", Static).update(Content(text))

    @on(DataTable.RowHighlighted, "#fleet-choices")
    def _choice_highlighted(self, event: DataTable.RowHighlighted) -> None:
        choice = self.choices[event.cursor_row]
        self.query_one("#fleet-choice", Static).update(
            Content.assemble(
                (choice.title, "bold"),
                "\nProposed on " + ", ".join(choice.hosts),
                " (values differ per host)" if choice.params_vary else "",
                " · resolves " + (", ".join(choice.resolves) or "nothing by itself"),
                " · needs root" if choice.needs_root else "",
            )
        )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "apply":
            return self.stage == "preview" and any(i.plan is not None for i in self.items)
        if action == "choose":
            return self.stage == "choose" and bool(self.choices)
        if action == "details":
            return self.stage == "done" and bool(self.results)
        if action == "restart":
            return self.stage == "done" and bool(restart_lines(self._changed()))
        if action == "undo":
            return (
                self.stage == "done"
                and not getattr(self.app, "read_only", False)
                and bool(undoable(self.fixed, self.undone))
            )
        if action == "back":
            return self.stage != "running"
        if action in ("at_once", "stop_on_failure"):
            return self.stage in ("choose", "preview")
        return True

    # -- actions ---------------------------------------------------------------------------
    def action_choose(self) -> None:
        if self.stage != "choose" or not self.choices:
            return
        self.choice = self.choices[self.query_one("#fleet-choices", DataTable).cursor_row]
        self.stage = "planning"
        self._plan(self.choice.fix_id)

    def action_apply(self) -> None:
        if self.stage != "preview" or self.choice is None:
            return
        run = self.run
        if run is None or not run.planned:
            return
        planned = list(run.hosts)
        run.rollout = self.rollout
        run.decide("yes")
        what = self.choice.fix_id + KIND_SUFFIX[self.kind]
        self.query_one("#fleet-output", Log).write_line(f"── {what} on {', '.join(planned)}")
        self._fill_hosts_table()
        self.stage = "running"
        self._follow_output()
        self._apply(run)

    def _follow_output(self) -> None:
        """Show the newest output once the log is laid out again (it was hidden)."""
        log = self.query_one("#fleet-output", Log)
        self.call_after_refresh(log.scroll_end, animate=False)

    def _changed(self) -> list[HostFixResult]:
        """The run whose units a restart restarts: the fix's or the undo's results on display."""
        return {"fix": self.fixed, "undo": self.undone_results}.get(self.kind, [])

    def action_restart(self) -> None:
        if self.stage != "done":
            return
        done = self.runs.get(self.kind)
        restart = done.restart() if done is not None else None
        if restart is not None:
            self.kind = "restart"
            self._show_preview(restart)

    def action_undo(self) -> None:
        if self.stage != "done" or not self.check_action("undo", ()):
            return
        self.kind = "undo"
        self._show_preview(self.runs["fix"].undo(undone=self.undone))

    def action_back(self) -> None:
        if self.stage == "running":
            return
        if self.stage == "preview":
            if self.run is not None and self.run.planned:
                self.run.decide("no")
            if self.kind == "fix":
                self.stage = "choose"
            else:  # back to the results on display
                self.kind = self.shown
                self.stage = "done"
            return
        self.dismiss()

    # -- planning --------------------------------------------------------------------------
    @work(exclusive=True, group="fleet-plan", name="fleet fix planning", exit_on_error=False)
    async def _plan(self, fix_id: str) -> None:
        items = await asyncio.to_thread(
            plan_group, self.finding_id, fix_id, self.states, make_stamp()
        )
        self.post_message(FleetPlanned(items))

    def on_fleet_planned(self, message: FleetPlanned) -> None:
        fix = self.choice.fix_id if self.choice else None
        run = FixSession(self.session, message.items, fix_id=fix, rollout=self.rollout)
        self._show_preview(run)

    def _show_preview(self, run: FixSession) -> None:
        self.run = run
        self.items = run.items
        preview = self.query_one("#fleet-preview", VerticalScroll)
        preview.remove_children()
        widgets = []
        first = True
        for item in self.items:
            name = item.host.name
            if item.plan is None:
                widgets.append(
                    Static(Content(redact_text(self._unplanned(item))), classes="unplanned")
                )
                continue
            steps = len(item.plan.steps)
            root = ", needs root" if item.plan.needs_root else ""
            widgets.append(
                Collapsible(
                    Static(Content(redact_text(preview_text(item.plan)))),
                    title=f"{name}: {steps} step(s){root}",
                    collapsed=not first,
                )
            )
            first = False
        preview.mount_all(widgets)
        preview.scroll_home(animate=False)
        self.stage = "preview"

    def _unplanned(self, item: FleetItem) -> str:
        if self.kind != "undo":
            return f"{item.host.name}: not planned: {item.error}"
        if item.skipped:  # nothing to undo there
            return f"{item.host.name}: {item.error}"
        return f"{item.host.name}: cannot be undone: {item.error}"

    # -- the run ---------------------------------------------------------------------------
    def _fill_hosts_table(self) -> None:
        table = self.query_one("#fleet-hosts", DataTable)
        table.clear(columns=True)
        table.add_column("Host", key="host")
        table.add_column("Status", key="status")
        for item in self.items:
            status = "waiting" if item.plan is not None else f"skipped: {item.error}"
            table.add_row(Text(item.host.name, style="bold"), status, key=item.host.name)

    @work(exclusive=True, group="fleet-fix", name="fleet fix", exit_on_error=False)
    async def _apply(self, run: FixSession) -> None:
        def on_line(host: str, line: str) -> None:
            self.post_message(FleetLine(host, line))

        self.post_message(FleetDone(await run.apply(on_line)))

    def on_fleet_line(self, message: FleetLine) -> None:
        self.query_one("#fleet-output", Log).write_line(f"[{message.host}] {message.line}")
        if message.line.startswith("── "):
            status = message.line.removeprefix("── ")
            if status != self._last.get(message.host):
                self._last[message.host] = status
                table = self.query_one("#fleet-hosts", DataTable)
                # the column grows to the longest status (it kept its first value's width)
                table.update_cell(message.host, "status", status, update_width=True)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A crashed run must not leave the screen stuck in "running" (the app shows the error)."""
        if event.worker.group in ("fleet-fix", "fleet-plan") and event.state == WorkerState.ERROR:
            self.stage = "failed"

    def on_fleet_done(self, message: FleetDone) -> None:
        self.results = message.results
        self.shown = self.kind
        if self.run is not None:
            self.runs[self.kind] = self.run
        if self.kind == "fix":
            self.fixed = message.results
        elif self.kind == "undo":
            self.undone_results = message.results
            self.undone |= {
                (r.item.host.name, r.item.undo_record.id)
                for r in message.results
                if r.item.undo_record is not None and r.status == "undone"
            }
        table = self.query_one("#fleet-hosts", DataTable)
        table.clear(columns=True)
        table.add_column("Host", key="host")
        table.add_column("Result", key="result")
        table.add_column("Worst before → after", key="worst")
        words = [RESULT_WORDS[r.status] for r in self.results]
        widths = [
            max([len("Host"), *(len(r.item.host.name) for r in self.results)]),
            max([len("Result"), *(len(w) for w, _ in words)]),
            max([len("Worst before → after"), *(len(worst_cell(r)) for r in self.results)]),
        ]
        # the detail wraps in what the screen has left, never cut at its edge
        room = self.size.width - sum(widths) - 4 * 2 * table.cell_padding - 2
        table.add_column("Detail", key="detail", width=max(DETAIL_MIN_WIDTH, room))
        for r, (word, style) in zip(self.results, words, strict=True):
            table.add_row(
                Text(r.item.host.name, style="bold"),
                Text(word, style=style),
                worst_cell(r),
                r.detail,
                key=r.item.host.name,
                height=None,
            )
        environment = "the fixed environment" if self.kind == "undo" else "the old environment"
        notes = self._undo_notes() + restart_lines(self.results, environment)
        self.query_one("#fleet-undo", Static).update(Content(redact_text("\n".join(notes))))
        ran = tuple(r.item.host.name for r in self.results if r.item.plan is not None)
        self.post_message(RunsFinished(tuple((r.item.host.name, r.outcome) for r in self.results)))
        self.stage = "done"
        self._follow_output()
        if ran:
            self.post_message(ProbeRequested(ran))

    def _undo_notes(self) -> list[str]:
        """The undo command of each host still fixed, and where it was undone from here."""
        notes = undo_lines(undoable(self.fixed, self.undone))
        undone = [
            r.item.host.name
            for r in self.fixed
            if r.outcome and (r.item.host.name, r.outcome.record) in self.undone
        ]
        if undone:
            notes.append(f"Undone on {', '.join(undone)} (their undo records are marked undone).")
        return notes or ["Nothing changed on any host: nothing to undo."]

    @on(DataTable.RowSelected, "#fleet-choices")
    def _choice_clicked(self) -> None:
        self.action_choose()

    @on(DataTable.RowSelected, "#fleet-hosts")
    def _host_clicked(self) -> None:
        self.action_details()

    def action_details(self) -> None:
        if self.stage != "done":
            return
        row = self.query_one("#fleet-hosts", DataTable).cursor_row
        if not 0 <= row < len(self.results):
            return
        r = self.results[row]
        word = RESULT_WORDS[r.status][0]
        record = r.item.undo_record
        before_fix = record.findings_before if record is not None else None
        body = outcome_text(r.outcome, before_fix) if r.outcome is not None else r.detail
        good = r.status in ("fixed", "applied", "undone", "restarted")
        severity = "success" if good else "warning"
        self.app.push_screen(MessageScreen(f"{r.item.host.name}: {word}", body, severity=severity))
