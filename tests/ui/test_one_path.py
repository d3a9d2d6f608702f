"""One path from probe to verdict: the TUI's probe worker and ``detective-tui diagnose`` go
through ``tui.core.run.service``, so a host's transcript events are the same from either."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tui.cli import main
from tui.core import locations
from tui.core.hosts import Host
from tui.core.records.transcript import read_events

from .conftest import make_app, probe_all

HOST = "ct201"


def _host_events(path: Path) -> list[dict[str, Any]]:
    return [e for e in read_events(path) if e.get("host") == HOST]


async def _cli_events(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, state: Path
) -> list[dict[str, Any]]:
    monkeypatch.setenv("XDG_STATE_HOME", str(state))  # its own session file, whatever the second
    code = await asyncio.to_thread(main, ["diagnose", HOST, "--demo", "--json"])
    assert code == 1  # critical findings
    capsys.readouterr()
    (path,) = locations.sessions_dir().glob("*.jsonl")
    return _host_events(path)


async def _tui_events(hosts: tuple[Host, ...]) -> list[dict[str, Any]]:
    app = make_app([h for h in hosts if h.name == HOST])
    async with app.run_test(size=(120, 40)) as pilot:
        await probe_all(pilot)
        path = app.transcript_path
        assert app.fleet[HOST].diagnosis is not None
        shown = [f.id for f in app.fleet[HOST].diagnosis.findings]
    assert path is not None
    events = _host_events(path)
    diagnosis = next(e for e in events if e["kind"] == "diagnosis")
    assert [f["id"] for f in diagnosis["findings"]] == shown  # the event is what the UI shows
    return events


async def test_the_tui_transcript_has_the_cli_events_for_a_host(
    demo_hosts: tuple[Host, ...],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    tui = await _tui_events(demo_hosts)
    cli = await _cli_events(capsys, monkeypatch, tmp_path / "cli-state")
    assert [e["kind"] for e in tui] == [e["kind"] for e in cli]
    assert "diagnosis" in [e["kind"] for e in tui]
    tui_diagnosis = next(e for e in tui if e["kind"] == "diagnosis")
    cli_diagnosis = next(e for e in cli if e["kind"] == "diagnosis")
    assert [f["id"] for f in tui_diagnosis["findings"]] == [
        f["id"] for f in cli_diagnosis["findings"]
    ]
    assert [f["id"] for f in tui_diagnosis["findings"]]  # ct201 has findings to compare
