"""The transcript opened lazily: events indexed without being decoded, one readable line each,
filtered by host and kind, the probe script stored once per session — on a real session
recorded while probing demo hosts through the real probe."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tui.core.records.transcript import Transcript, TranscriptError, read_events
from tui.core.records.transcript_index import TranscriptIndex, details, session_label
from tui.core.run.runner import Session
from tui.demo.fleet import demo_fleet


@pytest.fixture(scope="module")
def session_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ct200 probed twice and gone-dark once, in one session."""
    base = tmp_path_factory.mktemp("idx")
    hosts = {h.name: h for h in demo_fleet(base / "cache")}
    transcript = Transcript(base / "sessions" / "20260102T030405-42.jsonl")
    transcript.record("session-start", pid=42, argv=["detective-tui", "--demo"])

    async def run() -> None:
        async with Session(transcript=transcript) as session:
            for name in ("ct200", "ct200", "gone-dark"):
                await session.probe(hosts[name])
            session.record("decision", host="ct200", fix="set-flashinfer-arch-list", answer="no")

    asyncio.run(run())
    transcript.close()
    return transcript.path


def test_index_matches_the_events_and_decodes_lazily(session_file: Path) -> None:
    index = TranscriptIndex.open(session_file)
    events = read_events(session_file)
    assert len(index) == len(events)
    assert index.event.cache_info().currsize == 0  # nothing decoded to open it
    assert [r.kind for r in index.refs] == [e["kind"] for e in events]
    assert [r.host for r in index.refs] == [e.get("host") for e in events]
    assert index.hosts == ("ct200", "gone-dark")
    assert index.event(1) == events[1]


def test_filter_by_host_and_kind(session_file: Path) -> None:
    index = TranscriptIndex.open(session_file)
    commands = index.select("ct200", "command")
    assert len(commands) == 2
    assert all(index.refs[i].kind == "command" for i in commands)
    assert index.select("gone-dark") and index.select(kind="decision")
    assert index.select("nope") == ()


def test_events_read_as_lines(session_file: Path) -> None:
    index = TranscriptIndex.open(session_file)
    lines = [index.summary(i) for i in range(len(index))]
    command = lines[index.select("ct200", "command")[0]]
    assert "ct200" in command and "command probe · exit 0 ·" in command
    assert "script_sha256" not in command and "{" not in command
    probe = lines[index.select("ct200", "probe")[0]]
    assert "probe · ok, 8 GPU(s)" in probe
    gone = lines[index.select("gone-dark", "probe")[0]]
    assert "no answer (simulated demo host)" in gone
    decision = lines[index.select(kind="decision")[0]]
    assert "decision · fix set-flashinfer-arch-list: no" in decision
    # a demo host's probe says where it ran: a simulated host, not "local"
    assert index.event(index.select("ct200", "probe")[0])["target"] == "demo (simulated)"


def test_probe_script_is_stored_once_per_session(session_file: Path) -> None:
    index = TranscriptIndex.open(session_file)
    first, second = (index.event(i) for i in index.select("ct200", "command"))
    assert "script" in first and "script" not in second
    assert first["script_sha256"] == second["script_sha256"]
    stored = index.script_event(first["script_sha256"])
    assert stored == index.select("ct200", "command")[0]
    text = details(second, index)
    assert f"script: the same as in event #{index.refs[stored].seq}" in "\n".join(text)
    assert "── output ──" in text


def test_session_label_says_when_how_big_and_what(session_file: Path) -> None:
    label = session_label(session_file)
    assert label.startswith("2026-01-02 03:04 · ") and label.endswith(" · --demo")
    assert " KB · " in label


def test_torn_last_line_is_left_out_and_a_broken_one_named(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    good = json.dumps({"ts": "2026-01-02T03:04:05.000Z", "seq": 1, "kind": "probe", "host": "a"})
    path.write_text(good + "\n" + good[:30])
    assert len(TranscriptIndex.open(path)) == 1
    path.write_text(good + "\n{not json\n" + good + "\n")
    with pytest.raises(TranscriptError, match=r"s\.jsonl:2: not a JSON event"):
        TranscriptIndex.open(path)
