"""A session transcript opened lazily: where each event is in the file and what it is about,
without decoding the events (a 10 MB session indexes in tens of milliseconds).

``TranscriptIndex.open(path)`` reads the file once and keeps, per complete event line, its
byte range and the fields every event starts with (``ts``, ``seq``, ``kind``) plus its
``host``; an event is decoded (``event(i)``) only when it is shown. ``summary(i)`` is the
one line a person reads: time, host, what, exit status, duration. A probe script is stored
in the transcript once per session (the first command that ran it carries ``script``, the
others its ``script_sha256``); ``script_event(sha)`` finds that first one.
"""

from __future__ import annotations

import json
import mmap
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from tui.core.records.decision import KIND as DECISION
from tui.core.records.decision import Decision
from tui.core.records.transcript import TranscriptError

HEAD_BYTES = 256  # ts, seq and kind are the first keys of every event
_HEAD = re.compile(rb'\{"ts": "([^"]*)", "seq": (\d+), "kind": "([^"]*)"')
_HOST = re.compile(rb'"host": "((?:[^"\\]|\\.)*)"')
_SHA = re.compile(rb'"script_sha256": "([0-9a-f]{64})"')
_HAS_SCRIPT = re.compile(rb'"script": "')
HOST_WIDTH = 20  # the host column of a summary line pads to the longest host, at most this
CACHED_EVENTS = 256  # decoded events kept (the rows on screen and a little more)


@dataclass(frozen=True)
class EventRef:
    start: int
    end: int  # exclusive, without the newline
    ts: str
    seq: int
    kind: str
    host: str | None


class TranscriptIndex:
    """The events of one transcript file, indexed; decoded one at a time, on demand."""

    def __init__(self, path: Path, refs: Sequence[EventRef], scripts: dict[str, int]) -> None:
        self.path = Path(path)
        self.refs = tuple(refs)
        self._scripts = scripts
        self.event = lru_cache(maxsize=CACHED_EVENTS)(self._event)
        self._host_width = min(max((len(h) for h in self.hosts), default=1), HOST_WIDTH)

    @classmethod
    def open(cls, path: Path) -> TranscriptIndex:
        """Index every complete event. A torn last line (the writer was killed mid-event) is
        left out, as ``read_events`` does; a line that is not an event elsewhere is an error
        naming the file and line."""
        path = Path(path)
        try:
            with path.open("rb") as fh:
                size = fh.seek(0, 2)
                if size == 0:
                    return cls(path, (), {})
                with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
                    return cls(path, *_scan(path, data, size))
        except OSError as exc:
            raise TranscriptError(f"{path}: cannot read transcript: {exc.strerror}") from exc

    def __len__(self) -> int:
        return len(self.refs)

    def _event(self, index: int) -> dict[str, Any]:
        ref = self.refs[index]
        with self.path.open("rb") as fh:
            fh.seek(ref.start)
            return json.loads(fh.read(ref.end - ref.start))

    @property
    def hosts(self) -> tuple[str, ...]:
        return tuple(sorted({r.host for r in self.refs if r.host}))

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(sorted({r.kind for r in self.refs}))

    def select(self, host: str | None = None, kind: str | None = None) -> tuple[int, ...]:
        """The indexes of the events about ``host`` and of ``kind`` (None: any)."""
        return tuple(
            i
            for i, r in enumerate(self.refs)
            if (host is None or r.host == host) and (kind is None or r.kind == kind)
        )

    def script_event(self, digest: str) -> int | None:
        """The event that stored the script with this sha256 (once per session)."""
        return self._scripts.get(digest)

    def summary(self, index: int) -> str:
        """``03:04:05  ct200  command probe · exit 0 · 0.35 s`` — one readable line."""
        ref = self.refs[index]
        host = (ref.host or "-").ljust(self._host_width)
        return f"{ref.ts[11:19]}  {host}  {describe(self.event(index))}"


def _scan(path: Path, data: mmap.mmap, size: int) -> tuple[list[EventRef], dict[str, int]]:
    refs: list[EventRef] = []
    scripts: dict[str, int] = {}
    start = line_no = 0
    while start < size:
        end = data.find(b"\n", start)
        line_no += 1
        torn = end < 0
        if torn:
            end = size
        if end > start:
            head = _HEAD.match(data, start, min(end, start + HEAD_BYTES))
            if head is None:
                if torn:
                    break
                _not_an_event(path, line_no, data[start:end])
            elif not torn or _complete(data[start:end]):
                host = _HOST.search(data, start, end)
                refs.append(
                    EventRef(
                        start=start,
                        end=end,
                        ts=head.group(1).decode(),
                        seq=int(head.group(2)),
                        kind=head.group(3).decode(),
                        host=json.loads(b'"' + host.group(1) + b'"') if host else None,
                    )
                )
                sha = _SHA.search(data, start, end) if refs[-1].kind == "command" else None
                if sha and _HAS_SCRIPT.search(data, start, end):
                    scripts.setdefault(sha.group(1).decode(), len(refs) - 1)
        start = end + 1
    return refs, scripts


def _complete(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def _not_an_event(path: Path, line_no: int, line: bytes) -> None:
    try:
        event = json.loads(line)
    except ValueError as exc:
        raise TranscriptError(f"{path}:{line_no}: not a JSON event ({exc})") from exc
    if not isinstance(event, dict) or "kind" not in event:
        raise TranscriptError(f"{path}:{line_no}: not a transcript event")
    raise TranscriptError(f"{path}:{line_no}: an event without ts/seq/kind first")


# -- one line per event ----------------------------------------------------------------------


def _ids(value: object) -> str:
    return ", ".join(value) if isinstance(value, list) and value else "none"


def describe(event: dict[str, Any]) -> str:
    """What the event is, in a few words (no host, no time: the row shows them)."""
    kind = event.get("kind", "?")
    if kind == "command":
        if event.get("error") and event.get("exit_status") is None:
            status = event["error"]
        elif event.get("timed_out"):
            status = "timed out"
        else:
            status = f"exit {event.get('exit_status')}"
        return f"command {event.get('purpose', '')} · {status} · {event.get('duration_s', 0):.2f} s"
    if kind == "probe":
        facts = event.get("facts") or {}
        gpus = len(facts.get("gpus") or [])
        result = (
            event.get("error") or f"ok, {gpus} GPU(s), {len(facts.get('pythons') or [])} python(s)"
        )
        return f"probe · {result} · {event.get('duration_s', 0):.2f} s"
    if kind == DECISION:  # every shape it was written in
        return f"decision · {Decision.from_event(event).summary()}"
    if kind == "fix-outcome":
        state = "applied" if event.get("applied") else f"FAILED: {event.get('error')}"
        gone = f" · fixed {_ids(event.get('resolved'))}" if event.get("resolved") else ""
        return f"fix outcome · {event.get('fix')} · {state}{gone}"
    if kind == "fix-start":
        return f"fix start · {event.get('fix')} · {len(event.get('commands') or [])} command(s)"
    if kind == "fix-journal":  # the intent written before each step, then its status
        step = f" · step {event['step']}" if event.get("step") else ""
        status = f" {event['status']}" if event.get("status") else ""
        title = f": {event['title']}" if event.get("title") else ""
        return f"fix journal · {event.get('fix')} · {event.get('state')}{step}{status}{title}"
    if kind == "diagnosis":
        findings = event.get("findings") or []
        worst = next((f.get("severity") for f in findings), None)
        ids = ", ".join(str(f.get("id")) for f in findings) or "no findings"
        return f"diagnosis · {worst + ': ' if worst else ''}{ids}"
    if kind == "session-start":
        return "session start · " + " ".join(str(a) for a in event.get("argv") or [])
    rest = ", ".join(f"{k}={v}" for k, v in event.items() if k not in ("ts", "seq", "kind", "host"))
    return f"{kind} · {rest}" if rest else kind


def details(event: dict[str, Any], index: TranscriptIndex | None = None) -> list[str]:
    """The whole event as lines to read: its fields, then its command, script and output.
    A script stored earlier in the session is named by its event, not repeated."""
    out = [f"{event.get('kind')} at {event.get('ts')} (event #{event.get('seq')})"]
    blocks = ("command", "script", "stdin", "output", "facts")
    for key, value in event.items():
        if key in ("ts", "seq", "kind", *blocks):
            continue
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        out.append(f"{key}: {shown}")
    digest = event.get("script_sha256")
    if digest and "script" not in event and index is not None:
        first = index.script_event(digest)
        where = f"event #{index.refs[first].seq}" if first is not None else "an earlier session"
        out.append(f"script: the same as in {where} (stored once per session)")
    for key in blocks:
        value = event.get(key)
        if value in (None, ""):
            continue
        text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
        out += ["", f"── {key} ──", *text.rstrip("\n").splitlines()]
    return out


# -- the session list -------------------------------------------------------------------------

FIRST_LINE_BYTES = 4096


def _size(n: float) -> str:
    for unit in ("B", "KB"):
        if n < 1024:
            return f"{n:.0f} {unit}"
        n /= 1024
    return f"{n:.1f} MB"


def session_label(path: Path) -> str:
    """``2026-01-02 03:04 · 860 KB · --demo``: when the session started (UTC), how big it is
    and what was run (the arguments; ``tui`` for none), from the file's first line only."""
    path = Path(path)
    stem = path.stem
    when = stem
    if len(stem) >= 15 and stem[8] == "T":
        when = f"{stem[:4]}-{stem[4:6]}-{stem[6:8]} {stem[9:11]}:{stem[11:13]}"
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            first = fh.readline(FIRST_LINE_BYTES)
    except OSError as exc:
        return f"{when} · unreadable ({exc.strerror})"
    what = ""
    try:
        event = json.loads(first)
        argv = event.get("argv") or []
        what = " ".join(str(a) for a in argv[1:]) or "tui"
    except ValueError:
        pass
    return " · ".join(x for x in (when, _size(size), what) if x)
