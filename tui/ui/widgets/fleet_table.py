"""The hosts table: a Line-API widget that repaints only the rows whose host changed.

Textual's DataTable drops every rendered cell whenever one cell changes, so a fleet streaming
probe progress re-rendered the whole table several times a second (~40-90 ms each for 100
hosts). Here each row is rendered once per change and cached; a status update repaints one
line, and a cursor move repaints two.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.events import Click
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

GAP = 2  # spaces between columns


class FleetTable(ScrollView, can_focus=True):
    """Rows are ``(name, cells)``; ``columns`` are ``(key, label)``. The header stays on top."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "fleet-table--header",
        "fleet-table--cursor",
    }
    DEFAULT_CSS = """
    FleetTable {
        background: $surface;
        & > .fleet-table--header { text-style: bold; color: $primary; }
        & > .fleet-table--cursor { background: $block-cursor-blurred-background; }
        &:focus > .fleet-table--cursor {
            background: $block-cursor-background;
            color: $block-cursor-foreground;
            text-style: $block-cursor-text-style;
        }
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "cursor_to(0)", "First", show=False),
        Binding("end", "cursor_to(-1)", "Last", show=False),
        Binding("enter", "select", "Open host", show=False),
    ]

    cursor_row: reactive[int] = reactive(0, init=False)

    class RowSelected(Message):
        def __init__(self, table: FleetTable, host: str) -> None:
            super().__init__()
            self.table = table
            self.host = host

        @property
        def control(self) -> FleetTable:
            return self.table

    class HeaderClicked(Message):
        def __init__(self, table: FleetTable, column: str) -> None:
            super().__init__()
            self.table = table
            self.column = column

        @property
        def control(self) -> FleetTable:
            return self.table

    def __init__(
        self,
        columns: Sequence[tuple[str, str]],
        *,
        fixed_widths: Mapping[str, int] | None = None,
        id: str | None = None,
    ) -> None:
        """``fixed_widths``: columns that keep one width (longer cells are cut with "…"), so
        a column of fast-changing values does not make the table jump."""
        super().__init__(id=id)
        self.columns = tuple(columns)
        self._fixed = dict(fixed_widths or {})
        self._names: list[str] = []
        self._cells: dict[str, tuple[Text, ...]] = {}
        self._widths = self._initial_widths()
        self._strips: dict[tuple[str, bool], Strip] = {}
        self._header: Strip | None = None
        self._style: Style | None = None  # rich_style walks every ancestor: once per restyle

    # -- data -----------------------------------------------------------------------------
    @property
    def row_names(self) -> tuple[str, ...]:
        return tuple(self._names)

    def cell(self, name: str, column: str) -> str:
        keys = [k for k, _ in self.columns]
        return self._cells[name][keys.index(column)].plain

    @property
    def cursor_name(self) -> str | None:
        return self._names[self.cursor_row] if 0 <= self.cursor_row < len(self._names) else None

    def set_rows(self, rows: Sequence[tuple[str, tuple[Text, ...]]]) -> None:
        """Replace every row (a new filter or sort); the cursor stays on its host if shown."""
        current = self.cursor_name
        self._names = [name for name, _ in rows]
        self._cells = dict(rows)
        self._widths = self._initial_widths()
        for cells in self._cells.values():
            self._widen(cells)
        self._invalidate_all()
        if current in self._cells:
            self.set_reactive(FleetTable.cursor_row, self._names.index(current))
        self.cursor_row = min(self.cursor_row, max(len(self._names) - 1, 0))

    def update_row(self, name: str, cells: tuple[Text, ...]) -> None:
        if self._cells.get(name) == cells:
            return
        self._cells[name] = cells
        if self._widen(cells):
            self._invalidate_all()
            return
        self._strips.pop((name, False), None)
        self._strips.pop((name, True), None)
        self.refresh_line(self._names.index(name) + 1)

    def _initial_widths(self) -> list[int]:
        return [self._fixed.get(key, len(label)) for key, label in self.columns]

    def _widen(self, cells: tuple[Text, ...]) -> bool:
        wider = False
        for i, cell in enumerate(cells):
            if self.columns[i][0] in self._fixed:
                continue
            if cell.cell_len > self._widths[i]:
                self._widths[i] = cell.cell_len
                wider = True
        return wider

    def _invalidate_all(self) -> None:
        self._strips.clear()
        self._header = None
        width = sum(self._widths) + GAP * len(self._widths)
        self.virtual_size = Size(width, len(self._names) + 1)
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()
        self._header = None
        self._style = None

    @property
    def _base_style(self) -> Style:
        if self._style is None:
            self._style = self.rich_style
        return self._style

    # -- rendering ------------------------------------------------------------------------
    def _line(self, cells: Sequence[Text], style: Style) -> Strip:
        line = Text(" ", end="", no_wrap=True)
        for cell, width in zip(cells, self._widths, strict=True):
            piece = cell.copy()
            piece.truncate(width, overflow="ellipsis", pad=True)
            line.append_text(piece)
            line.append(" " * GAP)
        segments = list(line.render(self.app.console))
        strip = Strip(segments, line.cell_len).apply_style(style)
        return strip

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        if y == 0:
            if self._header is None:
                labels = [Text(label) for _, label in self.columns]
                self._header = self._line(
                    labels, self.get_component_rich_style("fleet-table--header")
                )
            strip = self._header
        else:
            index = y - 1 + scroll_y
            if index >= len(self._names):
                return Strip([Segment(" " * width, self._base_style)], width)
            name = self._names[index]
            cursor = index == self.cursor_row
            key = (name, cursor)
            strip = self._strips.get(key)
            if strip is None:
                style = self._base_style
                if cursor:
                    style += self.get_component_rich_style("fleet-table--cursor")
                strip = self._line(self._cells[name], style)
                self._strips[key] = strip
        return strip.crop_extend(scroll_x, scroll_x + width, self._base_style)

    # -- cursor and scrolling -------------------------------------------------------------
    def watch_cursor_row(self, old: int, new: int) -> None:
        self.refresh_line(old + 1)
        self.refresh_line(new + 1)
        rows_visible = max(self.size.height - 1, 1)
        if new < self.scroll_offset.y:
            self.scroll_to(y=new, animate=False)
        elif new >= self.scroll_offset.y + rows_visible:
            self.scroll_to(y=new - rows_visible + 1, animate=False)

    def refresh_line(self, y: int) -> None:
        if y == 0:
            self.refresh(Region(0, 0, self.size.width, 1))
        else:
            self.refresh(Region(0, y - self.scroll_offset.y, self.size.width, 1))

    def action_cursor(self, step: int) -> None:
        if self._names:
            self.cursor_row = max(0, min(len(self._names) - 1, self.cursor_row + step))

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(self.size.height - 2, 1))

    def action_cursor_to(self, row: int) -> None:
        if self._names:
            self.cursor_row = row % len(self._names)

    def action_select(self) -> None:
        if self.cursor_name is not None:
            self.post_message(self.RowSelected(self, self.cursor_name))

    async def _on_click(self, event: Click) -> None:
        x = event.x + self.scroll_offset.x - 1
        if event.y == 0:
            edge = 0
            for (key, _), width in zip(self.columns, self._widths, strict=True):
                edge += width + GAP
                if x < edge:
                    self.post_message(self.HeaderClicked(self, key))
                    return
            return
        index = event.y - 1 + self.scroll_offset.y
        if 0 <= index < len(self._names):
            again = index == self.cursor_row
            self.cursor_row = index
            if again or event.chain > 1:
                self.action_select()
