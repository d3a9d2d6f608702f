"""``fix TARGET --history`` (each host's undo records with their journal's state) and
``fix TARGET --mark-done RECORD|last`` (accept a fix cut or stopped mid-run as it is)."""

from __future__ import annotations

import argparse
from typing import Any

from tui.commands import output
from tui.commands.fix_common import (
    dump,
    err,
    say,
)
from tui.core import exitcodes
from tui.core.fixes.undo import (
    UndoError,
    UndoRecord,
    list_records,
    load_record,
    mark_done,
)
from tui.core.hosts import Host
from tui.core.records.fix_history import journal_lines, record_line
from tui.core.records.fix_journal import now
from tui.core.redact import redact, redact_text


def mark_record_done(host: Host, ref: str) -> int:
    try:
        record = mark_done(load_record(host.name, ref), now())
    except UndoError as exc:
        err(str(exc))
        return exitcodes.USAGE
    say(
        f"{record.id} on {host.name}: marked done ({record.state_text()}); it can still be "
        f"undone with: detective-tui fix {host.name} --undo {record.id}"
    )
    return exitcodes.OK


def history(host: Host, args: argparse.Namespace) -> int:
    try:
        records = list_records(host.name)
    except UndoError as exc:
        err(str(exc))
        return exitcodes.USAGE
    if args.json:
        output.write_json([r.summary_json() for r in records])
        return exitcodes.OK
    if not records:
        say(f"No fixes to undo on {host.name}.")
    for r in records:
        _say_record(r)
    return exitcodes.OK


def _say_record(r: UndoRecord, indent: str = "") -> None:
    """A record's line; for one that did not end cleanly, its journal step by step."""
    say(redact_text(indent + record_line(r)))
    if r.state != "done" or (r.undo_run is not None and r.undo_run.state != "done"):
        for line in journal_lines(r, indent + "    "):
            say(redact_text(line))


def fleet_history(hosts: list[Host], args: argparse.Namespace) -> int:
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
            err(str(exc))
            listed.append({"host": host.name, "records": [], "error": str(exc)})
            continue
        listed.append(
            {"host": host.name, "records": [r.summary_json() for r in records], "error": None}
        )
        if args.json:
            continue
        say(f"{host.name}:")
        if not records:
            say("  No fixes to undo.")
        for r in records:
            _say_record(r, "  ")
    if args.json:
        dump(redact(listed))
    return exitcodes.USAGE if bad else exitcodes.OK
