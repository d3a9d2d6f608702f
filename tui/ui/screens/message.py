"""A modal that shows one readable message (errors from workers, validation results)."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Markdown, Static


class MessageScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,enter", "close", "Close", id="message.close")
    ]

    def __init__(
        self, title: str, body: str, *, severity: str = "error", markdown: bool = False
    ) -> None:
        super().__init__()
        self.title_text = title
        self.body = body
        self.severity = severity
        self.markdown = markdown

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes=f"-{self.severity}"):
            yield Static(Content.styled(self.title_text, "bold"), classes="dialog-title")
            with VerticalScroll(id="message-body"):
                yield Markdown(self.body) if self.markdown else Static(Content(self.body))
            with Horizontal(classes="dialog-buttons"):
                yield Button("Close", variant="primary", id="close")

    def on_mount(self) -> None:
        self.query_one("#close", Button).focus()

    @on(Button.Pressed, "#close")
    def action_close(self) -> None:
        self.dismiss(None)
