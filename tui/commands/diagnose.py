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
import json
import shlex
from collections.abc import Mapping
from importlib import resources
from typing import Any

from rich.console import Console
from rich.markup import escape

from tui.commands import command_help, output
from tui.commands.targets import add_fleet_targets, host_flags, hosts_for
from tui.core import exitcodes
from tui.core.completeness import partial_verdict, unseen
from tui.core.diagnosis import Diagnosis, deep_invocation, diagnose, with_deep
from tui.core.facts import Facts
from tui.core.gpu_scope import scope_note
from tui.core.hosts import Host
from tui.core.inventory import InventoryError
from tui.core.redact import redact_text
from tui.core.report import SEVERITY_MARK, host_json, markdown_report
from tui.core.runner import ProbeResult, Session
from tui.core.transcript import Transcript

DEEP_SENTINEL = "@@deep\t"
DEEP_DEADLINE_S = 180.0
SEVERITY_STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}

DeepResults = dict[str, dict[str, Any]]  # python path → what deep_flashinfer.py printed


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


def deep_script() -> str:
    return resources.files("probes").joinpath("deep_flashinfer.py").read_text(encoding="utf-8")


def parse_deep(output: str) -> dict[str, Any] | None:
    for line in output.splitlines():
        if line.startswith(DEEP_SENTINEL):
            return json.loads(line[len(DEEP_SENTINEL) :])
    return None


async def run_deep(session: Session, host: Host, facts: Facts, diagnosis: Diagnosis) -> DeepResults:
    """Run ``deep_flashinfer.py`` with each replayed interpreter, in its judged environment."""
    results: DeepResults = {}
    for replayed in diagnosis.flashinfer:
        env, unset = deep_invocation(facts, replayed)
        python = (host.root or "").rstrip("/") + replayed.python
        interpreter = f"{shlex.quote(python)} -" + (
            f" --unset {shlex.quote(unset)}" if unset else ""
        )
        done = await session.run_script(
            host, deep_script(), env=env, deadline_s=DEEP_DEADLINE_S, interpreter=interpreter
        )
        parsed = parse_deep(done.output)
        if parsed is None:
            tail = " | ".join(done.output.strip().splitlines()[-3:])
            reason = done.error or f"exit status {done.exit_status}: {tail or 'no output'}"
            parsed = {"error": f"the deep check printed no result ({reason})"}
        results[replayed.python] = parsed
    return results


async def _diagnose_all(
    hosts: list[Host], deep: bool, transcript: Transcript, err: Console
) -> list[tuple[ProbeResult, Diagnosis | None, DeepResults]]:
    def finished(result: ProbeResult) -> None:
        err.print(
            redact_text(
                f"{result.host.name}: {result.error or 'probed'} ({result.duration_s:.1f} s)"
            ),
            highlight=False,
            markup=False,
        )

    async with Session(transcript=transcript) as session:
        results = await session.probe_many(hosts, on_result=finished)
        out = []
        for result in results:
            diagnosis = None
            deeps: DeepResults = {}
            if result.facts is not None and result.reachable:
                diagnosis = diagnose(result.facts, result.host)
                if deep and diagnosis.flashinfer:
                    deeps = await run_deep(session, result.host, result.facts, diagnosis)
                    diagnosis = with_deep(diagnosis, deeps)
                transcript.record(
                    "diagnosis",
                    host=result.host.name,
                    findings=[f.to_json() for f in diagnosis.findings],
                    flashinfer=[r.to_json() for r in diagnosis.flashinfer],
                    deep=deeps or None,
                )
            out.append((result, diagnosis, deeps))
        return out


def exit_code(results: list[tuple[ProbeResult, Diagnosis | None, Any]]) -> int:
    """1 critical; else 2 when a host could not be reached or probed, or its probe could not
    see everything (``tui.core.completeness``); else 0."""
    if any(d is not None and d.worst() == "critical" for _r, d, _x in results):
        return exitcodes.CRITICAL
    if any(unseen(r) for r, _d, _x in results):
        return exitcodes.UNREACHABLE
    return exitcodes.OK


def run(args: argparse.Namespace) -> int:
    err = Console(stderr=True, soft_wrap=True)
    try:
        hosts = hosts_for(args, args.targets, args.all_hosts)
    except InventoryError as exc:
        output.warn(f"detective-tui diagnose: {exc}")
        return exitcodes.USAGE
    with Transcript.open_session() as transcript:
        transcript.record("cli", command="diagnose", targets=[h.name for h in hosts])
        results = asyncio.run(_diagnose_all(hosts, args.deep, transcript, err))
    if args.json:
        output.write_json([host_json(r, d, deeps or None) for r, d, deeps in results])
    elif args.markdown:
        deep_by_host = {r.host.name: deeps for r, _d, deeps in results if deeps}
        output.write_text(markdown_report([(r, d) for r, d, _x in results], deep_by_host))
    else:
        console = output.console(soft_wrap=False)
        for r, d, deeps in results:
            print_host(console, host_json(r, d, deeps or None), host_flags(args))
    return exit_code(results)


def print_host(console: Console, data: Mapping[str, Any], flags: str = "") -> None:
    """The readable report of one host (from its redacted JSON object); ``flags`` go into the
    fix commands it suggests (`` --demo``)."""
    console.rule(f"[bold]{escape(data['host'])}")
    if not data["reachable"]:
        console.print(f"[red]unreachable[/]: {escape(data['error'] or '')}")
        return
    for reason in data["unseen"]:
        console.print(f"[yellow]probe problem[/]: {escape(reason)}")
    note = scope_note(data["facts"]["container"]) if data["facts"] is not None else None
    if note:
        console.print(f"[dim]{escape(note)}[/]")
    if not data["findings"]:
        if data["unseen"]:
            console.print(f"[yellow]{escape(partial_verdict(tuple(data['unseen'])))}[/]")
        else:
            console.print("[green]No problems found.[/]")
    for f in data["findings"]:
        style = SEVERITY_STYLE[f["severity"]]
        console.print(
            f"[{style}]{SEVERITY_MARK[f['severity']]}[/] [bold]{escape(f['title'])}[/]  "
            f"[dim]({f['id']})[/]"
        )
        console.print(escape(f["explanation"]))
        for e in f["evidence"]:
            console.print(f"  [dim]•[/] {escape(e)}")
        for i, fix in enumerate(f["fixes"], 1):
            params = " ".join(f"{k}={shlex.quote(v)}" for k, v in fix["params"].items())
            command = f"detective-tui fix {data['host']} {fix['id']} {params}".rstrip() + flags
            console.print(
                f"  [green]fix {i}[/]: {escape(fix['title'])} — resolves "
                f"{', '.join(fix['resolves']) or 'nothing by itself'}"
            )
            console.print(f"         [dim]{escape(command)}[/]")
        console.print()
    for r in data["flashinfer"]:
        agrees = {True: " — real FlashInfer agrees", False: " — real FlashInfer DISAGREES"}
        console.print(
            f"[dim]FlashInfer {escape(r['version'])} ({escape(r['python'])}): "
            f"home={r['cuda_home']} cuda={r['cuda_version']} archs={r['target_cuda_archs']} "
            f"check={r['check_cuda_arch']}{agrees.get(r.get('agrees'), '')}[/]"
        )
