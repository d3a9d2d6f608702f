"""One host's row in the fleet table: its cells, styled by status, severity and age."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from rich.text import Text

from tui.ui.fleet_state import COLUMNS, NOT_REACHED, HostState
from tui.ui.freshness import is_stale, probed_text

CELL_STYLE = {
    "critical": "bold red",
    "warning": "bold yellow",
    "info": "cyan",
    "none": "green",
    "rejects GPU": "bold red",
    "import error": "bold red",
    "cannot compile": "bold red",
}
STATUS_STYLE = {
    "unreachable": "red",
    "hostkey-unknown": "yellow",
    "hostkey-changed": "bold red",
    "hostkey-revoked": "bold red",
    "timeout": "red",
    "probe-failed": "red",
    "bad-inventory": "bold red",
    "probing": "cyan",
    "connecting": "cyan",
    "queued": "dim",
    "idle": "dim",
}
STALE_STYLE = "yellow"
REASON_STYLE = {"critical": "red", "warning": "yellow"}

PENDING_STYLE = {"restart": "bold yellow", "interrupted": "bold red", "failed": "bold red"}


def _status_cell(state: HostState, now: datetime, stale_minutes: int) -> Text:
    if state.pending is not None and not state.busy:
        return Text(state.row.status, style=PENDING_STYLE[state.pending.kind], no_wrap=True)
    if state.status != "done":
        return Text(state.row.status, style=STATUS_STYLE.get(state.status, ""), no_wrap=True)
    if is_stale(state, now, stale_minutes):
        age = probed_text(state, now).removeprefix("probed ")
        return Text(f"stale, {age}", style=STALE_STYLE, no_wrap=True)
    return Text(probed_text(state, now) or state.row.status, no_wrap=True)


def cells(
    state: HostState,
    now: datetime,
    stale_minutes: int = 0,
    keys: Sequence[str] = tuple(k for k, _ in COLUMNS),
) -> tuple[Text, ...]:
    """One host's cells of the columns ``keys``, styled: a stale row is dimmed, a demo host's
    name in italics."""
    row = state.row
    stale = is_stale(state, now, stale_minutes)
    worst = row.worst if state.diagnosis is not None else ""
    out = []
    for key in keys:
        text = row.cell(key)
        if key == "status":
            out.append(_status_cell(state, now, stale_minutes))
            continue
        if key == "host":
            style = "italic" if state.host.demo else "bold"
        elif key == "worst":
            style = CELL_STYLE.get(text, "")
        elif key == "verdict":
            # FlashInfer's own "ok" is not green on a host something else breaks
            style = (
                "green" if text == "ok" and worst in ("none", "info") else CELL_STYLE.get(text, "")
            )
        elif key == "reason" and state.pending is not None and not state.busy:
            style = PENDING_STYLE[state.pending.kind]
        elif key == "reason":
            style = "red" if state.status in NOT_REACHED else REASON_STYLE.get(worst, "")
        else:
            style = ""
        if stale and key != "host":
            style = f"{style} dim".strip()
        out.append(Text(text, style=style, no_wrap=True))
    return tuple(out)
