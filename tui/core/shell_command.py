"""The command that opens an interactive session on a host, for the TUI to hand the terminal
to (and take it back when it exits): ``ssh`` with the same known_hosts and config the probes
use and strict host keys, this machine's shell for ``local``, and for a demo host a shell in
its fake tree (it is a directory, not a machine)."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass

from tui.core import locations
from tui.core.hosts import Host
from tui.core.inventory import parse_ssh_target


class NoShell(Exception):
    """The host has nothing to open a session on (the message says why)."""


@dataclass(frozen=True)
class ShellCommand:
    argv: tuple[str, ...]
    cwd: str | None = None
    note: str = ""  # what the user is about to get, said before the terminal is handed over

    @property
    def line(self) -> str:
        """The command as one line, to show or to run by hand."""
        where = f"cd {shlex.quote(self.cwd)} && " if self.cwd else ""
        return where + shlex.join(self.argv)


def shell_command(host: Host) -> ShellCommand:
    shell = os.environ.get("SHELL") or "/bin/sh"
    if host.invalid:
        raise NoShell(f"{host.name} is a bad inventory entry: {host.invalid.splitlines()[0]}")
    if host.simulate == "unreachable":
        raise NoShell(f"{host.name} is a simulated demo host that never answers")
    if host.demo:
        return ShellCommand(
            (shell,), cwd=host.root, note=f"{host.name} is a demo host: a shell in its fake tree"
        )
    if host.local:
        return ShellCommand((shell,), cwd=host.root, note="a shell on this machine")
    user, name, port = parse_ssh_target(host.ssh or host.name)
    argv = ["ssh", "-o", "StrictHostKeyChecking=yes"]
    argv += ["-o", f"UserKnownHostsFile={locations.known_hosts_file()}"]
    config = locations.ssh_config_file()
    if config is not None:
        argv += ["-F", str(config)]
    if port is not None:
        argv += ["-p", str(port)]
    argv.append(f"{user}@{name}" if user else name)
    return ShellCommand(tuple(argv), note=f"ssh to {host.target}")
