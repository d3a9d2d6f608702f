"""``detective-tui`` without a sub-command: the app for the command line (the inventory, the
demo fleet or ``--ingest``'s captures), and running it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace

from tui.core import exitcodes, locations
from tui.core.hosts import Host
from tui.core.reach.inventory import InventoryError, find_inventory, load_inventory
from tui.demo.fleet import demo_fleet
from tui.ui.app import INVENTORY_NOTICE, DetectiveApp
from tui.ui.config import (
    ConfigError,
    Settings,
    columns_override,
    load_settings,
    reprobe_override,
)

DEMO_NOTICE = (
    "Demo fleet: simulated hosts run through the real probe and diagnosis. P probes them all again."
)


def probes_on_start(settings: Settings, hosts: Sequence[Host]) -> bool:
    """``probe_on_start``: yes, no, or auto — yes where every host is a demo host or this
    machine (nothing to reach over SSH, nothing surprising), no for an SSH inventory."""
    if settings.probe_on_start != "auto":
        return settings.probe_on_start == "yes"
    return all(h.demo or h.local or h.invalid for h in hosts)


def build_app(args: argparse.Namespace) -> DetectiveApp:
    """The app for the parsed command line. Raises ``ConfigError`` / ``InventoryError`` with
    a message that names the file (and line) and what to do.

    ``--demo``: the demo fleet only. No inventory anywhere: this machine plus the demo fleet.
    """
    settings = load_settings()
    override = reprobe_override(getattr(args, "reprobe_minutes", None))
    minutes, source = override or (settings.reprobe_minutes, None)
    columns = columns_override(getattr(args, "columns", None))
    if columns is not None:
        settings = replace(settings, columns=columns[0])
    if getattr(args, "ingest", None):
        from tui.ui.ingested import ingested_app

        return ingested_app(args, settings)
    notice = None
    if args.demo:
        hosts: list[Host] = list(demo_fleet())
        notice = DEMO_NOTICE
    else:
        path = find_inventory(getattr(args, "hosts", None))
        inventory = load_inventory(path, keep_bad=True)
        hosts = list(inventory.hosts)
        if inventory.errors:  # every error at once; the bad entries are rows of their own
            notice = (
                f"{INVENTORY_NOTICE} {len(inventory.errors)} error(s) in {path}; the other "
                "hosts are loaded, each bad entry is a row saying what to fix:\n"
                + "\n".join(str(e) for e in inventory.errors)
            )
        if path is None:
            hosts += demo_fleet()
            notice = (
                "No inventory found, so this is this machine (local) plus the built-in demo "
                f"fleet. Write {locations.default_inventory()} or ./hosts.yaml to list your "
                "own hosts."
            )
    return DetectiveApp(
        hosts,
        read_only=args.read_only,
        settings=settings,
        notice=notice,
        probe_on_start=probes_on_start(settings, hosts),
        reprobe_s=minutes * 60.0,
        reprobe_from=source,
        columns_from=columns[1] if columns is not None else None,
    )


def run_app(args: argparse.Namespace) -> int:
    """Entry point of ``detective-tui`` without a sub-command."""
    try:
        app = build_app(args)
    except (ConfigError, InventoryError) as e:
        print(f"detective-tui: {e}", file=sys.stderr)
        return exitcodes.USAGE
    app.run()
    return app.return_code or 0
