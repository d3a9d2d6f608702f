"""The footer on a narrow terminal: its keys first, the command palette hint only where
there is room for both (at 80 columns the hint would push `q Quit` off the line)."""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer

PALETTE_HINT_MIN_WIDTH = 100


def fit_footer(screen: Screen) -> None:
    """Call from a screen's ``on_resize``."""
    for footer in screen.query(Footer):
        footer.show_command_palette = screen.size.width >= PALETTE_HINT_MIN_WIDTH
