"""``detective-tui --ingest PATH…``: the TUI on probe output captured by other engines.

The fleet is the hosts found in the captures (after the ``--hosts`` inventory's, when one is
given: those without output show as unreachable); every "probe" parses the host's capture
(``tui.core.run.ingest.CapturedSession``), so nothing is run anywhere, and the app is read-only.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tui.core.reach.inventory import InventoryError, find_inventory, load_inventory
from tui.core.records.transcript import Transcript
from tui.core.run.ingest import CapturedSession, IngestError, fleet_of, read_captures
from tui.ui.app import DetectiveApp
from tui.ui.config import Settings


def ingested_app(args: argparse.Namespace, settings: Settings) -> DetectiveApp:
    """Raises ``InventoryError`` for an inventory or a PATH that cannot be read."""
    try:
        captures, notes = read_captures([Path(p) for p in args.ingest])
    except IngestError as exc:
        raise InventoryError(f"--ingest: {exc}") from exc
    inventory = None
    if getattr(args, "hosts", None):
        inventory = list(load_inventory(find_inventory(args.hosts)).hosts)
    hosts, by_host = fleet_of(captures, inventory, notes)
    if not hosts:
        raise InventoryError(f"--ingest: no host output in {', '.join(args.ingest)}")

    def session() -> CapturedSession:
        return CapturedSession(by_host, transcript=Transcript.open_session())

    where = ", ".join(args.ingest)
    notice = " ".join([f"Captured output of {len(hosts)} hosts from {where} (read-only).", *notes])
    return DetectiveApp(
        hosts,
        read_only=True,
        settings=settings,
        session_factory=session,
        notice=notice,
        probe_on_start=True,
        captured=True,
    )
