"""Past sessions: pick one on the left, read it (rendered as Markdown) on the right."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Markdown, OptionList, Static
from textual.widgets.option_list import Option

from tui.core import transcript


class TranscriptsScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="transcripts.back")
    ]

    def __init__(self, current: Path | None = None) -> None:
        super().__init__()
        self.current = current
        self._paths: list[Path] = []

    def compose(self) -> ComposeResult:
        yield Static(
            "Sessions (newest first) — the current one is marked ●", id="transcripts-title"
        )
        with Horizontal():
            yield OptionList(id="sessions")
            with VerticalScroll(id="session-view"):
                yield Markdown("Select a session.", id="session-md")
        yield Footer()

    def on_mount(self) -> None:
        self._paths = sorted(transcript.list_sessions(), key=lambda p: p.name, reverse=True)
        options = self.query_one("#sessions", OptionList)
        options.add_options(
            Option(("● " if p == self.current else "  ") + p.stem, id=str(i))
            for i, p in enumerate(self._paths)
        )
        if not self._paths:
            self.query_one("#session-md", Markdown).update("No sessions recorded yet.")
        else:
            options.highlighted = 0
        options.focus()

    @on(OptionList.OptionHighlighted, "#sessions")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show(self._paths[event.option_index])

    @work(exclusive=True, group="transcript-view", exit_on_error=False)
    async def _show(self, path: Path) -> None:
        text = await asyncio.to_thread(transcript.export, path, "md")
        await self.query_one("#session-md", Markdown).update(text)

    def action_back(self) -> None:
        self.dismiss()
