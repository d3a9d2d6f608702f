"""``detective-tui history TARGET [--json]``: the host's earlier probes, newest first.

Each entry: when, the verdict (``critical|warning|info|none|unreachable``), the finding ids and
the stack (driver and its CUDA, torch and its CUDA, the PATH nvcc, the JIT's CUDA, FlashInfer),
and — an addition to CONTRACT.md's keys — ``changed``: what differs from the probe before it.
A host never probed has an empty history (``[]``, exit 0). Exit 3 for bad usage or inventory.
"""

from __future__ import annotations

import argparse

from tui.commands import command_help, output
from tui.commands.host_args import add_host_options, one_host
from tui.core import exitcodes
from tui.core.reach.inventory import InventoryError
from tui.core.records.history import HistoryError, store_path
from tui.core.records.history_view import entries, stack_words
from tui.demo.history import host_snapshots


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "history",
        help=command_help("history"),
        description="This host's earlier probes, newest first: time, verdict, stack, changes.",
    )
    p.add_argument("target", metavar="TARGET", help="inventory name, local, or ssh target")
    p.add_argument("--json", action="store_true", help="print the JSON array of CONTRACT.md")
    add_host_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        host = one_host(args, args.target)
        listed = entries(host_snapshots(host))
    except (InventoryError, HistoryError) as exc:
        output.warn(f"detective-tui history: {exc}")
        return exitcodes.USAGE
    if args.json:
        output.write_json(listed)
        return exitcodes.OK
    if not listed:
        output.say(f"{host.name}: never probed (no history in {store_path(host.demo)})")
        return exitcodes.OK
    output.say(f"{host.name}: {len(listed)} probe(s), newest first")
    for e in listed:
        said = ", ".join(e["findings"]) or "no findings"
        if e["verdict"] == "unreachable":
            said = e["error"] or ""
        output.say(f"{e['at']}  {e['verdict']:<11}  {said}")
        if e["verdict"] != "unreachable":
            output.say(f"    {stack_words(e['stack'])}")
        for line in e["changed"]:
            output.say(f"    changed: {line}")
    return exitcodes.OK
