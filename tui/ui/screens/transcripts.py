"""Past sessions: pick one on the left (when, how big, what was run); its events on the right
as readable lines (time, host, what, exit status, duration), filtered by host and kind;
enter opens an event whole (its command, script and output).

A session is indexed, not parsed (``tui.core.records.transcript_index``): a 10 MB session opens in a
fraction of a second and only the rows on screen are decoded.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, Log, OptionList, Static
from textual.widgets.option_list import Option

from tui.core.records import transcript
from tui.core.records.transcript import TranscriptError
from tui.core.records.transcript_index import TranscriptIndex, details, session_label
from tui.ui.footer_fit import FitFooter, fit_footer
from tui.ui.widgets.event_list import EventList

FILTER_KEYS = ("host", "kind")
NARROW_WIDTH = 120


def parse_event_filter(text: str) -> tuple[str | None, str | None, list[str]]:
    """``host:ct200 kind:command word`` → (host, kind, [words]); each matches a host or a
    kind by substring."""
    host = kind = None
    words = []
    for word in text.split():
        key, sep, value = word.partition(":")
        if sep and key == "host":
            host = value
        elif sep and key == "kind":
            kind = value
        else:
            words.append(word.lower())
    return host, kind, words


class EventScreen(ModalScreen[None]):
    """One event, whole."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,enter,q", "close", "Close", id="event.close"),
        Binding("y", "copy", "Copy", id="event.copy", tooltip="Copy this event, whole"),
    ]
    DEFAULT_CSS = """
    EventScreen #dialog { height: 100%; max-height: 100%; width: 100%; max-width: 140; }
    EventScreen Log { height: 1fr; }
    """

    def __init__(self, title: str, lines: list[str]) -> None:
        super().__init__()
        self.title_text = title
        self.lines = lines

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Content.styled(self.title_text, "bold"), classes="dialog-title")
            yield Log(id="event-body", highlight=False)

    def on_mount(self) -> None:
        log = self.query_one(Log)
        log.write_lines(self.lines)
        log.scroll_home(animate=False)
        log.focus()

    def action_close(self) -> None:
        self.dismiss(None)

    def action_copy(self) -> None:
        text = "\n".join(self.lines)
        self.app.copy_text(text, f"the event ({self.title_text})")  # type: ignore[attr-defined]


class TranscriptsScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="transcripts.back"),
        Binding(
            "slash",
            "filter",
            "Filter",
            id="transcripts.filter",
            tooltip="Filter the events: host:NAME kind:KIND (command, probe, decision, …)",
        ),
        Binding("tab", "app.focus_next", "Next pane", show=False),
        Binding(
            "y", "copy", "Copy", id="transcripts.copy", tooltip="Copy the selected event, whole"
        ),
    ]
    DEFAULT_CSS = """
    TranscriptsScreen #sessions { width: 40%; min-width: 42; max-width: 52; height: 1fr; }
    TranscriptsScreen #events-pane { height: 1fr; }
    TranscriptsScreen #events { height: 1fr; }
    TranscriptsScreen #events-title { height: 1; padding: 0 1; color: $text-muted; }
    TranscriptsScreen #event-filter { display: none; }
    TranscriptsScreen #event-filter.-shown { display: block; }
    TranscriptsScreen.-narrow #transcripts-body { layout: vertical; }
    TranscriptsScreen.-narrow #sessions {
        width: 100%; max-width: 100%; height: auto; max-height: 6;
    }
    """

    def __init__(self, current: Path | None = None) -> None:
        super().__init__()
        self.current = current
        self._paths: list[Path] = []
        self.index: TranscriptIndex | None = None

    def compose(self) -> ComposeResult:
        yield Static(
            "Sessions (newest first, ● now, UTC) · tab: events · enter: one whole",
            id="transcripts-title",
        )
        with Horizontal(id="transcripts-body"):
            yield OptionList(id="sessions")
            with Vertical(id="events-pane"):
                yield Static(id="events-title")
                yield Input(
                    placeholder="host:NAME kind:KIND (command, probe, decision, fix-outcome…)",
                    id="event-filter",
                )
                yield EventList(id="events")
        yield FitFooter()

    def on_resize(self) -> None:
        fit_footer(self)
        # below this the sessions go above the events, which get the whole width: their
        # kinds (fix-journal, diagnosis) and what they did are read, not cut
        self.set_class(self.size.width < NARROW_WIDTH, "-narrow")

    def on_mount(self) -> None:
        self._paths = transcript.list_sessions()
        options = self.query_one("#sessions", OptionList)
        options.add_options(
            Option(("● " if p == self.current else "  ") + session_label(p), id=str(i))
            for i, p in enumerate(self._paths)
        )
        if not self._paths:
            self._title("No sessions recorded yet.")
        else:
            options.highlighted = 0
        options.focus()

    def _title(self, text: str) -> None:
        self.query_one("#events-title", Static).update(Content(text))

    @on(OptionList.OptionHighlighted, "#sessions")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._open(self._paths[event.option_index])

    @work(exclusive=True, group="transcript-view", exit_on_error=False)
    async def _open(self, path: Path) -> None:
        self._title(f"Reading {path.name}…")
        try:
            index = await asyncio.to_thread(TranscriptIndex.open, path)
        except TranscriptError as exc:
            self.index = None
            self.query_one(EventList).show(None, ())
            self._title(str(exc))
            return
        self.index = index
        self._apply_filter()

    def _apply_filter(self) -> None:
        index = self.index
        if index is None:
            return
        host, kind, words = parse_event_filter(self.query_one("#event-filter", Input).value)
        # by substring, as the hosts filter matches (host:ct2, kind:fix)
        rows = tuple(
            i
            for i, r in enumerate(index.refs)
            if (host is None or host.lower() in (r.host or "").lower())
            and (kind is None or kind.lower() in r.kind)
        )
        if words:
            rows = tuple(
                i
                for i in rows
                if all(
                    w in (index.refs[i].host or "").lower() or w in index.refs[i].kind
                    for w in words
                )
            )
        self.query_one(EventList).show(index, rows)
        shown = f"{len(rows)} of {len(index)}" if len(rows) != len(index) else str(len(index))
        hosts = ", ".join(index.hosts) or "none"
        self._title(f"{index.path.name}: {shown} events · hosts: {hosts}")

    @on(Input.Changed, "#event-filter")
    def _filter_changed(self) -> None:
        self._apply_filter()

    @on(Input.Submitted, "#event-filter")
    def _filter_submitted(self) -> None:
        self.query_one(EventList).focus()

    @on(EventList.Selected)
    def _event_selected(self, message: EventList.Selected) -> None:
        if self.index is None:
            return
        event = self.index.event(message.index)
        ref = self.index.refs[message.index]
        title = f"{ref.kind} · {ref.host or 'no host'} · {ref.ts}"
        self.app.push_screen(EventScreen(title, details(event, self.index)))

    def action_copy(self) -> None:
        chosen = self.query_one(EventList).selected if self.index is not None else None
        if self.index is None or chosen is None:
            self.notify("No event selected: pick a session, then an event.", severity="warning")
            return
        ref = self.index.refs[chosen]
        text = "\n".join(details(self.index.event(chosen), self.index))
        self.app.copy_text(text, f"the {ref.kind} event")  # type: ignore[attr-defined]

    def action_filter(self) -> None:
        box = self.query_one("#event-filter", Input)
        box.add_class("-shown")
        box.focus()

    def action_back(self) -> None:
        box = self.query_one("#event-filter", Input)
        if box.has_focus:
            box.value = ""
            box.remove_class("-shown")
            self.query_one(EventList).focus()
            return
        self.dismiss()
