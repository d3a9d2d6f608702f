"""The one-line fleet summary above the hosts table: how many hosts, probed, busy, failed."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from tui.ui.fleet_state import FleetState


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def summary_text(
    fleet: FleetState,
    *,
    shown: int | None,
    marked: int,
    read_only: bool,
    grouped_by: str | None = None,
) -> Content:
    """``shown``: how many rows a filter leaves (None: no filter); ``grouped_by``: what the
    groups view groups by (None: the table is shown)."""
    counts: dict[str, int] = {}
    for s in fleet:
        counts[s.status] = counts.get(s.status, 0) + 1
    busy = sum(counts.get(k, 0) for k in ("queued", "connecting", "probing"))
    done = counts.get("done", 0)
    failed = len(fleet) - busy - done - counts.get("idle", 0)
    demo = sum(s.host.demo for s in fleet)
    real = len(fleet) - demo
    if not demo:
        head, size = "Fleet  ", _plural(real, "host")
    elif not real:
        head, size = "Demo fleet  ", _plural(demo, "simulated host")
    else:
        head, size = "Fleet  ", f"{_plural(real, 'host')} + {demo} demo (simulated)"
    parts = [size, f"{done} probed"]
    if busy:
        parts.append(f"{busy} in progress")
    if failed:
        parts.append(f"{failed} failed")
    if shown is not None:
        parts.append(f"showing {shown}")
    if marked:
        parts.append(f"{marked} marked")
    if grouped_by is not None:
        parts.append(f"by {grouped_by} (b)")
    mode = "read-only · " if read_only else ""
    return Content.assemble((head, "bold"), mode, " · ".join(parts))


class FleetSummary(Widget):
    """The one-line fleet summary. A reactive repaint, not ``Static.update``: that would
    re-layout the whole screen on every probe update."""

    text: reactive[Content] = reactive(Content)

    def render(self) -> Content:
        return self.text
