"""The hosts table: a Line-API widget that repaints only the rows whose host changed.

Textual's DataTable drops every rendered cell whenever one cell changes, so a fleet streaming
probe progress re-rendered the whole table several times a second (~40-90 ms each for 100
hosts). Here each row is rendered once per change and cached; a status update repaints one
line, and a cursor move repaints two.

Widths fit the screen: each column is as wide as its widest cell (``max_widths`` caps some,
cut with "…"), and a ``flex`` column takes what is left of the first screenful, so at 80
columns it is still readable and the columns after it scroll in from the right. The first
``frozen`` columns stay put when the table scrolls sideways. The sorted column's header
carries ▲/▼ (and, while it is off screen, the header's edge names it: `` GPU ▲ →``), and a
marked row (space) carries ● in the gutter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import BindingType
from textual.events import Click
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui.ui.widgets.list_keys import list_bindings

GAP = 2  # spaces between columns
GUTTER = 1  # the first cell of every line: ● on a marked row
SORT_MARKS = {False: " ▲", True: " ▼"}  # after the sorted column's label (ascending, reversed)
MARK = "●"


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
    BINDINGS: ClassVar[list[BindingType]] = list_bindings("host", sideways=True)

    cursor_row: reactive[int] = reactive(0, init=False)

    class RowSelected(Message):
        def __init__(self, table: FleetTable, host: str) -> None:
            super().__init__()
            self.table = table
            self.host = host

        @property
        def control(self) -> FleetTable:
            return self.table

    class CursorMoved(Message):
        """The cursor is on another host (or the rows changed under it)."""

        def __init__(self, table: FleetTable, host: str | None) -> None:
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
        max_widths: Mapping[str, int] | None = None,
        flex: Mapping[str, int] | None = None,
        frozen: int = 1,
        id: str | None = None,
    ) -> None:
        """``max_widths``: columns cut with "…" beyond a width. ``flex``: column → its least
        width; it takes the rest of the first screenful (up to its widest cell). ``frozen``:
        how many leading columns stay in place when the table scrolls sideways."""
        super().__init__(id=id)
        self.columns = tuple(columns)
        self._max = dict(max_widths or {})
        self._flex = dict(flex or {})
        self._frozen = frozen
        self._names: list[str] = []
        self._cells: dict[str, tuple[Text, ...]] = {}
        self._natural = self._label_widths()
        self._widths = list(self._natural)
        self._strips: dict[tuple[str, bool], Strip] = {}
        self._header: Strip | None = None
        self._style: Style | None = None  # rich_style walks every ancestor: once per restyle
        self._sort: tuple[str, bool] | None = None
        self._marked: frozenset[str] = frozenset()

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
        self._natural = self._label_widths()
        for cells in self._cells.values():
            self._widen(cells)
        self._layout()
        self._invalidate_all()
        if current in self._cells:
            self.set_reactive(FleetTable.cursor_row, self._names.index(current))
        self.cursor_row = min(self.cursor_row, max(len(self._names) - 1, 0))

    def set_columns(self, columns: Sequence[tuple[str, str]]) -> None:
        """Show these columns (the column chooser); ``set_rows`` then gives their cells."""
        self.columns = tuple(columns)
        self._names, self._cells = [], {}
        self._natural = self._label_widths()
        self._widths = list(self._natural)
        self._header = None
        self.scroll_to(x=0, animate=False)

    def update_row(self, name: str, cells: tuple[Text, ...]) -> None:
        if self._cells.get(name) == cells:
            return
        self._cells[name] = cells
        if self._widen(cells) and self._layout():
            self._invalidate_all()
            return
        self._forget(name)

    def set_sort(self, column: str, reverse: bool) -> None:
        """Show ▲ (or ▼, reversed) after the sorted column's label."""
        if self._sort != (column, reverse):
            self._sort = (column, reverse)
            self._header = None
            self.refresh_line(0)

    def set_marks(self, names: frozenset[str]) -> None:
        """Rows shown with ● in the gutter (the marked hosts)."""
        changed = self._marked ^ names
        self._marked = names
        for name in changed:
            if name in self._cells:
                self._forget(name)

    def _forget(self, name: str) -> None:
        self._strips.pop((name, False), None)
        self._strips.pop((name, True), None)
        self.refresh_line(self._names.index(name) + 1)

    def _label_widths(self) -> list[int]:
        # room for the sort mark on every column, so sorting never moves a column
        return [len(label) + len(SORT_MARKS[False]) for _, label in self.columns]

    def _widen(self, cells: tuple[Text, ...]) -> bool:
        wider = False
        for i, cell in enumerate(cells):
            if cell.cell_len > self._natural[i]:
                self._natural[i] = cell.cell_len
                wider = True
        return wider

    def _layout(self) -> bool:
        """Fit the widths to the widget's width; True when they changed."""
        widths = [
            min(n, self._max.get(key, n))
            for (key, _), n in zip(self.columns, self._natural, strict=True)
        ]
        available = self.size.width
        for i, (key, _) in enumerate(self.columns):
            if key in self._flex and available:
                before = GUTTER + sum(widths[:i]) + GAP * i
                rest = available - before - GAP
                widths[i] = max(self._flex[key], min(self._natural[i], rest))
        if widths == self._widths:
            return False
        self._widths = widths
        return True

    def on_resize(self) -> None:
        self._layout()
        self._invalidate_all()

    def _invalidate_all(self) -> None:
        self._strips.clear()
        self._header = None
        self.virtual_size = Size(self._total_width, len(self._names) + 1)
        self.refresh()

    @property
    def _total_width(self) -> int:
        return GUTTER + sum(self._widths) + GAP * len(self._widths)

    @property
    def _frozen_width(self) -> int:
        return GUTTER + sum(self._widths[: self._frozen]) + GAP * self._frozen

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
    def _line(self, cells: Sequence[Text], style: Style, gutter: str = " ") -> Strip:
        line = Text(gutter, end="", no_wrap=True)
        for cell, width in zip(cells, self._widths, strict=True):
            piece = cell.copy()
            piece.truncate(width, overflow="ellipsis", pad=True)
            line.append_text(piece)
            line.append(" " * GAP)
        segments = list(line.render(self.app.console))
        return Strip(segments, line.cell_len).apply_style(style)

    def _header_strip(self) -> Strip:
        if self._header is None:
            labels = []
            for key, label in self.columns:
                if self._sort is not None and self._sort[0] == key:
                    label += SORT_MARKS[self._sort[1]]
                labels.append(Text(label))
            self._header = self._line(labels, self.get_component_rich_style("fleet-table--header"))
        return self._header

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        if y == 0:
            strip = self._header_strip()
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
                gutter = MARK if name in self._marked else " "
                strip = self._line(self._cells[name], style, gutter)
                self._strips[key] = strip
        if scroll_x:
            frozen = self._frozen_width
            strip = Strip.join(
                [strip.crop(0, frozen), strip.crop(frozen + scroll_x, scroll_x + width)]
            )
        strip = strip.crop_extend(0, width, self._base_style)
        cue = self.sort_cue() if y == 0 else None
        if cue:  # left of the vertical scrollbar, which covers the lines' last cells
            style = self._base_style + self.get_component_rich_style("fleet-table--header")
            room = max(self.scrollable_content_region.width - len(cue), 0)
            strip = Strip.join(
                [
                    strip.crop(0, room),
                    Strip([Segment(cue, style)], len(cue)),
                    strip.crop(room + len(cue)),
                ]
            )
        return strip.crop_extend(0, width, self._base_style)

    def column_start(self, index: int) -> int:
        """Where column ``index`` starts in the unscrolled line."""
        return GUTTER + sum(self._widths[:index]) + GAP * index

    def sort_cue(self) -> str | None:
        """`` GPU ▲ →`` (or ``← GPU ▲``) at the header's edge while the sorted column is off
        screen, so the order shows at any width; None while its header is in view."""
        if self._sort is None:
            return None
        keys = [key for key, _ in self.columns]
        if self._sort[0] not in keys:
            return None
        i = keys.index(self._sort[0])
        if i < self._frozen:
            return None
        start = self.column_start(i) - self.scroll_offset.x
        label = dict(self.columns)[self._sort[0]] + SORT_MARKS[self._sort[1]]
        if start + len(label) > self.scrollable_content_region.width:
            return f" {label} → "
        if start < self._frozen_width:
            return f" ← {label} "
        return None

    # -- cursor and scrolling -------------------------------------------------------------
    def watch_cursor_row(self, old: int, new: int) -> None:
        self.post_message(self.CursorMoved(self, self.cursor_name))
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

    def action_column_edge(self, side: int) -> None:
        """Home/End: scroll sideways to the first (0) or the last (1) column."""
        self.scroll_to(x=self.max_scroll_x if side else 0, animate=False)

    def action_select(self) -> None:
        if self.cursor_name is not None:
            self.post_message(self.RowSelected(self, self.cursor_name))

    def column_at(self, x: int) -> str | None:
        """The column under screen column ``x`` of the widget (frozen columns first)."""
        frozen = self._frozen_width
        x = (x if x < frozen else x + self.scroll_offset.x) - GUTTER
        edge = 0
        for (key, _), width in zip(self.columns, self._widths, strict=True):
            edge += width + GAP
            if x < edge:
                return key
        return None

    async def _on_click(self, event: Click) -> None:
        if event.y == 0:
            column = self.column_at(event.x)
            if column is not None:
                self.post_message(self.HeaderClicked(self, column))
            return
        index = event.y - 1 + self.scroll_offset.y
        if 0 <= index < len(self._names):
            again = index == self.cursor_row
            self.cursor_row = index
            if again or event.chain > 1:
                self.action_select()
