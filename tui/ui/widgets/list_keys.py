"""The keys of the app's hand-drawn lists (the hosts table, the transcript's event list):
arrows, pages, home/end move the cursor, and the vi keys an operator of k9s, htop or less
expects (j/k, G last, ctrl+d/ctrl+u a page); enter opens the row under it. In a table wider
than the screen (the hosts table) home/end jump sideways to the first/last column instead, and
ctrl+home/ctrl+end go to the first/last row (``g``, vi's way to the top, is the groups view)."""

from __future__ import annotations

from textual.binding import Binding, BindingType


def list_bindings(open_what: str, *, sideways: bool = False) -> list[BindingType]:
    """Cursor keys for a widget with ``action_cursor``, ``action_page``, ``action_cursor_to``
    and ``action_select``; ``open_what`` names what enter opens ("host", "event").
    ``sideways``: home/end call ``action_column_edge`` (0 first, 1 last column)."""
    edges: list[BindingType] = [
        Binding("home", "cursor_to(0)", "First", show=False),
        Binding("end", "cursor_to(-1)", "Last", show=False),
    ]
    if sideways:
        edges = [
            Binding("home", "column_edge(0)", "First column", show=False),
            Binding("end", "column_edge(1)", "Last column", show=False),
            Binding("ctrl+home", "cursor_to(0)", "First", show=False),
            Binding("ctrl+end", "cursor_to(-1)", "Last", show=False),
        ]
    return [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        *edges,
        Binding("j", "cursor(1)", "Down", show=False),
        Binding("k", "cursor(-1)", "Up", show=False),
        Binding("G", "cursor_to(-1)", "Last", show=False),
        Binding("ctrl+d", "page(1)", "Page down", show=False),
        Binding("ctrl+u", "page(-1)", "Page up", show=False),
        Binding("enter", "select", f"Open {open_what}", show=False),
    ]


# the help's line for the cursor keys (one line for them all; the keys are bound above)
CURSOR_HELP = Binding(
    "j,k,G,ctrl+d,ctrl+u",
    "cursor(0)",
    "Move",
    tooltip="Down, up, last, page down, page up (and the arrows, PgUp/PgDn)",
)

# the hosts table's line for home/end (sideways there)
SIDEWAYS_HELP = Binding(
    "home,end",
    "column_edge(0)",
    "First/last column",
    tooltip="Jump sideways to the first / last column (ctrl+home, ctrl+end: the first / last "
    "row; g is the groups view)",
)
