"""``detective-tui check [TARGET…] --format npd|nagios``: one status line and the exit code of
that convention (``tui.core.records.checks``), for node-problem-detector's custom plugins,
Nagios-style monitors and Slurm health checks. A bad inventory entry is a host that could not be
checked (unknown, its error in the line); an inventory that cannot be read at all, or bad usage,
exits 3 with the error on stderr."""

from __future__ import annotations

import argparse

from tui.commands import command_help, output
from tui.commands.host_args import add_fleet_targets
from tui.commands.verdict_probe import probe_verdicts
from tui.core import exitcodes
from tui.core.reach.inventory import InventoryError
from tui.core.records.checks import FORMATS, check


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check",
        help=command_help("check"),
        description="Probe the hosts; print one status line and exit by the chosen convention.",
    )
    add_fleet_targets(p)
    p.add_argument(
        "--format",
        required=True,
        choices=FORMATS,
        help="npd: 0 OK, 1 critical, 2 unknown, <= 80 bytes; nagios: 0/1/2/3, with perfdata",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        verdicts, _ = probe_verdicts(args)  # a bad entry: an unknown host, by the convention
    except InventoryError as exc:
        output.warn(f"detective-tui check: {exc}")
        return exitcodes.USAGE
    result = check(verdicts, args.format)
    output.say(result.line)
    return result.code
