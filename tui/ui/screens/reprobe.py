"""Set ``reprobe_minutes`` from the TUI: probe every host again every N minutes (0: never).

The modal dismisses with the new number of minutes, or None (Esc). The app applies it at once
and writes it to the config file (``tui.ui.config.save_setting``); a ``--reprobe-minutes`` or
``$DETECTIVE_TUI_REPROBE_MINUTES`` given for this run is named, since it wins at the next start.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from tui.ui.config import ConfigError, config_path, save_setting

MAX_MINUTES = 7 * 24 * 60  # a week: more is a typo


def parse_minutes(text: str) -> int:
    """The minutes typed, or ValueError saying what to type."""
    text = text.strip()
    if not text.isdigit() or int(text) > MAX_MINUTES:
        raise ValueError(f"type a whole number of minutes from 0 (never) to {MAX_MINUTES}")
    return int(text)


def every_text(minutes: int) -> str:
    return "never" if minutes == 0 else f"every {minutes} min"


def save_interval(minutes: int, override: str | None) -> tuple[str, bool]:
    """Save ``reprobe_minutes``; what to tell the operator, and whether it was saved (a
    config file that does not load, or cannot be written, is left as it is)."""
    try:
        path = save_setting("reprobe_minutes", minutes)
    except (ConfigError, OSError) as e:
        why = e if isinstance(e, ConfigError) else f"cannot write {config_path()}: {e}"
        return f"Re-probing {every_text(minutes)} for this session only: {why}", False
    later = f" ({override} still wins at the next start)" if override else ""
    return f"Re-probing {every_text(minutes)}; saved to {path}{later}", True


class ReprobeScreen(ModalScreen[int | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="reprobe.cancel"),
    ]

    def __init__(self, minutes: int, *, path: str, override: str | None = None) -> None:
        """``minutes``: the value now; ``path``: the config file it is saved to;
        ``override``: what set it for this run (a flag or variable), if anything did."""
        super().__init__()
        self.minutes = minutes
        self.path = path
        self.override = override

    def compose(self) -> ComposeResult:
        body = (
            f"Probe every host again every N minutes; 0 turns it off. Now: "
            f"{every_text(self.minutes)}. Enter saves it to {self.path}, Esc keeps it."
        )
        if self.override:
            body += f" This run's value came from {self.override}, which wins at the next start."
        with Vertical(id="dialog"):
            yield Static(Content.styled("Re-probe interval", "bold"), classes="dialog-title")
            yield Static(Content(body), id="reprobe-body")
            yield Input(str(self.minutes), type="integer", id="reprobe-minutes")
            yield Static(id="reprobe-error")

    def on_mount(self) -> None:
        self.query_one("#reprobe-minutes", Input).focus()

    @on(Input.Submitted, "#reprobe-minutes")
    def _submitted(self, event: Input.Submitted) -> None:
        try:
            minutes = parse_minutes(event.value)
        except ValueError as e:
            self.query_one("#reprobe-error", Static).update(Content.styled(str(e), "$error"))
            return
        self.dismiss(minutes)

    def action_cancel(self) -> None:
        self.dismiss(None)
