"""The fix wizard: preview → confirm → live output → before/after verdict → undo / restart offer.

Self-contained: ``FixWizardScreen(host, plan, session)`` needs a ``tui.core.run.runner.Session``
and a plan from ``tui.core.fixes.build_plan`` (or, with ``undoing=record``, the undo plan of
that record: its first run is then that undo, journaled in the record). It dismisses with the
last ``FixOutcome`` (``None`` when nothing ran). Every run goes through
``tui.core.run.fix_executor.apply_plan``, so the transcript gets the commands, their output and
the user's decisions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widgets import Button, Log, Static
from textual.worker import Worker, WorkerState

from tui.core.facts import Facts
from tui.core.fixes import make_stamp
from tui.core.fixes.plan import FixPlan
from tui.core.fixes.restart import restart_after
from tui.core.fixes.undo import UndoError, UndoRecord, load_record, undo_plan
from tui.core.hosts import Host
from tui.core.redact import redact_text
from tui.core.run.fix_executor import FixOutcome, apply_plan
from tui.core.run.fix_render import outcome_text, plan_heading, preview_text
from tui.core.run.outcome_words import plan_kind, status_line
from tui.ui.footer_fit import FitFooter
from tui.ui.widgets.redacted_log import RedactedLog

if TYPE_CHECKING:
    from tui.core.run.runner import Session

Stage = Literal["preview", "running", "done", "failed"]

# a modal stops the app's keys: these work in the wizard as everywhere (quit asks first while
# a step runs); the help lists them once, under "anywhere"
APP_KEYS_AGAIN: tuple[Binding, ...] = (
    Binding("question_mark", "app.help", "Help", id="fix.help"),
    Binding("q", "app.quit", "Quit", id="fix.quit"),
)


class FixLine(Message):
    """One line of live output from the running plan."""

    def __init__(self, line: str) -> None:
        super().__init__()
        self.line = line


class FixDone(Message):
    def __init__(self, outcome: FixOutcome, kind: str) -> None:
        super().__init__()
        self.outcome = outcome
        self.kind = kind  # "fix", "undo" or "restart"


class FixWizardScreen(ModalScreen[FixOutcome | None]):
    # Sized for 80x24 first: one-row buttons, no margins, the preview takes every row left
    # (with its scrollbar); after a run the output keeps a few rows, its newest lines shown,
    # and the verdict takes the rest.
    DEFAULT_CSS = """
    FixWizardScreen { align: center middle; }
    #fix-dialog {
        width: 100%; max-width: 130; height: 1fr; max-height: 46;
        border: thick $warning; background: $surface; padding: 0 1;
    }
    #fix-title { height: auto; max-height: 2; }
    #fix-preview, #fix-verdict { scrollbar-size-vertical: 1; }
    #fix-preview { height: 1fr; border: round $primary-darken-2; }
    #fix-output { height: 1fr; min-height: 4; border: round $secondary; display: none; }
    #fix-verdict { height: 1fr; border: round $success-darken-2; display: none; }
    FixWizardScreen.-running #fix-output, FixWizardScreen.-done #fix-output { display: block; }
    FixWizardScreen.-done #fix-output { height: 6; min-height: 3; }
    FixWizardScreen.-done #fix-verdict { display: block; }
    FixWizardScreen.-running #fix-preview, FixWizardScreen.-done #fix-preview { display: none; }
    #fix-status { height: auto; max-height: 4; }
    #fix-buttons { height: 1; align: right middle; }
    #fix-buttons Button { margin-left: 2; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "apply", "Apply", id="fix.apply"),
        Binding("u", "undo", "Undo", id="fix.undo"),
        Binding("r", "restart", "Restart units", id="fix.restart"),
        Binding("escape", "close", "Close", id="fix.close"),
        *APP_KEYS_AGAIN,
    ]

    stage: reactive[Stage] = reactive("preview")

    def __init__(
        self,
        host: Host,
        plan: FixPlan,
        session: Session,
        before: Facts | None = None,
        *,
        undoing: UndoRecord | None = None,
    ) -> None:
        """``plan`` is a fix, or an undo / a restart opened on its own (pending work);
        ``before_fix``: for an undo, the problems its record saw before the fix."""
        super().__init__()
        self.host = host
        self.plan = plan
        self.session = session
        self.before = before
        self.undoing = undoing  # the record ``plan`` undoes (opened from the recovery screen)
        self.outcome: FixOutcome | None = None  # the last run (fix, undo or restart)
        # undo record of the applied fix, until it is undone
        self.record: str | None = undoing.id if undoing else None
        self.restart_units: tuple[str, ...] = ()  # units still running the old environment
        self.pending: FixPlan | None = None  # an undo/restart plan shown, awaiting confirmation
        self.pending_record: UndoRecord | None = None  # the record a pending undo reverses
        # an undo's record: the problems before the fix
        self.before_fix: tuple[str, ...] | None = undoing.findings_before if undoing else None

    def compose(self) -> ComposeResult:
        with Vertical(id="fix-dialog"):
            yield Static(
                Content.styled(plan_heading(self.plan), "bold"),
                classes="dialog-title",
                id="fix-title",
            )
            with VerticalScroll(id="fix-preview"):
                yield Static(
                    Content(redact_text(preview_text(self.plan, heading=False))),
                    id="fix-preview-text",
                )
            yield RedactedLog(id="fix-output", highlight=False)
            with VerticalScroll(id="fix-verdict"):
                yield Static(id="fix-verdict-text")
            yield Static(self._status_text(), id="fix-status")
            with Horizontal(id="fix-buttons"):
                yield Button("Apply (a)", variant="warning", id="apply", compact=True)
                yield Button("Undo (u)", id="undo", disabled=True, compact=True)
                yield Button("Restart units (r)", id="restart", disabled=True, compact=True)
                yield Button("Close (esc)", variant="primary", id="close", compact=True)
        yield FitFooter()  # its own keys, over the screen's beneath (which are dead here)

    def on_mount(self) -> None:
        # the keys scroll what is shown (the buttons have their keys: a, u, r, escape)
        self.query_one("#fix-preview", VerticalScroll).focus()

    def _status_text(self) -> str:
        if self.plan.needs_root and self.plan.sudo:
            return "Root steps run through `sudo -n`; press Apply (a) to run the commands above."
        return "Nothing has run yet. Press Apply (a) to run the commands above, Close to leave."

    def watch_stage(self, stage: Stage) -> None:
        self.set_class(stage == "running", "-running")
        self.set_class(stage in ("done", "failed"), "-done")
        if not self.is_mounted:
            return
        self.query_one("#apply", Button).disabled = stage != "preview" and self.pending is None
        self.query_one("#close", Button).disabled = stage == "running"

    def _set_status(self, text: str) -> None:
        self.query_one("#fix-status", Static).update(Content(text))

    # -- actions ---------------------------------------------------------------------------

    @on(Button.Pressed, "#apply")
    def action_apply(self) -> None:
        if self.stage == "running":
            return
        if self.pending is not None:
            plan, self.pending = self.pending, None
            kind = "undo" if plan.fix_id.startswith("undo:") else "restart"
            self.session.record("decision", host=self.host.name, action=kind, answer="yes")
            self._start(plan, kind, self.pending_record)
            return
        if self.stage != "preview":
            return
        self.session.record("decision", host=self.host.name, fix=self.plan.fix_id, answer="yes")
        if self.undoing is not None:
            self._start(self.plan, "undo", self.undoing)
        else:
            self._start(self.plan, plan_kind(self.plan))

    @on(Button.Pressed, "#undo")
    def action_undo(self) -> None:
        if self.stage == "running" or self.record is None:
            return
        try:
            record = load_record(self.host.name, self.record)
        except UndoError as exc:
            self._set_status(f"Cannot undo: {exc}")
            return
        self.pending_record = record
        self.before_fix = record.findings_before
        self._offer(undo_plan(record, self.host, sudo=self.plan.sudo, stamp=make_stamp()))

    @on(Button.Pressed, "#restart")
    def action_restart(self) -> None:
        if self.stage == "running" or not self.restart_units:
            return
        plan = restart_after(self.outcome, make_stamp()) if self.outcome is not None else None
        if plan is not None:
            self._offer(plan)

    @on(Button.Pressed, "#close")
    def action_close(self) -> None:
        if self.stage == "running":
            return
        if self.stage == "preview" and self.outcome is None:
            self.session.record("decision", host=self.host.name, fix=self.plan.fix_id, answer="no")
        self.dismiss(self.outcome)

    def _offer(self, plan: FixPlan) -> None:
        """Show a follow-up plan (undo, restart) and wait for Apply as its own confirmation."""
        self.pending = plan
        self.query_one("#fix-verdict-text", Static).update(Content(redact_text(preview_text(plan))))
        self.query_one("#fix-verdict", VerticalScroll).scroll_home(animate=False)
        self.query_one("#apply", Button).disabled = False
        self.query_one("#apply", Button).label = "Confirm (a)"
        self._set_status("Press Confirm (a) to run the commands above.")

    def _start(self, plan: FixPlan, kind: str, undoing: UndoRecord | None = None) -> None:
        log = self.query_one("#fix-output", Log)
        log.write_line(f"── {kind}: {plan.fix_id} on {self.host.name}")
        self.query_one("#apply", Button).label = "Apply (a)"
        self.stage = "running"
        self._set_status("Running… every command and its output goes to the session transcript.")
        self._run(plan, kind, undoing)

    @work(exclusive=True, group="fix", exit_on_error=False)
    async def _run(self, plan: FixPlan, kind: str, undoing: UndoRecord | None) -> None:
        before = self.before if kind == "fix" else None
        outcome = await apply_plan(
            self.session,
            self.host,
            plan,
            lambda line: self.post_message(FixLine(line)),
            before=before,
            record_undo=kind == "fix",
            undoing=undoing if kind == "undo" else None,
        )
        self.post_message(FixDone(outcome, kind))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A run that crashed must not leave the wizard stuck in "running"."""
        if event.worker.group == "fix" and event.state == WorkerState.ERROR:
            self.stage = "failed"
            self._set_status(f"The run stopped with an internal error: {event.worker.error!r}")

    def on_fix_line(self, message: FixLine) -> None:
        self.query_one("#fix-output", Log).write_line(message.line)

    def on_fix_done(self, message: FixDone) -> None:
        outcome = self.outcome = message.outcome
        if message.kind == "fix":
            self.record = outcome.record
        elif message.kind == "undo" and outcome.applied:  # the journal set the record aside
            self.record = self.pending_record = None
        restart = restart_after(outcome) if message.kind != "restart" else None
        self.restart_units = outcome.pending_restart if restart is not None else ()
        before_fix = self.before_fix if message.kind == "undo" else None
        self.query_one("#fix-verdict-text", Static).update(
            Content(redact_text(outcome_text(outcome, before_fix)))
        )
        self.stage = "done" if outcome.applied else "failed"
        self.query_one("#undo", Button).disabled = self.record is None
        self.query_one("#restart", Button).disabled = not self.restart_units
        status = status_line(outcome, before_fix)
        if not outcome.applied and self.record is not None:
            status += " — it may have changed something; Undo (u) reverses it."
        self._set_status(status)
        verdict = self.query_one("#fix-verdict", VerticalScroll)
        verdict.scroll_home(animate=False)
        verdict.focus()
        log = self.query_one("#fix-output", Log)
        self.call_after_refresh(log.scroll_end, animate=False)  # its newest lines, once resized
