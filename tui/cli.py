"""``detective-tui`` entry point: the TUI by default, headless sub-commands otherwise."""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from collections.abc import Collection, Sequence
from typing import IO

from tui.commands import COMMAND_MODULES, COMMANDS
from tui.core import exitcodes


class _Parser(argparse.ArgumentParser):
    def print_help(self, file: IO[str] | None = None) -> None:
        # argparse ignores a failed write; a closed pipe must reach main() (exit 141)
        (file or sys.stdout).write(self.format_help())

    def error(self, message: str) -> None:  # argparse exits 2; the contract says 3
        self.print_usage(sys.stderr)
        self.exit(exitcodes.USAGE, f"{self.prog}: error: {message}\n")


def build_parser(commands: Collection[str] | None = None) -> argparse.ArgumentParser:
    """Full parsers for ``commands`` (None: all); the others are listed by name and help only,
    so their modules, and what those import, stay unloaded."""
    parser = _Parser(
        prog="detective-tui",
        description="Find out why the driver, torch, nvcc and FlashInfer disagree on GPU hosts.",
    )
    parser.add_argument("--hosts", metavar="FILE", help="inventory file (default: see README)")
    parser.add_argument("--demo", action="store_true", help="open the built-in demo fleet")
    parser.add_argument(
        "--read-only", action="store_true", help="hide every action that changes a host"
    )
    parser.add_argument(
        "--reprobe-minutes",
        metavar="N",
        type=int,
        help="the TUI probes every host again every N minutes, this run only (0: never; "
        "default: reprobe_minutes in config.yaml)",
    )
    parser.add_argument(
        "--columns",
        metavar="LIST",
        help="the TUI's hosts table columns in order, this run only (e.g. host,status,gpu; "
        "default: columns in config.yaml, else all)",
    )
    parser.add_argument(
        "--ingest",
        metavar="PATH",
        action="append",
        help="open probe output captured by other engines as the fleet (read-only; repeatable)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    listed = {module: command for command, (module, _) in COMMANDS.items()}
    for module in COMMAND_MODULES:
        command = listed.get(module)
        if command is None or commands is None or command in commands:
            importlib.import_module(f"tui.commands.{module}").register(sub)
        else:
            sub.add_parser(command, help=COMMANDS[command][1], add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _run(argv)
    except BrokenPipeError:
        # the reader went away (`detective-tui … | head`): no traceback, and the status a
        # program killed by SIGPIPE has (the result was not fully delivered, so not 0)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return exitcodes.BROKEN_PIPE
    except OSError as exc:
        where = own_dir_of(exc)
        if where is None:
            raise
        # a full, read-only or missing state/cache dir: one line, not a traceback
        why = exc.strerror or type(exc).__name__
        print(
            f"detective-tui: cannot write {exc.filename}: {why} (in {where}; free space there, "
            "or point XDG_STATE_HOME/XDG_CACHE_HOME at a writable directory)",
            file=sys.stderr,
        )
        return exitcodes.USAGE


def entry() -> None:
    """The ``detective-tui`` program: ``main``, then the exit without a last walk of the
    collector over every object still alive (modules, classes, the results: a few hundred
    thousand, freed with the process anyway; 0.1–0.2 s of CPU). Not for in-process callers
    (tests call ``main``), whose objects must stay collectable."""
    code = main()
    gc.freeze()
    sys.exit(code)


def own_dir_of(exc: OSError) -> str | None:
    """Which of detective-tui's own directories (state, cache) an ``OSError`` is about, if
    any: what a full disk or an unwritable directory there looks like."""
    from pathlib import Path

    from tui.core import locations

    if not exc.filename:
        return None
    path = Path(os.fsdecode(exc.filename)).absolute()
    for base in (locations.state_dir(), locations.cache_dir()):
        if path == base.absolute() or base.absolute() in path.parents:
            return str(base)
    return None


def _run(argv: Sequence[str] | None) -> int:
    try:
        # which command runs: global options and the command names are enough (and the
        # top-level --help is answered here); then only that command's module is imported
        known, _ = build_parser(commands=()).parse_known_args(argv)
        args = build_parser(commands=[known.command] if known.command else ()).parse_args(argv)
    except SystemExit:
        sys.stdout.flush()  # --help into a closed pipe
        raise
    if args.command is None:
        from tui.ui.launch import run_app

        return run_app(args)
    code = int(args.func(args))
    sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit (status 120)
    return code


if __name__ == "__main__":
    entry()
