"""Strict host-key checking: tell an unknown key from a changed one, and trust on request.

asyncssh raises the same ``HostKeyNotVerifiable`` for both cases, so the connection uses a
client (``KeyCapture``) that records the key the server offered, and we look the host up in
known_hosts ourselves: keys on file for that host → the key *changed* (refused, never offered
for trust); none → *unknown* (refused with the SHA256 fingerprint and the command that trusts it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import asyncssh

DEFAULT_PORT = 22


@dataclass(frozen=True)
class HostKeyInfo:
    """The key a server offered. Unpacks as ``key_type, fingerprint = info``."""

    host: str  # the name known_hosts is matched on (HostName or HostKeyAlias)
    port: int
    addr: str
    key: asyncssh.SSHKey

    @property
    def key_type(self) -> str:
        return self.key.get_algorithm()

    @property
    def fingerprint(self) -> str:
        return self.key.get_fingerprint("sha256")

    @property
    def known_hosts_name(self) -> str:
        """``host`` for port 22, ``[host]:port`` otherwise (OpenSSH's form)."""
        return self.host if self.port == DEFAULT_PORT else f"[{self.host}]:{self.port}"

    def known_hosts_line(self) -> str:
        return f"{self.known_hosts_name} {self.key.export_public_key('openssh').decode().strip()}"

    def __iter__(self) -> Iterator[str]:
        return iter((self.key_type, self.fingerprint))


class HostKeyError(Exception):
    """Base of the two refusals; ``target`` is what the user typed, ``info`` the offered key,
    ``hint`` what to do about it."""

    def __init__(
        self, target: str, info: HostKeyInfo, known_hosts: Path, message: str, hint: str
    ) -> None:
        self.target = target
        self.info = info
        self.known_hosts = known_hosts
        self.host = info.known_hosts_name
        self.key_type = info.key_type
        self.fingerprint = info.fingerprint
        self.hint = hint
        super().__init__(f"{message} {hint}")


class HostKeyUnknown(HostKeyError):
    def __init__(self, target: str, info: HostKeyInfo, known_hosts: Path) -> None:
        super().__init__(
            target,
            info,
            known_hosts,
            f"host key of {info.known_hosts_name} is not known: {info.key_type} "
            f"{info.fingerprint}.",
            _trust_hint(target, known_hosts),
        )


class HostKeyChanged(HostKeyError):
    def __init__(self, target: str, info: HostKeyInfo, known_hosts: Path) -> None:
        super().__init__(
            target,
            info,
            known_hosts,
            f"HOST KEY CHANGED for {info.known_hosts_name}: it now offers {info.key_type} "
            f"{info.fingerprint}, which does not match {known_hosts}. This can mean a "
            "reinstalled host or a man-in-the-middle; refusing to connect.",
            _changed_hint(info, known_hosts),
        )


def _trust_hint(target: str, known_hosts: Path) -> str:
    return (
        f"Check the fingerprint with the host's owner, then run `detective-tui trust {target}` "
        f"to add it to {known_hosts}."
    )


def _changed_hint(info: HostKeyInfo, known_hosts: Path) -> str:
    return (
        "Verify the new key out of band; if it is legitimate, remove the old entry with "
        f"`ssh-keygen -R '{info.known_hosts_name}' -f {known_hosts}` and trust it again."
    )


def load_known_hosts(path: Path) -> asyncssh.SSHKnownHosts:
    """The parsed file; an empty set when it does not exist yet."""
    if not path.is_file():
        return asyncssh.import_known_hosts("")
    return asyncssh.read_known_hosts(str(path))


def host_is_known(path: Path, host: str, addr: str, port: int) -> bool:
    """Whether known_hosts holds a key for this host (then a mismatch means *changed*). A
    ``@cert-authority`` line alone does not count: like OpenSSH, a plain key offered by such a
    host is *unknown*."""
    matched = asyncssh.match_known_hosts(
        load_known_hosts(path), host, addr, None if port == DEFAULT_PORT else port
    )
    return bool(matched[0])


class KeyCapture(asyncssh.SSHClient):
    """Records the key the server offered when known_hosts did not vouch for it, and the key
    that passed verification (seen when authentication begins)."""

    def __init__(self) -> None:
        self.conn: asyncssh.SSHClientConnection | None = None
        self.rejected: HostKeyInfo | None = None
        self.accepted: HostKeyInfo | None = None

    def connection_made(self, conn: asyncssh.SSHClientConnection) -> None:
        self.conn = conn

    def validate_host_public_key(
        self, host: str, addr: str, port: int, key: asyncssh.SSHKey
    ) -> bool:
        self.rejected = HostKeyInfo(host=host, port=port, addr=addr, key=key)
        return False

    def begin_auth(self, username: str) -> None:
        conn = self.conn
        key = conn.get_server_host_key() if conn is not None else None
        if conn is not None and key is not None:
            addr, port = conn.get_extra_info("peername")[:2]
            self.accepted = HostKeyInfo(host=addr, port=port, addr=addr, key=key)


def refusal(target: str, info: HostKeyInfo, known_hosts: Path) -> HostKeyError:
    """The right refusal for a key known_hosts did not vouch for."""
    if host_is_known(known_hosts, info.host, info.addr, info.port):
        return HostKeyChanged(target, info, known_hosts)
    return HostKeyUnknown(target, info, known_hosts)


def add_known_host(target: str, info: HostKeyInfo, known_hosts: Path) -> bool:
    """Append the key to known_hosts (creating it 0600 in a 0700 dir). Returns False when it
    was already there. Raises ``HostKeyChanged`` when the file holds another key for the host:
    a changed key is never trusted by this program."""
    matched = asyncssh.match_known_hosts(
        load_known_hosts(known_hosts),
        info.host,
        info.addr,
        None if info.port == DEFAULT_PORT else info.port,
    )
    if info.key in matched[0]:
        return False
    if matched[0]:
        raise HostKeyChanged(target, info, known_hosts)
    known_hosts.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    existing = known_hosts.read_bytes() if known_hosts.is_file() else b""
    separator = "\n" if existing and not existing.endswith(b"\n") else ""
    fd = os.open(known_hosts, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as fh:
        fh.write(separator + info.known_hosts_line() + "\n")
    return True
