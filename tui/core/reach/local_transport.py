"""The transport for this machine: the common command line (``tui.core.reach.transport``) under
``sh -c`` in a new session, at a lower CPU priority; no SSH, and asyncssh is never loaded."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from pathlib import Path

from tui.core.reach.transport import Transport, _Proc

LOCAL_NICE = 10  # niceness of local commands (see LocalTransport)
# ``nice`` (coreutils, POSIX) sets it before ``sh`` starts, so every child inherits it.
_NICE: tuple[str, ...] = ("nice", "-n", str(LOCAL_NICE)) if shutil.which("nice") else ()


class _LocalProc(_Proc):
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    async def send(self, data: bytes) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            stdin.write(data)
            await stdin.drain()
        stdin.close()

    async def read(self) -> bytes:
        assert self.proc.stdout is not None
        return await self.proc.stdout.read(65536)

    async def wait(self) -> int | None:
        return await self.proc.wait()

    async def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()


def _lower_session_priority(pid: int) -> None:
    """Give the new session's scheduler autogroup the ``LOCAL_NICE`` niceness, best effort.

    With autogroup on (``/proc/sys/kernel/sched_autogroup_enabled``, the default on most
    distributions) the kernel shares the CPU fairly between *sessions* first, so a task's own
    nice value only ranks it against its own session: 16 probes, each in its own session,
    would each weigh as much as the TUI. Raising a group's niceness needs no privilege."""
    with contextlib.suppress(OSError):
        Path(f"/proc/{pid}/autogroup").write_text(str(LOCAL_NICE), encoding="ascii")


class LocalTransport(Transport):
    """This machine: the same command line under ``sh -c`` in a new session, no SSH.

    Commands run at a lower CPU priority (``nice -n LOCAL_NICE``, and their session's
    autogroup too): they share the CPUs with the TUI and with whatever the machine is for
    (a training job). On an idle machine that changes nothing; on a busy one the probe
    waits rather than the UI or the workload: with the demo fleet (16 probes at once on
    2 cores) this alone took the TUI's p95 key-to-render latency from ~110 ms to ~35 ms,
    and probing took as long as before. The fast probe's steps are light (it never imports
    torch), which leaves their per-step deadlines headroom when they wait for the CPU;
    a long command (a fix's install, a validation's JIT compile) takes longer on a busy
    machine and is still bound by its own deadline. The kill command is not lowered: it
    must run now."""

    async def _spawn(self, command: str) -> _Proc:
        proc = await asyncio.create_subprocess_exec(
            *_NICE,
            "sh",
            "-c",
            command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        _lower_session_priority(proc.pid)
        return _LocalProc(proc)

    async def _run_kill(self, command: str) -> None:
        proc = await asyncio.create_subprocess_exec(
            "sh", "-c", command, stdin=asyncio.subprocess.DEVNULL
        )
        await proc.wait()
