"""Probe output captured by other engines → one ``ProbeResult`` per host, as ``probe`` gives.

Formats (``detect_format`` picks one per PATH for ``auto``):

- ``dir``: one file per host, named after it — ClusterShell ``clush --outdir DIR``, Slurm
  ``srun --output=DIR/%N``, ``kubectl exec … > DIR/pod.txt`` (``.txt``/``.out``/``.log`` are
  dropped from the name), ``ansible --tree DIR`` (each file a JSON result). Hidden files and
  sub-directories are skipped (and said so).
- ``ansible-runner``: a private data dir, its ``artifacts`` dir, one run's ``artifacts/<ident>``
  or its ``job_events``: ``runner_on_ok``/``runner_on_failed``/``runner_on_unreachable``
  events, the newest run when there are several.
- ``ansible-json``: Ansible's ``ansible.posix.json`` stdout callback (``plays[].tasks[].hosts``).
- ``labelled``: ``host: line`` (pdsh, clush without ``--outdir``); lines without a label are
  ignored (and counted).

Robust to what engines do: CRLF (``ssh -tt``, Ansible's PTY) is removed; an output with two
``begin`` records (two hosts or two runs in one file) is an error for that host, never merged;
a truncated output gives its partial facts and ``probe-failed``; a ``hostname`` that does not
match the host's name is a warning. A host with output in two places is an error, not merged.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from probes import SENTINEL
from tui.core.facts.build import FactBuilder
from tui.core.hosts import Host
from tui.core.run.runner import (
    PROBE_FAILED,
    TIMEOUT,
    UNREACHABLE,
    ProbeResult,
    ProgressCallback,
    Session,
)

FORMATS = ("auto", "dir", "ansible-runner", "ansible-json", "labelled")
DROPPED_SUFFIXES = (".txt", ".out", ".log")
_LABEL = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*): ?(.*)$")
_RECORD = re.compile(re.escape(SENTINEL) + r"\t([a-z-]+)")


class IngestError(Exception):
    """A PATH that cannot be read as the format asked for (exit 3)."""


@dataclass(frozen=True)
class Capture:
    """What one engine captured for one host."""

    host: str
    source: str  # where it came from: a file, or a file and an event/task
    text: str = ""  # the probe's output (stdout), as captured
    exit_status: int | None = None
    unreachable: str | None = None  # the engine's reason it could not reach the host
    failed: str | None = None  # the engine's message for a failed task


@dataclass
class Ingested:
    results: list[ProbeResult] = field(default_factory=list)
    warnings: dict[str, list[str]] = field(default_factory=dict)  # host name → warnings
    notes: list[str] = field(default_factory=list)  # about the inputs as a whole


# -- reading the inputs ------------------------------------------------------------------------


def detect_format(path: Path) -> str:
    if path.is_dir():
        return "ansible-runner" if _job_events_dirs(path) else "dir"
    head = _read(path)[:65536]
    if head.lstrip().startswith("{") or re.search(r"(?m)^\{\s*$", head):
        return "ansible-json"
    labelled = sum(1 for line in head.splitlines() if _labelled_record(line))
    bare = sum(1 for line in head.splitlines() if line.startswith(SENTINEL + "\t"))
    return "labelled" if labelled > bare else "dir"


def read_captures(paths: Sequence[Path], fmt: str = "auto") -> tuple[list[Capture], list[str]]:
    """Every capture in ``paths`` and notes about what was skipped; ``IngestError``."""
    captures: list[Capture] = []
    notes: list[str] = []
    for path in paths:
        if not path.exists():
            raise IngestError(f"{path}: no such file or directory")
        kind = detect_format(path) if fmt == "auto" else fmt
        reader = _READERS[kind]
        captures += reader(path, notes)
    return captures, notes


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except OSError as exc:
        raise IngestError(f"{path}: cannot read: {exc.strerror or exc}") from exc


def _labelled_record(line: str) -> bool:
    m = _LABEL.match(line.rstrip("\r"))
    return bool(m and m.group(2).startswith(SENTINEL + "\t"))


def _read_dir(path: Path, notes: list[str]) -> list[Capture]:
    if path.is_file():
        return [_file_capture(path, _host_of_file(path))]
    if not path.is_dir():
        raise IngestError(f"{path}: not a directory of per-host files")
    out: list[Capture] = []
    skipped: list[str] = []
    for entry in sorted(path.iterdir()):
        if entry.name.startswith(".") or not entry.is_file():
            skipped.append(entry.name)
            continue
        out.append(_file_capture(entry, _host_of_file(entry)))
    if skipped:
        notes.append(f"{path}: skipped {', '.join(skipped)} (hidden files and directories)")
    return out


def _host_of_file(path: Path) -> str:
    name = path.name
    for suffix in DROPPED_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def _file_capture(path: Path, host: str) -> Capture:
    text = _read(path)
    if text.lstrip().startswith("{"):  # `ansible --tree DIR`: one JSON result per host
        try:
            res = json.loads(text)
        except ValueError:
            res = None
        if isinstance(res, dict):
            return _result_capture(host, str(path), res)
    return Capture(host=host, source=str(path), text=text)


def _read_labelled(path: Path, notes: list[str]) -> list[Capture]:
    by_host: dict[str, list[str]] = {}
    unlabelled = 0
    for line in _read(path).split("\n"):
        m = _LABEL.match(line.rstrip("\r"))
        if m is None:
            unlabelled += bool(line.strip())
            continue
        by_host.setdefault(m.group(1), []).append(m.group(2))
    if not by_host:
        raise IngestError(f"{path}: no `host: line` lines; is it another format (--format)?")
    if unlabelled:
        notes.append(f"{path}: ignored {unlabelled} lines without a `host: ` label")
    return [Capture(h, str(path), "\n".join(lines) + "\n") for h, lines in by_host.items()]


def _job_events_dirs(path: Path) -> list[Path]:
    found = []
    for depth in ("job_events", "*/job_events", "artifacts/*/job_events"):
        found += [p for p in path.glob(depth) if p.is_dir()]
    if path.name == "job_events" and path.is_dir():
        found.append(path)
    return found


def _read_runner(path: Path, notes: list[str]) -> list[Capture]:
    runs = _job_events_dirs(path)
    if not runs:
        raise IngestError(
            f"{path}: no ansible-runner job_events directory (give the private data dir, "
            "artifacts/, artifacts/<ident>/ or its job_events/)"
        )
    runs.sort(key=lambda p: p.stat().st_mtime)
    events_dir = runs[-1]
    if len(runs) > 1:
        older = ", ".join(str(r.parent.name) for r in runs[:-1])
        notes.append(
            f"{path}: {len(runs)} runs; read the newest ({events_dir.parent.name}), ignored "
            f"{older} (give one artifacts/<ident> to choose)"
        )
    events = []
    for file in events_dir.glob("*.json"):
        try:
            events.append(json.loads(_read(file)))
        except ValueError as exc:
            notes.append(f"{file}: not JSON ({exc}); skipped")
    events.sort(key=lambda e: e.get("counter", 0) if isinstance(e, dict) else 0)
    results: list[tuple[str, str, Mapping[str, Any]]] = []
    for event in events:
        kind = event.get("event") if isinstance(event, dict) else None
        data = event.get("event_data") or {}
        res = data.get("res")
        if kind in ("runner_on_ok", "runner_on_failed", "runner_on_unreachable") and isinstance(
            res, dict
        ):
            where = f"{events_dir}/{event.get('counter')}-… ({kind}, task {data.get('task')!r})"
            results.append((str(data.get("host")), where, res))
    return _pick_results(results)


def _read_ansible_json(path: Path, notes: list[str]) -> list[Capture]:
    text = _read(path)
    start = text.find("{")
    doc: Any = None
    while start >= 0:
        try:
            doc, _ = json.JSONDecoder().raw_decode(text, start)
            break
        except ValueError:
            start = text.find("\n{", start + 1)
            start = start + 1 if start >= 0 else -1
    if not isinstance(doc, dict) or not isinstance(doc.get("plays"), list):
        raise IngestError(
            f"{path}: not the output of Ansible's json callback (no `plays`); run with "
            "ANSIBLE_STDOUT_CALLBACK=ansible.posix.json (and ANSIBLE_LOAD_CALLBACK_PLUGINS=1 "
            "for ad-hoc `ansible`)"
        )
    if text[:start].strip():
        notes.append(f"{path}: ignored the text before the JSON document")
    results: list[tuple[str, str, Mapping[str, Any]]] = []
    for p_index, play in enumerate(doc["plays"]):
        for t_index, task in enumerate(play.get("tasks") or []):
            name = (task.get("task") or {}).get("name")
            for host, res in (task.get("hosts") or {}).items():
                if isinstance(res, dict):
                    where = f"{path} (play {p_index + 1}, task {t_index + 1} {name!r})"
                    results.append((str(host), where, res))
    return _pick_results(results)


def _result_capture(host: str, where: str, res: Mapping[str, Any]) -> Capture:
    """One Ansible task result (``res``) → a capture."""
    stdout = res.get("stdout")
    if not isinstance(stdout, str):
        lines = res.get("stdout_lines")
        stdout = "\n".join(map(str, lines)) + "\n" if isinstance(lines, list) else ""
    rc = res.get("rc")
    status = rc if isinstance(rc, int) else None
    msg = str(res.get("msg") or "").strip()
    if res.get("unreachable"):
        return Capture(host, where, stdout, status, unreachable=msg or "unreachable")
    failed = (msg or f"exit status {status}") if res.get("failed") else None
    return Capture(host, where, stdout, status, failed=failed)


def _pick_results(results: Iterable[tuple[str, str, Mapping[str, Any]]]) -> list[Capture]:
    """Per host, the task results that carry probe records (several: each is kept, and the
    host is an error later); without any, the last result that says why there are none."""
    by_host: dict[str, list[Capture]] = {}
    for host, where, res in results:
        by_host.setdefault(host, []).append(_result_capture(host, where, res))
    out: list[Capture] = []
    for captures in by_host.values():
        with_records = [c for c in captures if _has_records(c.text)]
        if with_records:
            out += with_records
        else:
            trouble = [c for c in captures if c.unreachable or c.failed]
            out.append((trouble or captures)[-1])
    return out


_READERS = {
    "dir": _read_dir,
    "ansible-runner": _read_runner,
    "ansible-json": _read_ansible_json,
    "labelled": _read_labelled,
}


# -- captures → results ------------------------------------------------------------------------


def _has_records(text: str) -> bool:
    return SENTINEL + "\t" in text


def _lines(text: str) -> list[str]:
    return [line.rstrip("\r") for line in text.split("\n")]


def same_host(name: str, hostname: str, host: Host | None = None) -> bool:
    """Whether a ``hostname`` record can be this host: the name, its ssh host, or the first
    label of either (``gpu01`` and ``gpu01.dc``), case-insensitively."""
    wanted = {name}
    if host is not None and host.ssh:
        wanted.add(host.ssh.rpartition("@")[2].split(":")[0])
    short = hostname.lower().split(".")[0]
    return any(w.lower() == hostname.lower() or w.lower().split(".")[0] == short for w in wanted)


def result_of(host: Host, captures: Sequence[Capture]) -> tuple[ProbeResult, list[str]]:
    """The ``ProbeResult`` (and warnings) of one host from what was captured for it."""
    if not captures:
        return ProbeResult(
            host, None, "no output for this host in the captured output", UNREACHABLE
        ), []
    if len(captures) > 1:
        where = "; ".join(c.source for c in captures)
        return ProbeResult(
            host,
            None,
            f"output for this host in {len(captures)} places ({where}); not merged: "
            "ingest one run per host",
            PROBE_FAILED,
        ), []
    cap = captures[0]
    raw = tuple(_lines(cap.text))
    if cap.unreachable is not None and not _has_records(cap.text):
        return ProbeResult(host, None, cap.unreachable, UNREACHABLE, raw_lines=raw), []
    begins = [i + 1 for i, line in enumerate(raw) if "begin" in line and _kind(line) == "begin"]
    if len(begins) > 1:
        return ProbeResult(
            host,
            None,
            f"{cap.source}: {len(begins)} probe runs in one output (begin records on lines "
            f"{', '.join(map(str, begins))}): two hosts or two runs were written to the same "
            "place; not merged — capture one host per file",
            PROBE_FAILED,
            raw_lines=raw,
        ), []
    if not begins:
        tail = " | ".join(line for line in raw if line.strip())[-300:] or "empty"
        why = cap.failed or (f"exit status {cap.exit_status}" if cap.exit_status else None)
        return ProbeResult(
            host,
            None,
            f"{cap.source}: no probe output" + (f" ({why})" if why else "") + f": {tail}",
            PROBE_FAILED,
            raw_lines=raw,
        ), []
    builder = FactBuilder()
    for line in raw:
        builder.feed(line)
    facts = builder.facts()
    error = kind = None
    if not facts.probe.complete:
        if cap.exit_status in (124, 137):
            error, kind = (
                f"{cap.source}: the probe was stopped by its deadline; partial facts",
                TIMEOUT,
            )
        else:
            last = next((line for line in reversed(raw) if line.strip()), "")
            status = f" (exit status {cap.exit_status})" if cap.exit_status is not None else ""
            error = (
                f"{cap.source}: the output ends before the probe's end record{status}, "
                f"truncated after {last[:120]!r}; partial facts"
            )
            kind = PROBE_FAILED
    warnings = []
    hostname = facts.host.hostname
    if hostname and not same_host(host.name, hostname, host):
        warnings.append(
            f"the output says hostname {hostname!r}, not {host.name!r}: is {cap.source} "
            "really this host's?"
        )
    return ProbeResult(host, facts, error, kind, raw_lines=raw), warnings


def _kind(line: str) -> str | None:
    m = _RECORD.search(line)
    return m.group(1) if m else None


def fleet_of(
    captures: Sequence[Capture], inventory: Sequence[Host] | None, notes: list[str]
) -> tuple[list[Host], dict[str, list[Capture]]]:
    """The hosts to report — the inventory's (in its order), then the others found, in natural
    name order — and the captures of each."""
    by_host: dict[str, list[Capture]] = {}
    for cap in captures:
        by_host.setdefault(cap.host, []).append(cap)
    hosts = list(inventory or ())
    known = {h.name for h in hosts}
    extra = sorted((n for n in by_host if n not in known), key=_natural)
    if inventory is not None and extra:
        notes.append(f"not in the inventory: {', '.join(extra)} (reported as found)")
    hosts += [Host(name=n, source=by_host[n][0].source) for n in extra]
    return hosts, by_host


def ingest(
    paths: Sequence[Path], fmt: str = "auto", inventory: Sequence[Host] | None = None
) -> Ingested:
    """A result per host of ``fleet_of``; an inventory host with no output is unreachable."""
    captures, notes = read_captures(paths, fmt)
    hosts, by_host = fleet_of(captures, inventory, notes)
    done = Ingested(notes=notes)
    for host in hosts:
        result, warnings = result_of(host, by_host.get(host.name, []))
        done.results.append(result)
        if warnings:
            done.warnings[host.name] = warnings
    return done


class CapturedSession(Session):
    """A ``Session`` whose probes read captured output instead of running anything (the TUI's
    ``--ingest``): the inputs are read once, each probe of a host parses its capture again."""

    def __init__(self, by_host: Mapping[str, Sequence[Capture]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.by_host = by_host
        self.warnings: dict[str, list[str]] = {}

    async def probe(self, host: Host, on_progress: ProgressCallback | None = None) -> ProbeResult:
        started = time.monotonic()
        result, warnings = result_of(host, self.by_host.get(host.name, ()))
        self.warnings[host.name] = warnings
        if warnings:
            self.record("ingest-warning", host=host.name, warnings=warnings)
        if on_progress is not None:
            for line in result.raw_lines:
                on_progress(host.name, line)
        return self._probe_done(result, started)


def _natural(name: str) -> list[Any]:
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]
