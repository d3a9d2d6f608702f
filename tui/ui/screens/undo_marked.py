"""Undo the newest fix still in place on each marked host: per-host preview → ``a`` → results.

The plans come from ``tui.core.run.fleet.plan_undo_last`` (each host's own undo record; the
hosts that have one are probed), the run is a ``tui.core.run.fix_session.FixSession`` (a
record is set aside only where its undo applied, one failing host never stops the others), as
``fix a,b,c --undo last`` does.
Afterwards the hosts are probed again and their pending restarts noted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar, Literal

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Collapsible, DataTable, Footer, Static

from tui.core.hosts import Host
from tui.ui.messages import ProbeRequested, RunsFinished

if TYPE_CHECKING:
    from tui.core.run.fix_session import FixSession
    from tui.core.run.fleet import FleetItem, HostFixResult
    from tui.core.run.runner import Session

Stage = Literal["planning", "preview", "running", "done"]


class UndoPlanned(Message):
    def __init__(self, items: list[FleetItem]) -> None:
        super().__init__()
        self.items = items


class UndoDone(Message):
    def __init__(self, results: list[HostFixResult]) -> None:
        super().__init__()
        self.results = results


class UndoMarkedScreen(Screen[None]):
    DEFAULT_CSS = """
    #undo-status { height: auto; padding: 0 1; margin-bottom: 1; }
    #undo-preview { height: 1fr; padding: 0 1; }
    #undo-results { height: 1fr; display: none; }
    UndoMarkedScreen.-done #undo-results { display: block; }
    UndoMarkedScreen.-done #undo-preview { display: none; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "apply", "Undo on every host shown", id="undomarked.apply"),
        Binding("escape", "back", "Back", id="undomarked.back"),
    ]

    stage: reactive[Stage] = reactive("planning", init=False)

    def __init__(self, hosts: Sequence[Host], session: Session) -> None:
        super().__init__()
        self.hosts = tuple(hosts)
        self.session = session
        self.items: list[FleetItem] = []
        self.results: list[HostFixResult] = []

    def compose(self) -> ComposeResult:
        names = ", ".join(h.name for h in self.hosts)
        yield Static(Content.assemble(("Undo the newest fix on ", "bold"), names), id="undo-title")
        yield Static("Reading each host's undo records and probing them…", id="undo-status")
        yield VerticalScroll(id="undo-preview")
        yield DataTable(id="undo-results", cursor_type="row")
        yield Footer()

    def on_mount(self) -> None:
        self._plan()

    @work(exclusive=True, group="undo-marked-plan", exit_on_error=False)
    async def _plan(self) -> None:
        from tui.core.run.fleet import plan_undo_last

        self.post_message(UndoPlanned(await plan_undo_last(self.session, self.hosts)))

    def on_undo_planned(self, message: UndoPlanned) -> None:
        from tui.core.run.fix_render import preview_text

        self.items = message.items
        widgets = []
        for item in self.items:
            name = item.host.name
            if item.plan is None:
                widgets.append(Static(Content(f"{name}: {item.error}")))
                continue
            widgets.append(
                Collapsible(
                    Static(Content(preview_text(item.plan))),
                    title=f"{name}: {item.plan.fix_id.removeprefix('undo:')} "
                    f"({len(item.plan.steps)} step(s))",
                    collapsed=len(widgets) > 0,
                )
            )
        self.query_one("#undo-preview", VerticalScroll).mount_all(widgets)
        planned = sum(1 for i in self.items if i.plan is not None)
        self._status(
            f"Nothing has run yet. Press a to undo on {planned} host(s); Esc goes back."
            if planned
            else "Nothing to undo on these hosts (reasons below). Esc goes back."
        )
        self.stage = "preview"
        self.refresh_bindings()

    def _status(self, text: str) -> None:
        self.query_one("#undo-status", Static).update(Content(text))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "apply":
            return self.stage == "preview" and any(i.plan is not None for i in self.items)
        if action == "back":
            return self.stage != "running"
        return True

    def action_apply(self) -> None:
        if not self.check_action("apply", ()):
            return
        from tui.core.run.fix_session import FixSession, Rollout

        concurrency = getattr(getattr(self.app, "settings", None), "concurrency", 8)
        run = FixSession(self.session, self.items, kind="undo", rollout=Rollout(concurrency))
        run.decide("yes")  # one decision per host, each naming its record
        self.stage = "running"
        self.refresh_bindings()
        self._status("Undoing… every command and its output goes to the session transcript.")
        self._run(run)

    @work(exclusive=True, group="undo-marked-run", exit_on_error=False)
    async def _run(self, run: FixSession) -> None:
        self.post_message(UndoDone(await run.apply()))

    def on_undo_done(self, message: UndoDone) -> None:
        self.results = message.results
        table = self.query_one("#undo-results", DataTable)
        table.add_column("Host", key="host")
        table.add_column("Result", key="result")
        table.add_column("Detail", key="detail")
        for r in self.results:
            table.add_row(Text(r.item.host.name, style="bold"), r.status, r.detail)
        counts: dict[str, int] = {}
        for r in self.results:
            counts[r.status] = counts.get(r.status, 0) + 1
        summary = ", ".join(f"{n} {word}" for word, n in counts.items())
        self._status(f"Undo: {summary}. The hosts are being probed again; Esc returns.")
        self.stage = "done"
        self.set_class(True, "-done")
        self.refresh_bindings()
        ran = tuple(r.item.host.name for r in self.results if r.item.plan is not None)
        self.post_message(RunsFinished(tuple((r.item.host.name, r.outcome) for r in self.results)))
        if ran:
            self.post_message(ProbeRequested(ran))

    def action_back(self) -> None:
        if self.stage != "running":
            self.dismiss()
