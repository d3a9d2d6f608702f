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
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from typing import Any

from tui.commands import command_help, output
from tui.commands.host_args import add_host_options, hosts_for, report_unfinished
from tui.core import exitcodes
from tui.core.fixes import make_stamp
from tui.core.fixes.executor import apply_plan, outcome_summary
from tui.core.fixes.fleet import (
    FleetItem,
    HostFixResult,
    apply_fleet,
    plan_fleet,
    plan_undo_last,
    undo_fleet,
)
from tui.core.fixes.history import journal_lines, record_line
from tui.core.fixes.journal import now
from tui.core.fixes.outcome_words import undo_restored
from tui.core.fixes.registry import FIX_IDS
from tui.core.fixes.render import outcome_text, preview_text
from tui.core.fixes.restart import restart_after
from tui.core.fixes.undo import (
    UndoError,
    UndoRecord,
    list_records,
    load_record,
    mark_done,
    require_undo_order,
    undo_plan,
)
from tui.core.hostlist import split_list
from tui.core.hosts import Host
from tui.core.inventory import InventoryError
from tui.core.redact import redact, redact_text
from tui.core.runner import Session
from tui.core.transcript import Transcript

PYTHON_PARAM = "python"  # NAME=VALUE that picks the interpreter instead of a fix parameter
LAST = "last"  # --undo last: the newest fix still in place on each host


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
    p.add_argument("--json", action="store_true", help="print results as JSON")
    add_host_options(p)
    p.set_defaults(func=run)


class UsageError(Exception):
    pass


def _say(text: str = "") -> None:
    output.say(text)


def _err(text: str) -> None:
    output.warn(f"detective-tui fix: {text}")


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


def _confirm(question: str, assume_yes: bool) -> bool:
    if assume_yes:
        return True
    if not sys.stdin.isatty():
        raise UsageError(
            "refusing to change anything without confirmation: there is no terminal to ask on "
            "(pass --yes to apply, or --dry-run to only preview)"
        )
    answer = input(f"{question} [y/N] ").strip().lower()
    return answer in ("y", "yes")


def _targets(args: argparse.Namespace) -> list[Host]:
    names = split_list(args.target)
    all_hosts = "*" in names
    return hosts_for(args, [n for n in names if n != "*"], all_hosts, report=False)


def _line_printer(prefix: str) -> Callable[[str], None]:
    def out(line: str) -> None:
        _say(f"{prefix}{line}")

    return out


def run(args: argparse.Namespace) -> int:
    try:
        hosts = _targets(args)
        if args.mark_done:
            if len(hosts) != 1:
                raise UsageError(f"--mark-done {args.mark_done} takes exactly one host")
            return _mark_done(hosts[0], args.mark_done)
        report_unfinished(hosts)
        if args.history or args.undo:
            if args.history:
                return _history(hosts[0], args) if len(hosts) == 1 else _fleet_history(hosts, args)
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
    except (InventoryError, UsageError) as exc:
        _err(str(exc))
        return exitcodes.USAGE
    with Transcript.open_session() as transcript:
        transcript.record("cli", command="fix", argv=sys.argv[1:])
        try:
            if args.undo and len(hosts) > 1:
                return asyncio.run(_fleet_undo(hosts, args, transcript))
            if args.undo:
                return asyncio.run(_undo(hosts[0], args, transcript))
            return asyncio.run(_fix(hosts, args, params, python, transcript))
        except UsageError as exc:
            _err(str(exc))
            transcript.record("decision", answer="refused", reason=str(exc))
            return exitcodes.USAGE


def _mark_done(host: Host, ref: str) -> int:
    try:
        record = mark_done(load_record(host.name, ref), now())
    except UndoError as exc:
        _err(str(exc))
        return exitcodes.USAGE
    _say(
        f"{record.id} on {host.name}: marked done ({record.state_text()}); it can still be "
        f"undone with: detective-tui fix {host.name} --undo {record.id}"
    )
    return exitcodes.OK


def _history(host: Host, args: argparse.Namespace) -> int:
    try:
        records = list_records(host.name)
    except UndoError as exc:
        _err(str(exc))
        return exitcodes.USAGE
    if args.json:
        output.write_json([r.summary_json() for r in records])
        return exitcodes.OK
    if not records:
        _say(f"No fixes to undo on {host.name}.")
    for r in records:
        _say_record(r)
    return exitcodes.OK


def _say_record(r: UndoRecord, indent: str = "") -> None:
    """A record's line; for one that did not end cleanly, its journal step by step."""
    _say(redact_text(indent + record_line(r)))
    if r.state != "done" or (r.undo_run is not None and r.undo_run.state != "done"):
        for line in journal_lines(r, indent + "    "):
            _say(redact_text(line))


def _fleet_history(hosts: list[Host], args: argparse.Namespace) -> int:
    """``--history`` for several hosts: each host's records under its name (JSON: a list of
    ``{"host", "records", "error"}``). A host whose records cannot be read is reported and the
    others are still listed; the exit code is then 3."""
    listed: list[dict[str, Any]] = []
    bad = False
    for host in hosts:
        try:
            records = list_records(host.name)
        except UndoError as exc:
            bad = True
            _err(str(exc))
            listed.append({"host": host.name, "records": [], "error": str(exc)})
            continue
        listed.append(
            {"host": host.name, "records": [r.summary_json() for r in records], "error": None}
        )
        if args.json:
            continue
        _say(f"{host.name}:")
        if not records:
            _say("  No fixes to undo.")
        for r in records:
            _say_record(r, "  ")
    if args.json:
        _dump(redact(listed))
    return exitcodes.USAGE if bad else exitcodes.OK


async def _fix(
    hosts: list[Host],
    args: argparse.Namespace,
    params: dict[str, str],
    python: str | None,
    transcript: Transcript,
) -> int:
    async with Session(transcript=transcript) as session:
        print(f"Probing {', '.join(h.name for h in hosts)}…", file=sys.stderr, flush=True)
        items = await plan_fleet(
            session, hosts, args.fix_id, params, python, finding=args.finding, stamp=make_stamp()
        )
        for item in items:
            _show_item(item, args)
        planned = [i for i in items if i.plan is not None]
        if args.dry_run:
            if args.json:
                _dump([_item_json(i) for i in items])
            return _planning_code(items)
        if not planned:
            return _planning_code(items)
        count = f"{len(planned)} hosts" if len(planned) > 1 else planned[0].host.name
        if not _confirm(f"Apply {args.fix_id} to {count}?", args.yes):
            transcript.record("decision", fix=args.fix_id, answer="no")
            _say("Nothing was changed.")
            return exitcodes.OK
        transcript.record(
            "decision", fix=args.fix_id, answer="yes", hosts=[i.host.name for i in planned]
        )
        if len(items) == 1:
            return await _apply_one(session, planned[0], args)
        results = await apply_fleet(session, items, None if args.json else _host_line)
        _fleet_table(results, args)
        if args.restart:
            await _restart_fleet(session, results, args)
        return _fleet_code(results)


async def _restart_fleet(
    session: Session, results: list[HostFixResult], args: argparse.Namespace
) -> None:
    """``--restart`` for a fleet: restart the changed units of every host that was fixed."""
    for r in results:
        plan = restart_after(r.outcome) if r.outcome is not None else None
        if r.outcome is None or plan is None:
            continue
        session.record(
            "decision",
            action="restart",
            host=r.item.host.name,
            units=list(r.outcome.pending_restart),
        )
        again = await apply_plan(session, r.item.host, plan, record_undo=False)
        if not args.json:
            _say(outcome_text(again))


def _show_item(item: FleetItem, args: argparse.Namespace) -> None:
    if args.json:
        return
    if item.plan is None:
        _err(f"{item.host.name}: {item.error}")
        return
    _say(preview_text(item.plan))
    _say()


def _item_json(item: FleetItem) -> dict[str, Any]:
    plan = item.plan
    return {
        "host": item.host.name,
        "error": item.error,
        "fix": plan.fix_id if plan else None,
        "params": dict(plan.params) if plan else None,
        "python": plan.python if plan else None,
        "needs_root": plan.needs_root if plan else None,
        "commands": list(plan.preview_commands()) if plan else [],
        "undo": [s.undo for s in plan.steps] if plan else [],
        "verify_gone": list(plan.verify_gone) if plan else [],
        "notes": list(plan.notes) if plan else [],
    }


def _dump(data: object) -> None:
    output.write_json(data)


def _planning_code(items: list[FleetItem]) -> int:
    if any(i.unreachable for i in items):
        return exitcodes.UNREACHABLE
    if any(i.plan is None and not i.skipped for i in items):
        return exitcodes.USAGE
    return exitcodes.OK


async def _apply_one(session: Session, item: FleetItem, args: argparse.Namespace) -> int:
    assert item.plan is not None
    printer = None if args.json else _line_printer("  │ ")
    outcome = await apply_plan(session, item.host, item.plan, printer, before=item.facts)
    results = [outcome]
    if not args.json:
        _say()
        _say(outcome_text(outcome))
    restart = restart_after(outcome)
    if restart is not None:
        units = ", ".join(outcome.pending_restart)
        if args.restart or (
            not args.yes and sys.stdin.isatty() and _confirm(f"Restart {units} now?", False)
        ):
            session.record("decision", action="restart", units=list(outcome.pending_restart))
            if not args.json:
                _say(preview_text(restart))
            again = await apply_plan(session, item.host, restart, printer, record_undo=False)
            results.append(again)
            if not args.json:
                _say(outcome_text(again))
        elif not args.json:
            _say(f"Not restarted. Restart later with: systemctl restart {units}")
    if args.json:
        _dump([outcome_summary(o) for o in results])
    return exitcodes.OK if outcome.ok else exitcodes.CRITICAL


def _fleet_table(results: list[HostFixResult], args: argparse.Namespace) -> None:
    if args.json:
        _dump(
            [
                {
                    "host": r.item.host.name,
                    "status": r.status,
                    "detail": r.detail,
                    "outcome": outcome_summary(r.outcome) if r.outcome else None,
                }
                for r in results
            ]
        )
        return
    width = max(len(r.item.host.name) for r in results)
    _say()
    _say(f"{'host'.ljust(width)}  {'result'.ljust(11)}  detail")
    for r in results:
        _say(f"{r.item.host.name.ljust(width)}  {r.status.ljust(11)}  {r.detail}")


def _fleet_code(results: list[HostFixResult]) -> int:
    statuses = {r.status for r in results}
    if statuses & {"failed", "stopped", "unresolved"}:
        return exitcodes.CRITICAL
    if "unreachable" in statuses:
        return exitcodes.UNREACHABLE
    return exitcodes.OK


async def _undo(host: Host, args: argparse.Namespace, transcript: Transcript) -> int:
    try:
        record = load_record(host.name, args.undo)
        require_undo_order(record)
    except UndoError as exc:
        _err(str(exc))
        return exitcodes.USAGE
    async with Session(transcript=transcript) as session:
        probed = await session.probe(host)
        if probed.facts is None:
            _err(f"{host.name}: {probed.error}")
            return exitcodes.UNREACHABLE
        plan = undo_plan(record, host, sudo=not probed.facts.host.is_root, stamp=make_stamp())
        if not args.json:
            _say(preview_text(plan))
            _say()
        if args.dry_run:
            if args.json:
                _dump({"record": record.to_json(), "commands": list(plan.preview_commands())})
            return exitcodes.OK
        if not _confirm(f"Undo {record.fix_id} ({record.id}) on {host.name}?", args.yes):
            transcript.record("decision", undo=record.id, answer="no")
            _say("Nothing was changed.")
            return exitcodes.OK
        transcript.record("decision", undo=record.id, answer="yes")
        printer = None if args.json else _line_printer("  │ ")
        outcome = await apply_plan(
            session, host, plan, printer, before=probed.facts, record_undo=False, undoing=record
        )
    restored = undo_restored(outcome, record.findings_before)
    if args.json:
        _dump({**outcome_summary(outcome), "original_verdict_restored": restored})
    else:
        _say()
        _say(outcome_text(outcome, record.findings_before))
    return exitcodes.OK if outcome.applied else exitcodes.CRITICAL


async def _fleet_undo(hosts: list[Host], args: argparse.Namespace, transcript: Transcript) -> int:
    """``fix a,b,c --undo last``: each host's newest fix still in place, previewed per host,
    one confirmation, undone concurrently, one row per host (exit codes as the fleet fix)."""
    async with Session(transcript=transcript) as session:
        names = ", ".join(h.name for h in hosts)
        print(f"Reading the undo records of {names}…", file=sys.stderr, flush=True)
        items = await plan_undo_last(session, hosts, stamp=make_stamp())
        for item in items:
            if item.skipped and not args.json:  # nothing to undo there: not an error
                _say(f"{item.host.name}: {item.error}")
            else:
                _show_item(item, args)
        planned = [i for i in items if i.plan is not None]
        if args.dry_run:
            if args.json:
                _dump([_item_json(i) for i in items])
            return _planning_code(items)
        if not planned:  # nothing to undo anywhere, or nothing that can be: one row each
            _fleet_table([HostFixResult(item=i, outcome=None) for i in items], args)
            return _planning_code(items)
        count = f"{len(planned)} hosts" if len(planned) > 1 else planned[0].host.name
        if not _confirm(f"Undo the last fix on {count}?", args.yes):
            for i in planned:
                _undo_decision(transcript, i, "no")
            _say("Nothing was changed.")
            return exitcodes.OK
        for i in planned:
            _undo_decision(transcript, i, "yes")
        results = await undo_fleet(session, items, None if args.json else _host_line)
        _fleet_table(results, args)
        if args.restart:
            await _restart_fleet(session, results, args)
        return _fleet_code(results)


def _host_line(host: str, line: str) -> None:
    _say(f"[{host}] {line}")


def _undo_decision(transcript: Transcript, item: FleetItem, answer: str) -> None:
    assert item.undo_record is not None
    transcript.record(
        "decision", undo=item.undo_record.id, answer=answer, host=item.host.name, fleet=True
    )
