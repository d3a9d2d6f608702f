"""``detective-tui trust TARGET [--yes]``: show the host key's SHA256 fingerprint and, once
confirmed, append it to known_hosts. A *changed* or *revoked* key is refused and never offered
for trust, ``--yes`` or not.

Exit 0 trusted (or already trusted), 2 unreachable or key changed or revoked, 3 bad usage, a
declined prompt, or no terminal to ask on without ``--yes``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from tui.commands import command_help, output
from tui.commands.host_args import one_host
from tui.core import exitcodes, locations
from tui.core.reach.hops import fetch_host_key
from tui.core.reach.hostkeys import HostKeyChanged, HostKeyError, HostKeyRevoked, add_known_host
from tui.core.reach.inventory import InventoryError
from tui.core.reach.sshconnect import Unreachable
from tui.core.records.decision import Decision, record_decision
from tui.core.records.transcript import Transcript


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "trust",
        help=command_help("trust"),
        description="Fetch TARGET's host key, show its SHA256 fingerprint, and after you "
        "confirm (or with --yes) append it to known_hosts. A changed or revoked key is never "
        "trusted.",
    )
    p.add_argument("target", metavar="TARGET", help="inventory name or ssh target")
    p.add_argument("--yes", action="store_true", help="trust without asking (scripts)")
    p.add_argument("--hosts", metavar="FILE", default=argparse.SUPPRESS, help="inventory file")
    p.set_defaults(func=run)


def _say(text: str) -> None:
    print(text, file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    try:
        host = one_host(args, args.target)
    except InventoryError as exc:
        _say(f"detective-tui trust: {exc}")
        return exitcodes.USAGE
    if host.local:
        _say(f"detective-tui trust: {host.name} is this machine; no SSH, no host key to trust")
        return exitcodes.USAGE
    if host.exec:
        _say(f"detective-tui trust: {host.name} is reached by `exec:`, not SSH; nothing to trust")
        return exitcodes.USAGE
    known = locations.known_hosts_file()
    try:
        status, info = asyncio.run(
            fetch_host_key(host, known_hosts=known, ssh_config=locations.ssh_config_file())
        )
    except (Unreachable, HostKeyError) as exc:  # HostKeyError: a ProxyJump hop's own key
        _say(f"detective-tui trust: {exc}")
        return exitcodes.UNREACHABLE
    if status == "trusted":
        output.say(f"{host.target}: host key already trusted ({info.key_type} {info.fingerprint})")
        return exitcodes.OK
    if status in ("changed", "revoked"):
        refused = (HostKeyChanged if status == "changed" else HostKeyRevoked)(
            host.target, info, known
        )
        _say(f"detective-tui trust: {refused}")
        return exitcodes.UNREACHABLE
    output.say(
        f"The authenticity of {info.known_hosts_name} ({host.target}) can't be established.\n"
        f"{info.key_type} key fingerprint is {info.fingerprint}."
    )
    accepted = args.yes
    if not accepted:
        if not sys.stdin.isatty():
            _say("detective-tui trust: no terminal to confirm on; rerun with --yes to trust it")
            return exitcodes.USAGE
        answer = input(f"Add this key to {known}? [y/N] ").strip().lower()
        accepted = answer in ("y", "yes")
    with Transcript.open_session() as transcript:
        details = {
            "target": host.target,
            "key_type": info.key_type,
            "fingerprint": info.fingerprint,
        }
        answer = "yes" if accepted else "no"
        trusted = Decision.about("trust-host-key", answer, [host.name], details=details)
        record_decision(transcript, trusted)
    if not accepted:
        _say("Not trusted; nothing was written.")
        return exitcodes.USAGE
    try:
        add_known_host(host.target, info, known)
    except (HostKeyChanged, HostKeyRevoked) as exc:  # someone else wrote known_hosts meanwhile
        _say(f"detective-tui trust: {exc}")
        return exitcodes.UNREACHABLE
    output.say(f"Added {info.known_hosts_name} to {known}.")
    return exitcodes.OK
