"""``detective-tui fix TARGET FIX_ID [NAME=VALUE…] [--dry-run | --yes]``: preview, confirm, apply.

Also ``fix TARGET --history`` (the fixes applied there that can be undone, with the state of
each one's journal), ``fix TARGET --undo RECORD|last`` and ``fix TARGET --mark-done RECORD|last``
(accept a fix that was cut or stopped mid-run as it is). A fix left unfinished on a host is
shown (stderr) by every command on that host (``tui.commands.host_args``). TARGET may name
several hosts (``a,b,c``, or ``'*'`` for every inventory host): the fix is then planned and
applied per host, one row each; so is ``--undo last`` (the newest fix still in place on each
host; a host with none has nothing to undo), and ``--history`` lists each host's records. A
record id names one host's record, so ``--undo ID`` takes exactly one host.

Exit codes: 0 applied and verified (or a dry run); 1 a fix failed or its findings remain;
2 a host could not be reached or probed; 3 bad usage, a fix that cannot be planned for the
host, or no confirmation (no terminal and no ``--yes``).

The undo is ``tui.commands.fix_undo``, the history and ``--mark-done`` ``fix_history``, what
they share ``fix_common``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from tui.commands import command_help
from tui.commands.fix_common import (
    LAST,
    UsageError,
    confirm,
    dump,
    err,
    fleet_code,
    fleet_table,
    host_line,
    item_json,
    line_printer,
    planning_code,
    restart_fleet,
    rollout,
    say,
    show_item,
)
from tui.commands.fix_history import fleet_history, history, mark_record_done
from tui.commands.fix_undo import fleet_undo, undo
from tui.commands.host_args import add_host_options, hosts_for, report_unfinished
from tui.core import exitcodes
from tui.core.fixes import make_stamp
from tui.core.fixes.registry import FIX_IDS
from tui.core.hosts import Host
from tui.core.reach.hostlist import split_list
from tui.core.reach.inventory import InventoryError
from tui.core.records.decision import Decision, record_decision
from tui.core.records.transcript import Transcript
from tui.core.run.fix_executor import outcome_summary
from tui.core.run.fix_render import outcome_text, preview_text
from tui.core.run.fix_session import FixSession, Rollout
from tui.core.run.fleet import plan_fleet
from tui.core.run.runner import Session

PYTHON_PARAM = "python"  # NAME=VALUE that picks the interpreter instead of a fix parameter


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fix",
        help=command_help("fix"),
        description=(
            "Preview and apply a fix. Without NAME=VALUE the parameters the diagnosis proposed "
            "are used. python=PATH picks the interpreter. TARGET may be a,b,c or '*' (every "
            "inventory host)."
        ),
    )
    p.add_argument("target", metavar="TARGET", help="inventory name, local, or ssh target")
    p.add_argument("fix_id", metavar="FIX_ID", nargs="?", help=", ".join(FIX_IDS))
    p.add_argument("params", metavar="NAME=VALUE", nargs="*", help="fix parameters")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="print the exact commands only")
    mode.add_argument("--yes", action="store_true", help="apply without asking")
    p.add_argument(
        "--undo",
        metavar="RECORD",
        help="undo an applied fix: its id (one host), or 'last' (the newest fix still in "
        "place on each TARGET host)",
    )
    p.add_argument(
        "--history",
        action="store_true",
        help="list the fixes that can be undone, per host, with their journal's state",
    )
    p.add_argument(
        "--mark-done",
        metavar="RECORD",
        help="accept a fix that was cut or stopped mid-run as it is (its id, or 'last'); it "
        "stays undoable",
    )
    p.add_argument("--finding", metavar="ID", help="only hosts whose diagnosis has this finding")
    p.add_argument(
        "--restart", action="store_true", help="restart the changed systemd units without asking"
    )
    p.add_argument(
        "--rolling",
        metavar="N",
        type=int,
        help="with several hosts: change at most N at a time (a host starts when one ends; "
        "default 8)",
    )
    p.add_argument(
        "--stop-on-failure",
        action="store_true",
        help="with several hosts: start no host once one failed or was not fixed (those are "
        "reported as not started)",
    )
    p.add_argument("--json", action="store_true", help="print results as JSON")
    add_host_options(p)
    p.set_defaults(func=run)


def _parse_params(items: list[str]) -> tuple[dict[str, str], str | None]:
    params: dict[str, str] = {}
    python = None
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise UsageError(
                f"parameter {item!r} is not NAME=VALUE (e.g. path=/usr/local/cuda-13.0)"
            )
        if name == PYTHON_PARAM:
            python = value
        else:
            params[name] = value
    return params, python


def _targets(args: argparse.Namespace) -> list[Host]:
    names = split_list(args.target)
    all_hosts = "*" in names
    return hosts_for(args, [n for n in names if n != "*"], all_hosts, report=False)


def run(args: argparse.Namespace) -> int:
    try:
        hosts = _targets(args)
        if args.mark_done:
            if len(hosts) != 1:
                raise UsageError(f"--mark-done {args.mark_done} takes exactly one host")
            return mark_record_done(hosts[0], args.mark_done)
        report_unfinished(hosts)
        if args.history or args.undo:
            if args.history:
                return history(hosts[0], args) if len(hosts) == 1 else fleet_history(hosts, args)
            if args.undo != LAST and len(hosts) != 1:
                names = ", ".join(h.name for h in hosts)
                raise UsageError(
                    f"--undo {args.undo} names one host's undo record, but {len(hosts)} hosts "
                    f"were given ({names}): name one host (fix HOST --undo {args.undo}), or "
                    "undo the last fix on each host with --undo last"
                )
        elif args.fix_id is None:
            raise UsageError(f"name a fix: {', '.join(FIX_IDS)}")
        elif args.fix_id not in FIX_IDS:
            raise UsageError(f"unknown fix {args.fix_id!r}; known fixes: {', '.join(FIX_IDS)}")
        params, python = _parse_params(args.params)
        plan_rollout = rollout(args)
    except (InventoryError, UsageError) as exc:
        err(str(exc))
        return exitcodes.USAGE
    with Transcript.open_session() as transcript:
        transcript.record("cli", command="fix", argv=sys.argv[1:])
        try:
            if args.undo and len(hosts) > 1:
                return asyncio.run(fleet_undo(hosts, args, transcript, plan_rollout))
            if args.undo:
                return asyncio.run(undo(hosts[0], args, transcript))
            return asyncio.run(_fix(hosts, args, params, python, transcript, plan_rollout))
        except UsageError as exc:
            err(str(exc))
            action = "undo" if args.undo else "fix"
            names = [h.name for h in hosts]
            refused = Decision.about(action, "refused", names, fix=args.fix_id, reason=str(exc))
            record_decision(transcript, refused)
            return exitcodes.USAGE


async def _fix(
    hosts: list[Host],
    args: argparse.Namespace,
    params: dict[str, str],
    python: str | None,
    transcript: Transcript,
    plan_rollout: Rollout,
) -> int:
    async with Session(transcript=transcript) as session:
        print(f"Probing {', '.join(h.name for h in hosts)}…", file=sys.stderr, flush=True)
        items = await plan_fleet(
            session, hosts, args.fix_id, params, python, finding=args.finding, stamp=make_stamp()
        )
        for item in items:
            show_item(item, args)
        run = FixSession(session, items, fix_id=args.fix_id, rollout=plan_rollout)
        if args.dry_run:
            if args.json:
                dump([item_json(i) for i in items])
            return planning_code(items)
        if not run.planned:
            return planning_code(items)
        count = f"{len(run.planned)} hosts" if len(run.planned) > 1 else run.hosts[0]
        if not confirm(f"Apply {args.fix_id} to {count}?", args.yes):
            run.decide("no")
            say("Nothing was changed.")
            return exitcodes.OK
        run.decide("yes")
        if len(items) == 1:
            return await _apply_one(run, args)
        if len(run.planned) > 1 and (args.rolling or args.stop_on_failure) and not args.json:
            say(run.rollout.describe())
        results = await run.apply(None if args.json else host_line)
        fleet_table(results, args)
        if args.restart:
            await restart_fleet(run, args)
        return fleet_code(results)


async def _apply_one(run: FixSession, args: argparse.Namespace) -> int:
    printer = None if args.json else line_printer("  │ ")
    on_line = (lambda _host, line: printer(line)) if printer else None
    (result,) = await run.apply(on_line)
    outcome = result.outcome
    if outcome is None:  # a bug in this host's run (the rest of the tool goes on)
        err(f"{result.item.host.name}: {result.detail}")
        return exitcodes.CRITICAL
    results = [outcome]
    if not args.json:
        say()
        say(outcome_text(outcome))
    restart = run.restart()
    if restart is not None:
        units = ", ".join(outcome.pending_restart)
        asked = not args.restart and not args.yes and sys.stdin.isatty()
        if args.restart or (asked and confirm(f"Restart {units} now?", False)):
            restart.decide("yes")
            if not args.json:
                for item in restart.planned:
                    assert item.plan is not None
                    say(preview_text(item.plan))
            for again in await restart.apply(on_line):
                if again.outcome is not None:
                    results.append(again.outcome)
                if not args.json:
                    say(outcome_text(again.outcome) if again.outcome else again.detail)
        else:
            if asked:
                restart.decide("no")
            if not args.json:
                say(f"Not restarted. Restart later with: systemctl restart {units}")
    if args.json:
        dump([outcome_summary(o) for o in results])
    return exitcodes.OK if outcome.ok else exitcodes.CRITICAL
