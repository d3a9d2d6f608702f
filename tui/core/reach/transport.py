"""Running one script on one host: over SSH (asyncssh) or locally (a subprocess), same semantics.

Every command runs as::

    exec sh -c '<print pgid>; exec timeout -k K N "$@"' detective-tui N K \\
        [env NAME=value…] INTERPRETER…

so it has a remote deadline (``timeout -k K N``; plain exec where ``timeout`` is missing), and it
prints its process-group id first. The deadline a caller gives (and quotes) bounds the whole command
as the operator waits for it, killing and closing included (``budget``): the remote ``timeout`` gets
what is left after the client's own margins, the client gives up a margin before the deadline and
kills the group with the rest. sshd makes each session's process a session and group leader, and
``exec`` keeps that pid, so on cancel or when the client-side deadline passes the whole group (and
session) is killed over a *second* channel — sshd refuses signals for root logins and closing a
channel does not stop the remote command. Variables travel on stdin, ahead of the script
(``script_with_env``: exported assignments, then the script itself or, for another interpreter,
``exec INTERPRETER`` fed the script as a here-document), never on the command line, where every
local user could read them in ``/proc/PID/cmdline``; sshd drops ``env=`` without ``AcceptEnv``
anyway. A script passed as an argument (``stdin=`` given) gets them on stdin too: ``sh -c
ENV_READER`` reads the assignments up to the line ``ENV_END``, then execs the interpreter, which
reads the rest. The ``exec`` transport, whose stdin goes into its program (an argument), sends the
assignments on the engine's stdin instead (``env_head``).
The two transports run it: ``LocalTransport`` (``tui.core.reach.local_transport``: ``sh -c`` in a
new session, at a lower CPU priority) and ``SSHTransport`` (``tui.core.reach.ssh_transport``: one
reused asyncssh connection, its jump hosts from ``tui.core.reach.hops``).
"""

from __future__ import annotations

import abc
import asyncio
import codecs
import contextlib
import math
import re
import secrets
import shlex
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from tui.core.hosts import Host
from tui.core.reach.sshconnect import reason_of, ssh_errors

PGID_MARK = "@@detective-tui-pgid "
# a script's own temp dir (``@@detective-tui-tmpdir PATH``): removed by the kill path too
TMPDIR_MARK = "@@detective-tui-tmpdir "
_TMPDIR = re.compile(r"^/(?:[^/\0\n]+/)*detective-tui\.[0-9]+\.[A-Za-z0-9]{6,}$")
KILL_AFTER_S = 5  # timeout -k: SIGKILL this long after SIGTERM (at most; see budget)
MARGIN_S = 5.0  # each of the deadline's margins (see budget), at most; an eighth of short ones
KILL_DEADLINE_S = 10.0  # the kill command itself after a cancel (no deadline left to fit in)
OPEN_ATTEMPTS = 5  # a refused channel open is retried (sshd frees session slots lazily)
MAX_OUTPUT_CHARS = 16 * 1024 * 1024  # what one command's output may keep, unless told less
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_WRAPPER = (
    f'printf "%s%s\\n" "{PGID_MARK}" "$$"; d=$1; k=$2; shift 2; '
    'if command -v timeout >/dev/null 2>&1; then exec timeout -k "$k" "$d" "$@"; fi; '
    'exec "$@"'
)

ENV_END = "@@detective-tui-env-end"  # ends the exported assignments read by ENV_READER
ENV_READER = (
    "__dt_e=; __dt_ok=; while IFS= read -r __dt_l; do "
    f'if [ "$__dt_l" = {ENV_END} ]; then __dt_ok=1; break; fi; '
    '__dt_e="$__dt_e$__dt_l\n"; done\n'
    'if [ -z "$__dt_ok" ]; then printf \'%s\\n\' "detective-tui: the variables (inventory env:) '
    "did not arrive on stdin; an exec: command must pass stdin on (kubectl exec -i, srun, "
    'ssh -T)" >&2; exit 97; fi\n'
    'eval "$__dt_e"; unset __dt_e __dt_l __dt_ok\n'
)

LineCallback = Callable[[str], None]


@dataclass(frozen=True)
class CommandResult:
    command: str  # the exact command line run (the script itself went on stdin, if any)
    exit_status: int | None  # None: no exit status (connection lost, killed by the client)
    output: str  # stdout and stderr interleaved, as received
    duration_s: float
    timed_out: bool = False
    error: str | None = None  # why there is no normal exit status
    error_kind: str | None = None  # "unreachable" | "hostkey-unknown" | "hostkey-changed" |
    # "timeout" | "connection-lost"
    dropped_chars: int = 0  # output past the command's cap: counted, not kept

    @property
    def ok(self) -> bool:
        return self.exit_status == 0 and self.error is None


@dataclass(frozen=True)
class Budget:
    """How one deadline is spent, so that everything ends within it (120 s: the remote TERM at
    105 s, its KILL at 110 s, the client's own kill at 115 s, the channel closed by 120 s). The
    remote ``timeout`` also ends a command whose client was killed before the deadline."""

    deadline_s: float  # the figure quoted: the command's whole wall time, kill and close included
    remote_s: int  # the remote ``timeout``: SIGTERM after this many seconds
    kill_after_s: int  # ``timeout -k``: SIGKILL this long after the SIGTERM
    wait_s: float  # the client waits this long for the result, then kills the group itself


def budget(deadline_s: float) -> Budget:
    """Split ``deadline_s``: a margin (``MARGIN_S``, an eighth of a short deadline) at the end
    for the client's kill and close, one between the remote SIGKILL and the client giving up,
    and the remote ``timeout`` gets the rest (at least 1 s: a deadline under about 4 s is
    enforced by the client alone)."""
    margin = min(MARGIN_S, deadline_s / 8)
    wait = deadline_s - margin
    kill_after = max(1, min(KILL_AFTER_S, math.floor(margin)))
    remote = max(1, math.floor(wait - margin - kill_after))
    return Budget(deadline_s, remote, kill_after, wait)


def command_line(
    interpreter: str = "sh -s",
    *,
    deadline_s: float = 60,
    script_arg: str | None = None,
    env_on_stdin: bool = False,
) -> str:
    """The exact command line sent to the host (see the module docstring); ``env_on_stdin``:
    the interpreter is started by ``ENV_READER``, which reads the variables from stdin first."""
    plan = budget(deadline_s)
    argv = ["sh", "-c", _WRAPPER, "detective-tui", str(plan.remote_s), str(plan.kill_after_s)]
    if env_on_stdin:
        argv += ["sh", "-c", ENV_READER + 'exec "$@"', "sh"]
    argv += shlex.split(interpreter)
    if script_arg is not None:
        argv.append(script_arg)
    return "exec " + shlex.join(argv)


def env_head(env: Mapping[str, str]) -> str:
    """``env`` as exported shell assignments, one program text (never a command line)."""
    bad = [name for name in env if not _ENV_NAME.match(name)]
    if bad:
        raise ValueError(f"not variable names: {', '.join(map(repr, bad))}")
    head = "".join(f"{name}={shlex.quote(value)}\nexport {name}\n" for name, value in env.items())
    if ENV_END in head.split("\n"):
        raise ValueError(f"a variable's value holds the line {ENV_END!r}")
    return head


def script_body(script: str, interpreter: str) -> str:
    """What ``sh -s`` reads to run ``script`` with ``interpreter`` (``sh -s`` itself, or e.g.
    ``python3 -``, which then reads the script from a here-document)."""
    if shlex.split(interpreter) == ["sh", "-s"]:
        return script
    tag = f"DT_SCRIPT_{secrets.token_hex(8)}"
    body = script if script.endswith("\n") else script + "\n"
    return f"exec {interpreter} <<'{tag}'\n{body}{tag}\n"


def script_with_env(script: str, env: Mapping[str, str], interpreter: str) -> str:
    """What ``sh -s`` reads to run ``script`` with ``env`` exported: the variables never reach
    a command line."""
    return env_head(env) + script_body(script, interpreter)


def kill_command(pgid: int, tmpdirs: Sequence[str] = ()) -> str:
    """TERM the group and the session now, KILL whatever is left two seconds later, then
    remove the command's announced temp dirs (``TMPDIR_MARK``). ``kill -SIG -PGID`` without
    ``--``: dash's kill refuses ``--``."""
    remove = "".join(f"; rm -rf {shlex.quote(d)}" for d in tmpdirs if _TMPDIR.match(d))
    return (
        f"kill -TERM -{pgid} 2>/dev/null; pkill -TERM -s {pgid} 2>/dev/null; "
        f"(sleep 2; kill -KILL -{pgid}; pkill -KILL -s {pgid}{remove}) "
        ">/dev/null 2>&1 </dev/null &"
    )


def dropped_note(dropped: int, cap: int) -> str:
    """The line that stands for output over a command's cap: nothing is dropped unsaid."""
    return f"[detective-tui: {dropped} more characters not kept (over the {cap}-character cap)]"


class _Collector:
    """Splits the byte stream into lines, takes out the pgid line, keeps the output up to
    ``cap`` characters; lines past it are counted, not kept, and not passed on (``on_line``
    gets one note instead), so memory and the terminal stay bounded."""

    def __init__(self, on_line: LineCallback | None, cap: int = MAX_OUTPUT_CHARS) -> None:
        self.on_line = on_line
        self.cap = cap
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.pending = ""
        self.kept: list[str] = []
        self.size = 0
        self.dropped = 0
        self.pgid: int | None = None
        self.tmpdirs: list[str] = []

    def feed(self, data: bytes, final: bool = False) -> None:
        self.pending += self.decoder.decode(data, final)
        *lines, self.pending = self.pending.split("\n")
        if final and self.pending:
            lines.append(self.pending)
            self.pending = ""
        for line in lines:
            self._line(line.rstrip("\r"))

    def _line(self, line: str) -> None:
        if self.pgid is None and line.startswith(PGID_MARK):
            digits = line[len(PGID_MARK) :].strip()
            if digits.isdigit() and int(digits) > 1:
                self.pgid = int(digits)
                return
        if line.startswith(TMPDIR_MARK):
            self.tmpdirs.append(line[len(TMPDIR_MARK) :])
        if not self.dropped and self.size + len(line) < self.cap:
            self.kept.append(line)
            self.size += len(line) + 1
            if self.on_line is not None:
                self.on_line(line)
            return
        if not self.dropped and self.on_line is not None:
            self.on_line(f"[detective-tui: output over {self.cap} characters; the rest not kept]")
        self.dropped += len(line) + 1

    @property
    def output(self) -> str:
        text = "".join(f"{line}\n" for line in self.kept)
        if self.dropped:
            text += dropped_note(self.dropped, self.cap) + "\n"
        return text


class _Proc(abc.ABC):
    @abc.abstractmethod
    async def send(self, data: bytes) -> None:
        """Write all of stdin, then close it."""

    @abc.abstractmethod
    async def read(self) -> bytes:
        """The next chunk of output; b'' at the end."""

    @abc.abstractmethod
    async def wait(self) -> int | None:
        """The exit status (negative: killed by that signal), None if unknown."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Release the channel / pipes (the command has finished or been killed)."""


class Transport(abc.ABC):
    """Runs command lines on one host."""

    def __init__(self, host: Host) -> None:
        self.host = host

    @abc.abstractmethod
    async def _spawn(self, command: str) -> _Proc: ...

    @abc.abstractmethod
    async def _run_kill(self, command: str) -> None: ...

    async def close(self) -> None:
        return None

    async def kill_group(
        self, pgid: int | None, tmpdirs: Sequence[str] = (), within_s: float = KILL_DEADLINE_S
    ) -> None:
        """Best effort, bounded by ``within_s``: TERM then KILL the command's process group and
        session, and remove the temp dirs it announced."""
        if pgid is None or within_s <= 0:
            return
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._run_kill(kill_command(pgid, tmpdirs)), within_s)

    async def execute(
        self,
        command: str,
        *,
        stdin: str | None = None,
        deadline_s: float = 60,
        on_line: LineCallback | None = None,
        env: str | None = None,
        max_output_chars: int = MAX_OUTPUT_CHARS,
    ) -> CommandResult:
        """Run one command line built by ``command_line``; raises ``Unreachable`` or a
        ``HostKeyError`` when no connection can be made, otherwise returns a result. ``env``
        (``env_head``) is sent on stdin ahead of ``stdin``. Output past ``max_output_chars``
        is counted, not kept (``dropped_chars``, and a note). The result comes within
        ``deadline_s`` of the call (``budget``), the kill after a timeout and the close included;
        the command line must be built with the same ``deadline_s``."""
        started = time.monotonic()
        plan = budget(deadline_s)
        end = started + deadline_s
        proc = await self._spawn(command)
        out = _Collector(on_line, max_output_chars)
        status: int | None = None
        timed_out = False
        error: str | None = None
        error_kind: str | None = None

        async def pump() -> int | None:
            await proc.send(((env or "") + (stdin or "")).encode())
            while chunk := await proc.read():
                out.feed(chunk)
            out.feed(b"", final=True)
            return await proc.wait()

        try:
            status = await asyncio.wait_for(pump(), plan.wait_s - (time.monotonic() - started))
        except asyncio.TimeoutError:
            timed_out = True
            error = f"no result within {deadline_s:g} s; " + (
                "the remote process group was killed"
                if out.pgid is not None
                else "the host never reported a process id, so nothing could be killed"
            )
            error_kind = "timeout"
            await self.kill_group(out.pgid, out.tmpdirs, end - time.monotonic())
        except asyncio.CancelledError:
            await asyncio.shield(self.kill_group(out.pgid, out.tmpdirs))
            raise
        except ssh_errors() as exc:
            error = f"connection lost: {reason_of(exc)}"
            error_kind = "connection-lost"
        except BaseException:
            await asyncio.shield(self.kill_group(out.pgid, out.tmpdirs))
            raise
        finally:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(proc.close(), max(0.0, end - time.monotonic()))
        duration = time.monotonic() - started
        if status == 124 or (status in (137, -9) and duration >= plan.remote_s):
            timed_out = True
            error = f"stopped by its {deadline_s:g} s deadline"
            error_kind = "timeout"
        elif status is None and error is None:
            error = "connection closed before the command finished"
            error_kind = "connection-lost"
        return CommandResult(
            command=command,
            exit_status=status,
            output=out.output,
            duration_s=duration,
            timed_out=timed_out,
            error=error,
            error_kind=error_kind,
            dropped_chars=out.dropped,
        )
