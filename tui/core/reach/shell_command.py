"""The command that opens an interactive session on a host, for the TUI to hand the terminal
to (and take it back when it exits): ``ssh`` with the same known_hosts and config the probes
use and strict host keys, this machine's shell for ``local``, and for a demo host a shell in
its fake tree (it is a directory, not a machine)."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tui.core import locations
from tui.core.hosts import Host
from tui.core.reach.inventory import parse_ssh_target


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
    if host.transport is not None:  # what it is, in the words of the transport's own class
        about = getattr(host.transport, "about", "reached only through a transport of its own")
        raise NoShell(f"{host.name} is {about}: there is no shell to open")
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


@dataclass(frozen=True)
class SessionEnd:
    exit_status: int
    message: str = ""  # ssh's own last error lines (its -E log), when it failed

    @property
    def failed(self) -> bool:
        return self.exit_status != 0


SSH_LOG_LINES = 3  # of ssh's own log, said after a failed session


def run_session(command: ShellCommand) -> SessionEnd:
    """Run the session in this terminal until it ends. ssh writes its own errors to a log
    (``-E``) instead of the terminal the TUI repaints over, so a connection that fails says
    why after it (the remote shell's output still goes to the terminal)."""
    argv = list(command.argv)
    with tempfile.TemporaryDirectory(prefix="detective-tui-ssh-") as tmp:
        log = Path(tmp) / "ssh.log"
        if argv[0] == "ssh":
            argv[1:1] = ["-E", str(log)]
        status = subprocess.run(argv, cwd=command.cwd, check=False).returncode
        lines = log.read_text(errors="replace").split("\n") if log.is_file() else []
    said = [line.strip() for line in lines if line.strip()][-SSH_LOG_LINES:]
    return SessionEnd(status, "; ".join(said) if status else "")
