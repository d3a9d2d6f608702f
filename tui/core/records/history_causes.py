"""The change that did it: each change a diff of one host finds, attached to what the host
itself recorded about when and how it happened (``Facts.changes``, ``PythonEnv.installs``).

- a torch / FlashInfer / Triton change → the distribution's ``INSTALLER`` and dist-info time
  ("torch 2.9.1+cu130 → 2.10.0+cu130: pip, 2026-12-01 03:12 UTC");
- a driver, kernel module or toolkit change → the package manager's log entry for it (apt
  ``history.log`` with its command line, ``dpkg.log``, ``dnf.rpm.log``), and a kernel module
  still at the old version beside a new user-space driver (an NVML mismatch until a reboot);
- a JIT cache emptied or rebuilt, a serving environment that changed → the serving process's
  start (and its unit's restart count) after the earlier probe, the cache dirs' times.
Only evidence from the later snapshot's host is used; two different hosts get none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from tui.core.records.history import Snapshot
from tui.core.records.history_diff import Change

DISTS = {
    "torch": ("torch",),
    "FlashInfer": ("flashinfer-python", "flashinfer"),
    "Triton": ("triton",),
}
DRIVER_FACTS = ("driver", "driver CUDA", "kernel module", "driver state")
TOOLKIT_FACTS = ("toolkits installed", "nvcc on PATH", "JIT toolkit")
RESTART_FACTS = ("JIT cache", "process environment", "loaded CUDA libraries")


def when(epoch: int | None) -> str:
    if epoch is None:
        return "?"
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _epoch(iso: str) -> int | None:
    try:
        return int(datetime.fromisoformat(iso).timestamp())
    except ValueError:
        return None


def _public(version: str | None) -> str:
    return (version or "").split("+")[0]


def _python(facts: Mapping[str, Any], path: str | None) -> Mapping[str, Any]:
    for py in facts.get("pythons") or ():
        if py.get("path") == path:
            return py
    return {}


def _install_cause(change: Change, facts: Mapping[str, Any]) -> str | None:
    names = DISTS.get(change.fact)
    if names is None or not change.after:
        return None
    for inst in _python(facts, change.python).get("installs") or ():
        if inst.get("name") in names and _public(inst.get("version")) == _public(change.after):
            how = inst.get("installer") or "installed (no INSTALLER record)"
            return (
                f"{how}, {when(inst.get('mtime'))} ({inst['name']} {inst.get('version')}: "
                "dist-info INSTALLER and time)"
            )
    return None


def _package_words(event: Mapping[str, Any]) -> str:
    versions = f"{event.get('before') or '—'} → {event.get('after') or '—'}"
    by = f" by {event['by']}" if event.get("by") else ""
    return (
        f"{event.get('action')} {event.get('package')} {versions}{by} "
        f"({event.get('source')}, {event.get('at') or 'time not logged'})"
    )


def _package_cause(change: Change, facts: Mapping[str, Any]) -> str | None:
    events = list((facts.get("changes") or {}).get("packages") or ())
    want = "nvidia" if change.fact in DRIVER_FACTS else "cuda"
    hits = [e for e in events if want in str(e.get("package", "")).lower()]
    if not hits:
        return None
    new = _public(change.after).split(" ")[0]
    matching = [e for e in hits if new and new in str(e.get("after") or "")]
    event = (matching or hits)[-1]
    words = _package_words(event)
    d = facts.get("driver") or {}
    module, user = d.get("proc_version"), d.get("driver_version") or d.get("smi_version")
    if change.fact in DRIVER_FACTS and module and user and module != user:
        loaded = (facts.get("changes") or {}).get("module_loaded_at")
        at = f", loaded {when(loaded)}" if loaded else ""
        words += f"; kernel module still {module}{at} → NVML mismatch until it is reloaded"
    return words


def _restart_cause(change: Change, facts: Mapping[str, Any], since: int | None) -> str | None:
    starts = (facts.get("changes") or {}).get("starts") or ()
    later = [s for s in starts if since is None or (s.get("started_at") or 0) > since]
    if later:
        s = later[-1]
        who = s.get("unit") or f"pid {s.get('pid')}"
        restarts = f", {s['restarts']} restarts so far" if s.get("restarts") is not None else ""
        return f"{who} (re)started {when(s.get('started_at'))}{restarts}"
    if change.fact == "JIT cache":
        times = (facts.get("changes") or {}).get("jit_cache") or ()
        if change.after == "empty":
            return "the JIT cache was emptied between the probes (no cache dir left)"
        if times:
            newest = max(times, key=lambda t: t.get("mtime") or 0)
            return f"{newest.get('path')} written {when(newest.get('mtime'))}"
    return None


def likely_causes(
    changes: Iterable[Change], after: Snapshot, before: Snapshot
) -> list[dict[str, str]]:
    """``[{"change": words, "evidence": …}]`` for the changes the host's records explain."""
    facts = after.facts or {}
    since = _epoch(before.at)
    out = []
    for change in changes:
        evidence = None
        if change.fact in DISTS:
            evidence = _install_cause(change, facts)
        elif change.fact in DRIVER_FACTS or change.fact in TOOLKIT_FACTS:
            evidence = _package_cause(change, facts)
        elif change.fact in RESTART_FACTS:
            evidence = _restart_cause(change, facts, since)
        if evidence is None:
            continue
        same = next((c for c in out if c["evidence"] == evidence), None)
        if same is not None:  # one package run behind several changes: one cause
            same["change"] += f"; {change.words}"
        else:
            out.append({"change": change.words, "evidence": evidence})
    return out
