"""Every key of every screen, read from the screens' own ``BINDINGS`` (so it cannot drift)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Static

SPELLED = frozenset({"enter"})
ACTION_MIN_WIDTH = 24
ACTION_MAX_WIDTH = 72  # keys named in words, not as a symbol (⏎)
SCROLLBAR = 2  # the table's vertical scrollbar


class HelpScreen(ModalScreen[None]):
    # the table takes every row the dialog has and is focused, so the arrow keys scroll it
    DEFAULT_CSS = """
    #dialog.-help { height: 100%; max-height: 100%; }
    #help-keys { height: 1fr; max-height: 100%; }
    #dialog.-help .dialog-buttons { height: 1; margin-top: 0; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "close", "Close", id="help.close")
    ]

    def __init__(
        self, sections: Sequence[tuple[str, Sequence[Binding]]], hidden: frozenset[str]
    ) -> None:
        super().__init__()
        self.sections = sections
        self.hidden = hidden

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="-help"):
            yield Static(Content.styled("Keys", "bold"), classes="dialog-title")
            yield DataTable(id="help-keys", cursor_type="row")
            yield Static(
                Content.assemble(
                    ("ctrl+p", "bold"),
                    " opens the command palette: every action above, plus one command per host, "
                    "finding and fix. The mouse works everywhere: click a row, a tab, "
                    "a column header.",
                ),
                id="help-note",
            )
            with Horizontal(classes="dialog-buttons"):
                yield Button("Close", variant="primary", id="close", compact=True)

    def on_mount(self) -> None:
        self.query_one("#help-keys", DataTable).focus()
        self.call_after_refresh(self._fill)  # the table's width is known once laid out

    def _rows(self) -> list[tuple[str, str, str]]:
        rows = []
        for where, bindings in self.sections:
            for b in bindings:
                if b.id in self.hidden or not b.description:
                    continue
                keys = " ".join(
                    k.strip() if k.strip() in SPELLED else self.app.get_key_display(b.with_key(k))
                    for k in b.key.split(",")
                )
                rows.append((where, keys, b.tooltip or b.description))
        return rows

    def _fill(self) -> None:
        table = self.query_one("#help-keys", DataTable)
        rows = self._rows()
        where_w = max(len("Where"), *(len(r[0]) for r in rows))
        key_w = max(len("Key"), *(len(r[1]) for r in rows))
        # the action wraps within what the dialog has left (cell padding, the scrollbar)
        left = table.size.width - where_w - key_w - 3 * 2 * table.cell_padding - SCROLLBAR
        width = max(ACTION_MIN_WIDTH, min(ACTION_MAX_WIDTH, left))
        table.add_column("Where", width=where_w)
        table.add_column("Key", width=key_w)
        table.add_column("Action", width=width)
        for where, keys, action in rows:
            table.add_row(where, Text(keys, style="bold"), action, height=None)

    @on(Button.Pressed, "#close")
    def action_close(self) -> None:
        self.dismiss(None)
