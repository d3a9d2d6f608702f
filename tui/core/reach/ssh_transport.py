"""The SSH transport: the common command line (``tui.core.reach.transport``) over one reused
asyncssh connection per host, its jump hosts from ``tui.core.reach.hops`` (host keys:
``tui.core.reach.hostkeys``)."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from tui.core.hosts import Host
from tui.core.reach.hops import JumpPool, connect
from tui.core.reach.sshconnect import Unreachable, reason_of
from tui.core.reach.transport import (
    KILL_DEADLINE_S,
    MAX_OUTPUT_CHARS,
    OPEN_ATTEMPTS,
    CommandResult,
    LineCallback,
    Transport,
    _Proc,
)

if TYPE_CHECKING:  # the module is imported only where an SSH host is reached
    import asyncssh


class _SSHProc(_Proc):
    def __init__(self, proc: asyncssh.SSHClientProcess[bytes]) -> None:
        self.proc = proc

    async def send(self, data: bytes) -> None:
        if data:
            self.proc.stdin.write(data)
            await self.proc.stdin.drain()
        self.proc.stdin.write_eof()

    async def read(self) -> bytes:
        return await self.proc.stdout.read(65536)

    async def wait(self) -> int | None:
        await self.proc.wait()
        return self.proc.returncode

    async def close(self) -> None:
        # Wait for sshd's side of the close too: its MaxSessions slot is only free then.
        self.proc.close()
        await self.proc.wait_closed()


class SSHTransport(Transport):
    """One reused connection; at most ``max_channels`` commands at a time on it (sshd's
    ``MaxSessions`` is 10; the kill channel must still fit). ProxyJump hops come from
    ``jumps``, shared with the other hosts behind them (without one: opened for this host)."""

    def __init__(
        self,
        host: Host,
        *,
        known_hosts: Path,
        ssh_config: Path | None,
        connect_timeout: float = 10.0,
        max_channels: int = 8,
        jumps: JumpPool | None = None,
    ) -> None:
        super().__init__(host)
        self.known_hosts = known_hosts
        self.ssh_config = ssh_config
        self.connect_timeout = connect_timeout
        self.jumps = jumps
        self._channels = asyncio.Semaphore(max_channels)
        self._lock = asyncio.Lock()
        self._conn: asyncssh.SSHClientConnection | None = None

    async def connection(self) -> asyncssh.SSHClientConnection:
        async with self._lock:
            if self._conn is None or self._conn.is_closed():
                self._conn = await connect(
                    self.host,
                    known_hosts=self.known_hosts,
                    ssh_config=self.ssh_config,
                    connect_timeout=self.connect_timeout,
                    jumps=self.jumps,
                )
            return self._conn

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
        await self.connection()
        async with self._channels:
            return await super().execute(
                command,
                stdin=stdin,
                deadline_s=deadline_s,
                on_line=on_line,
                env=env,
                max_output_chars=max_output_chars,
            )

    async def _spawn(self, command: str) -> _Proc:
        import asyncssh

        conn = await self.connection()
        for attempt in range(1, OPEN_ATTEMPTS + 1):
            try:
                proc = await conn.create_process(command, encoding=None, stderr=asyncssh.STDOUT)
                break
            except asyncssh.ChannelOpenError as exc:  # sshd still freeing a session slot
                if attempt == OPEN_ATTEMPTS or conn.is_closed():
                    raise Unreachable(
                        f"{self.host.target}: cannot open a session: {reason_of(exc)}"
                    ) from exc
                await asyncio.sleep(0.05 * attempt)
            except (asyncssh.Error, OSError) as exc:
                raise Unreachable(
                    f"{self.host.target}: cannot open a session: {reason_of(exc)}"
                ) from exc
        return _SSHProc(proc)

    async def _run_kill(self, command: str) -> None:
        if self._conn is not None and not self._conn.is_closed():
            await self._conn.run(command, check=False)

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.wait_closed(), KILL_DEADLINE_S)
