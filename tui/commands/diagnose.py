"""``detective-tui diagnose [TARGET…] [--all] [--json | --markdown] [--deep]``.

Probes the hosts, replays FlashInfer and runs the rules; prints a readable report, the
CONTRACT.md JSON array (``--json``) or a Markdown report for a GitHub issue (``--markdown``).
``--deep`` also imports each host's own FlashInfer in the judged environment
(``probes/deep_flashinfer.py``) and says whether it agrees with the replay.

Exit codes: 1 when any host has a critical finding; otherwise 2 when a host could not be
reached or probed (the others are still reported); otherwise 0. 3 for bad usage/inventory.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tui.commands import command_help, output
from tui.commands.host_args import add_fleet_targets, host_flags, hosts_for
from tui.core import exitcodes
from tui.core.facts.gpu_scope import scope_note
from tui.core.hosts import Host
from tui.core.judge.explain import symptom_line
from tui.core.judge.judged import Judged
from tui.core.reach.inventory import InventoryError
from tui.core.records.finding_model import FindingModel
from tui.core.records.report import host_json, markdown_report
from tui.core.records.transcript import Transcript
from tui.core.redact import redact_text
from tui.core.rules.completeness import partial_verdict, unseen
from tui.core.run.runner import BAD_INVENTORY, ProbeResult, Session
from tui.core.run.service import probe_and_judge_many

if TYPE_CHECKING:  # Rich loads for the readable report and a terminal's progress only
    from rich.console import Console

SEVERITY_STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "diagnose",
        help=command_help("diagnose"),
        description="Probe, replay FlashInfer, run the rules. No TARGET: every inventory host.",
    )
    add_fleet_targets(p)
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the JSON array of CONTRACT.md")
    fmt.add_argument("--markdown", action="store_true", help="a report to paste into an issue")
    p.add_argument(
        "--deep",
        action="store_true",
        help="also run the host's own FlashInfer (imports it, initialising CUDA there)",
    )
    p.set_defaults(func=run)


async def _diagnose_all(
    hosts: list[Host], deep: bool, transcript: Transcript, err: Console | None
) -> list[Judged]:
    def finished(result: ProbeResult) -> None:
        line = redact_text(
            f"{result.host.name}: {result.error or 'probed'} ({result.duration_s:.1f} s)"
        )
        output.progress_line(err, line)

    async with Session(transcript=transcript) as session:
        return await probe_and_judge_many(session, hosts, deep=deep, on_result=finished)


def warn_notes(results: list[Judged]) -> None:
    """What went wrong beside the probes (a history that could not be kept), on stderr, one
    line each, the same line once."""
    for note in dict.fromkeys(n for j in results for n in j.notes):
        output.warn(f"warning: {note}")


def exit_code(results: list[Judged]) -> int:
    """1 critical; else 2 when a host could not be reached or probed, or its probe could not
    see everything (``tui.core.rules.completeness``); else 0."""
    if any(j.diagnosis is not None and j.diagnosis.worst() == "critical" for j in results):
        return exitcodes.CRITICAL
    if any(unseen(j.result) for j in results):
        return exitcodes.UNREACHABLE
    return exitcodes.OK


def run(args: argparse.Namespace) -> int:
    err = output.stderr_console()
    try:
        hosts = hosts_for(args, args.targets, args.all_hosts, keep_bad=True)
    except InventoryError as exc:
        output.warn(f"detective-tui diagnose: {exc}")
        return exitcodes.USAGE
    with Transcript.open_session() as transcript:
        transcript.record("cli", command="diagnose", targets=[h.name for h in hosts])
        results = asyncio.run(_diagnose_all(hosts, args.deep, transcript, err))
    warn_notes(results)
    if args.json:
        output.write_json([host_json(j.result, j.diagnosis, j.deep or None) for j in results])
    elif args.markdown:
        deep_by_host = {j.result.host.name: j.deep for j in results if j.deep}
        output.write_text(markdown_report([(j.result, j.diagnosis) for j in results], deep_by_host))
    else:
        console = output.console(soft_wrap=False)
        for j in results:
            print_host(console, host_json(j.result, j.diagnosis, j.deep or None), host_flags(args))
    if any(h.invalid for h in hosts):
        return exitcodes.USAGE  # the other hosts were judged and reported all the same
    return exit_code(results)


def print_host(console: Console, data: Mapping[str, Any], flags: str = "") -> None:
    """The readable report of one host (from its redacted JSON object); ``flags`` go into the
    fix commands it suggests (`` --demo``)."""
    from rich.markup import escape

    console.rule(f"[bold]{escape(data['host'])}")
    if not data["reachable"]:
        kind = "inventory error" if data["error_kind"] == BAD_INVENTORY else "unreachable"
        console.print(f"[red]{kind}[/]: {escape(data['error'] or '')}")
        return
    for reason in data["unseen"]:
        console.print(f"[yellow]probe problem[/]: {escape(reason)}")
    for sym in data.get("symptoms", ()):
        if sym["primary"]:
            console.print(f"[bold]symptom[/]: {escape(symptom_line(sym))}")
    note = scope_note(data["facts"]["container"]) if data["facts"] is not None else None
    if note:
        console.print(f"[dim]{escape(note)}[/]")
    if not data["findings"]:
        if data["unseen"]:
            console.print(f"[yellow]{escape(partial_verdict(tuple(data['unseen'])))}[/]")
        else:
            console.print("[green]No problems found.[/]")
    for f in data["findings"]:
        m = FindingModel.of(f)
        console.print(
            f"[{SEVERITY_STYLE[m.severity]}]{m.mark}[/] [bold]{escape(m.title)}[/]  "
            f"[dim]({m.id})[/]"
        )
        console.print(escape(m.explanation))
        for e in m.evidence:
            console.print(f"  [dim]•[/] {escape(e)}")
        for fix in m.fixes:
            console.print(
                f"  [green]fix {fix.number}[/]: {escape(fix.title)} — resolves {fix.resolves_text}"
            )
            console.print(f"         [dim]{escape(fix.command(data['host'], flags))}[/]")
        console.print()
    for r in data["flashinfer"]:
        agrees = {True: " — real FlashInfer agrees", False: " — real FlashInfer DISAGREES"}
        console.print(
            f"[dim]FlashInfer {escape(r['version'])} ({escape(r['python'])}): "
            f"home={r['cuda_home']} cuda={r['cuda_version']} archs={r['target_cuda_archs']} "
            f"check={r['check_cuda_arch']}{agrees.get(r.get('agrees'), '')}[/]"
        )
