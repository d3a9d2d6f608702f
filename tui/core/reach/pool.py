"""Connections and concurrency: one transport per host, reused; a global cap on running commands.

Per connection, ``SSHTransport`` caps concurrent channels (8 of sshd's 10 ``MaxSessions``,
leaving room for the kill channel); across all hosts, ``slot()`` caps commands in flight.
Hosts behind the same ProxyJump hops share one connection to them (``JumpPool``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from tui.core.hosts import Host
from tui.core.reach.exec_transport import ExecTransport
from tui.core.reach.hops import JumpPool
from tui.core.reach.local_transport import LocalTransport
from tui.core.reach.ssh_transport import SSHTransport
from tui.core.reach.transport import Transport

CHANNELS_PER_CONNECTION = 8


class ConnectionPool:
    def __init__(
        self,
        *,
        known_hosts: Path,
        ssh_config: Path | None,
        concurrency: int = 32,
        connect_timeout: float = 10.0,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.known_hosts = known_hosts
        self.ssh_config = ssh_config
        self.connect_timeout = connect_timeout
        self._slots = asyncio.Semaphore(concurrency)
        self._transports: dict[tuple[str, str | None, bool, tuple[str, ...]], Transport] = {}
        self.jumps = JumpPool(
            known_hosts=known_hosts, ssh_config=ssh_config, connect_timeout=connect_timeout
        )

    @staticmethod
    def _key(host: Host) -> tuple[str, str | None, bool, tuple[str, ...]]:
        return (host.name, host.ssh, host.local, host.exec)

    def holds(self, host: Host) -> bool:
        """Is a transport (an SSH connection, for SSH hosts) open for ``host``?"""
        return self._key(host) in self._transports

    async def release(self, host: Host) -> None:
        """Close ``host``'s transport now (a fleet action done with that host); the next
        command for it opens a new one. Jump-host connections stay until ``close``."""
        found = self._transports.pop(self._key(host), None)
        if found is not None:
            with contextlib.suppress(Exception):
                await found.close()

    def transport(self, host: Host) -> Transport:
        key = self._key(host)
        found = self._transports.get(key)
        if found is None:
            found = (
                _own_transport(host)
                if host.transport is not None
                else ExecTransport(host)
                if host.exec
                else LocalTransport(host)
                if host.local
                else SSHTransport(
                    host,
                    known_hosts=self.known_hosts,
                    ssh_config=self.ssh_config,
                    connect_timeout=self.connect_timeout,
                    max_channels=CHANNELS_PER_CONNECTION,
                    jumps=self.jumps,
                )
            )
            self._transports[key] = found
        return found

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        async with self._slots:
            yield

    async def close(self) -> None:
        transports = list(self._transports.values())
        self._transports.clear()
        await asyncio.gather(*(t.close() for t in transports), return_exceptions=True)
        self.jumps.close()  # after the hosts whose connections run through them
        await self.jumps.wait_closed()


def _own_transport(host: Host) -> Transport:
    """The transport ``host`` names for itself (code-built hosts only: the demo, tests)."""
    assert host.transport is not None
    made = host.transport(host)
    if not isinstance(made, Transport):
        raise TypeError(
            f"{host.name}: Host.transport made a {type(made).__name__}, not a "
            "tui.core.reach.transport.Transport"
        )
    return made
