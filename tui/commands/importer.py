"""``detective-tui import ansible INVENTORY | slurm FILE | hostfile FILE [--output FILE]
[--append | --force]``: write ``hosts.yaml`` entries from other tools' host lists
(``tui.core.reach.inventory_import``).

Writes ``./hosts.yaml`` unless ``--output`` says otherwise (``-``: stdout). An existing file is
never overwritten silently: ``--append`` adds to it (names checked), ``--force`` replaces it
and keeps a timestamped copy; without either the command refuses (exit 3). What could not be
imported and the ``~/.ssh/config`` lines to add go to stderr (and into the file as comments).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tui.commands import command_help, output
from tui.core import exitcodes
from tui.core.reach.inventory_import import (
    ImportProblem,
    ansible_inventory_json,
    from_ansible,
    from_hostfile,
    from_slurm,
    write_inventory,
)

KINDS = {
    "ansible": "an Ansible inventory (any format ansible-inventory reads), or the JSON of "
    "`ansible-inventory --list`",
    "slurm": 'output of `scontrol show hostnames` or `sinfo -N -h -o %%N` (or `-o "%%N %%P"`)',
    "hostfile": "an MPI hostfile (`host slots=N` or `host:N`)",
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "import",
        help=command_help("import"),
        description="Write hosts.yaml entries from another tool's host list.",
    )
    p.add_argument("kind", choices=sorted(KINDS), help="what SOURCE is")
    p.add_argument(
        "source",
        metavar="SOURCE",
        type=Path,
        help="; ".join(f"{k}: {v}" for k, v in KINDS.items()),
    )
    p.add_argument(
        "--output",
        "-o",
        default="hosts.yaml",
        metavar="FILE",
        help="where to write (default ./hosts.yaml; - for stdout)",
    )
    how = p.add_mutually_exclusive_group()
    how.add_argument("--append", action="store_true", help="add the hosts to an existing FILE")
    how.add_argument(
        "--force", action="store_true", help="replace an existing FILE (a copy is kept)"
    )
    p.set_defaults(func=run)


def _say(text: str) -> None:
    output.warn(text)


def run(args: argparse.Namespace) -> int:
    try:
        if args.kind == "ansible":
            doc, how = ansible_inventory_json(args.source)
            _say(f"detective-tui import: {how}")
            imported = from_ansible(doc)
        elif args.kind == "slurm":
            imported = from_slurm(args.source)
        else:
            imported = from_hostfile(args.source)
        path = None if args.output == "-" else Path(args.output)
        mode = "append" if args.append else "replace" if args.force else "new"
        text = write_inventory(path, imported, f"{args.kind} {args.source}", mode=mode)
    except ImportProblem as exc:
        _say(f"detective-tui import: {exc}")
        return exitcodes.USAGE
    for note in imported.notes:
        _say(f"note: {note}")
    for entry in imported.entries:
        for skipped in entry.skipped:
            _say(f"{entry.name}: not imported: {skipped}")
    config = imported.ssh_config_text()
    if config:
        _say("Add to ~/.ssh/config (these hosts' `ssh:` names these aliases):\n" + config)
    if path is None:
        output.write_text(text)
    else:
        verb = "added to" if args.append else "wrote"
        _say(f"detective-tui import: {verb} {path}: {len(imported.entries)} entries")
    return exitcodes.OK
