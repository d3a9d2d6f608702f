"""Reading the history: the ``history`` list and the ``diff`` of two snapshots, as the
CONTRACT.md JSON, for the CLI and the TUI alike.

A snapshot stored unjudged (``detective-tui probe``) is judged here from its stored facts, so
every entry has a verdict. ``--since WHEN`` takes an ISO-8601 date or time (UTC unless it
says otherwise), a span back from now (``90m``, ``6h``, ``2d``, ``1w``), or ``ok``: the
newest earlier snapshot without a critical finding — "since it worked".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from tui.core.facts import Facts
from tui.core.judge.diagnosis import diagnose
from tui.core.judge.host_stack import stack
from tui.core.records.history import Snapshot
from tui.core.records.history_causes import likely_causes
from tui.core.records.history_diff import changes, finding_changes

SINCE_OK = "ok"
_SPAN = re.compile(r"^(\d+)\s*([smhdw])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


class WhenError(ValueError):
    """A ``--since`` value that is none of the accepted forms; the message says which are."""


def judged(snap: Snapshot) -> Snapshot:
    """The snapshot with its verdict, findings and replays (judged now if stored without)."""
    if snap.findings is not None or snap.facts is None:
        return snap
    facts = Facts.from_json(snap.facts)
    d = diagnose(facts)
    findings = tuple(
        {"id": f.id, "severity": f.severity, "python": f.python, "title": f.title}
        for f in d.findings
    )
    return replace(
        snap,
        verdict=d.worst() or "none",
        findings=findings,
        flashinfer=tuple(r.to_json() for r in d.flashinfer),
        stack=stack(facts, d),
    )


def reached(snaps: Sequence[Snapshot]) -> list[Snapshot]:
    return [s for s in snaps if s.facts is not None]


def entries(snaps: Sequence[Snapshot]) -> list[dict[str, Any]]:
    """``history --json``: newest first, each with what changed since the reached probe
    before it (``changed``, words; an addition to the contract's keys)."""
    full = [judged(s) for s in snaps]
    out = []
    for i, s in enumerate(full):
        older = next((o for o in full[i + 1 :] if o.facts is not None), None)
        said = []
        if older is not None and s.facts is not None:
            said = [c.words for c in changes(older, s)]
            moved = finding_changes(older, s)
            said += [f"finding {f} appeared" for f in moved["appeared"]]
            said += [f"finding {f} gone" for f in moved["gone"]]
        out.append(
            {
                "at": s.at,
                "verdict": s.verdict,
                "findings": s.finding_ids,
                "stack": dict(s.stack),
                "error": s.error,
                "changed": said,
            }
        )
    return out


def parse_when(text: str, now: datetime | None = None) -> datetime | str:
    """A ``--since`` value: a UTC datetime, or ``SINCE_OK``."""
    value = text.strip()
    if value.lower() == SINCE_OK:
        return SINCE_OK
    m = _SPAN.match(value)
    if m:
        return (now or datetime.now(UTC)) - timedelta(**{_UNITS[m.group(2)]: int(m.group(1))})
    try:
        at = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise WhenError(
            f"--since {text!r}: give an ISO-8601 date or time (2026-12-01, 2026-12-01T03:00), "
            "a span back from now (90m, 6h, 2d, 1w), or 'ok' (the last probe without a "
            "critical finding)"
        ) from None
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def _at(snap: Snapshot) -> datetime:
    return datetime.fromisoformat(snap.at)


def pick_pair(
    snaps: Sequence[Snapshot], since: datetime | str | None
) -> tuple[Snapshot, Snapshot] | str:
    """(earlier, later) of one host's reached snapshots (newest first), or why there is none."""
    full = reached(snaps)
    if len(full) < 2:
        return f"{len(full)} reached probe(s) in the history; probe it again to have two to compare"
    newest = full[0]
    older = full[1:]
    if since is None:
        return older[0], newest
    if since == SINCE_OK:
        ok = next((s for s in older if judged(s).verdict != "critical"), None)
        if ok is None:
            return "no earlier probe without a critical finding"
        return judged(ok), newest
    assert isinstance(since, datetime)
    before = next((s for s in older if _at(s) <= since), None)
    return (before or older[-1]), newest


def diff_json(host: str, other: str | None, before: Snapshot, after: Snapshot) -> dict[str, Any]:
    """``diff --json`` (CONTRACT.md): ``from`` is ``host``'s snapshot, ``to`` the later one
    or ``other``'s; changes carry ``words`` and, for environments, ``detail`` too."""
    a, b = judged(before), judged(after)
    found = changes(a, b, hosts=other is not None)
    return {
        "host": host,
        "other": other,
        "from": {"at": a.at, "verdict": a.verdict, "stack": dict(a.stack)},
        "to": {"at": b.at, "verdict": b.verdict, "stack": dict(b.stack)},
        "changes": [c.to_json() for c in found],
        "findings": finding_changes(a, b),
        "likely_causes": [] if other is not None else likely_causes(found, b, a),
    }


def stack_words(stack: dict[str, Any]) -> str:
    def v(key: str) -> str:
        return stack.get(key) or "—"

    return (
        f"driver {v('driver')} (CUDA {v('driver_cuda')}) · torch {v('torch')} "
        f"(CUDA {v('torch_cuda')}) · nvcc {v('nvcc')} · JIT CUDA {v('jit_cuda')} · "
        f"FlashInfer {v('flashinfer')}"
    )


def diff_lines(data: dict[str, Any]) -> list[str]:
    """``diff_json``'s object as the lines ``diff`` prints (and the TUI's compare shows)."""
    a, b = data["from"], data["to"]
    left = data["host"] + (f" {a['at']}" if data["other"] is None else f" ({a['at']})")
    right = (data["other"] + f" ({b['at']})") if data["other"] else b["at"]
    lines = [
        f"{left} [{a['verdict']}] → {right} [{b['verdict']}]",
        f"  before: {stack_words(a['stack'])}",
        f"  after:  {stack_words(b['stack'])}",
    ]
    if not data["changes"]:
        lines.append("  no change in what matters for CUDA")
    for c in data["changes"]:
        where = f"  [{c['python']}]" if c["python"] else ""
        lines.append(f"  {c['words']}{where}")
    moved = data["findings"]
    if moved["appeared"]:
        lines.append(f"findings appeared: {', '.join(moved['appeared'])}")
    if moved["gone"]:
        lines.append(f"findings gone: {', '.join(moved['gone'])}")
    if data["likely_causes"]:
        lines.append("likely causes:")
        lines += [f"  {c['change']}: {c['evidence']}" for c in data["likely_causes"]]
    return lines


def compare_hosts(
    host: str, other: str, mine: Sequence[Snapshot], theirs: Sequence[Snapshot]
) -> dict[str, Any] | str:
    """``diff_json`` of two hosts' newest reached probes, or why they cannot be compared."""
    missing = [h for h, s in ((host, mine), (other, theirs)) if not reached(s)]
    if missing:
        return f"never reached: {', '.join(missing)} (probe it first)"
    return diff_json(host, other, reached(mine)[0], reached(theirs)[0])
