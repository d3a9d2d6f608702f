"""Fixes that were cut or stopped mid-run, shown when the app starts: inspect / undo / mark done.

``RecoveryScreen(records)`` lists each unfinished fix ("fix X on ct201 was interrupted at step 2
of 3"). ``i`` shows its journal step by step; ``u`` asks the app to open the fix wizard with the
undo of that record (preview, confirm, run, verdict); ``d`` accepts it as it is (it stays
undoable from ``fix HOST --history``); Esc leaves the decision for later (the next start asks
again).
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Static

from tui.core.fixes.undo import UndoError, UndoRecord, mark_done
from tui.core.records.fix_history import journal_lines, unfinished_notice
from tui.core.records.fix_journal import now
from tui.core.redact import redact_text
from tui.ui.messages import UndoRecordRequested
from tui.ui.screens.message import MessageScreen


class RecoveryScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    RecoveryScreen { align: center middle; }
    #recovery-dialog {
        width: 95%; max-width: 140; height: auto; max-height: 90%;
        border: thick $warning; background: $surface; padding: 0 1;
    }
    #recovery-table { height: auto; max-height: 20; }
    #recovery-what { height: auto; margin-top: 1; }
    #recovery-help { height: auto; margin-top: 1; color: $text-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("i", "inspect", "Inspect", id="recovery.inspect"),
        Binding("u", "undo", "Undo", id="recovery.undo"),
        Binding("d", "mark_done", "Mark done", id="recovery.mark_done"),
        Binding("escape", "close", "Later", id="recovery.close"),
    ]

    def __init__(self, records: list[UndoRecord]) -> None:
        super().__init__()
        self.records = list(records)

    def compose(self) -> ComposeResult:
        with Vertical(id="recovery-dialog"):
            yield Static(
                Content.styled("Unfinished fixes: the journal says what may have changed", "bold"),
                classes="dialog-title",
            )
            yield DataTable(id="recovery-table", cursor_type="row")
            yield Static(id="recovery-what")
            yield Static(
                Content(
                    "i shows the journal step by step · u undoes what it may have done "
                    "(preview first) · d accepts the host as it is · Esc decides later"
                ),
                id="recovery-help",
            )
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#recovery-table", DataTable)
        table.add_column("Host", key="host")
        table.add_column("Fix", key="fix")
        table.add_column("State", key="state")
        self._fill()
        table.focus()

    def _fill(self) -> None:
        table = self.query_one("#recovery-table", DataTable)
        table.clear()
        for r in self.records:
            table.add_row(r.host, r.fix_id, r.state_text(), key=f"{r.host}/{r.id}")
        self._show_current()

    @on(DataTable.RowHighlighted, "#recovery-table")
    def _show_current(self) -> None:
        r = self._current()
        text = unfinished_notice(r).splitlines()[0] if r is not None else ""
        self.query_one("#recovery-what", Static).update(Content(text))

    def _current(self) -> UndoRecord | None:
        row = self.query_one("#recovery-table", DataTable).cursor_row
        return self.records[row] if 0 <= row < len(self.records) else None

    def action_inspect(self) -> None:
        r = self._current()
        if r is None:
            return
        body = redact_text("\n".join([unfinished_notice(r), "", *journal_lines(r, "")]))
        self.app.push_screen(MessageScreen(f"{r.host}: {r.id}", body, severity="warning"))

    def action_undo(self) -> None:
        r = self._current()
        if r is None:
            return
        self.app.post_message(UndoRecordRequested(r))
        self.dismiss(None)

    def action_mark_done(self) -> None:
        r = self._current()
        if r is None:
            return
        try:
            mark_done(r, now())
        except UndoError as exc:
            self.notify(str(exc), severity="error")
            return
        self.notify(f"{r.id} on {r.host} marked done; it stays undoable from --history.")
        self.records.remove(r)
        if not self.records:
            self.dismiss(None)
            return
        self._fill()

    def action_close(self) -> None:
        self.dismiss(None)
