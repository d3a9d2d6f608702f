"""``detective-tui export prometheus [TARGET…] [--output FILE]``.

Probes the hosts and writes the Prometheus text exposition of their verdicts
(``tui.core.records.prometheus``) to stdout, or with ``--output`` to FILE for node_exporter's
textfile collector: a temp file in FILE's directory, fsynced, renamed over FILE, so the collector
reads the old file or the new one, never half of one. Exit codes as ``diagnose`` (1 critical, 2 a
host not reached or not fully seen, 0); 3 for bad usage, a bad inventory or a FILE that cannot
be written (its directory missing, a full disk), which is then left as it was; 3 too after
writing when an inventory entry is bad (exported as a host that is down, with its error).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tui.commands import command_help, output
from tui.commands.host_args import add_fleet_targets
from tui.commands.verdict_probe import probe_verdicts
from tui.core import exitcodes
from tui.core.durable import DurableWriteError
from tui.core.reach.inventory import InventoryError
from tui.core.records.prometheus import exposition
from tui.core.records.verdicts import HostVerdict


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export",
        help=command_help("export"),
        description="Export the hosts' verdicts for other systems. No TARGET: every host.",
    )
    kinds = p.add_subparsers(dest="kind", metavar="KIND", required=True)
    prom = kinds.add_parser(
        "prometheus",
        help="the node_exporter textfile-collector format",
        description="Probe the hosts and write their verdicts as Prometheus gauges.",
    )
    add_fleet_targets(prom)
    prom.add_argument(
        "--output",
        metavar="FILE",
        type=Path,
        help="write FILE atomically (e.g. /var/lib/node_exporter/textfile/detective_tui.prom)",
    )
    prom.set_defaults(func=run)


def exit_code(verdicts: list[HostVerdict]) -> int:
    if any(f.severity == "critical" for v in verdicts for f in v.findings):
        return exitcodes.CRITICAL
    if any(not v.complete for v in verdicts):
        return exitcodes.UNREACHABLE
    return exitcodes.OK


def run(args: argparse.Namespace) -> int:
    out: Path | None = args.output
    if out is not None and not out.parent.is_dir():
        output.warn(
            f"detective-tui export: {out.parent} is not a directory; create it (the textfile "
            "collector's --collector.textfile.directory) or pass another --output"
        )
        return exitcodes.USAGE
    try:
        verdicts, bad_entry = probe_verdicts(args)
    except InventoryError as exc:
        output.warn(f"detective-tui export: {exc}")
        return exitcodes.USAGE
    text = exposition(verdicts)
    if out is None:
        output.write_text(text)
    else:
        try:
            output.write_file(out, text)
        except DurableWriteError as exc:
            output.warn(f"detective-tui export: {exc}; {out} was left as it was")
            return exitcodes.USAGE
    # a bad inventory entry is exported as a host that is down, the others as probed; then 3
    return exitcodes.USAGE if bad_entry else exit_code(verdicts)
