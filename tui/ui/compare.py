"""Compare two marked hosts (``c`` on the hosts screen): their newest reached probes diffed as
``detective-tui diff A B`` does, shown in a message box. Read off the event loop (a demo
host's history is seeded on first read, which probes)."""

from __future__ import annotations

from textual.screen import Screen

from tui.core.hosts import Host
from tui.core.records.history import HistoryError
from tui.core.records.history_view import compare_hosts, diff_lines
from tui.demo.history import host_snapshots
from tui.ui.screens.message import MessageScreen

NEED_TWO = "Mark two hosts (space) to compare them: c diffs the two marked hosts' last probes."


def comparison(a: Host, b: Host) -> tuple[str, str, str]:
    """(title, body, severity) of the comparison of ``a`` with ``b``."""
    title = f"{a.name} → {b.name}: what differs"
    try:
        compared = compare_hosts(a.name, b.name, host_snapshots(a), host_snapshots(b))
    except HistoryError as exc:
        return title, f"The history cannot be read: {exc}", "error"
    if isinstance(compared, str):
        return title, compared[0].upper() + compared[1:] + ".", "warning"
    return title, "\n".join(diff_lines(compared)), "info"


def open_comparison(screen: Screen[object], a: Host, b: Host) -> None:
    """Compute in a thread, then show the message box."""

    def work() -> None:
        title, body, severity = comparison(a, b)
        screen.app.call_from_thread(
            screen.app.push_screen, MessageScreen(title, body, severity=severity)
        )

    screen.run_worker(work, thread=True, group="compare", exit_on_error=False)
