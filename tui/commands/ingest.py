"""``detective-tui ingest PATH… [--format …] [--hosts FILE] [--json | --markdown]``.

The report and exit codes of ``diagnose``, from probe output other engines captured
(``tui.core.run.ingest``). With ``--hosts`` (or ``--demo``) every inventory host is reported, those
with no output as unreachable; without, the hosts found in the output. Warnings (a hostname
that does not match, skipped files) go to stderr and, per host, into ``--json`` as
``warnings``. Exit 3 for a PATH that cannot be read as its format.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from tui.commands import command_help, output
from tui.commands.diagnose import exit_code, print_host, warn_notes
from tui.commands.host_args import add_host_options, hosts_for
from tui.core import exitcodes
from tui.core.judge.judged import Judged
from tui.core.reach.inventory import InventoryError
from tui.core.records.report import host_json, markdown_report
from tui.core.records.transcript import Transcript
from tui.core.redact import redact, redact_text
from tui.core.run.ingest import FORMATS, Ingested, IngestError, ingest
from tui.core.run.service import judge_facts


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ingest",
        help=command_help("ingest"),
        description=(
            "Read the output of `probe-script` run by another engine and report as `diagnose` "
            "does. PATH: a directory of per-host files, ansible-runner artifacts, Ansible's "
            "JSON callback output, or `host: line` labelled output."
        ),
    )
    p.add_argument("paths", nargs="+", metavar="PATH", type=Path)
    p.add_argument("--format", choices=FORMATS, default="auto", help="default: detected")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the JSON array of CONTRACT.md")
    fmt.add_argument("--markdown", action="store_true", help="a report to paste into an issue")
    add_host_options(p)
    p.set_defaults(func=run)


def diagnosed(done: Ingested) -> list[Judged]:
    return [judge_facts(r) for r in done.results]


def run(args: argparse.Namespace) -> int:
    err = Console(stderr=True, soft_wrap=True)
    inventory = None
    try:
        if getattr(args, "demo", False) or getattr(args, "hosts", None):
            inventory = hosts_for(args, [], True)
        done = ingest(args.paths, args.format, inventory)
    except (InventoryError, IngestError) as exc:
        output.warn(f"detective-tui ingest: {exc}")
        return exitcodes.USAGE
    for note in done.notes:
        err.print(f"note: {redact_text(note)}", highlight=False, markup=False)
    results = diagnosed(done)
    warn_notes(results)
    with Transcript.open_session() as transcript:
        transcript.record("cli", command="ingest", paths=[str(p) for p in args.paths])
        for r, d in ((j.result, j.diagnosis) for j in results):
            transcript.record(
                "ingest",
                host=r.host.name,
                error=r.error,
                error_kind=r.error_kind,
                warnings=done.warnings.get(r.host.name, []),
                facts=r.facts.to_json() if r.facts is not None else None,
                findings=[f.to_json() for f in d.findings] if d else None,
            )
    for r in (j.result for j in results):
        for warning in done.warnings.get(r.host.name, []):
            err.print(
                f"{r.host.name}: warning: {redact_text(warning)}", highlight=False, markup=False
            )
    if args.json:
        data = []
        for j in results:
            r = j.result
            entry = host_json(r, j.diagnosis)
            entry["warnings"] = redact(done.warnings.get(r.host.name, []))
            data.append(entry)
        output.write_json(data)
    elif args.markdown:
        output.write_text(markdown_report([(j.result, j.diagnosis) for j in results]))
    else:
        console = output.console(soft_wrap=False)
        for j in results:
            print_host(console, host_json(j.result, j.diagnosis))
    return exit_code(results)
