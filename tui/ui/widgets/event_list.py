"""A virtual list of transcript events: only the rows on screen are decoded and rendered, so
a session of any size scrolls as fast as a short one."""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import BindingType
from textual.events import Click
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui.core.records.transcript_index import TranscriptIndex
from tui.ui.widgets.list_keys import list_bindings


class EventList(ScrollView, can_focus=True):
    COMPONENT_CLASSES: ClassVar[set[str]] = {"event-list--cursor"}
    DEFAULT_CSS = """
    EventList {
        background: $surface;
        & > .event-list--cursor { background: $block-cursor-blurred-background; }
        &:focus > .event-list--cursor {
            background: $block-cursor-background;
            color: $block-cursor-foreground;
        }
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = list_bindings("event")

    cursor: reactive[int] = reactive(0, init=False)

    class Selected(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index  # into the TranscriptIndex

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.index: TranscriptIndex | None = None
        self.rows: tuple[int, ...] = ()
        self._lines: dict[int, Text] = {}

    def show(self, index: TranscriptIndex | None, rows: tuple[int, ...]) -> None:
        """Show these events of ``index`` (their positions in it), the cursor on the first."""
        if index is not self.index:
            self._lines.clear()
        self.index, self.rows = index, rows
        width = max((len(self._line(i)) for i in rows[:200]), default=0)
        self.virtual_size = Size(max(width, self.size.width), len(rows))
        self.set_reactive(EventList.cursor, 0)
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    def _line(self, event: int) -> Text:
        text = self._lines.get(event)
        if text is None and self.index is not None:
            text = Text(self.index.summary(event), no_wrap=True, end="")
            self._lines[event] = text
        return text or Text("")

    @property
    def selected(self) -> int | None:
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        row = y + scroll_y
        style = self.rich_style
        if row >= len(self.rows):
            return Strip([Segment(" " * width, style)], width)
        if row == self.cursor:
            style += self.get_component_rich_style("event-list--cursor")
        text = self._line(self.rows[row])
        segments = list(text.render(self.app.console))
        strip = Strip(segments, text.cell_len).apply_style(style)
        return strip.crop_extend(scroll_x, scroll_x + width, style or Style())

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh_lines(old - self.scroll_offset.y)
        self.refresh_lines(new - self.scroll_offset.y)
        height = max(self.size.height, 1)
        if new < self.scroll_offset.y:
            self.scroll_to(y=new, animate=False)
        elif new >= self.scroll_offset.y + height:
            self.scroll_to(y=new - height + 1, animate=False)

    def action_cursor(self, step: int) -> None:
        if self.rows:
            self.cursor = max(0, min(len(self.rows) - 1, self.cursor + step))

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(self.size.height - 1, 1))

    def action_cursor_to(self, row: int) -> None:
        if self.rows:
            self.cursor = row % len(self.rows)

    def action_select(self) -> None:
        if self.selected is not None:
            self.post_message(self.Selected(self.selected))

    async def _on_click(self, event: Click) -> None:
        row = event.y + self.scroll_offset.y
        if 0 <= row < len(self.rows):
            again = row == self.cursor
            self.cursor = row
            if again or event.chain > 1:
                self.action_select()
