"""``detective-tui explain [TARGET] [--text FILE|-] [--unit U | --container C | --log PATH]``.

Matches an error text against the signature catalogue (``tui.core.rules.symptoms``) and, with a
TARGET, judges each candidate cause on that host's diagnosis (``tui.core.judge.explain``). The text
comes from ``--text FILE`` (``-`` or nothing on a pipe: stdin), or from the host: a unit's
journal, a container's log or a log file (``tui.core.run.symptom_source``). Everything printed
goes through the one redaction path (``tui.commands.output``).

Exit codes (CONTRACT.md): 0 a cause confirmed; 1 none confirmed (recognised or not); 2 the
host could not be reached or probed; 3 bad usage (no text, an unreadable file, a log that is
not there, or a journalctl/docker/podman on the host that the trust rule would not run).
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from tui.commands import command_help, output
from tui.commands.host_args import add_host_options, host_flags, one_host
from tui.core import exitcodes
from tui.core.hosts import Host
from tui.core.judge.explain import explain, explanation_text
from tui.core.judge.judged import Judged
from tui.core.reach.inventory import InventoryError
from tui.core.records.transcript import Transcript
from tui.core.run.symptom_source import LogText, SourceKind, read_log

MAX_TEXT = 4 * 1024 * 1024  # bytes of --text read; a log tail is far smaller


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "explain",
        help=command_help("explain"),
        description="Trace an error text to its cause; with TARGET, judged on that host.",
    )
    p.add_argument("target", nargs="?", metavar="TARGET", help="the host the error came from")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--text", metavar="FILE", help="the error text ('-': stdin)")
    src.add_argument("--unit", metavar="UNIT", help="read the unit's journal on TARGET")
    src.add_argument("--container", metavar="NAME", help="read a docker/podman log on TARGET")
    src.add_argument("--log", metavar="PATH", help="read a log file on TARGET")
    p.add_argument("--json", action="store_true", help="the explain object of CONTRACT.md")
    add_host_options(p)
    p.set_defaults(func=run)


def _host_source(args: argparse.Namespace) -> tuple[SourceKind, str] | None:
    for kind in ("unit", "container", "log"):
        value = getattr(args, kind)
        if value is not None:
            return kind, value  # type: ignore[return-value]
    return None


def _read_text(path: str | None) -> tuple[str, str]:
    """(text, where it came from); ``OSError``/``ValueError`` with the file named."""
    if path in (None, "-"):
        if path is None and sys.stdin.isatty():
            raise ValueError(
                "no error text: give --text FILE, pipe it on stdin, or read it from the host "
                "with --unit, --container or --log"
            )
        return sys.stdin.read(MAX_TEXT), "stdin"
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read(MAX_TEXT), path


async def _judge(
    host: Host, source: tuple[SourceKind, str] | None
) -> tuple[LogText | None, Judged | None]:
    from tui.core.run.runner import Session
    from tui.core.run.service import probe_and_judge

    with Transcript.open_session() as transcript:
        transcript.record("cli", command="explain", targets=[host.name])
        async with Session(transcript=transcript) as session:
            log = await read_log(session, host, *source) if source else None
            if log is not None and log.error_kind is not None:  # not reached: no probe either
                from tui.core.run.runner import ProbeResult

                return log, Judged(ProbeResult(host, None, log.error, log.error_kind))
            if log is not None and log.error:  # nothing to explain: exit 3 without a probe
                return log, None
            return log, await probe_and_judge(session, host)


def run(args: argparse.Namespace) -> int:
    source = _host_source(args)
    if source is not None and args.target is None:
        output.warn(f"detective-tui explain: --{source[0]} reads on a host: give TARGET")
        return exitcodes.USAGE
    text, where = "", ""
    if source is None:
        try:
            text, where = _read_text(args.text)
        except (OSError, ValueError) as exc:
            output.warn(f"detective-tui explain: {exc}")
            return exitcodes.USAGE
    judged = None
    if args.target is not None:
        try:
            host = one_host(args, args.target)
        except InventoryError as exc:
            output.warn(f"detective-tui explain: {exc}")
            return exitcodes.USAGE
        log, judged = asyncio.run(_judge(host, source))
        if log is not None:
            text, where = log.text, log.source
            if log.error and log.error_kind is None:
                output.warn(f"detective-tui explain: {log.error}")
                return exitcodes.USAGE
            if log.error_kind == "timeout":
                output.warn(f"detective-tui explain: {log.error}; explaining what was read")
        else:
            where = f"{where}, judged on {host.name}"
    reached = judged is None or judged.result.reachable
    result = explain(text, judged, source=where, host_error=None if reached else judged.error)
    if args.json:
        output.write_json(result.to_json())
    else:
        output.write_text(explanation_text(result, host_flags(args)))
    if not reached:
        return exitcodes.UNREACHABLE
    return exitcodes.OK if result.explained_by else exitcodes.CRITICAL
