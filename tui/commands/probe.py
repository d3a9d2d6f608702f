"""``detective-tui probe [TARGET…] [--all] [--json]``: collect facts, no diagnosis.

No TARGET means every inventory host (``--all`` says so explicitly). Progress goes to stderr;
stdout gets a readable summary or, with ``--json``, the CONTRACT.md array
``[{"host", "reachable", "error", "error_kind", "facts"}]``. Exit 0, or 2 when any host could not
be reached or probed (the others are still reported), or 3 for bad usage or inventory (a bad
inventory entry is its own ``bad-inventory`` row; the good hosts are probed all the same).
Each probe is kept in the history unjudged (``history`` judges it when listed).
"""

from __future__ import annotations

import argparse
import importlib
from typing import TYPE_CHECKING

from tui.commands import command_help, output
from tui.commands.host_args import add_fleet_targets, hosts_for
from tui.core import exitcodes
from tui.core.reach.inventory import InventoryError
from tui.core.redact import redact_text

if TYPE_CHECKING:  # Rich, the facts and the records load only where they are used
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    from tui.core.facts import Facts
    from tui.core.facts.build import ProbeProgress
    from tui.core.hosts import Host
    from tui.core.records.transcript import Transcript
    from tui.core.run.runner import ProbeResult


# what ``run`` needs once the hosts have answered: loaded when the first answers, while it works
RESULT_MODULES = (
    "tui.core.judge.judged",
    "tui.core.records.history",
    "tui.core.records.probe_json",
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "probe",
        help=command_help("probe"),
        description="Probe hosts and print what was found. No TARGET: every inventory host.",
    )
    add_fleet_targets(p)
    p.add_argument("--json", action="store_true", help="print the JSON array of CONTRACT.md")
    p.set_defaults(func=run)


class _Progress:
    """Progress on stderr: on a terminal a live display (hosts done of all, a bar, the step
    the newest host is at, without per-host step counts, which grow as a probe learns how
    many interpreters it has); otherwise one line per host as it finishes, nothing else
    (``console`` None: plain lines on stderr, without loading Rich)."""

    def __init__(self, console: Console | None, total: int) -> None:
        self.console = console
        self.total = total
        self.live: Progress | None = None
        self.answered = False
        if console is not None and console.is_terminal:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            self.live = Progress(
                SpinnerColumn(),
                MofNCompleteColumn(),
                TextColumn("hosts probed"),
                BarColumn(bar_width=12),
                TimeElapsedColumn(),
                TextColumn("{task.description}"),  # last: cut first on a narrow terminal
                console=console,
                transient=True,
            )
            self.task = self.live.add_task("starting", total=total)

    def __enter__(self) -> _Progress:
        if self.live is not None:
            self.live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.stop()

    def on_progress(self, host: str, item: ProbeProgress | str) -> None:
        if not self.answered:
            self.answered = True
            for name in RESULT_MODULES:
                importlib.import_module(name)
        if self.live is not None and not isinstance(item, str):
            from rich.markup import escape

            self.live.update(self.task, description=escape(redact_text(f"{host}: {item.step}")))

    def finished(self, result: ProbeResult) -> None:
        outcome = result.error or "ok"
        line = redact_text(f"{result.host.name}: {outcome} ({result.duration_s:.1f} s)")
        output.progress_line(self.live.console if self.live is not None else self.console, line)
        if self.live is not None:
            self.live.advance(self.task)


async def _probe_all(
    hosts: list[Host], progress: _Progress, transcript: Transcript
) -> list[ProbeResult]:
    from tui.core.run.runner import Session

    async with Session(transcript=transcript) as session:
        return await session.probe_many(hosts, progress.on_progress, on_result=progress.finished)


def run(args: argparse.Namespace) -> int:
    import asyncio

    try:
        hosts = hosts_for(args, args.targets, args.all_hosts, keep_bad=True)
    except InventoryError as exc:
        output.warn(f"detective-tui probe: {exc}")
        return exitcodes.USAGE
    from tui.core.records.transcript import Transcript

    with Transcript.open_session() as transcript:
        transcript.record("cli", command="probe", targets=[h.name for h in hosts])
        with _Progress(output.stderr_console(), len(hosts)) as progress:
            results = asyncio.run(_probe_all(hosts, progress, transcript))
    from tui.core.judge.judged import Judged
    from tui.core.records.history import keep
    from tui.core.rules.completeness import unseen

    for note in dict.fromkeys(filter(None, (keep(Judged(r)) for r in results))):
        output.warn(f"warning: {note}")
    if args.json:
        from tui.core.records.probe_json import result_json

        output.write_json([result_json(r) for r in results])
    else:
        console = output.console()
        console.print(summary_table(results, console.width))
    if any(h.invalid for h in hosts):
        return exitcodes.USAGE  # the other hosts were probed and reported all the same
    return exitcodes.UNREACHABLE if any(unseen(r) for r in results) else exitcodes.OK


COLUMNS = ("host", "status", "driver", "GPUs", "toolkits", "python / torch / FlashInfer")
BLOCK_FIELDS = ("host", "status", "driver", "GPUs", "toolkits", "pythons")
TABLE_MIN_WIDTH = 140  # narrower, six columns split words ("unreachabl|e"): one block per host


def _rows(results: list[ProbeResult]) -> list[tuple[str, ...]]:
    from rich.markup import escape

    from tui.core.rules.completeness import unseen

    rows = []
    for r in results:
        reasons = unseen(r)
        status = "[green]ok[/]"
        if r.error:
            status = f"[red]{r.error_kind}[/]\n{escape(r.error)}"
        elif reasons:
            status = "[yellow]partial[/]\n" + "\n".join(escape(x) for x in reasons)
        f = r.facts
        cells = ("", "", "", "") if f is None else (_driver(f), _gpus(f), _toolkits(f), _pythons(f))
        rows.append(
            (escape(r.host.name), redact_text(status), *(escape(redact_text(c)) for c in cells))
        )
    return rows


def summary_table(results: list[ProbeResult], width: int | None = None) -> Table:
    """One row per host; below ``TABLE_MIN_WIDTH`` columns (``width``: the terminal's), one
    block per host, each field on its own line, so no word is split."""
    from rich.table import Table

    if width is not None and width < TABLE_MIN_WIDTH:
        table = Table(title="detective-tui probe", show_header=False)
        table.add_column("field", no_wrap=True, style="bold")
        table.add_column("value", overflow="fold")
        for row in _rows(results):
            shown = [
                (f, c) for i, (f, c) in enumerate(zip(BLOCK_FIELDS, row, strict=True)) if c or i < 2
            ]
            for i, (field, cell) in enumerate(shown):
                table.add_row(field, cell, end_section=i == len(shown) - 1)
        return table
    table = Table(title="detective-tui probe", show_lines=True)
    for column in COLUMNS:
        table.add_column(column, overflow="fold")
    for row in _rows(results):
        table.add_row(*row)
    return table


def _driver(f: Facts) -> str:
    d = f.driver
    if d.state != "ok":
        return f"{d.state}" + (f"\n{d.message}" if d.message else "")
    return f"{d.driver_version or d.proc_version or '?'} (CUDA {f.driver.max_cuda or '?'})"


def _gpus(f: Facts) -> str:
    counts: dict[str, int] = {}
    for g in f.gpus:
        label = f"{g.name} (SM {g.compute_cap or '?'})"
        counts[label] = counts.get(label, 0) + 1
    listed = "\n".join(f"{n}× {label}" for label, n in counts.items()) or "none"
    scope = f.container.scope
    return f"{listed}\n(the {scope}'s)" if scope else listed


def _toolkits(f: Facts) -> str:
    return "\n".join(f"{t.version or '?'}  {t.home}" for t in f.toolkits) or "none"


def _pythons(f: Facts) -> str:
    lines = []
    for py in f.pythons:
        torch = (
            f"torch {py.torch_version} (CUDA {py.torch_cuda})" if py.torch_version else "no torch"
        )
        fi = f"FlashInfer {py.flashinfer_version}" if py.flashinfer_version else "no FlashInfer"
        lines.append(f"{py.path}: {torch}, {fi}" if py.exists else f"{py.path}: missing")
    return "\n".join(lines) or "none"
