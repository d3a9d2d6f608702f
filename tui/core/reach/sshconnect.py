"""One authenticated SSH connection to one endpoint (a host or a ProxyJump hop), checked and
retried the way OpenSSH would.

- **Host keys** (see ``tui.core.reach.hostkeys``): strict, against our known_hosts; host key
  algorithms offered in OpenSSH's order (``KnownHosts.host_key_algorithms``), so a server that
  switched key type is a *changed* key, not a failed handshake. A certificate signed by a CA
  that known_hosts does not trust makes OpenSSH check the plain key inside it; here the
  handshake is redone offering plain keys only, and the refusal, if any, names the
  ``@cert-authority`` line that would trust the CA. When asyncssh refuses without asking us
  (a ``@revoked`` key or CA), one more handshake that trusts nothing learns the key the server
  offers, so the refusal can name it and the known_hosts line that revokes it.
- **Start-up refusals are retried.** sshd drops new connections beyond ``MaxStartups``
  (default ``10:30:100``: from 10 unauthenticated connections on, 30 % of new ones, rising to
  all at 100) by closing them before its banner; an overloaded server or bastion may also
  close one during the key exchange. Those attempts are retried with jittered exponential
  backoff until the connect deadline, and the final error names the likely cause. Refused
  TCP connections (nothing listening), timeouts and every other failure are not retried.
- **Lenient text.** A pre-auth banner (sshd's ``Banner``) that is not UTF-8 is decoded with
  replacement characters, as OpenSSH prints it, instead of failing the connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from tui.core.hosts import Host
from tui.core.neterrors import describe_os_error
from tui.core.reach.hostkeys import (
    HostKeyError,
    HostKeyInfo,
    HostKeyRevoked,
    KeyCapture,
    new_key_capture,
    refusal,
)
from tui.core.reach.inventory import parse_ssh_target

if TYPE_CHECKING:  # imported where a connection is made: local and --demo runs never load it
    import asyncssh

    from tui.core.reach.known_hosts import KnownHosts

RETRY_FIRST_S = 0.1  # the first retry after a start-up refusal waits about this long…
RETRY_CAP_S = 2.0  # …doubling up to this, each wait jittered ±50 %


class Unreachable(Exception):
    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class AuthFailed(Unreachable):
    """The host key was checked (``accepted``), then authentication failed."""

    def __init__(self, reason: str, accepted: HostKeyInfo | None) -> None:
        self.accepted = accepted
        super().__init__(reason)


@dataclass(frozen=True)
class Endpoint:
    """What connecting to one host takes, read once from its target and the ssh config."""

    label: str  # what the user typed: the inventory target or the ProxyJump hop
    hostname: str  # given to asyncssh, which applies the ssh config to it
    known_name: str  # what known_hosts is matched on: HostKeyAlias, else HostName
    port: int
    hops: tuple[str, ...]  # the config's ProxyJump for it, in order
    config_host_key_algs: bool  # the ssh config sets HostKeyAlgorithms: its choice wins
    kwargs: Mapping[str, object] = field(default_factory=dict)

    @classmethod
    def of(cls, target: str, ssh_config: Path | None) -> Endpoint:
        import asyncssh

        from tui.core.reach.known_hosts import DEFAULT_PORT

        user, hostname, port = parse_ssh_target(target)
        kwargs: dict[str, object] = {"config": [str(ssh_config)] if ssh_config else None}
        if user:
            kwargs["username"] = user
        if port:
            kwargs["port"] = port
        options = asyncssh.SSHClientConnectionOptions(host=hostname, **kwargs)  # type: ignore[arg-type]
        tunnel = options.tunnel
        hops: tuple[str, ...] = ()
        if isinstance(tunnel, str) and tunnel.strip().lower() != "none":
            hops = tuple(hop.strip() for hop in tunnel.split(",") if hop.strip())
        return cls(
            label=target,
            hostname=hostname,
            known_name=options.host_key_alias or options.host,
            port=options.port or DEFAULT_PORT,
            hops=hops,
            config_host_key_algs=bool(options.config.get("HostKeyAlgorithms", ())),
            kwargs=MappingProxyType(kwargs),
        )

    @property
    def where(self) -> str:
        from tui.core.reach.known_hosts import DEFAULT_PORT

        return self.known_name if self.port == DEFAULT_PORT else f"{self.known_name}:{self.port}"


def endpoint_of(host: Host, ssh_config: Path | None) -> Endpoint:
    return endpoint_for(host.ssh or host.name, ssh_config)


def endpoint_for(target: str, ssh_config: Path | None) -> Endpoint:
    """``Endpoint.of``, remembered while the ssh config file is unchanged: reading it costs
    ~10 ms per 100 ``Host`` blocks, and 100 hosts behind one bastion look the bastion up 100
    times."""
    stamp = None
    if ssh_config is not None:
        with contextlib.suppress(OSError):
            stat = ssh_config.stat()
            stamp = (stat.st_mtime_ns, stat.st_size)
    return _remembered(target, ssh_config, stamp)


@functools.lru_cache(maxsize=1024)
def _remembered(target: str, ssh_config: Path | None, _stamp: tuple[int, int] | None) -> Endpoint:
    return Endpoint.of(target, ssh_config)


async def _handshake(
    endpoint: Endpoint,
    capture: KeyCapture,
    *,
    order: KnownHosts,
    verify: KnownHosts,
    tunnel: asyncssh.SSHClientConnection | None,
    plain_only: bool,
) -> asyncssh.SSHClientConnection:
    """One attempt: host key algorithms in ``order``'s preference, keys checked against
    ``verify``. ``tunnel=None`` is explicit: asyncssh never opens a config ProxyJump itself
    (it would check those hops against ~/.ssh/known_hosts); the hops are ours."""
    import asyncssh

    kwargs = dict(endpoint.kwargs)
    if plain_only or not endpoint.config_host_key_algs:
        kwargs["server_host_key_algs"] = order.host_key_algorithms(
            endpoint.known_name, endpoint.port, certificates=not plain_only
        )
    return await asyncssh.connect(
        endpoint.hostname,
        known_hosts=verify,
        client_factory=lambda: capture,
        tunnel=tunnel,
        utf8_decode_errors="replace",
        **kwargs,  # type: ignore[arg-type]
    )


def _startup_drop(exc: BaseException, capture: KeyCapture) -> str | None:
    """Why the server closed the connection at start-up, or None when it was not that."""
    import asyncssh

    if not isinstance(exc, (asyncssh.ConnectionLost, ConnectionResetError, BrokenPipeError)):
        return None
    conn = capture.conn
    if conn is not None and conn.get_server_host_key() is not None:
        return None  # past the key exchange: not a start-up refusal
    if conn is None or not conn.get_extra_info("server_version"):
        return "the server closed the connection before its SSH banner"
    return "the server closed the connection during the key exchange"


def _backoff(attempt: int) -> float:
    return min(RETRY_CAP_S, RETRY_FIRST_S * 2 ** (attempt - 1)) * random.uniform(0.5, 1.5)


@dataclass
class _Attempts:
    """What the attempts so far have learnt."""

    drops: int = 0  # closed at start-up
    why: str = ""  # how, the last time
    untrusted_ca: asyncssh.SSHKey | None = None  # a certificate's CA known_hosts does not trust
    refused: str | None = None  # asyncssh refused the key without asking us, and why

    @property
    def plain_only(self) -> bool:
        return self.untrusted_ca is not None or self.refused is not None


async def connect_endpoint(
    endpoint: Endpoint,
    *,
    known_hosts: Path,
    tunnel: asyncssh.SSHClientConnection | None,
    timeout: float,
    via: str = "",
) -> asyncssh.SSHClientConnection:
    """An authenticated connection to ``endpoint`` (through ``tunnel``), within ``timeout``
    seconds in all. Raises ``HostKeyError`` (unknown, changed, revoked), ``AuthFailed`` or
    ``Unreachable``; ``via`` names the hops for the start-up refusal's hint.

    When asyncssh refuses the key without asking us (a ``@revoked`` key or CA, a certificate
    from a trusted CA that is not valid for the host), one more handshake that trusts nothing
    learns the plain key the server offers, so the refusal can name it and its line."""
    import asyncssh

    from tui.core.reach.known_hosts import KnownHosts

    loop = asyncio.get_running_loop()
    started = loop.time()
    end = started + timeout
    label = endpoint.label
    known = KnownHosts.read(known_hosts)
    seen = _Attempts()
    while True:
        capture = new_key_capture()
        try:
            conn = await asyncio.wait_for(
                _handshake(
                    endpoint,
                    capture,
                    order=known,
                    verify=known if seen.refused is None else KnownHosts(),
                    tunnel=tunnel,
                    plain_only=seen.plain_only,
                ),
                max(0.0, end - loop.time()),
            )
        except asyncssh.HostKeyNotVerifiable as exc:
            if capture.rejected is not None:
                raise _refusal(label, capture.rejected, known_hosts, seen) from exc
            if capture.rejected_ca is not None and seen.untrusted_ca is None:
                seen.untrusted_ca = capture.rejected_ca  # OpenSSH: then check the plain key
                continue
            if seen.refused is None:
                seen.refused = reason_of(exc)
                continue
            raise Unreachable(f"{label}: host key refused: {seen.refused}") from exc
        except asyncssh.PermissionDenied as exc:
            raise AuthFailed(
                f"{label}: authentication failed ({reason_of(exc)}); check the user, "
                "IdentityFile in ~/.ssh/config, or the keys in your ssh-agent",
                capture.accepted,
            ) from exc
        except asyncio.TimeoutError as exc:
            if seen.refused is not None:
                raise Unreachable(f"{label}: host key refused: {seen.refused}") from exc
            if seen.drops:  # the last attempt ran out of time: the drops are the story
                raise Unreachable(
                    _dropped(endpoint, seen, loop.time() - started, via, True)
                ) from exc
            raise Unreachable(f"{label}: no answer within {timeout:g} s") from exc
        except (asyncssh.Error, OSError) as exc:
            drop = _startup_drop(exc, capture)
            if drop is None:
                raise Unreachable(f"{label}: cannot connect: {reason_of(exc)}") from exc
            seen.drops += 1
            seen.why = drop
            delay = _backoff(seen.drops)
            if loop.time() + delay >= end:
                raise Unreachable(
                    _dropped(endpoint, seen, loop.time() - started, via, False)
                ) from exc
            await asyncio.sleep(delay)
        else:
            if seen.refused is None:
                return conn
            conn.close()  # cannot happen: that handshake trusted no key
            raise Unreachable(f"{label}: host key refused: {seen.refused}")


def _refusal(
    label: str, info: HostKeyInfo, known_hosts: Path, seen: _Attempts
) -> HostKeyError | Unreachable:
    found = refusal(label, info, known_hosts, seen.untrusted_ca)
    if seen.refused is None or isinstance(found, HostKeyRevoked):
        return found
    if "revoked" in seen.refused.lower():  # the CA of the certificate it offered
        return HostKeyRevoked(label, info, known_hosts)
    return Unreachable(f"{label}: host key refused: {seen.refused}")


def _dropped(endpoint: Endpoint, seen: _Attempts, elapsed: float, via: str, timed_out: bool) -> str:
    """The error after start-up refusals until the deadline, with their likely cause."""
    then = ", then no answer before the deadline" if timed_out else ""
    return (
        f"{endpoint.label}: {seen.why} ({seen.drops} attempts in {elapsed:.1f} s{then}) — too "
        "many unauthenticated connections at once? (sshd's MaxStartups on "
        f"{endpoint.where}{f' or on ProxyJump {via}' if via else ''})"
    )


def ssh_errors() -> tuple[type[Exception], ...]:
    """``asyncssh.Error`` and ``OSError``; only ``OSError`` while nothing has imported asyncssh
    (a local run), when no asyncssh error can occur."""
    module = sys.modules.get("asyncssh")
    return (module.Error, OSError) if module is not None else (OSError,)


def reason_of(exc: BaseException) -> str:
    module = sys.modules.get("asyncssh")
    if module is not None and isinstance(exc, module.Error):
        return exc.reason or type(exc).__name__
    if isinstance(exc, OSError) and (exc.strerror or exc.errno is not None):
        return describe_os_error(exc)
    return str(exc) or type(exc).__name__
