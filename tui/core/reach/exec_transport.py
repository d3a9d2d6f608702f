"""The ``exec`` transport: a host reached by a command instead of SSH (inventory ``exec:``).

``exec: "kubectl exec -i -n ml {name} -- sh -c {script}"`` runs that command here, without a
local shell (the words are split once when the inventory is read, ``{name}`` filled in), with
``{script}`` replaced by one argument: the same command line the SSH transport sends
(``exec sh -c '<print pgid>; exec timeout -k 5 N "$@"' … sh -s``) followed by the script as a
quoted here-document. So stdin is not needed (``kubectl exec`` without ``-i`` works too), except
for inventory ``env``: its exported assignments come on the engine's stdin, read by the program
before anything else (``ENV_READER``), never inside that argument (every local user can read
``/proc/PID/cmdline``, here and on the host); without stdin the program stops with exit 97 and
says so. The remote side gets exactly what SSH gives it: the remote deadline (``timeout -k 5
N``, where the host has coreutils ``timeout``), the process-group id printed first, the same
records.

Cancel and the client-side deadline: the remote process group is killed by running the template
a second time with the kill command as the script (``kubectl exec … -- sh -c 'kill -TERM -PGID
…'``), then the local client (``kubectl``, ``srun``, ``ssh``) and everything it started are
killed as a session here. Limits, as well as they can hold:

- the remote deadline needs ``timeout`` on the host (as for SSH); without it only the client-side
  deadline holds, and whether the remote side stops then depends on the kill command reaching it;
- the kill reaches the right processes only when a second run of the template lands in the same
  place (same pod/container, same node: true for ``kubectl exec``, ``srun --jobid … --overlap -w``
  and ``ssh``); where the engine cannot start a second command (a job without ``--overlap``), the
  remote side runs until its own deadline;
- killing the client alone does not stop the remote command (``kubectl exec`` leaves it running,
  ``ssh -T`` lets it run until it writes to the closed channel), hence the kill command;
- Linux limits one argument to 128 KiB (``MAX_ARG_STRLEN``): the probe is about 115 KB (124 KB
  shell-quoted); a script beyond the limit is refused with the size before anything runs
  (with ssh, the size of the whole remote command, which the remote shell gets as one
  argument).

How ``{script}`` is passed: as one raw argument where the engine hands its words to the remote
program as they are (``kubectl exec … -- sh -c {script}``, ``srun … sh -c {script}``). ssh does
not: it joins its command words with spaces and the remote login shell splits them again
(``tui.core.ssh_argv``). So with ``ssh`` as the program, ``{script}`` as a later word of the
remote command (``ssh -T {name} sh -c {script}``) is shell-quoted (``shlex.quote``), which makes
the remote shell give ``sh`` exactly one argument; as the first word (``ssh -T {name}
{script}``) it is the command line the remote shell runs, and stays as it is. Either way the
remote login shell must be a POSIX shell, as for the SSH transport.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import secrets
import shlex
import signal
from pathlib import Path

from tui.core.hosts import SCRIPT_WORD
from tui.core.reach.local_transport import _LocalProc
from tui.core.reach.sshconnect import Unreachable
from tui.core.reach.transport import (
    ENV_END,
    ENV_READER,
    KILL_DEADLINE_S,
    MAX_OUTPUT_CHARS,
    CommandResult,
    LineCallback,
    Transport,
    _Proc,
)
from tui.core.ssh_argv import remote_command_start

MAX_ARG_BYTES = 128 * 1024 - 1  # Linux MAX_ARG_STRLEN (32 pages) including the final NUL
STARTED = "@@detective-tui-exec-started"  # first line of the program: the engine got it running


def heredoc_program(command: str, stdin: str | None, env: bool = False) -> str:
    """``command`` with ``stdin`` fed as a quoted here-document (no expansion inside), one shell
    program; a trailing newline is added when ``stdin`` lacks one (the scripts are programs).
    ``env``: the program first reads the exported variables from its own stdin (``ENV_READER``),
    so they never become part of an argument."""
    start = f"printf '%s\\n' '{STARTED}'\n" + (ENV_READER if env else "")
    if not stdin:
        return f"{start}{command} </dev/null\n"
    body = stdin if stdin.endswith("\n") else stdin + "\n"
    lines = set(body.split("\n"))
    while (end := f"DT_STDIN_{secrets.token_hex(6)}") in lines:
        continue
    return f"{start}{command} <<'{end}'\n{body}{end}\n"


def _remote_shell_words(words: tuple[str, ...]) -> int | None:
    """Where the words a remote shell joins and splits again begin (ssh's remote command);
    ``None`` when the engine passes its words on as they are."""
    return remote_command_start(words) if Path(words[0]).name == "ssh" else None


def exec_argv(words: tuple[str, ...], program: str) -> list[str]:
    """The template's words with ``program`` in place of ``{script}``: shell-quoted where a
    remote shell splits the words again and ``{script}`` is not its command's first word."""
    start = _remote_shell_words(words)
    if start is not None and words.index(SCRIPT_WORD) > start:
        program = shlex.quote(program)
    return [program if w == SCRIPT_WORD else w for w in words]


def argument_size(words: tuple[str, ...], argv: list[str]) -> int:
    """Bytes of the largest single argument the script ends up in: its own word, or the whole
    remote command where a remote shell gets it as one ``-c`` argument."""
    start = _remote_shell_words(words)
    at = words.index(SCRIPT_WORD)
    if start is not None and start <= at:
        return len(" ".join(argv[start:]).encode())
    return len(argv[at].encode())


class _ExecProc(_LocalProc):
    """The local engine client; closing it kills its session if it has not exited."""

    async def close(self) -> None:
        await super().close()
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.proc.wait(), KILL_DEADLINE_S)


class ExecTransport(Transport):
    """Runs each command line through the host's ``exec`` template (see the module docstring)."""

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
        program = heredoc_program(command, stdin, env is not None)
        size = argument_size(self.host.exec, exec_argv(self.host.exec, program))
        if size > MAX_ARG_BYTES:
            raise Unreachable(
                f"{self.host.name}: the script makes one argument of {size} bytes (as "
                f"{SCRIPT_WORD}), over Linux's limit of {MAX_ARG_BYTES + 1} bytes for one argument "
                "(MAX_ARG_STRLEN); it cannot be run through `exec:`"
            )
        started = False

        def line(text: str) -> None:
            nonlocal started
            if not started and text == STARTED:
                started = True
                return
            if on_line is not None:
                on_line(text)

        feed = None if env is None else f"{env}{ENV_END}\n"
        result = await super().execute(
            program,
            stdin=feed,
            deadline_s=deadline_s,
            on_line=line,
            max_output_chars=max_output_chars,
        )
        output = result.output.replace(f"{STARTED}\n", "", 1)
        if not started and not result.timed_out:
            tail = " | ".join(output.strip().splitlines()[-3:]) or "no output"
            raise Unreachable(
                f"{self.host.name}: `{self.host.exec[0]}` exited with status "
                f"{result.exit_status} before the script started: {tail}"
            )
        return dataclasses.replace(result, command=command, output=output)

    async def _spawn(self, command: str) -> _Proc:
        try:
            proc = await asyncio.create_subprocess_exec(
                *exec_argv(self.host.exec, command),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            raise Unreachable(
                f"{self.host.name}: cannot run `{self.host.exec[0]}`: {exc.strerror or exc}"
            ) from exc
        return _ExecProc(proc)

    async def _run_kill(self, command: str) -> None:
        proc = await asyncio.create_subprocess_exec(
            *exec_argv(self.host.exec, command),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            await proc.wait()
        finally:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
