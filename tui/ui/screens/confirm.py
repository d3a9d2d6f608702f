"""A yes/no question in a modal: dismisses with True (yes) or False (no, Esc)."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

LIVE_S = 0.5


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "confirm", "Yes", id="confirm.yes"),
        Binding("n,escape", "cancel", "No", id="confirm.no"),
    ]

    def __init__(
        self,
        title: str,
        body: str,
        *,
        yes: str,
        no: str,
        live_body: Callable[[], str] | None = None,
    ) -> None:
        """``live_body``: the body again, asked twice a second while the dialog is open (what
        it describes may change meanwhile: a fix moves to its next step)."""
        super().__init__()
        self.title_text = title
        self.body = body
        self.yes = yes
        self.no = no
        self.live_body = live_body

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="-warning"):
            yield Static(Content.styled(self.title_text, "bold"), classes="dialog-title")
            yield Static(Content(self.body), id="confirm-body")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self.yes} (y)", variant="warning", id="yes")
                yield Button(f"{self.no} (n)", variant="primary", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()
        if self.live_body is not None:
            self.set_interval(LIVE_S, self._refresh_body)

    def _refresh_body(self) -> None:
        if self.live_body is not None and (body := self.live_body()) != self.body:
            self.body = body
            self.query_one("#confirm-body", Static).update(Content(body))

    @on(Button.Pressed, "#yes")
    def action_confirm(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#no")
    def action_cancel(self) -> None:
        self.dismiss(False)
