"""The Textual app: owns the fleet state and the runner session; screens show, workers fetch.

Data flows down: ``DetectiveApp.fleet`` (an immutable ``FleetState``) is watched by the screens.
Events flow up: screens post ``ProbeRequested`` / ``OpenHost`` / ``FixRequested`` …; workers
(``exit_on_error=False``) post ``ProbeFinished`` / ``ValidationFinished``; one
``Worker.StateChanged`` handler turns any worker error into one readable message.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.worker import Worker, WorkerState

from tui.core import durable, locations
from tui.core.hosts import Host
from tui.core.records.decision import Decision, record_decision
from tui.core.redact import redact_text
from tui.ui.config import (
    Settings,
    config_path,
    save_theme,
)
from tui.ui.control.fixing import FixControl
from tui.ui.control.hostkeys import HostKeyControl
from tui.ui.control.probing import ProbeControl
from tui.ui.fleet_state import FleetState, HostState
from tui.ui.grouping import group_by_finding
from tui.ui.messages import (
    OpenHost,
)
from tui.ui.palette import FleetCommands
from tui.ui.screens.confirm import ConfirmScreen
from tui.ui.screens.help import HelpScreen
from tui.ui.screens.host import READ_ONLY_HIDDEN, HostScreen
from tui.ui.screens.hosts import HostsScreen
from tui.ui.screens.hosts_keys import READ_ONLY_BINDINGS
from tui.ui.screens.message import MessageScreen
from tui.ui.screens.reprobe import ReprobeScreen, save_interval
from tui.ui.screens.transcripts import TranscriptsScreen
from tui.ui.widgets.fleet_table import FleetTable
from tui.ui.widgets.list_keys import CURSOR_HELP, SIDEWAYS_HELP

if TYPE_CHECKING:
    from tui.core.run.runner import Session

SessionFactory = Callable[[], "Session"]  # entered on mount, left on unmount

# The runner, diagnosis, report, fix and validation modules are imported where first used:
# the hosts table paints before asyncssh and the rule tables are loaded.

INVENTORY_NOTICE = "Bad inventory entries:"  # a notice that starts so is shown as an error

# the hosts table's own key worth listing in the help (its cursor keys are the usual ones)
TABLE_KEYS = (
    *(b for b in FleetTable.BINDINGS if isinstance(b, Binding) and b.key == "enter"),
    CURSOR_HELP,
    SIDEWAYS_HELP,
)

# worker groups that change hosts (fix wizard: fix, undo, restart; fleet fix screen: the same)
CHANGING_GROUPS = ("fix", "fleet-fix")


def _default_session() -> Session:
    from tui.core.records.transcript import Transcript
    from tui.core.run.runner import Session

    return Session(transcript=Transcript.open_session())


class DetectiveApp(ProbeControl, HostKeyControl, FixControl, App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "detective-tui"
    COMMANDS = App.COMMANDS | {FleetCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "question_mark", "help", "Help", id="app.help", tooltip="Every key on every screen"
        ),
        Binding(
            "ctrl+s",
            "save_session",
            "Save session",
            id="app.save",
            tooltip="Export this session: Markdown report + JSONL",
            show=False,
        ),
        Binding(
            "t",
            "transcripts",
            "Transcripts",
            id="app.transcripts",
            tooltip="Past sessions",
            show=False,
        ),
        Binding(
            "ctrl+t", "change_theme", "Theme", id="app.theme", show=False, tooltip="Pick a theme"
        ),
        Binding(
            "ctrl+r",
            "set_reprobe",
            "Re-probe interval",
            id="app.reprobe",
            show=False,
            tooltip="Probe every host again every N minutes (reprobe_minutes, saved)",
        ),
        Binding("q", "quit", "Quit", id="app.quit", tooltip="Quit detective-tui"),
    ]

    # No repaint: the screens watch it and refresh what changed (a repaint of the app is a
    # full-screen render, ~25 ms, on every flush).
    fleet: reactive[FleetState] = reactive(
        FleetState, init=False, always_update=False, repaint=False
    )

    def __init__(
        self,
        hosts: Sequence[Host],
        *,
        read_only: bool = False,
        settings: Settings | None = None,
        session_factory: SessionFactory = _default_session,
        clock: Callable[[], datetime] = datetime.now,
        notice: str | None = None,
        probe_on_start: bool = False,
        reprobe_s: float = 0.0,
        reprobe_from: str | None = None,
        columns_from: str | None = None,
        captured: bool = False,
    ) -> None:
        """``probe_on_start``: probe every host as soon as the table is shown;
        ``reprobe_s``: probe every host again this often (0: never); ``reprobe_from``,
        ``columns_from``: the flag or variable that set it (the hosts table's columns) for this
        run (None: the config file)."""
        super().__init__()
        self.probe_on_start = probe_on_start
        self.captured = captured  # --ingest: the hosts are captured output, never reached
        self.reprobe_s = reprobe_s
        self.reprobe_from = reprobe_from
        self.columns_from = columns_from
        self._reprobe_timer: Timer | None = None
        self.settings = settings or Settings()
        self.read_only = read_only
        self.clock = clock
        self.notice = notice
        self._session_factory = session_factory
        self._session: Session | None = None
        self._hosts = {h.name: h for h in hosts}
        self._output: dict[str, list[str]] = {h.name: [] for h in hosts}
        self._pending: dict[str, HostState] = {}
        self._finished: dict[str, HostState] = {}
        self._flush_scheduled = False
        self._slots = asyncio.Semaphore(self.settings.concurrency)
        self._key_prompts: list[HostState] = []
        self._notes_said: set[str] = set()  # what went wrong beside probes, said once each
        self._prompting = False
        self._quitting = False
        self.set_reactive(DetectiveApp.fleet, FleetState.of(hosts))
        if self.settings.theme in self.available_themes:
            self.theme = self.settings.theme
        else:
            known = ", ".join(sorted(self.available_themes))
            self.notice = (
                f"Unknown theme {self.settings.theme!r} in {config_path()}; known: {known}"
            )
            self.settings = replace(self.settings, theme=self.theme)

    # -- lifecycle ----------------------------------------------------------------------------
    async def on_mount(self) -> None:
        self._session = self._session_factory()
        await self._session.__aenter__()
        await self.push_screen(HostsScreen())
        # What exists now (modules, Textual, the hosts) lives as long as the app: out of the
        # full collections, which otherwise walk it for 20-70 ms mid-probe (a missed key).
        gc.freeze()
        if self.notice:
            bad = self.notice.startswith(INVENTORY_NOTICE)
            self.notify(
                self.notice,
                title="Inventory" if bad else "Welcome",
                severity="error" if bad else "information",
                timeout=20 if bad else 8,
            )
        if not self.read_only:
            self.run_worker(
                self._find_unfinished(), name="journal check", group="journal", exit_on_error=False
            )
        self.run_worker(
            self._read_journal(), name="pending work", group="pending", exit_on_error=False
        )
        if self.probe_on_start:
            self.request_probe(())
        if self.reprobe_s > 0:
            self._reprobe_timer = self.set_interval(self.reprobe_s, self._reprobe)

    @property
    def session(self) -> Session:
        """The runner session every worker uses (started on mount, closed on unmount)."""
        if self._session is None:
            raise RuntimeError("the app's session starts when the app is mounted")
        return self._session

    def _reprobe(self) -> None:
        """The periodic re-probe: every host not being probed already."""
        self.request_probe(self.fleet.order)

    def action_set_reprobe(self) -> None:
        minutes = round(self.reprobe_s / 60)
        screen = ReprobeScreen(minutes, path=str(config_path()), override=self.reprobe_from)
        self.push_screen(screen, self._reprobe_chosen)

    def _reprobe_chosen(self, minutes: int | None) -> None:
        """Apply the interval now (a new timer from now on), then save it."""
        if minutes is None:
            return
        if self._reprobe_timer is not None:
            self._reprobe_timer.stop()
            self._reprobe_timer = None
        self.reprobe_s = minutes * 60.0
        if minutes:
            self._reprobe_timer = self.set_interval(self.reprobe_s, self._reprobe)
        self.settings = replace(self.settings, reprobe_minutes=minutes)
        message, ok = save_interval(minutes, self.reprobe_from)
        self.notify(message, title="Re-probe interval", severity="information" if ok else "error")

    async def on_unmount(self) -> None:
        if self._session is not None:
            await self._session.__aexit__(None, None, None)

    def watch_theme(self, theme: str) -> None:
        if theme != self.settings.theme:
            self.settings = replace(self.settings, theme=theme)
            save_theme(theme)

    # -- quitting with a fix in flight ----------------------------------------------------------
    def _changing_workers(self) -> list[Worker]:
        return [w for w in self.workers if w.group in CHANGING_GROUPS and not w.is_finished]

    async def action_quit(self) -> None:
        """Quit; with a fix, undo or restart in flight, ask first. On yes, the running step
        finishes (under its deadline), the rest is journaled as not started, then the app
        exits."""
        busy = self._changing_workers()
        if not busy:
            self.exit()
            return
        if self._quitting:
            self.notify("Quitting once the current step ends…", timeout=4)
            return
        self.push_screen(
            ConfirmScreen(
                "Quit while a fix runs?",
                self._quit_body(),
                yes="Quit after this step",
                no="Stay",
                live_body=self._quit_body,
            ),
            self._quit_decided,
        )

    def _quit_body(self) -> str:
        """What the quit dialog says, as things stand now (it is asked again while open)."""
        running = dict(self.session.fixes.running)
        if not self._changing_workers():
            return "The fix has finished: nothing changes hosts now. Quitting is safe."
        doing = "\n".join(f"  {host}: {what}" for host, what in running.items()) or (
            "  (starting or ending)"
        )
        return (
            "A fix is changing hosts right now:\n"
            f"{doing}\n\n"
            "Quit: each running step finishes (up to its deadline), the steps after it are "
            "recorded as not started, and the journal keeps what changed, so "
            "`detective-tui fix HOST --history` and `--undo last` work from there."
        )

    def _quit_decided(self, yes: bool | None) -> None:
        running = dict(self.session.fixes.running)
        answer = "yes" if yes else "no"
        quit_ = Decision("quit", answer, hosts=tuple(running), details={"running": running})
        record_decision(self.session, quit_)
        if not yes:
            return
        self._quitting = True
        self.session.fixes.request_stop()
        self.notify("Quitting once the current step ends…", timeout=10)
        self.run_worker(self._quit_after_fixes(), name="quit", group="quit", exit_on_error=False)

    async def _quit_after_fixes(self) -> None:
        while busy := self._changing_workers():
            for worker in busy:
                with contextlib.suppress(Exception):
                    await worker.wait()
        self.exit()

    # -- navigation -----------------------------------------------------------------------------
    def open_host(self, name: str, finding_id: str | None = None) -> None:
        if name not in self._hosts:
            return
        screen = self.screen
        if not (isinstance(screen, HostScreen) and screen.host_name == name):
            while isinstance(self.screen, HostScreen):
                self.pop_screen()
            screen = HostScreen(name)
            self.push_screen(screen)
        if finding_id is not None:
            self.call_after_refresh(screen.select_finding, finding_id)

    @on(OpenHost)
    def _on_open_host(self, message: OpenHost) -> None:
        self.open_host(message.name)

    def action_help(self) -> None:
        from tui.ui.screens.fix_wizard import APP_KEYS_AGAIN, FixWizardScreen
        from tui.ui.screens.fleet_fix import FleetFixScreen

        hidden = READ_ONLY_HIDDEN | READ_ONLY_BINDINGS if self.read_only else frozenset()
        changes = (
            ()
            if self.read_only
            else (
                ("Fix wizard", [b for b in FixWizardScreen.BINDINGS if b not in APP_KEYS_AGAIN]),
                ("Fleet fix", FleetFixScreen.BINDINGS),
            )
        )
        sections = [
            ("Everywhere", self.BINDINGS),
            ("Hosts", [*HostsScreen.BINDINGS, *TABLE_KEYS]),
            ("Host", HostScreen.BINDINGS),
            *changes,
            ("Transcripts", TranscriptsScreen.BINDINGS),
        ]
        screens = {
            HostsScreen: "Hosts",
            HostScreen: "Host",
            FixWizardScreen: "Fix wizard",
            FleetFixScreen: "Fleet fix",
            TranscriptsScreen: "Transcripts",
        }
        here = screens.get(type(self.screen))
        # the keys of the screen it was opened on first, then the others
        sections.sort(key=lambda s: s[0] != here)
        self.push_screen(HelpScreen(sections, hidden))

    def action_transcripts(self) -> None:
        self.push_screen(TranscriptsScreen(self.transcript_path))

    @property
    def transcript_path(self) -> Path | None:
        transcript = self._session.transcript if self._session is not None else None
        return transcript.path if transcript is not None else None

    def get_system_commands(self, screen: Screen) -> Any:
        # Textual's own Quit and Theme are our q and ctrl+t, listed with their keys
        ours = {b.description for b in self.BINDINGS if isinstance(b, Binding)}
        yield from (c for c in super().get_system_commands(screen) if c.title not in ours)
        if self.read_only:
            return
        for group in group_by_finding(self.fleet):
            if group.finding_id is not None:
                yield SystemCommand(
                    f"Fix every host in group: {group.label}",
                    f"One fix for {group.finding_id} on {', '.join(group.hosts)}: preview, "
                    "confirm, per-host results",
                    partial(self.open_fleet_fix, group),
                )

    # -- copy and shell ---------------------------------------------------------------------------
    def copy_text(self, text: str, what: str) -> None:
        """Copy to the terminal's clipboard (OSC 52: works over SSH too, where the terminal
        allows it). No terminal says whether it did, so the text is also kept in a file,
        named in the notification, for a terminal that refuses OSC 52."""
        text = redact_text(text)
        self.copy_to_clipboard(text)
        lines = text.count("\n") + 1
        kept = locations.state_dir() / "clipboard.txt"
        try:
            kept.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(kept, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text + "\n")
        except OSError as exc:
            also = f" (it could not be kept in {kept} as well: {exc.strerror})"
        else:
            also = f"; if your terminal refuses OSC 52, it is also in {kept}"
        self.notify(
            f"Sent {what} to the clipboard ({lines} line{'s' if lines > 1 else ''}){also}.",
            timeout=6,
        )

    def host_report(self, names: Sequence[str]) -> str:
        """The Markdown report of these hosts (their last probe), for the clipboard."""
        from tui.core.records.report import markdown_report

        results = [
            (self.fleet[n].result, self.fleet[n].diagnosis)
            for n in names
            if n in self._hosts and self.fleet[n].result is not None
        ]
        return markdown_report(results, now=self.clock()) if results else ""

    def open_explain(self, name: str) -> None:
        """The explain box for one host: paste an error, see its cause on that host."""
        from tui.ui.screens.explain import ExplainScreen

        if name in self._hosts:
            self.push_screen(ExplainScreen(self.fleet[name]))

    def open_shell(self, name: str) -> None:
        """Hand the terminal to an SSH session on the host (a shell for local and demo
        hosts); the TUI comes back when it exits."""
        from textual.app import SuspendNotSupported

        from tui.core.reach.shell_command import NoShell, run_session, shell_command

        if self.read_only:  # a shell can change anything on the host
            self.notify("Read-only mode (--read-only): no shell on a host.", severity="warning")
            return
        try:
            command = shell_command(self._hosts[name])
        except (NoShell, ValueError) as exc:
            self.notify(f"No session to open: {exc}", severity="warning")
            return
        self.session.record("shell", host=name, command=command.line)
        try:
            with self.suspend():
                print(f"detective-tui: {command.note}; exit it to come back.", flush=True)
                end = run_session(command)
        except SuspendNotSupported:
            self.notify(
                f"This terminal cannot be handed over; run it yourself: {command.line}",
                severity="warning",
                timeout=10,
            )
        except OSError as exc:
            self.notify(f"Could not start {command.argv[0]}: {exc.strerror}", severity="error")
        else:
            self.session.record(
                "shell-end", host=name, exit_status=end.exit_status, error=end.message
            )
            if end.failed:
                why = f": {redact_text(end.message)}" if end.message else ""
                self.notify(
                    f"The session on {name} ended with exit status {end.exit_status}{why}",
                    severity="error" if end.message else "warning",
                    timeout=15,
                )

    # -- session export -------------------------------------------------------------------------
    def action_save_session(self) -> None:
        self.run_worker(
            self._save_session(), name="save session", group="save", exit_on_error=False
        )

    async def _save_session(self) -> None:
        from tui.core.records.report import markdown_report

        marked = next((s.marked for s in self.screen_stack if isinstance(s, HostsScreen)), None)
        results = [
            (s.result, s.diagnosis)
            for s in self.fleet
            if s.result is not None and (not marked or s.name in marked)
        ]
        if not results:
            self.notify("Nothing to save yet: probe some hosts first (P).", severity="warning")
            return
        stamp = self.clock().strftime("%Y%m%dT%H%M%S")
        out_dir = locations.state_dir() / "exports"
        report = out_dir / f"{stamp}-report.md"
        jsonl = out_dir / f"{stamp}-session.jsonl"

        now = self.clock()

        def write() -> None:
            from tui.core.records.transcript import read_events

            path = self.transcript_path
            actions = read_events(path) if path is not None else []
            text = markdown_report(results, actions=actions, now=now)
            durable.write_private(report, text.encode())
            if path is not None:
                durable.write_private(jsonl, path.read_bytes())

        await asyncio.to_thread(write)
        self.session.record("session-export", report=str(report), jsonl=str(jsonl))
        which = f"the {len(results)} marked hosts" if marked else f"{len(results)} hosts"
        lines = [f"Report on {which} (Markdown, pastes into an issue):\n  {report}"]
        if self.transcript_path is not None:
            lines.append(f"Transcript (every command and result, JSONL):\n  {jsonl}")
        self.push_screen(MessageScreen("Session saved", "\n\n".join(lines), severity="success"))

    # -- the one error handler --------------------------------------------------------------------
    @on(Worker.StateChanged)
    def _on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.ERROR:
            return
        worker = event.worker
        error = worker.error
        text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        text = redact_text(text)
        if worker.group == "probe":
            name = worker.name.removeprefix("probe ")
            if name in self._hosts:
                self._pending.pop(name, None)
                self.fleet = self.fleet.updated(replace(self.fleet[name], status="probe-failed"))
            self.notify(f"{worker.name} failed: {text}", severity="error", timeout=10)
            return
        self.push_screen(MessageScreen(f"{worker.name.capitalize()} failed", text))
