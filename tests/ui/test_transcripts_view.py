"""The transcripts screen: sessions listed by time, size and what was run; events as readable
lines, filtered by host and kind; enter shows one event whole."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, Log, OptionList

from tui.ui.screens.transcripts import EventScreen, TranscriptsScreen
from tui.ui.widgets.event_list import EventList

from .conftest import demo_subset, make_app, probe_all, settle


async def test_events_read_as_lines_and_filter(demo_cache: Path) -> None:
    """ct200 and ct201 (the two ct2… hosts), a healthy one and the unreachable one."""
    app = make_app(demo_subset(demo_cache, ("ct200", "ct201", "h100-node", "gone-dark")))
    async with app.run_test(size=(120, 36)) as pilot:
        await probe_all(pilot)
        await pilot.press("t")
        await settle(pilot, lambda: isinstance(app.screen, TranscriptsScreen))
        screen = app.screen
        await settle(pilot, lambda: screen.index is not None)
        first = str(screen.query_one("#sessions", OptionList).get_option_at_index(0).prompt)
        assert first.startswith("● ") and " KB · " in first  # when, how big, what was run
        events = screen.query_one(EventList)
        assert len(events.rows) == len(screen.index) > 10
        lines = [events.render_line(y).text for y in range(len(events.rows))]
        command = next(ln for ln in lines if "ct200" in ln and "command" in ln)
        assert "command probe · exit 0 ·" in command and "script_sha256" not in command

        await pilot.press("slash")
        box = screen.query_one("#event-filter", Input)
        assert box.has_focus
        await pilot.press(*"host:ct200 kind:command")
        await pilot.pause()
        assert len(events.rows) == 1
        assert screen.index.refs[events.rows[0]].host == "ct200"
        await pilot.press("enter")  # to the list
        assert events.has_focus
        await pilot.press("enter")  # the event, whole
        await settle(pilot, lambda: isinstance(app.screen, EventScreen))
        body = app.screen.query_one(Log)
        text = "\n".join(str(body.lines[i]) for i in range(body.line_count))
        assert "── command ──" in text and "── output ──" in text
        assert "target: demo (simulated)" in text
        await pilot.press("escape")
        assert isinstance(app.screen, TranscriptsScreen)
        assert isinstance(app.screen, TranscriptsScreen)
        await pilot.press("y")  # the selected event, whole
        assert app.clipboard.startswith("command at ") and "── output ──" in app.clipboard

        await pilot.press("slash")
        box.value = "kind:diag host:ct2"  # by substring, as the hosts filter
        await pilot.pause()
        kinds = {screen.index.refs[i].kind for i in events.rows}
        hosts = {screen.index.refs[i].host for i in events.rows}
        assert kinds == {"diagnosis"} and hosts == {"ct200", "ct201"}
        lines = [events.render_line(y).text for y in range(len(events.rows))]
        assert all("diagnosis · critical: " in ln and "{" not in ln for ln in lines), lines


async def test_kinds_read_whole_at_80_columns(tmp_path) -> None:
    """At 80 columns the sessions go above the events, which get the whole width: a fix
    journal's kind, fix, state and step are read, not cut (`fix-jour`); `y` in an event's
    own view copies it."""
    from tui.core import locations
    from tui.core.records.transcript import Transcript

    with Transcript.open_session() as tr:
        tr.record(
            "fix-journal",
            host="ct200",
            fix="set-flashinfer-arch-list",
            record="20260102-030405-set-flashinfer-arch-list",
            path=str(tmp_path / "record.json"),
            state="running",
            step=1,
            status="started",
            title="Set FLASHINFER_CUDA_ARCH_LIST for sglang.service",
            may_change=True,
        )
        tr.record("diagnosis", host="ct200", findings=[{"id": "x-y", "severity": "critical"}])
    app = make_app(())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("t")
        await settle(pilot, lambda: isinstance(app.screen, TranscriptsScreen))
        screen = app.screen
        mine = next(i for i, p in enumerate(screen._paths) if p == tr.path)  # not the app's own
        screen.query_one("#sessions", OptionList).highlighted = mine
        await settle(pilot, lambda: screen.index is not None and screen.index.path == tr.path)
        events = screen.query_one(EventList)
        assert screen.has_class("-narrow") and events.size.width >= 78
        lines = [events.render_line(y).text.rstrip() for y in range(len(events.rows))]
        assert "ct200  fix journal · set-flashinfer-arch-list · running · step 1 start" in lines[1]
        assert lines[2].endswith("diagnosis · critical: x-y")
        events.focus()
        events.cursor = 1
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, EventScreen))
        await pilot.press("y")
        assert app.clipboard.startswith("fix-journal at ") and "state: running" in app.clipboard
        kept = (locations.state_dir() / "clipboard.txt").read_text()
        assert kept == app.clipboard + "\n"
        await pilot.press("escape")
    async with make_app(()).run_test(size=(160, 40)) as pilot:  # wide: side by side
        await pilot.press("t")
        await settle(pilot, lambda: isinstance(pilot.app.screen, TranscriptsScreen))
        assert not pilot.app.screen.has_class("-narrow")
