"""``fix TARGET --undo RECORD|last``: one host's record, or the newest fix still in place on
each host, previewed, confirmed, undone and judged against the verdict before the fix."""

from __future__ import annotations

import argparse
import sys

from tui.commands.fix_common import (
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
    say,
    show_item,
)
from tui.core import exitcodes
from tui.core.fixes import make_stamp
from tui.core.fixes.undo import UndoError, load_record, require_undo_order, undo_plan
from tui.core.hosts import Host
from tui.core.records.transcript import Transcript
from tui.core.run.fix_executor import outcome_summary
from tui.core.run.fix_render import outcome_text, preview_text
from tui.core.run.fix_session import FixSession, Rollout
from tui.core.run.fleet import HostFixResult, plan_undo_last
from tui.core.run.outcome_words import undo_restored
from tui.core.run.runner import Session


async def undo(host: Host, args: argparse.Namespace, transcript: Transcript) -> int:
    try:
        record = load_record(host.name, args.undo)
        require_undo_order(record)
    except UndoError as exc:
        err(str(exc))
        return exitcodes.USAGE
    async with Session(transcript=transcript) as session:
        probed = await session.probe(host)
        if probed.facts is None:
            err(f"{host.name}: {probed.error}")
            return exitcodes.UNREACHABLE
        plan = undo_plan(record, host, sudo=not probed.facts.host.is_root, stamp=make_stamp())
        if not args.json:
            say(preview_text(plan))
            say()
        if args.dry_run:
            if args.json:
                dump({"record": record.to_json(), "commands": list(plan.preview_commands())})
            return exitcodes.OK
        run = FixSession.one(session, host, plan, probed.facts, undoing=record)
        if not confirm(f"Undo {record.fix_id} ({record.id}) on {host.name}?", args.yes):
            run.decide("no")
            say("Nothing was changed.")
            return exitcodes.OK
        run.decide("yes")
        printer = None if args.json else line_printer("  │ ")
        (result,) = await run.apply((lambda _host, line: printer(line)) if printer else None)
    outcome = result.outcome
    if outcome is None:  # a bug in this host's run
        err(f"{host.name}: {result.detail}")
        return exitcodes.CRITICAL
    restored = undo_restored(outcome, record.findings_before)
    if args.json:
        dump({**outcome_summary(outcome), "original_verdict_restored": restored})
    else:
        say()
        say(outcome_text(outcome, record.findings_before))
    return exitcodes.OK if outcome.applied else exitcodes.CRITICAL


async def fleet_undo(
    hosts: list[Host], args: argparse.Namespace, transcript: Transcript, plan_rollout: Rollout
) -> int:
    """``fix a,b,c --undo last``: each host's newest fix still in place, previewed per host,
    one confirmation, undone concurrently, one row per host (exit codes as the fleet fix)."""
    async with Session(transcript=transcript) as session:
        names = ", ".join(h.name for h in hosts)
        print(f"Reading the undo records of {names}…", file=sys.stderr, flush=True)
        items = await plan_undo_last(session, hosts, stamp=make_stamp())
        for item in items:
            if item.skipped and not args.json:  # nothing to undo there: not an error
                say(f"{item.host.name}: {item.error}")
            else:
                show_item(item, args)
        run = FixSession(session, items, kind="undo", rollout=plan_rollout)
        if args.dry_run:
            if args.json:
                dump([item_json(i) for i in items])
            return planning_code(items)
        if not run.planned:  # nothing to undo anywhere, or nothing that can be: one row each
            fleet_table([HostFixResult(item=i, outcome=None) for i in items], args)
            return planning_code(items)
        count = f"{len(run.planned)} hosts" if len(run.planned) > 1 else run.hosts[0]
        if not confirm(f"Undo the last fix on {count}?", args.yes):
            run.decide("no")
            say("Nothing was changed.")
            return exitcodes.OK
        run.decide("yes")
        results = await run.apply(None if args.json else host_line)
        fleet_table(results, args)
        if args.restart:
            await restart_fleet(run, args)
        return fleet_code(results)
