"""The fix wizard: preview → confirm → live output → before/after verdict → undo / restart offer.

Self-contained: ``FixWizardScreen(host, plan, session)`` needs a ``tui.core.run.runner.Session``
and a plan from ``tui.core.fixes.build_plan`` (or, with ``undoing=record``, the undo plan of
that record: its first run is then that undo, journaled in the record). It dismisses with the
last ``FixOutcome`` (``None`` when nothing ran). Every run is a
``tui.core.run.fix_session.FixSession``: the wizard's buttons are its decisions, and the
session records them, journals and runs the plan, and builds the restart and undo it offers.
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
from tui.core.fixes.plan import FixPlan
from tui.core.fixes.undo import UndoError, UndoRecord
from tui.core.hosts import Host
from tui.core.redact import redact_text
from tui.core.run.fix_executor import FixOutcome
from tui.core.run.fix_render import outcome_text, plan_heading, preview_text
from tui.core.run.fix_session import FixSession
from tui.core.run.outcome_words import status_line
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
    def __init__(self, outcome: FixOutcome, run: FixSession) -> None:
        super().__init__()
        self.outcome = outcome
        self.run = run
        self.kind = run.kind  # "fix", "undo" or "restart"


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
        ``before``: the probe a fix was planned from (None: probed when it runs)."""
        super().__init__()
        self.host = host
        self.plan = plan
        self.session = session
        self.undoing = undoing  # the record ``plan`` undoes (opened from the recovery screen)
        self.run = FixSession.one(session, host, plan, before, undoing=undoing)
        self.last: FixSession | None = None  # the last run (fix, undo or restart)
        self.outcome: FixOutcome | None = None  # its outcome
        # undo record of the applied fix, until it is undone
        self.record: str | None = undoing.id if undoing else None
        self.restart_units: tuple[str, ...] = ()  # units still running the old environment
        self.pending: FixPlan | None = None  # an undo/restart plan shown, awaiting confirmation
        self.pending_run: FixSession | None = None  # its session

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
        if self.pending_run is not None:
            run, self.pending_run, self.pending = self.pending_run, None, None
        elif self.stage == "preview":
            run = self.run
        else:
            return
        run.decide("yes")
        self._start(run)

    @on(Button.Pressed, "#undo")
    def action_undo(self) -> None:
        if self.stage == "running" or self.record is None:
            return
        try:
            undo = FixSession.undo_of(self.session, self.host, self.record, sudo=self.plan.sudo)
        except UndoError as exc:
            self._set_status(f"Cannot undo: {exc}")
            return
        self._offer(undo)

    @on(Button.Pressed, "#restart")
    def action_restart(self) -> None:
        if self.stage == "running" or not self.restart_units:
            return
        restart = self.last.restart() if self.last is not None else None
        if restart is not None:
            self._offer(restart)

    @on(Button.Pressed, "#close")
    def action_close(self) -> None:
        if self.stage == "running":
            return
        if self.stage == "preview" and self.outcome is None:
            self.run.decide("no")
        self.dismiss(self.outcome)

    def _offer(self, run: FixSession) -> None:
        """Show a follow-up (undo, restart) and wait for Apply as its own confirmation."""
        (plan,) = [i.plan for i in run.planned if i.plan is not None]
        self.pending, self.pending_run = plan, run
        self.query_one("#fix-verdict-text", Static).update(Content(redact_text(preview_text(plan))))
        self.query_one("#fix-verdict", VerticalScroll).scroll_home(animate=False)
        self.query_one("#apply", Button).disabled = False
        self.query_one("#apply", Button).label = "Confirm (a)"
        self._set_status("Press Confirm (a) to run the commands above.")

    def _start(self, run: FixSession) -> None:
        log = self.query_one("#fix-output", Log)
        for item in run.planned:
            assert item.plan is not None
            log.write_line(f"── {run.kind}: {item.plan.fix_id} on {self.host.name}")
        self.query_one("#apply", Button).label = "Apply (a)"
        self.stage = "running"
        self._set_status("Running… every command and its output goes to the session transcript.")
        self._apply(run)

    @work(exclusive=True, group="fix", exit_on_error=False)
    async def _apply(self, run: FixSession) -> None:
        (result,) = await run.apply(lambda _host, line: self.post_message(FixLine(line)))
        if result.outcome is None:  # a bug in the run: the worker's error handler says so
            raise RuntimeError(result.detail)
        self.post_message(FixDone(result.outcome, run))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A run that crashed must not leave the wizard stuck in "running"."""
        if event.worker.group == "fix" and event.state == WorkerState.ERROR:
            self.stage = "failed"
            self._set_status(f"The run stopped with an internal error: {event.worker.error!r}")

    def on_fix_line(self, message: FixLine) -> None:
        self.query_one("#fix-output", Log).write_line(message.line)

    def on_fix_done(self, message: FixDone) -> None:
        outcome = self.outcome = message.outcome
        self.last = message.run
        if message.kind == "fix":
            self.record = outcome.record
        elif message.kind == "undo" and outcome.applied:  # the journal set the record aside
            self.record = None
        restart = message.run.restart() if message.kind != "restart" else None
        self.restart_units = outcome.pending_restart if restart is not None else ()
        undone = message.run.items[0].undo_record if message.kind == "undo" else None
        before_fix = undone.findings_before if undone is not None else None
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
