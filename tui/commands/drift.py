"""``detective-tui drift [TARGET…] [--all] [--json]``: the fleet grouped by stack, each broken
group against the nearest healthy one (``tui.core.records.drift``), from each host's newest probe in
the history (nothing is probed; the demo fleet's hosts get their history on first read).
No TARGET: every inventory host. Exit 0; 3 for bad usage or inventory.
"""

from __future__ import annotations

import argparse

from tui.commands import command_help, output
from tui.commands.host_args import add_fleet_targets, hosts_for
from tui.core import exitcodes
from tui.core.reach.inventory import InventoryError
from tui.core.records.drift import KEY_WORDS, drift_json
from tui.core.records.history import HistoryError
from tui.core.records.history_view import judged, reached
from tui.demo.history import host_snapshots


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "drift",
        help=command_help("drift"),
        description="Hosts grouped by stack; each broken group against the nearest healthy one.",
    )
    add_fleet_targets(p)
    p.add_argument("--json", action="store_true", help="print the groups and drift as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        hosts = hosts_for(args, args.targets, args.all_hosts, report=False)
        newest, never = [], []
        for host in hosts:
            found = reached(host_snapshots(host))
            if found:
                newest.append(judged(found[0]))
            else:
                never.append(host.name)
    except (InventoryError, HistoryError) as exc:
        output.warn(f"detective-tui drift: {exc}")
        return exitcodes.USAGE
    data = drift_json(newest, never)
    if args.json:
        output.write_json(data)
        return exitcodes.OK
    for g in data["groups"]:
        stack = " · ".join(f"{KEY_WORDS[k]} {v or '—'}" for k, v in g["stack"].items())
        output.say(f"{len(g['hosts']):>3} × {g['verdict']:<8} {stack}: {', '.join(g['hosts'])}")
    for d in data["drift"]:
        output.say(d["words"])
    if never:
        output.say(f"no reached probe in the history: {', '.join(never)}")
    return exitcodes.OK
