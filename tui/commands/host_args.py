"""Which hosts a headless command works on: the inventory's, or the demo fleet's with ``--demo``."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Sequence

from tui.core import locations
from tui.core.hosts import Host
from tui.core.reach.inventory import (
    Inventory,
    InventoryError,
    expand_targets,
    resolve_targets,
    select_hosts,
)


def add_host_options(parser: argparse.ArgumentParser) -> None:
    """``--hosts FILE`` and ``--demo``, accepted before or after the sub-command."""
    parser.add_argument("--hosts", metavar="FILE", default=argparse.SUPPRESS, help="inventory file")
    parser.add_argument(
        "--demo",
        action="store_true",
        default=argparse.SUPPRESS,
        help="use the built-in demo fleet (simulated hosts, no SSH) instead of the inventory",
    )


def add_fleet_targets(parser: argparse.ArgumentParser) -> None:
    """``[TARGET…] [--all]`` plus the host options, for commands that work on several hosts."""
    parser.add_argument(
        "targets", nargs="*", metavar="TARGET", help="inventory name, local, or ssh target"
    )
    parser.add_argument("--all", dest="all_hosts", action="store_true", help="every inventory host")
    add_host_options(parser)


def host_flags(args: argparse.Namespace) -> str:
    """The host options to repeat in a command this one suggests (`` --demo``, `` --hosts F``),
    so the suggestion works on the same hosts."""
    if getattr(args, "demo", False):
        return " --demo"
    hosts = getattr(args, "hosts", None)
    return f" --hosts {shlex.quote(str(hosts))}" if hosts else ""


def hosts_for(
    args: argparse.Namespace,
    targets: Sequence[str],
    all_hosts: bool,
    *,
    report: bool = True,
    keep_bad: bool = False,
) -> list[Host]:
    """Resolve TARGETs against the demo fleet (``--demo``) or the inventory. With ``report``,
    a fix left unfinished on one of them (cut or stopped mid-run) is shown on stderr.

    Every error of the inventory's bad entries goes to stderr at once; a bad entry among the
    chosen hosts raises ``InventoryErrors``, or with ``keep_bad`` (probe, diagnose) is a host
    with ``invalid`` set that becomes its own error row."""
    if not getattr(args, "demo", False):
        hosts, errors = select_hosts(
            getattr(args, "hosts", None), targets, all_hosts, keep_bad=keep_bad
        )
        if errors:
            from tui.commands.output import warn

            warn(f"detective-tui: {len(errors)} error(s) in the inventory; the other hosts load:")
            for error in errors:
                warn(f"  {error}")
    else:
        from tui.demo.fleet import demo_fleet

        inventory = Inventory(hosts=demo_fleet(), path=None)
        targets = expand_targets(targets)
        for target in targets:
            if inventory.get(target) is None:
                names = ", ".join(h.name for h in inventory.hosts)
                raise InventoryError(f"{target!r} is not a demo host; the demo fleet has {names}")
        hosts = resolve_targets(inventory, targets, all_hosts)
    if report:
        report_unfinished(hosts)
    return hosts


def one_host(args: argparse.Namespace, target: str) -> Host:
    """The one host a single-host command works on; ``InventoryError`` when TARGET is a node
    set that names several."""
    hosts = hosts_for(args, [target], False)
    if len(hosts) != 1:
        raise InventoryError(
            f"{target!r} names {len(hosts)} hosts; this command takes one (probe, diagnose "
            "and fix take several)"
        )
    return hosts[0]


def report_unfinished(hosts: Sequence[Host]) -> None:
    """Each fix cut or stopped mid-run on these hosts, and how to inspect, undo or accept it."""
    if not (locations.state_dir() / "fixes").is_dir():  # no fix ever ran: skip the imports
        return
    from tui.commands.output import warn
    from tui.core.fixes.undo import unfinished
    from tui.core.records.fix_history import unfinished_notice

    for host in hosts:
        for record in unfinished(host.name):
            warn(f"detective-tui: {unfinished_notice(record)}")
