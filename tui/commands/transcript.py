"""``detective-tui transcript list | show FILE | export FILE [--format md|html|json]``.

FILE is a path, or a session name from ``list`` (with or without ``.jsonl``).
"""

from __future__ import annotations

import argparse
import sys

from tui.commands import command_help, output
from tui.core import exitcodes, locations
from tui.core.records.transcript import (
    EXPORT_FORMATS,
    TranscriptError,
    export,
    list_sessions,
    read_events,
    resolve_session,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "transcript",
        help=command_help("transcript"),
        description=f"Session transcripts live in {locations.sessions_dir()}.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions.add_parser("list", help="sessions, newest first")
    show = actions.add_parser(
        "show", help="print a session: rendered on a terminal, as Markdown when piped"
    )
    show.add_argument("file", metavar="FILE")
    exp = actions.add_parser("export", help="print a session as md, html or json")
    exp.add_argument("file", metavar="FILE")
    exp.add_argument("--format", choices=EXPORT_FORMATS, default="md")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        if args.action == "list":
            _list()
        else:
            path = resolve_session(args.file)
            if args.action == "show":
                output.write_markdown(export(path, "md"))
            else:
                output.write_text(export(path, args.format))
    except TranscriptError as exc:
        print(f"detective-tui transcript: {exc}", file=sys.stderr)
        return exitcodes.USAGE
    return exitcodes.OK


def _list() -> None:
    sessions = list_sessions()
    if not sessions:
        print(f"no sessions in {locations.sessions_dir()}", file=sys.stderr)
        return
    for path in sessions:
        try:
            events = read_events(path)
        except TranscriptError as exc:
            output.say(f"{path.name}  (unreadable: {exc})")
            continue
        hosts = sorted({str(e["host"]) for e in events if e.get("host")})
        started = events[0].get("ts", "?") if events else "?"
        output.say(f"{path.name}  {started}  {len(events)} events  {', '.join(hosts) or '-'}")
