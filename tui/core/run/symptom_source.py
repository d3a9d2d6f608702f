"""Read the text ``explain`` matches from a host: a unit's journal, a container's log, or a log
file — the last ``TAIL_LINES`` lines, through the host's transport, under a deadline, every
name shell-quoted. Nothing read here runs anything: it is only matched (and redacted before
it is shown). The program that reads it on a running host (``journalctl``, ``docker``,
``podman``, ``crictl``) runs only when the probe's trust rule lets it (``trusted_run``);
``--log`` runs only coreutils' ``tail``, which the probe itself relies on.

A host with a root prefix is an inspected filesystem, not a running system: a log file is
read under the root, while a journal or a container log is refused — except for a fake tree
detective-tui built (``Host.fake_tree``: the inventory says so, never the tree), whose own
``usr/bin/journalctl`` stands in for journald and ``usr/bin/docker`` (``podman``, ``crictl``),
when it has one, for the container engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from probes import trust_prelude
from tui.core.fixes.shell import host_path, q

if TYPE_CHECKING:
    from tui.core.hosts import Host
    from tui.core.run.runner import Session

SourceKind = Literal["unit", "container", "log"]
TAIL_LINES = 300
DEADLINE_S = 30.0
NOT_FOUND = 66  # the script's exit status when there is nothing to read (EX_NOINPUT)
NOT_TRUSTED = 77  # … when the program that would read it fails the trust rule (EX_NOPERM)
RUN_DEADLINE_S = 20  # the program's own deadline on the host, inside DEADLINE_S
ENGINES = ("docker", "podman", "crictl")  # each takes `logs --tail N NAME|ID`
TIMED_OUT = (124, 137)  # timeout's statuses: the deadline ended it


@dataclass(frozen=True)
class LogText:
    text: str
    source: str  # "unit sglang.service on ct200"
    error: str | None = None  # why nothing (or not all) could be read
    error_kind: str | None = None  # the transport's (unreachable, timeout…) when not reached


def check_name(kind: SourceKind, name: str) -> str | None:
    """Why ``name`` cannot be read as a ``kind`` (None: it can)."""
    if not name or any(c in name for c in "\0\n\r"):
        return f"--{kind} takes a non-empty name on one line"
    if name.startswith("-"):
        return f"--{kind} {name!r}: a name cannot start with '-'"
    if kind == "log" and not name.startswith("/"):
        return f"--log {name!r}: give the file's absolute path on the host"
    return None


def read_script(host: Host, kind: SourceKind, name: str) -> str:
    """The shell that prints the text (stderr merged), or exits ``NOT_FOUND`` with why."""
    n = str(TAIL_LINES)
    root = (host.root or "").rstrip("/")
    refuse = (
        f"echo {q(f'{host.name} is a filesystem under {root}, not a running system: read the')}"
        f" {q(f'{kind} on the machine that runs it')} >&2; exit {NOT_FOUND}"
    )
    if kind == "log":
        path = host_path(host, name)
        return (
            f"if [ -r {path} ]; then tail -n {n} -- {path} 2>&1; else "
            f"echo {q(f'{name}: no such readable file')} >&2; exit {NOT_FOUND}; fi"
        )
    if kind == "unit":
        journalctl = "journalctl"
        if root:
            if not host.fake_tree:
                return refuse
            journalctl = host_path(host, "/usr/bin/journalctl")
            return f"{journalctl} -u {q(name)} -n {n} --no-pager 2>&1"
        return trusted_run(
            ("journalctl",), f"-u {q(name)} -n {n} --no-pager", "journalctl is not installed here"
        )
    if root:
        if not host.fake_tree:
            return refuse
        tries = "".join(
            f"if [ -x {e} ]; then {e} logs --tail {n} {q(name)} 2>&1; el"
            for e in (host_path(host, f"/usr/bin/{p}") for p in ENGINES)
        )
        return f"{tries}se {refuse}; fi"
    return trusted_run(ENGINES, f"logs --tail {n} {q(name)}", "no docker, podman or crictl here")


def trusted_run(programs: tuple[str, ...], args: str, missing: str) -> str:
    """Shell that runs the first of ``programs`` on PATH that the probe's trust rule lets run
    (``probes.trust_prelude``: owned by root or the user, nothing above it writable by others)
    with ``args`` (already quoted) under ``RUN_DEADLINE_S``; one that fails the rule is never
    run: when none passes, the reasons go to stderr and it exits ``NOT_TRUSTED``."""
    return (
        f"{trust_prelude(RUN_DEADLINE_S)}_why=\n"
        f"for _p in {' '.join(programs)}; do\n"
        '  _b=$(command -v "$_p" 2>/dev/null) || continue\n'
        '  trust_check "$_b"\n'
        f'  if [ -z "$_tw" ]; then deadline "$_b" {args} 2>&1; exit $?; fi\n'
        '  _why="$_why${_why:+; }$_p $_b not run: $_tw"\n'
        "done\n"
        f'if [ -n "$_why" ]; then echo "$_why; nothing was run: give the text with --text" >&2; '
        f"exit {NOT_TRUSTED}; fi\n"
        f"echo {q(missing)} >&2; exit {NOT_FOUND}\n"
    )


async def read_log(session: Session, host: Host, kind: SourceKind, name: str) -> LogText:
    """The text, or why it could not be read (never raises for host trouble)."""
    source = f"{kind} {name} on {host.name}"
    bad = check_name(kind, name)
    if bad:
        return LogText("", source, bad)
    result = await session.run_script(
        host, read_script(host, kind, name), env=dict(host.env), deadline_s=DEADLINE_S
    )
    if result.exit_status is None and not result.timed_out:
        return LogText("", source, result.error or "no answer", result.error_kind or "unreachable")
    if result.timed_out or result.exit_status in TIMED_OUT:
        limit = DEADLINE_S if result.timed_out else RUN_DEADLINE_S
        why = f"reading it took longer than {limit:.0f} s"
        return LogText(result.output, source, why, "timeout")
    if result.exit_status != 0:
        why = result.output.strip().splitlines()[-1:] or [f"exit status {result.exit_status}"]
        return LogText(result.output, source, f"{source}: {why[0]}")
    return LogText(result.output, source)
