"""``detective-tui probe-script [TARGET] [--python P]… [--root R] [--step-timeout S]``.

Prints the standalone probe (``tui.core.reach.standalone``) for other engines: with TARGET, the
host's inventory ``env``, ``python`` and ``root`` are baked in (``--python`` adds interpreters,
``--root`` replaces the root). An ``env`` value that is a secret (a secret name, a credential
shape: ``tui.core.redact``) is left out with a warning on stderr — the script is copied to every
node — unless ``--embed-secrets``. Exit 0, or 3 for bad usage or inventory.
"""

from __future__ import annotations

import argparse
import sys

from tui.commands import command_help
from tui.commands.host_args import add_host_options, one_host
from tui.core import exitcodes
from tui.core.reach.inventory import InventoryError
from tui.core.reach.standalone import standalone_probe
from tui.core.redact import is_secret_name, redact_text
from tui.core.run.runner import Session

DEFAULTS = Session.__init__.__kwdefaults__ or {}  # the step timeout and deadline `probe` uses


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "probe-script",
        help=command_help("probe-script"),
        description=(
            "Print the probe as one #!/bin/sh file with the settings baked in; run it with any "
            "engine (sh probe.sh, or sh -s < probe.sh) and read the output with `ingest`."
        ),
    )
    p.add_argument("target", nargs="?", metavar="TARGET", help="take env/python/root from it")
    p.add_argument(
        "--python",
        action="append",
        default=[],
        metavar="P",
        help="an interpreter or venv python to inspect (repeatable)",
    )
    p.add_argument("--root", metavar="R", help="probe a mounted filesystem at R instead of /")
    p.add_argument(
        "--step-timeout",
        type=int,
        default=DEFAULTS.get("step_timeout_s", 10),
        metavar="S",
        help="seconds each external command may run (default %(default)s)",
    )
    p.add_argument(
        "--deadline",
        type=float,
        default=DEFAULTS.get("probe_deadline_s", 120.0),
        metavar="S",
        help="seconds the whole run may take when run as a file (default %(default)g)",
    )
    p.add_argument(
        "--embed-secrets",
        action="store_true",
        help="bake secret env values (tokens, passwords, URL credentials) into the script too",
    )
    add_host_options(p)
    p.set_defaults(func=run)


def without_secrets(env: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """``env`` less its secret values (by name or by shape), and the names left out."""
    kept: dict[str, str] = {}
    left: list[str] = []
    for name, value in env.items():
        if is_secret_name(name) or redact_text(f"{name}={value}") != f"{name}={value}":
            left.append(name)
        else:
            kept[name] = value
    return kept, left


def run(args: argparse.Namespace) -> int:
    def fail(message: str) -> int:
        print(f"detective-tui probe-script: {message}", file=sys.stderr)
        return exitcodes.USAGE

    if args.step_timeout < 1 or args.deadline <= 0:
        return fail("--step-timeout and --deadline must be positive")
    if args.root is not None and not args.root.startswith("/"):
        return fail(f"--root {args.root!r} must be an absolute path")
    env: dict[str, str] = {}
    pythons: list[str] = []
    root = args.root
    name = None
    tree_exec = False
    if args.target is not None:
        try:
            host = one_host(args, args.target)
        except InventoryError as exc:
            return fail(str(exc))
        name, env, pythons = host.name, dict(host.env), list(host.python)
        root = root if root is not None else host.root
        tree_exec = host.fake_tree and root == host.root
    pythons += [p for p in args.python if p not in pythons]
    if not args.embed_secrets:
        env, left = without_secrets(env)
        for var in left:
            print(
                f"detective-tui probe-script: warning: {var} (inventory env of {name}) holds a "
                "secret and is left out of the script (it is copied to every node); "
                "--embed-secrets bakes it in",
                file=sys.stderr,
            )
    try:
        script = standalone_probe(
            host=name,
            env=env,
            pythons=pythons,
            root=root,
            tree_exec=tree_exec,
            step_timeout_s=args.step_timeout,
            deadline_s=args.deadline,
        )
    except ValueError as exc:
        return fail(str(exc))
    sys.stdout.write(script)
    return exitcodes.OK
