"""Strict host-key checking: tell an unknown key from a changed or a revoked one, and trust on
request.

asyncssh raises the same ``HostKeyNotVerifiable`` for every case, so the connection uses a
client (``KeyCapture``) that records the key the server offered, and we look the host up in
known_hosts ourselves (``refusal``): a ``@revoked`` line for the key → *revoked* (refused, never
trusted, the line named); other keys on file for that host → the key *changed* (refused, never
offered for trust — also when the server now offers another key *type*); none → *unknown*
(refused with the SHA256 fingerprint and the command that trusts it).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # asyncssh and the known_hosts reader (which subclasses asyncssh's) are imported where a
    # key is handled: only SSH code paths get there, so --help, local and --demo never load them
    import asyncssh

    from tui.core.reach.known_hosts import KnownHosts, KnownHostsLine


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
        from tui.core.reach.known_hosts import DEFAULT_PORT

        return self.host if self.port == DEFAULT_PORT else f"[{self.host}]:{self.port}"

    def known_hosts_line(self) -> str:
        return f"{self.known_hosts_name} {self.key.export_public_key('openssh').decode().strip()}"

    def __iter__(self) -> Iterator[str]:
        return iter((self.key_type, self.fingerprint))


class HostKeyError(Exception):
    """Base of the refusals; ``target`` is what the user typed, ``info`` the offered key,
    ``hint`` what to do about it, ``note`` what known_hosts says (the lines that decided, or
    the ``@cert-authority`` line that would trust a certificate) — "" when nothing to add."""

    def __init__(
        self,
        target: str,
        info: HostKeyInfo,
        known_hosts: Path,
        message: str,
        hint: str,
        note: str = "",
    ) -> None:
        self.target = target
        self.info = info
        self.known_hosts = known_hosts
        self.host = info.known_hosts_name
        self.key_type = info.key_type
        self.fingerprint = info.fingerprint
        self.hint = hint
        self.note = note
        text = message
        for part in (note, hint):
            if part:
                text += ("" if text.endswith("\n") else " ") + part
        super().__init__(text)


class HostKeyUnknown(HostKeyError):
    """``ca``: the CA of a certificate the host offered that known_hosts does not trust (the
    plain key inside it is ``info``, as OpenSSH falls back to it)."""

    def __init__(
        self,
        target: str,
        info: HostKeyInfo,
        known_hosts: Path,
        ca: asyncssh.SSHKey | None = None,
    ) -> None:
        self.ca = ca
        super().__init__(
            target,
            info,
            known_hosts,
            f"host key of {info.known_hosts_name} is not known: {info.key_type} "
            f"{info.fingerprint}.",
            _trust_hint(target, known_hosts),
            _ca_note(info, ca) if ca is not None else "",
        )


class HostKeyChanged(HostKeyError):
    def __init__(self, target: str, info: HostKeyInfo, known_hosts: Path) -> None:
        from tui.core.reach.known_hosts import matching_lines

        on_file = [
            line
            for line in matching_lines(known_hosts, info.host, info.addr, info.port)
            if line.marker is None
        ]
        super().__init__(
            target,
            info,
            known_hosts,
            f"HOST KEY CHANGED for {info.known_hosts_name}: it now offers {info.key_type} "
            f"{info.fingerprint}, which does not match {known_hosts}. This can mean a "
            "reinstalled host or a man-in-the-middle; refusing to connect.",
            _changed_hint(info, known_hosts),
            _lines_note("On file for it", on_file),
        )


class HostKeyRevoked(HostKeyError):
    """The key (or the CA of its certificate) is marked ``@revoked`` in known_hosts: refused,
    and never trusted by this program, whatever the user answers."""

    def __init__(self, target: str, info: HostKeyInfo, known_hosts: Path) -> None:
        from tui.core.reach.known_hosts import REVOKED, lines_with_key, matching_lines

        lines = [
            line
            for line in matching_lines(known_hosts, info.host, info.addr, info.port)
            if line.marker == REVOKED
        ]
        own = lines_with_key(lines, info.key, REVOKED)
        what = "is marked @revoked" if own else "comes with a certificate whose CA is @revoked"
        super().__init__(
            target,
            info,
            known_hosts,
            f"HOST KEY REVOKED for {info.known_hosts_name}: the key it offers, {info.key_type} "
            f"{info.fingerprint}, {what} in {known_hosts}; refusing to connect.",
            "A revoked key is never trusted: ask the host's owner for a new host key, or "
            "remove the @revoked line if it was written by mistake.",
            _lines_note("Revoked by", own or lines),
        )


def _trust_hint(target: str, known_hosts: Path) -> str:
    return (
        f"Check the fingerprint with the host's owner, then run `detective-tui trust {target}` "
        f"to add it to {known_hosts}."
    )


def _lines_note(head: str, lines: list[KnownHostsLine]) -> str:
    return f"{head}: {'; '.join(line.describe() for line in lines)}." if lines else ""


def _ca_note(info: HostKeyInfo, ca: asyncssh.SSHKey) -> str:
    from tui.core.reach.known_hosts import CERT_AUTHORITY

    line = f"@{CERT_AUTHORITY} {info.known_hosts_name} {ca.export_public_key().decode().strip()}"
    return (
        f"Its host certificate is signed by CA {ca.get_algorithm()} "
        f"{ca.get_fingerprint('sha256')}, which known_hosts does not trust, so its plain key "
        "was checked instead (as OpenSSH does). If that is your organisation's host CA, this "
        f"line trusts it instead (a pattern such as *.example.com covers all it signs):\n"
        f"  {line}\n"
    )


def _changed_hint(info: HostKeyInfo, known_hosts: Path) -> str:
    return (
        "Verify the new key out of band; if it is legitimate, remove the old entry with "
        f"`ssh-keygen -R '{info.known_hosts_name}' -f {known_hosts}` and trust it again."
    )


def load_known_hosts(path: Path) -> KnownHosts:
    """The parsed file; an empty set when it does not exist yet."""
    from tui.core.reach.known_hosts import KnownHosts

    return KnownHosts.read(path)


def host_is_known(path: Path, host: str, addr: str, port: int) -> bool:
    """Whether known_hosts holds a key for this host (then a mismatch means *changed*). A
    ``@cert-authority`` line alone does not count: like OpenSSH, a plain key offered by such a
    host is *unknown*."""
    return bool(load_known_hosts(path).keys_for(host, addr, port)[0])


class KeyCapture:
    """Records the key the server offered when known_hosts did not vouch for it, the CA of a
    certificate it did not trust, and the key that passed verification (seen when
    authentication begins). ``new_key_capture`` makes one that is an ``asyncssh.SSHClient``."""

    def __init__(self) -> None:
        self.conn: asyncssh.SSHClientConnection | None = None
        self.rejected: HostKeyInfo | None = None
        self.rejected_ca: asyncssh.SSHKey | None = None
        self.accepted: HostKeyInfo | None = None

    def connection_made(self, conn: asyncssh.SSHClientConnection) -> None:
        self.conn = conn

    def validate_host_public_key(
        self, host: str, addr: str, port: int, key: asyncssh.SSHKey
    ) -> bool:
        self.rejected = HostKeyInfo(host=host, port=port, addr=addr, key=key)
        return False

    def validate_host_ca_key(self, host: str, addr: str, port: int, key: asyncssh.SSHKey) -> bool:
        self.rejected_ca = key
        return False

    def begin_auth(self, username: str) -> None:
        conn = self.conn
        key = conn.get_server_host_key() if conn is not None else None
        if conn is not None and key is not None:
            addr, port = conn.get_extra_info("peername")[:2]
            self.accepted = HostKeyInfo(host=addr, port=port, addr=addr, key=key)


@functools.cache
def _client_class() -> type[KeyCapture]:
    import asyncssh

    return type("KeyCapture", (KeyCapture, asyncssh.SSHClient), {})


def new_key_capture() -> KeyCapture:
    """A ``KeyCapture`` client for ``asyncssh.connect(client_factory=…)``."""
    return _client_class()()


def refusal(
    target: str, info: HostKeyInfo, known_hosts: Path, ca: asyncssh.SSHKey | None = None
) -> HostKeyError:
    """The right refusal for a key known_hosts did not vouch for: revoked, changed or unknown
    (``ca``: the untrusted CA of a certificate the host also offered)."""
    trusted, _cas, revoked = load_known_hosts(known_hosts).keys_for(info.host, info.addr, info.port)
    if info.key in revoked:
        return HostKeyRevoked(target, info, known_hosts)
    if trusted:
        return HostKeyChanged(target, info, known_hosts)
    return HostKeyUnknown(target, info, known_hosts, ca)


def add_known_host(target: str, info: HostKeyInfo, known_hosts: Path) -> bool:
    """Append the key to known_hosts (creating it 0600 in a 0700 dir). Returns False when it
    was already there. Raises ``HostKeyRevoked`` for a key marked ``@revoked`` and
    ``HostKeyChanged`` when the file holds another key for the host: neither is ever trusted
    by this program."""
    trusted, _cas, revoked = load_known_hosts(known_hosts).keys_for(info.host, info.addr, info.port)
    if info.key in revoked:
        raise HostKeyRevoked(target, info, known_hosts)
    if info.key in trusted:
        return False
    if trusted:
        raise HostKeyChanged(target, info, known_hosts)
    known_hosts.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    existing = known_hosts.read_bytes() if known_hosts.is_file() else b""
    separator = "\n" if existing and not existing.endswith(b"\n") else ""
    fd = os.open(known_hosts, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as fh:
        fh.write(separator + info.known_hosts_line() + "\n")
    return True
