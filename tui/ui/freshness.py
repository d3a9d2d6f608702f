"""How old a probe is: "probed 3m ago", and when it is stale (older than the setting)."""

from __future__ import annotations

from datetime import datetime

from tui.ui.fleet_state import HostState

UNITS = ((86400, "d"), (3600, "h"), (60, "m"))


def ago(seconds: float) -> str:
    """``just now`` under a minute, else the largest whole unit: ``3m ago``, ``2h ago``."""
    if seconds < 60:
        return "just now"
    for size, unit in UNITS:
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"


def age_s(state: HostState, now: datetime) -> float | None:
    """Seconds since the host's last probe ended (None: never probed)."""
    if state.finished_at is None:
        return None
    return max((now - state.finished_at).total_seconds(), 0.0)


def is_stale(state: HostState, now: datetime, stale_minutes: int) -> bool:
    """A finished probe older than ``stale_minutes`` (0: never stale); not while probing."""
    age = age_s(state, now)
    return bool(stale_minutes) and not state.busy and age is not None and age > stale_minutes * 60


def probed_text(state: HostState, now: datetime) -> str:
    """``probed 3m ago`` (``probed just now``) for a finished probe, else ``""``."""
    age = age_s(state, now)
    return "" if age is None else f"probed {ago(age)}"
