"""Choose the hosts table's columns: a checkbox per column, in the table's order.

``space`` shows or hides the highlighted column, ``[``/``]`` (or shift+up/down) move it,
``r`` brings back every column in the shipped order, ``enter`` applies the choice and
``esc`` keeps the table as it is. Host is always shown, first (it stays put when the table
scrolls sideways). The app saves the choice as ``columns`` in ``config.yaml``
(``tui.ui.config.save_setting``: a temp file and a rename).
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import SelectionList, Static
from textual.widgets.selection_list import Selection

from tui.ui.config import COLUMN_KEYS, ConfigError, config_path, save_setting
from tui.ui.fleet_state import COLUMNS

LABELS = dict(COLUMNS)


def save_columns(columns: tuple[str, ...], override: str | None) -> tuple[str, bool]:
    """Save ``columns``; what to tell the operator, and whether it was saved (a config file
    that does not load, or cannot be written, is left as it is)."""
    names = ", ".join(LABELS[k] for k in columns)
    try:
        path = save_setting("columns", columns)
    except (ConfigError, OSError) as e:
        why = e if isinstance(e, ConfigError) else f"cannot write {config_path()}: {e}"
        return f"Columns {names} for this session only: {why}", False
    later = f" ({override} still wins at the next start)" if override else ""
    return f"Columns {names}; saved to {path}{later}", True


class ColumnsScreen(ModalScreen["tuple[str, ...] | None"]):
    """Dismisses with the columns chosen, in order (Host first), or None (Esc)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "apply", "Apply", id="columns.apply", priority=True),
        Binding("escape", "cancel", "Cancel", id="columns.cancel"),
        Binding("left_square_bracket,shift+up", "move(-1)", "Move up", id="columns.up"),
        Binding("right_square_bracket,shift+down", "move(1)", "Move down", id="columns.down"),
        Binding("r", "reset", "All columns", id="columns.reset"),
    ]
    DEFAULT_CSS = """
    ColumnsScreen SelectionList { height: auto; max-height: 16; }
    """

    def __init__(self, shown: tuple[str, ...], *, override: str | None = None) -> None:
        """``shown``: the columns the table shows now, in order; ``override``: the flag or
        variable that set them for this run, if any."""
        super().__init__()
        self.order = [k for k in shown if k != "host"]
        self.order += [k for k in COLUMN_KEYS if k not in shown]
        self.shown = set(shown)
        self.override = override

    def compose(self) -> ComposeResult:
        body = (
            f"space shows or hides a column, [ and ] move it, r brings back all of them. Enter "
            f"applies and saves to {config_path()}, Esc keeps the table as it is. Host is "
            "always first."
        )
        if self.override:
            body += f" This run's columns came from {self.override}, which wins at the next start."
        with Vertical(id="dialog"):
            yield Static(Content.styled("Columns", "bold"), classes="dialog-title")
            yield Static(Content(body), id="columns-body")
            yield SelectionList[str](*self._selections(), id="columns-list")

    def _selections(self) -> list[Selection[str]]:
        return [Selection(LABELS[k], k, k in self.shown) for k in self.order]

    def on_mount(self) -> None:
        self.query_one(SelectionList).focus()

    @property
    def chosen(self) -> tuple[str, ...]:
        """The columns ticked, in the list's order, Host first."""
        ticked = set(self.query_one(SelectionList).selected)
        return ("host", *(k for k in self.order if k in ticked))

    def _rebuild(self, highlighted: int) -> None:
        listing = self.query_one(SelectionList)
        self.shown = {"host", *listing.selected}
        listing.clear_options()
        listing.add_options(self._selections())
        listing.highlighted = highlighted

    def action_move(self, step: int) -> None:
        at = self.query_one(SelectionList).highlighted
        if at is None or not 0 <= at + step < len(self.order):
            return
        self.order[at], self.order[at + step] = self.order[at + step], self.order[at]
        self._rebuild(at + step)

    def action_reset(self) -> None:
        self.order = [k for k in COLUMN_KEYS if k != "host"]
        listing = self.query_one(SelectionList)
        listing.select_all()
        self._rebuild(0)

    def action_apply(self) -> None:
        self.dismiss(self.chosen)

    def action_cancel(self) -> None:
        self.dismiss(None)
