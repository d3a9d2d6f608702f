"""Transcript: append-only JSONL, redacted, readable after SIGKILL, exportable."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tui.cli import main
from tui.core import locations
from tui.core.records.transcript import (
    Transcript,
    TranscriptError,
    export,
    list_sessions,
    read_events,
)

REPO = Path(__file__).resolve().parents[1]

WRITER = """
import sys
from pathlib import Path
from tui.core.records.transcript import Transcript
tr = Transcript(Path(sys.argv[1]))
i = 0
while True:
    i += 1
    tr.record("command", host="h", n=i, output="x" * (i % 5000))
"""


def test_session_file_lives_in_xdg_state(isolated_xdg: Path) -> None:
    with Transcript.open_session() as tr:
        tr.record("decision", host="ct200", action="apply", accepted=True)
    (path,) = list_sessions()
    assert path.parent == isolated_xdg / "state" / "detective-tui" / "sessions"
    assert path.name.endswith(f"-{os.getpid()}.jsonl")
    events = read_events(path)
    assert [e["kind"] for e in events] == ["session-start", "decision"]
    assert [e["seq"] for e in events] == [1, 2]
    assert events[1]["accepted"] is True and events[1]["ts"].endswith("Z")


def test_each_event_is_on_disk_before_record_returns(tmp_path: Path) -> None:
    tr = Transcript(tmp_path / "s.jsonl")
    tr.record("a", x=1)
    assert [e["x"] for e in read_events(tmp_path / "s.jsonl")] == [1]
    tr.record("b", x=2)
    assert [e["x"] for e in read_events(tmp_path / "s.jsonl")] == [1, 2]
    tr.close()


def test_secrets_never_reach_the_file(tmp_path: Path) -> None:
    with Transcript(tmp_path / "s.jsonl") as tr:
        tr.record(
            "command",
            command="env HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123 'DB_PASSWORD=two words' sh -s",
            output="export AWS_SECRET_ACCESS_KEY=abc123\nurl https://bob:hunter2@example.com/x\n",
            env={"WANDB_API_KEY": "k", "CUDA_HOME": "/usr/local/cuda"},
            packages={"authlib": "1.3.0"},
            password="pw",
            fingerprint="SHA256:AAAA",
            key_type="ssh-ed25519",
        )
    raw = (tmp_path / "s.jsonl").read_text()
    for secret in ("hf_abcdefghijklmnopqrstuvwxyz0123", "two words", "abc123", "hunter2", '"k"'):
        assert secret not in raw
    (event,) = read_events(tmp_path / "s.jsonl")
    assert event["env"] == {"WANDB_API_KEY": "***", "CUDA_HOME": "/usr/local/cuda"}
    assert event["packages"] == {"authlib": "1.3.0"} and event["password"] == "***"
    assert event["fingerprint"] == "SHA256:AAAA" and event["key_type"] == "ssh-ed25519"


def test_sigkill_mid_session_reads_back_to_last_complete_event(tmp_path: Path) -> None:
    path = tmp_path / "killed.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if path.exists() and path.stat().st_size > 2_000_000:
                break
            time.sleep(0.01)
        else:
            pytest.fail("writer did not produce events")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    events = read_events(path)
    assert len(events) > 100
    assert [e["n"] for e in events] == list(range(1, len(events) + 1))
    assert all(e["output"] == "x" * (e["n"] % 5000) for e in events)


def test_torn_last_line_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "torn.jsonl"
    with Transcript(path) as tr:
        tr.record("a", n=1)
        tr.record("b", n=2)
    with path.open("a") as fh:
        fh.write('{"ts": "2026-01-01T00:00:00Z", "seq": 3, "kind": "c", "output": "half')
    assert [e["n"] for e in read_events(path)] == [1, 2]


def test_broken_line_in_the_middle_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"kind": "a"}\nnot json\n{"kind": "b"}\n')
    with pytest.raises(TranscriptError, match=rf"{path}:2: not a JSON event"):
        read_events(path)


def _sample(tmp_path: Path) -> Path:
    path = tmp_path / "sample.jsonl"
    with Transcript(path) as tr:
        tr.record(
            "command",
            host="ct200",
            command="exec sh -c 'x' detective-tui 60 sh -s",
            exit_status=0,
            duration_s=0.5,
            timed_out=False,
            output="line with ``` fences and <script>alert(1)</script>\n",
        )
        tr.record("decision", host="ct200", action="apply-fix", fix="use-installed-toolkit")
    return path


def test_export_formats(tmp_path: Path) -> None:
    path = _sample(tmp_path)
    as_json = json.loads(export(path, "json"))
    assert [e["kind"] for e in as_json] == ["command", "decision"]
    md = export(path, "md")
    assert "command on ct200 (exit 0, 0.50 s)" in md
    assert "````\nline with ``` fences" in md  # the fence is longer than any run inside
    assert "decision on ct200" in md and '**fix**: `"use-installed-toolkit"`' in md
    page = export(path, "html")
    assert page.startswith("<!doctype html>")
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    with pytest.raises(ValueError, match="unknown export format 'pdf'"):
        export(path, "pdf")


def test_transcript_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], isolated_xdg: Path
) -> None:
    sessions = locations.sessions_dir()
    sessions.mkdir(parents=True)
    sample = _sample(tmp_path)
    (sessions / "20260101T000000-1.jsonl").write_bytes(sample.read_bytes())
    assert main(["transcript", "list"]) == 0
    out = capsys.readouterr().out
    assert "20260101T000000-1.jsonl" in out and "2 events" in out and "ct200" in out
    assert main(["transcript", "show", "20260101T000000-1"]) == 0
    piped = capsys.readouterr().out  # piped: the Markdown itself
    assert "decision on ct200" in piped and piped.startswith("# ")
    assert main(["transcript", "export", str(sample), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[1]["fix"] == "use-installed-toolkit"
    assert main(["transcript", "show", "nope"]) == 3
    assert "no such transcript" in capsys.readouterr().err


def test_transcript_show_renders_on_a_terminal(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    isolated_xdg: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sample = _sample(tmp_path)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["transcript", "show", str(sample)]) == 0
    text = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out)
    assert "decision on ct200" in text
    assert not any(line.startswith("#") for line in text.splitlines())  # headings drawn
