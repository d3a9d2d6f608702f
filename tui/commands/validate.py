"""``detective-tui validate TARGET [--json] [--markdown]``: run FlashInfer's sampling kernels
on the host's GPU and judge them statistically against exact reference distributions.

Progress goes to stderr; stdout gets the Markdown summary (default) or, with ``--json``, one
JSON object (``ValidationResult.to_json()``). Exit 0 for ``pass`` and for ``skipped`` ("cannot
validate here": no GPU, no torch/FlashInfer, an inspected image), 1 for ``fail`` (a kernel
failed, or the JIT did) and for ``partial`` (some kernel could not be checked), 2 for ``error``
(unreachable, no verdict), 3 for bad usage/inventory.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from tui.commands import command_help, output
from tui.commands.host_args import add_host_options, one_host
from tui.core import exitcodes
from tui.core.hosts import Host
from tui.core.reach.inventory import InventoryError
from tui.core.records.transcript import Transcript
from tui.core.run.runner import Session
from tui.core.run.validate import DEFAULT_DEADLINE_S, validate_host
from tui.core.run.validate_markdown import validation_markdown
from tui.core.run.validate_result import ValidationResult


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "validate",
        help=command_help("validate"),
        description=(
            "Build FlashInfer's sampling module with the host's own Python, draw samples from "
            "fixed distributions with every sampling kernel, and test them (chi-square, total "
            "variation, allowed set) against the exact filtered distributions."
        ),
    )
    p.add_argument("target", metavar="TARGET", help="inventory name, local, or ssh target")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    add_host_options(p)
    p.add_argument(
        "--python", metavar="PATH", help="interpreter to validate with (default: the one with "
        "FlashInfer found by the probe)",
    )  # fmt: skip
    p.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=float,
        default=DEFAULT_DEADLINE_S,
        help=f"remote deadline, JIT build included (default {DEFAULT_DEADLINE_S:g})",
    )
    p.add_argument(
        "--samples",
        metavar="N",
        type=int,
        help="samples per distribution row (default 262144; fewer tests with less power)",
    )
    p.add_argument("--no-timing", action="store_true", help="skip the timing against torch")
    p.set_defaults(func=run)


async def _validate(
    host: Host, args: argparse.Namespace, transcript: Transcript
) -> ValidationResult:
    def progress(text: str) -> None:
        output.warn(f"{host.name}: {text}")

    async with Session(transcript=transcript) as session:
        return await validate_host(
            session,
            host,
            python=args.python,
            on_line=progress,
            deadline_s=args.timeout,
            samples_per_row=args.samples,
            timing=not args.no_timing,
        )


def _select(args: argparse.Namespace) -> Host:
    """The target: a demo host with ``--demo``, else from the inventory (or ad hoc)."""
    return one_host(args, args.target)


def run(args: argparse.Namespace) -> int:
    if args.timeout <= 0 or (args.samples is not None and args.samples <= 0):
        print("detective-tui validate: --timeout and --samples must be positive", file=sys.stderr)
        return exitcodes.USAGE
    try:
        host = _select(args)
    except InventoryError as exc:
        print(f"detective-tui validate: {exc}", file=sys.stderr)
        return exitcodes.USAGE
    with Transcript.open_session() as transcript:
        transcript.record("cli", command="validate", targets=[host.name])
        result = asyncio.run(_validate(host, args, transcript))
    if args.json:
        output.write_json(result.to_json())
    else:
        output.write_markdown(validation_markdown(result))
    return result.exit_code
