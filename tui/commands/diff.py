"""``detective-tui diff TARGET [OTHER] [--since WHEN] [--json]``: what changed.

One host: its newest probe against the one before it, or against its probe as of ``--since
WHEN`` (an ISO-8601 date or time, ``6h``/``2d``…, or ``ok`` — the newest earlier probe without
a critical finding). Two hosts: TARGET's newest probe against OTHER's. The changes come in the
words that matter for CUDA (``tui.core.records.history_diff``), then the findings that appeared and
went away, then — for one host — the likely causes from what the host recorded
(``tui.core.records.history_causes``). Exit 0; 2 when there are not two probes to compare; 3 for bad
usage or inventory.
"""

from __future__ import annotations

import argparse

from tui.commands import command_help, output
from tui.commands.host_args import add_host_options, one_host
from tui.core import exitcodes
from tui.core.reach.inventory import InventoryError
from tui.core.records.history import HistoryError
from tui.core.records.history_view import (
    WhenError,
    compare_hosts,
    diff_json,
    diff_lines,
    parse_when,
    pick_pair,
)
from tui.demo.history import host_snapshots


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "diff",
        help=command_help("diff"),
        description="Two probes of one host, or the newest probes of two hosts, compared.",
    )
    p.add_argument("target", metavar="TARGET", help="inventory name, local, or ssh target")
    p.add_argument("other", metavar="OTHER", nargs="?", help="a second host to compare with")
    p.add_argument("--since", metavar="WHEN", help="ISO date/time, 6h, 2d, or 'ok'")
    p.add_argument("--json", action="store_true", help="print the JSON object of CONTRACT.md")
    add_host_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        since = parse_when(args.since) if args.since else None
        host = one_host(args, args.target)
        other = one_host(args, args.other) if args.other else None
        mine = host_snapshots(host)
        theirs = host_snapshots(other) if other is not None else []
    except (InventoryError, HistoryError, WhenError) as exc:
        output.warn(f"detective-tui diff: {exc}")
        return exitcodes.USAGE
    if other is None:
        pair = pick_pair(mine, since)
        if isinstance(pair, str):
            output.warn(f"detective-tui diff: {host.name}: {pair}")
            return exitcodes.UNREACHABLE
        before, after = pair
    else:
        if since is not None:
            output.warn("detective-tui diff: --since compares one host's probes; give one TARGET")
            return exitcodes.USAGE
        compared = compare_hosts(host.name, other.name, mine, theirs)
        if isinstance(compared, str):
            output.warn(f"detective-tui diff: {compared}")
            return exitcodes.UNREACHABLE
        print_or_dump(args, compared)
        return exitcodes.OK
    print_or_dump(args, diff_json(host.name, None, before, after))
    return exitcodes.OK


def print_or_dump(args: argparse.Namespace, data: dict) -> None:
    if args.json:
        output.write_json(data)
    else:
        for line in diff_lines(data):
            output.say(line)
