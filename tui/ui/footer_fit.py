"""The footer on a narrow terminal: its keys first, the command palette hint only where
there is room for both (at 80 columns the hint would push `q Quit` off the line), and below
that, the keys that do not fit are left out whole, last first, while `? Help` and `q Quit`
always stay (Textual's footer cut the line mid-word and lost them at 60 columns)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

PALETTE_HINT_MIN_WIDTH = 100
KEPT_ACTIONS = ("help", "app.help", "quit", "app.quit")  # shown at any width


def _width(key: FooterKey) -> int:
    """A key's cells in the footer (``" ? Help "``; padding 0 1 around the key, 0 1 0 0
    after the description, as Textual's non-compact footer draws it)."""
    return len(key.key_display) + 2 + (len(key.description) + 1 if key.description else 0)


def fitting(keys: list[FooterKey], width: int) -> set[int]:
    """The indexes of ``keys`` shown within ``width`` cells: the kept ones, then the others in
    order while they fit."""
    shown = {i for i, k in enumerate(keys) if k.action in KEPT_ACTIONS}
    used = sum(_width(keys[i]) for i in shown)
    for i, k in enumerate(keys):
        if i not in shown and used + _width(k) <= width:
            shown.add(i)
            used += _width(k)
        elif i not in shown:
            used = width  # the rest stay out: keys keep their order
    return shown


class FitFooter(Footer):
    """A footer whose keys are whole at any width (for bindings without a ``group``: the
    app's keys have none, so every key is one of the composed widgets)."""

    def compose(self) -> ComposeResult:
        items = list(super().compose())
        keys = [w for w in items if isinstance(w, FooterKey)]
        shown = fitting(keys, self.screen.size.width or self.app.size.width)
        keep = {id(keys[i]) for i in shown}
        for widget in items:
            if not isinstance(widget, FooterKey) or id(widget) in keep:
                yield widget


def fit_footer(screen: Screen) -> None:
    """Call from a screen's ``on_resize``."""
    for footer in screen.query(Footer):
        footer.show_command_palette = screen.size.width >= PALETTE_HINT_MIN_WIDTH
        if isinstance(footer, FitFooter) and footer.is_attached:
            footer.refresh(recompose=True)  # composed again in its own context, at this width
