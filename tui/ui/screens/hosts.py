"""The fleet: one row per host with live status, or the same hosts grouped by finding."""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Container, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import ContentSwitcher, Input, Static, Tree

from tui.ui.config import shown_columns
from tui.ui.disabled import ExplainsDisabledKeys
from tui.ui.filtering import FilterError, Term, matches, parse_filter, unknown_finding
from tui.ui.fleet_state import COLUMNS, STATUS_WIDTH, FleetState, HostState, sort_key
from tui.ui.footer_fit import FitFooter, fit_footer
from tui.ui.grouping import ATTRIBUTE_GROUPINGS, GROUPINGS, FindingGroup, group_by, marked_group
from tui.ui.messages import OpenHost, PendingRequested, ProbeRequested, UndoRequested
from tui.ui.screens.hosts_keys import HOSTS_BINDINGS
from tui.ui.widgets.fleet_summary import FleetSummary, summary_text
from tui.ui.widgets.fleet_table import FleetTable
from tui.ui.widgets.group_tree import ShortTree
from tui.ui.widgets.host_cells import cells
from tui.ui.widgets.host_detail import HostDetail, group_parts

DETAIL_DELAY_S = 0.06  # the detail pane follows the cursor when it rests this long
WIDE_LAYOUT = 150  # from this width the detail pane is beside the table, else under it
REASON_MIN_WIDTH = 20  # the Reason column takes the rest of the first screenful, at least this
AGE_REFRESH_S = 30.0  # how often "probed 3m ago" and stale marks are brought up to date


class HostsScreen(ExplainsDisabledKeys, Screen[None]):
    AUTO_FOCUS = "#hosts-table"
    BINDINGS: ClassVar[list[BindingType]] = HOSTS_BINDINGS

    class FleetFixRequested(Message):
        """Open the fleet fix for one finding group."""

        def __init__(self, group: FindingGroup) -> None:
            super().__init__()
            self.group = group

    sort_column: reactive[str] = reactive("host", init=False)
    sort_reverse: reactive[bool] = reactive(False, init=False)
    grouped: reactive[bool] = reactive(False, init=False)
    grouping: reactive[str] = reactive("finding", init=False)  # a key of GROUPINGS

    def __init__(self) -> None:
        super().__init__()
        self._terms: list[Term] = []
        self._return_to: object = None  # the group a fleet fix was opened on (its key)
        self._rows: tuple[str, ...] = ()
        self._shown: dict[str, HostState] = {}
        self._groups: tuple[FindingGroup, ...] = ()
        self._detail_state: HostState | None = None
        self._detail_timer: Timer | None = None
        self.marked: frozenset[str] = frozenset()

    def compose(self) -> ComposeResult:
        with Vertical(id="hosts-top"):
            yield FleetSummary(id="hosts-title")
            yield Input(
                placeholder="filter: words or key:value (tag: finding: gpu: sm: torch: nvcc:), "
                "-not, a|b, driver:<580",
                id="filter",
            )
            yield Static(id="filter-error")
            yield Static(id="no-match")
        with Container(id="hosts-body"):
            with ContentSwitcher(initial="hosts-table", id="hosts-switcher"):
                yield FleetTable(
                    self._columns(),
                    max_widths={"status": STATUS_WIDTH},
                    flex={"reason": REASON_MIN_WIDTH},
                    id="hosts-table",
                )
                yield ShortTree("findings", id="groups-tree")
            yield HostDetail(id="host-detail")
        yield FitFooter()

    def on_resize(self) -> None:
        fit_footer(self)
        self.set_class(self.size.width >= WIDE_LAYOUT, "-wide")

    def on_mount(self) -> None:
        self.query_one("#groups-tree", Tree).show_root = False
        for widget in ("#filter", "#filter-error", "#no-match"):
            self.query_one(widget).display = False
        self.query_one("#hosts-table", FleetTable).set_sort(self.sort_column, self.sort_reverse)
        self.watch(self.app, "fleet", self._fleet_changed)
        self.set_interval(AGE_REFRESH_S, self._refresh_ages)

    # -- data down --------------------------------------------------------------------------
    def _fleet_changed(self, fleet: FleetState) -> None:
        self._refresh_table(fleet)  # first: the title counts the rows shown
        self._refresh_title(fleet)
        if self.grouped:
            self._refresh_groups(fleet)
        self._refresh_detail()

    def _refresh_detail(self) -> None:
        """The pane shows the host under the cursor; redrawn only when its state changed."""
        pane = self.query_one(HostDetail)
        if not pane.display:
            return
        name = self.selected_host
        state = self.app.fleet.states.get(name) if name else None
        group = self.selected_group if self.grouped and state is None else None
        if group is not None:
            self._detail_state = None
            pane.show_parts(group_parts(group))
            return
        if state is self._detail_state and state is not None:
            return
        self._detail_state = state
        stale = getattr(getattr(self.app, "settings", None), "stale_minutes", 0)
        pane.show(state, self.app.clock(), stale)

    @on(FleetTable.CursorMoved, "#hosts-table")
    @on(Tree.NodeHighlighted, "#groups-tree")
    def _cursor_moved(self) -> None:
        """The pane follows the cursor once it rests (DETAIL_DELAY_S): a held arrow key
        moves the cursor at full speed and the pane is drawn once, for the row it stops on."""
        if self._detail_timer is not None:
            self._detail_timer.stop()
        self._detail_timer = self.set_timer(DETAIL_DELAY_S, self._refresh_detail)

    def action_toggle_detail(self) -> None:
        pane = self.query_one(HostDetail)
        pane.display = not pane.display
        self._detail_state = None
        self._refresh_detail()

    def _refresh_title(self, fleet: FleetState) -> None:
        self.query_one("#hosts-title", FleetSummary).text = summary_text(
            fleet,
            shown=len(self._rows) if self._terms else None,
            marked=len(self.marked),
            read_only=getattr(self.app, "read_only", False),
            grouped_by=GROUPINGS[self.grouping] if self.grouped else None,
        )

    def _visible(self, fleet: FleetState) -> tuple[str, ...]:
        states = [s for s in fleet if matches(s, self._terms)]
        states.sort(key=lambda s: sort_key(s, self.sort_column), reverse=self.sort_reverse)
        return tuple(s.name for s in states)

    def _columns(self) -> tuple[tuple[str, str], ...]:
        """The columns chosen (``columns`` in config.yaml, ``C``), Host first."""
        chosen = getattr(getattr(self.app, "settings", None), "columns", ())
        labels = dict(COLUMNS)
        return tuple((key, labels[key]) for key in shown_columns(chosen))

    def _cells(self, state: HostState) -> tuple[Text, ...]:
        stale = getattr(getattr(self.app, "settings", None), "stale_minutes", 0)
        keys = [key for key, _ in self.query_one("#hosts-table", FleetTable).columns]
        return cells(state, self.app.clock(), stale, keys)

    def action_choose_columns(self) -> None:
        from tui.ui.screens.columns import ColumnsScreen

        shown = tuple(key for key, _ in self.query_one("#hosts-table", FleetTable).columns)
        override = getattr(self.app, "columns_from", None)
        self.app.push_screen(ColumnsScreen(shown, override=override), self._columns_chosen)

    def _columns_chosen(self, columns: tuple[str, ...] | None) -> None:
        """Show the columns now, then save them (a file that cannot be written: this run)."""
        from tui.ui.screens.columns import save_columns

        if columns is None:
            return
        self.app.settings = replace(self.app.settings, columns=columns)
        self.query_one("#hosts-table", FleetTable).set_columns(self._columns())
        self._rows = ()
        self._refresh_table(self.app.fleet)
        message, ok = save_columns(columns, getattr(self.app, "columns_from", None))
        self.notify(message, title="Columns", severity="information" if ok else "error")

    def _refresh_table(self, fleet: FleetState) -> None:
        table = self.query_one("#hosts-table", FleetTable)
        rows = self._visible(fleet)
        if rows != self._rows:
            table.set_rows([(name, self._cells(fleet[name])) for name in rows])
            self._rows = rows
            self._shown = {n: fleet[n] for n in rows}
        else:
            for name in rows:
                state = fleet[name]
                if self._shown.get(name) is not state:
                    table.update_row(name, self._cells(state))
                    self._shown[name] = state
        self._show_no_match()

    def _refresh_ages(self) -> None:
        """ "probed 3m ago" and stale rows move with the clock, not only with the fleet."""
        table = self.query_one("#hosts-table", FleetTable)
        fleet = self.app.fleet
        for name in self._rows:
            if fleet[name].finished_at is not None:
                table.update_row(name, self._cells(fleet[name]))
        self._detail_state = None
        self._refresh_detail()

    def _show_no_match(self) -> None:
        box = self.query_one("#no-match", Static)
        empty = bool(self._terms) and not self._rows
        if box.display != empty:
            box.display = empty
        if empty:
            text = self.query_one("#filter", Input).value.strip()
            box.update(f"No host matches '{text}'. Esc clears the filter.")

    def _refresh_groups(self, fleet: FleetState) -> None:
        groups = group_by((s for s in fleet if s.name in self._rows), self.grouping)
        if groups == self._groups:
            return
        self._groups = groups
        self.query_one("#groups-tree", ShortTree).show_groups(groups)

    # -- selection ------------------------------------------------------------------------------
    @property
    def selected_host(self) -> str | None:
        if self.grouped:
            node = self.query_one("#groups-tree", Tree).cursor_node
            return node.data if node is not None and isinstance(node.data, str) else None
        return self.query_one("#hosts-table", FleetTable).cursor_name

    @on(FleetTable.RowSelected, "#hosts-table")
    def _row_selected(self, event: FleetTable.RowSelected) -> None:
        self.post_message(OpenHost(event.host))

    @on(Tree.NodeSelected, "#groups-tree")
    def _node_selected(self, event: Tree.NodeSelected) -> None:
        if isinstance(event.node.data, str):
            self.post_message(OpenHost(event.node.data))

    @on(FleetTable.HeaderClicked, "#hosts-table")
    def _header_clicked(self, event: FleetTable.HeaderClicked) -> None:
        column = event.column
        if column == self.sort_column:
            self.sort_reverse = not self.sort_reverse
        else:
            self.sort_column = column

    # -- actions --------------------------------------------------------------------------------
    # -- marks ----------------------------------------------------------------------------------
    def action_toggle_mark(self) -> None:
        names: tuple[str, ...] = ()
        if self.grouped:
            node = self.query_one("#groups-tree", Tree).cursor_node
            if node is not None and isinstance(node.data, FindingGroup):
                names = node.data.hosts
            elif node is not None and isinstance(node.data, str):
                names = (node.data,)
        elif self.selected_host is not None:
            names = (self.selected_host,)
        if not names:
            return
        if all(n in self.marked for n in names):
            self._set_marks(self.marked - set(names))
        else:
            self._set_marks(self.marked | set(names))
        if not self.grouped:
            self.query_one("#hosts-table", FleetTable).action_cursor(1)

    def action_clear_marks(self) -> None:
        self._set_marks(frozenset())

    def _set_marks(self, names: frozenset[str]) -> None:
        self.marked = names
        self.query_one("#hosts-table", FleetTable).set_marks(names)
        self._refresh_title(self.app.fleet)
        self.refresh_bindings()

    @property
    def marked_hosts(self) -> tuple[str, ...]:
        """The marked hosts in the fleet's order."""
        return tuple(n for n in self.app.fleet.order if n in self.marked)

    def action_copy(self) -> None:
        names = self.marked_hosts or ((self.selected_host,) if self.selected_host else ())
        text = self.app.host_report(names)
        if not text:
            self.notify("Nothing to copy yet: probe the host first (p).", severity="warning")
            return
        what = f"the report of {len(names)} hosts" if len(names) > 1 else f"{names[0]}'s report"
        self.app.copy_text(text, what)

    def action_undo(self) -> None:
        names = self.marked_hosts or ((self.selected_host,) if self.selected_host else ())
        if names:
            self.post_message(UndoRequested(names))

    def action_shell(self) -> None:
        if self.selected_host is not None:
            self.app.open_shell(self.selected_host)

    def action_explain(self) -> None:
        if self.selected_host is not None:
            self.app.open_explain(self.selected_host)

    def action_compare(self) -> None:
        from tui.ui.compare import NEED_TWO, open_comparison

        names = self.marked_hosts
        if len(names) != 2:
            self.notify(NEED_TWO, severity="warning")
            return
        open_comparison(self, self.app.fleet[names[0]].host, self.app.fleet[names[1]].host)

    def action_probe_selected(self) -> None:
        if self.marked:
            self.post_message(ProbeRequested(self.marked_hosts))
            return
        if self.grouped:
            node = self.query_one("#groups-tree", Tree).cursor_node
            if node is not None and isinstance(node.data, FindingGroup):
                self.post_message(ProbeRequested(node.data.hosts))
                return
        name = self.selected_host
        if name is None:
            self.notify("Select a host first.", severity="warning")
            return
        self.post_message(ProbeRequested((name,)))

    @property
    def selected_group(self) -> FindingGroup | None:
        """In the groups view: the group under the cursor, or the group of the host under it."""
        if not self.grouped:
            return None
        node = self.query_one("#groups-tree", Tree).cursor_node
        if node is not None and isinstance(node.data, str):
            node = node.parent
        return node.data if node is not None and isinstance(node.data, FindingGroup) else None

    def action_fleet_fix(self) -> None:
        if self.marked:
            marked = marked_group(self.app.fleet[n] for n in self.marked_hosts)
            if marked is None:
                self.notify("No marked host has a finding to fix.", severity="warning")
                return
            self.post_message(self.FleetFixRequested(marked))
            return
        group = self.selected_group
        if group is None:
            self.notify("Select a group first.", severity="warning")
            return
        self._return_to = group.key  # the groups change while it runs: come back to this one
        by, value = group.key[0], group.key[-1]
        if by in ATTRIBUTE_GROUPINGS:  # a GPU model, driver or tag group
            what = f"with {GROUPINGS[by]} {value}"
            shared = marked_group((self.app.fleet[n] for n in group.hosts), what)
            if shared is None:
                self.notify(f"No host {what} has a finding to fix.", severity="warning")
                return
            group = shared
        self.post_message(self.FleetFixRequested(group))

    def action_fix_host(self) -> None:
        """f on a host row: the fix wizard for the fix its top finding proposes first (the
        host screen offers the others)."""
        name = self.selected_host
        state = self.app.fleet.states.get(name) if name else None
        diagnosis = state.diagnosis if state is not None else None
        proposing = next((f for f in diagnosis.findings if f.fixes), None) if diagnosis else None
        if state is None or proposing is None:
            why = "not probed or not reached" if diagnosis is None else "no finding proposes one"
            self.notify(f"Nothing to fix on {name or 'this row'}: {why}.", severity="warning")
            return
        fix = proposing.fixes[0]
        self.app.request_fix(state.name, fix.id, dict(fix.params), proposing.python)

    def on_screen_resume(self) -> None:
        """Back from a fleet fix (its runs, restarts and undos regrouped the fleet meanwhile):
        the cursor goes back to the group that was fixed, where it still is, so the next f
        acts on it and not on whichever group the rebuilds left the cursor on."""
        key, self._return_to = self._return_to, None
        if key is None or not self.grouped:
            return
        tree = self.query_one("#groups-tree", ShortTree)
        groups = (n.data for n in tree.root.children)
        if any(isinstance(g, FindingGroup) and g.key == key for g in groups):
            tree.move_cursor_to_line(tree.line_of(key))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        read_only = getattr(self.app, "read_only", False)
        if action == "fleet_fix":
            return (self.grouped or bool(self.marked)) and not read_only
        if action == "fix_host":
            return not (self.grouped or self.marked or read_only)
        if action == "pending":
            return not read_only and any(s.pending is not None for s in self.app.fleet)
        if action in ("undo", "shell"):
            return not read_only
        return True

    def disabled_reason(self, action: str) -> str | None:
        changing = ("fleet_fix", "fix_host", "pending", "undo")
        if getattr(self.app, "read_only", False) and action in changing:
            return "Read-only mode (--read-only): fixes, restarts and undos are off."
        if getattr(self.app, "read_only", False) and action == "shell":
            return "Read-only mode (--read-only): no shell on a host."
        if action == "pending":
            return "No host has pending work (a restart or an unfinished fix)."
        return None

    def action_pending(self) -> None:
        name = self.selected_host
        state = self.app.fleet.states.get(name) if name else None
        if state is None or state.pending is None:
            waiting = [s.name for s in self.app.fleet if s.pending is not None]
            self.notify(
                f"{name or 'This host'} has no pending work; pending on: {', '.join(waiting)}.",
                severity="warning",
            )
            return
        self.post_message(PendingRequested(state.name))

    def action_probe_all(self) -> None:
        self.post_message(ProbeRequested(self._rows if self._terms else ()))

    def action_toggle_groups(self) -> None:
        self.grouped = not self.grouped

    def action_group_by(self) -> None:
        """The next grouping (finding → GPU model → driver → tag → finding); the groups view
        opens if the table was shown."""
        keys = list(GROUPINGS)
        self.grouping = keys[(keys.index(self.grouping) + 1) % len(keys)]
        self.grouped = True
        self.notify(f"Grouped by {GROUPINGS[self.grouping]} (b: the next)", timeout=2)

    def watch_grouping(self) -> None:
        if self.grouped:
            self._groups = ()
            self._refresh_groups(self.app.fleet)
            self._refresh_detail()
        self._refresh_title(self.app.fleet)

    def watch_grouped(self, grouped: bool) -> None:
        switcher = self.query_one("#hosts-switcher", ContentSwitcher)
        switcher.current = "groups-tree" if grouped else "hosts-table"
        if grouped:
            self._groups = ()
            self._refresh_groups(self.app.fleet)
        self._refresh_title(self.app.fleet)
        self._detail_state = None  # the pane shows the new view's row, not the old one's
        self._refresh_detail()
        self.query_one(f"#{switcher.current}").focus()
        self.refresh_bindings()

    def action_sort_next(self) -> None:
        """The next column shown (the first, when the sorted one was hidden)."""
        keys = [k for k, _ in self.query_one("#hosts-table", FleetTable).columns]
        at = keys.index(self.sort_column) if self.sort_column in keys else -1
        self.sort_column = keys[(at + 1) % len(keys)]

    def action_sort_reverse(self) -> None:
        self.sort_reverse = not self.sort_reverse

    def watch_sort_column(self) -> None:
        self._sorted()

    def watch_sort_reverse(self) -> None:
        self._sorted()

    def _sorted(self) -> None:
        order = ", reversed" if self.sort_reverse else ""
        self.notify(f"Sorted by {dict(COLUMNS)[self.sort_column]}{order}", timeout=2)
        self.query_one("#hosts-table", FleetTable).set_sort(self.sort_column, self.sort_reverse)
        self._refresh_table(self.app.fleet)

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        box.focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.value = ""
        box.display = False
        self.query_one("#hosts-table", FleetTable).focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        error = self.query_one("#filter-error", Static)
        try:
            terms = parse_filter(event.value)
        except FilterError as e:
            error.update(str(e))
            error.display = True
            return
        unknown = unknown_finding(terms, self.app.fleet)
        if unknown is not None:
            error.update(unknown)
            error.display = True
            return
        self._terms = terms
        error.display = False
        self._fleet_changed(self.app.fleet)

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self) -> None:
        target = "#groups-tree" if self.grouped else "#hosts-table"
        self.query_one(target).focus()
