"""Hosts behind ProxyJump hops: one connection per hop chain, shared by every host behind it.

With 100 hosts behind one bastion, opening a bastion connection per host makes 100
unauthenticated connections at once, and a stock sshd (``MaxStartups 10:30:100``) drops a
third of them. ``JumpPool`` opens each chain once (callers that arrive while it is being opened
wait for that one attempt) and hands the same connection to every host behind it; each host's
own connection is a channel through it. A chain whose connection has closed is opened again on
the next request; a failed attempt is not remembered.

Each hop is checked against *our* known_hosts like any host (``sshconnect.connect_endpoint``),
and a hop's own ProxyJump is honoured for the first hop, as ``ssh -J`` does.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from tui.core.hosts import Host
from tui.core.reach.hostkeys import HostKeyChanged, HostKeyInfo, HostKeyRevoked, HostKeyUnknown
from tui.core.reach.sshconnect import (
    AuthFailed,
    Endpoint,
    Unreachable,
    connect_endpoint,
    endpoint_for,
    endpoint_of,
)

if TYPE_CHECKING:  # annotations only; sshconnect imports asyncssh when it connects
    import asyncssh

MAX_HOPS = 8  # a longer chain is a loop in the ssh config
CLOSE_DEADLINE_S = 10.0

Chain = tuple[str, ...]


class HopUnreachable(Unreachable):
    """The ProxyJump hop ``hop`` could not be reached."""

    def __init__(self, hop: str, reason: str) -> None:
        self.hop = hop
        super().__init__(reason)


def chain_for(endpoint: Endpoint, ssh_config: Path | None) -> Chain:
    """Every hop to ``endpoint`` in order: the first hop's own ProxyJump chain, then its own."""
    if not endpoint.hops:
        return ()
    chain: list[str] = list(endpoint.hops)
    first = endpoint_for(chain[0], ssh_config)
    while first.hops:
        chain[:0] = first.hops
        if len(chain) > MAX_HOPS:
            raise Unreachable(
                f"{endpoint.label}: more than {MAX_HOPS} ProxyJump hops; is there a loop in "
                "the ssh config?"
            )
        first = endpoint_for(chain[0], ssh_config)
    return tuple(chain)


class JumpPool:
    """Open hop connections by chain. ``close()`` (sync, like an asyncssh connection, so it can
    be a connection's tunnel) closes them all; ``wait_closed()`` waits for that."""

    def __init__(self, *, known_hosts: Path, ssh_config: Path | None, connect_timeout: float):
        self.known_hosts = known_hosts
        self.ssh_config = ssh_config
        self.connect_timeout = connect_timeout
        self._chains: dict[Chain, asyncio.Task[asyncssh.SSHClientConnection]] = {}
        self._closed: list[asyncssh.SSHClientConnection] = []

    async def tunnel(self, chain: Chain) -> asyncssh.SSHClientConnection | None:
        """The connection to the last hop of ``chain`` (None for no hops). Raises
        ``HopUnreachable`` or the hop's ``HostKeyError``."""
        if not chain:
            return None
        task = self._chains.get(chain)
        if task is None or not _usable(task):
            task = asyncio.ensure_future(self._open(chain))
            task.add_done_callback(_retrieve)
            self._chains[chain] = task
        return await asyncio.shield(task)

    async def _open(self, chain: Chain) -> asyncssh.SSHClientConnection:
        via = await self.tunnel(chain[:-1])
        hop = chain[-1]
        try:
            return await connect_endpoint(
                endpoint_for(hop, self.ssh_config),
                known_hosts=self.known_hosts,
                tunnel=via,
                timeout=self.connect_timeout,
                via=",".join(chain[:-1]),
            )
        except Unreachable as exc:
            raise HopUnreachable(hop, exc.reason) from exc

    def close(self) -> None:
        """Close every hop, the innermost first."""
        for chain in sorted(self._chains, key=len, reverse=True):
            task = self._chains.pop(chain)
            if not task.done():
                task.cancel()
            elif not task.cancelled() and task.exception() is None:
                conn = task.result()
                conn.close()
                self._closed.append(conn)

    async def wait_closed(self) -> None:
        closed, self._closed = self._closed, []
        for conn in closed:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.wait_closed(), CLOSE_DEADLINE_S)


def _usable(task: asyncio.Task[asyncssh.SSHClientConnection]) -> bool:
    """In flight, or done with a connection that is still open."""
    if not task.done():
        return True
    return not task.cancelled() and task.exception() is None and not task.result().is_closed()


def _retrieve(task: asyncio.Task[asyncssh.SSHClientConnection]) -> None:
    """Mark a failure as seen even when every caller was cancelled meanwhile."""
    if not task.cancelled():
        task.exception()


async def connect(
    host: Host,
    *,
    known_hosts: Path,
    ssh_config: Path | None,
    connect_timeout: float = 10.0,
    jumps: JumpPool | None = None,
) -> asyncssh.SSHClientConnection:
    """An authenticated connection with strict host-key checking against ``known_hosts``,
    through the host's ProxyJump hops (each checked the same way): from ``jumps`` when given
    (shared with the other hosts behind them), else opened for this connection alone and
    closed with it."""
    own = jumps is None
    pool = jumps or JumpPool(
        known_hosts=known_hosts, ssh_config=ssh_config, connect_timeout=connect_timeout
    )
    try:
        endpoint = endpoint_of(host, ssh_config)
        chain = chain_for(endpoint, ssh_config)
        tunnel = await _tunnel(host, pool, chain)
        conn = await connect_endpoint(
            endpoint,
            known_hosts=known_hosts,
            tunnel=tunnel,
            timeout=connect_timeout,
            via=",".join(chain),
        )
    except BaseException:
        if own:
            pool.close()
        raise
    if own:
        conn.set_tunnel(pool)  # type: ignore[arg-type]  # closing it closes its own hops
    return conn


async def _tunnel(host: Host, pool: JumpPool, chain: Chain) -> asyncssh.SSHClientConnection | None:
    try:
        return await pool.tunnel(chain)
    except HopUnreachable as exc:
        raise Unreachable(f"{host.target} (via ProxyJump {exc.hop}): {exc.reason}") from exc


async def fetch_host_key(
    host: Host, *, known_hosts: Path, ssh_config: Path | None, connect_timeout: float = 10.0
) -> tuple[str, HostKeyInfo]:
    """The key the host offers, trusting nothing: ``("trusted", info)`` when known_hosts
    already vouches for it, else ``("unknown"|"changed"|"revoked", info)``. Raises
    ``Unreachable`` (and a ``HostKeyError`` for a ProxyJump hop whose own key is not
    trusted)."""
    pool = JumpPool(known_hosts=known_hosts, ssh_config=ssh_config, connect_timeout=connect_timeout)
    try:
        endpoint = endpoint_of(host, ssh_config)
        chain = chain_for(endpoint, ssh_config)
        tunnel = await _tunnel(host, pool, chain)
        try:
            conn = await connect_endpoint(
                endpoint, known_hosts=known_hosts, tunnel=tunnel, timeout=connect_timeout
            )
        except HostKeyRevoked as exc:
            return "revoked", exc.info
        except HostKeyChanged as exc:
            return "changed", exc.info
        except HostKeyUnknown as exc:
            return "unknown", exc.info
        except AuthFailed as exc:  # the key was checked before authentication failed
            if exc.accepted is None:
                raise
            return "trusted", exc.accepted
        key = conn.get_server_host_key()
        conn.close()
        assert key is not None  # an authenticated connection has checked one
        addr = (conn.get_extra_info("peername") or (endpoint.known_name,))[0]
        return "trusted", HostKeyInfo(
            host=endpoint.known_name, port=endpoint.port, addr=addr, key=key
        )
    finally:
        pool.close()
        await pool.wait_closed()
