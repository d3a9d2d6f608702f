"""The session transcript: an append-only JSONL file, one event per line, flushed per event.

Every remote command run, every probe result and every user decision becomes one event
``{"ts": "...Z", "seq": N, "kind": "...", ...}``; secrets are redacted before writing.
Each event is written with a single ``write(2)`` on an ``O_APPEND`` descriptor, so a session
killed at any moment (even SIGKILL) leaves a file that reads back up to its last complete event.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tui.core import locations
from tui.core.redact import redact

EXPORT_FORMATS = ("md", "html", "json")


class TranscriptError(Exception):
    """A transcript file that cannot be read (says which file and line)."""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Transcript:
    """An open session file. ``record`` is safe to call from several threads."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._lock = threading.Lock()
        self._seq = 0
        self._scripts_seen: set[str] = set()

    @classmethod
    def open_session(cls, directory: Path | None = None) -> Transcript:
        """A new session file ``<UTC timestamp>-<pid>.jsonl`` in the XDG state dir."""
        directory = directory or locations.sessions_dir()
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
        tr = cls(directory / f"{stamp}-{os.getpid()}.jsonl")
        tr.record("session-start", pid=os.getpid(), argv=sys.argv)
        return tr

    def record(self, kind: str, **data: Any) -> None:
        with self._lock:
            if self._fd < 0:
                raise TranscriptError(f"{self.path}: transcript already closed")
            self._seq += 1
            event = {"ts": _now(), "seq": self._seq, "kind": kind, **redact(data)}
            line = (json.dumps(event, ensure_ascii=False, default=str) + "\n").encode()
            view = memoryview(line)
            while view:
                view = view[os.write(self._fd, view) :]

    def first_time_script(self, digest: str) -> bool:
        """True once per script digest: the full script text goes into the transcript once."""
        with self._lock:
            if digest in self._scripts_seen:
                return False
            self._scripts_seen.add(digest)
            return True

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def __enter__(self) -> Transcript:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def list_sessions(directory: Path | None = None) -> list[Path]:
    """Session files, newest first."""
    directory = directory or locations.sessions_dir()
    if not directory.is_dir():
        return []
    return sorted(directory.glob("*.jsonl"), key=lambda p: p.name, reverse=True)


def resolve_session(name: str) -> Path:
    """A path as given, else a file name (with or without .jsonl) in the sessions dir."""
    path = Path(name).expanduser()
    if path.is_file():
        return path
    for candidate in (locations.sessions_dir() / name, locations.sessions_dir() / f"{name}.jsonl"):
        if candidate.is_file():
            return candidate
    raise TranscriptError(
        f"{name}: no such transcript (see `detective-tui transcript list` for the sessions "
        f"in {locations.sessions_dir()})"
    )


def read_events(path: Path) -> list[dict[str, Any]]:
    """Every complete event. A torn last line (the writer was killed mid-write) is dropped;
    a broken line elsewhere is an error naming the file and line."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise TranscriptError(f"{path}: cannot read transcript: {exc.strerror}") from exc
    lines = raw.split(b"\n")
    events: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        is_last = number == len(lines)  # no trailing newline: the writer died mid-event
        try:
            event = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            if is_last:
                break
            raise TranscriptError(f"{path}:{number}: not a JSON event ({exc})") from exc
        if is_last:
            break
        if not isinstance(event, dict) or "kind" not in event:
            raise TranscriptError(f"{path}:{number}: not a transcript event")
        events.append(event)
    return events


# -- export ---------------------------------------------------------------------------------


def _describe(event: dict[str, Any]) -> str:
    kind = event.get("kind", "?")
    host = event.get("host")
    where = f" on {host}" if host else ""
    if kind == "command":
        status = "timed out" if event.get("timed_out") else f"exit {event.get('exit_status')}"
        if event.get("error"):
            status = event["error"]
        return f"command{where} ({status}, {event.get('duration_s', 0):.2f} s)"
    if kind == "probe":
        return f"probe{where}: " + (event.get("error") or "ok")
    from tui.core.records.decision import KIND as DECISION  # export only: not at a probe's start
    from tui.core.records.decision import Decision

    if kind == DECISION:  # every shape it was written in
        return f"decision{where}: {Decision.from_event(event).summary()}"
    return f"{kind}{where}"


_SKIP = {"ts", "seq", "kind", "host", "command", "output", "script", "facts"}


def _details(event: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(k, v) for k, v in event.items() if k not in _SKIP]


def _blocks(event: dict[str, Any]) -> list[tuple[str, str]]:
    blocks = [(name, event[name]) for name in ("command", "script", "output") if event.get(name)]
    if event.get("facts") is not None:
        blocks.append(("facts", json.dumps(event["facts"], indent=2, ensure_ascii=False)))
    return [(n, b if isinstance(b, str) else json.dumps(b)) for n, b in blocks]


def _to_markdown(path: Path, events: list[dict[str, Any]]) -> str:
    from tui.core.md_safe import md_code, md_text  # export only: not at a probe's start

    out = [f"# detective-tui session `{path.name}`", ""]
    for ev in events:
        out.append(f"## {md_text(ev.get('ts', ''))} — {md_text(_describe(ev))}")
        out.append("")
        for key, value in _details(ev):
            out.append(f"- **{md_text(key)}**: {md_code(json.dumps(value, ensure_ascii=False))}")
        for name, text in _blocks(ev):
            fence = "`" * max(3, _max_backtick_run(text) + 1)
            out += ["", f"{name}:", "", fence, text.rstrip("\n"), fence]
        out.append("")
    return "\n".join(out)


def _max_backtick_run(text: str) -> int:
    best = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        best = max(best, run)
    return best


def _to_html(path: Path, events: list[dict[str, Any]]) -> str:
    import html

    e = html.escape
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>detective-tui session {e(path.name)}</title>",
        "<style>body{font-family:sans-serif;max-width:60em;margin:auto}"
        "pre{background:#f4f4f4;padding:.5em;overflow-x:auto}"
        "dt{font-weight:bold}</style></head><body>",
        f"<h1>detective-tui session <code>{e(path.name)}</code></h1>",
    ]
    for ev in events:
        parts.append(f"<section><h2>{e(str(ev.get('ts', '')))} — {e(_describe(ev))}</h2><dl>")
        for key, value in _details(ev):
            parts.append(f"<dt>{e(key)}</dt><dd><code>{e(json.dumps(value))}</code></dd>")
        parts.append("</dl>")
        for name, text in _blocks(ev):
            parts.append(f"<p>{e(name)}:</p><pre>{e(text)}</pre>")
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


_EXPORTERS: dict[str, Callable[[Path, list[dict[str, Any]]], str]] = {
    "md": _to_markdown,
    "html": _to_html,
    "json": lambda _p, events: json.dumps(events, indent=2, ensure_ascii=False) + "\n",
}


def export(path: Path, fmt: str) -> str:
    """The session as Markdown, standalone HTML, or a JSON array of events."""
    try:
        exporter = _EXPORTERS[fmt]
    except KeyError:
        raise ValueError(
            f"unknown export format {fmt!r}; use one of {', '.join(EXPORT_FORMATS)}"
        ) from None
    # redacted again on the way out: a session written before a redaction rule existed
    return exporter(Path(path), redact(read_events(path)))
