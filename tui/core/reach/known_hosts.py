"""known_hosts read as OpenSSH reads it, where asyncssh's own lookup differs.

- **Revocation is never dropped.** asyncssh retries a non-default port without the port when
  nothing *trusted* matched ``[host]:port``, and that retry discards the ``@revoked`` lines it
  had found: a file holding only ``@revoked [host]:port KEY`` made the key merely *unknown* (and
  ``trust`` appended it). ``KnownHosts.match`` adds every ``@revoked`` line that applies to the
  host, with or without the port.
- **Host key algorithms in OpenSSH's order.** OpenSSH offers every algorithm and puts the key
  types known_hosts holds for the host first (matched on the name alone, ``order_hostkeyalgs``),
  so a server that switched to another key type is seen offering it — a *changed* key. asyncssh
  offers only the known types and the handshake just fails. ``host_key_algorithms`` builds
  OpenSSH's list; certificate algorithms come first only when a ``@cert-authority`` line
  applies to the host (without one OpenSSH falls back to the plain key a certificate
  carries: offering the plain key algorithms alone gets the same key).
- **Line numbers.** ``matching_lines`` says which lines of the file apply, for messages that
  name the line to look at.

Hashed names (``|1|…``, ``ssh-keygen -H``), patterns and ``[host]:port`` forms are matched by
asyncssh's own matcher, line by line where a line number is needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import asyncssh
from asyncssh.public_key import get_default_certificate_algs, get_default_public_key_algs

DEFAULT_PORT = 22
REVOKED = "revoked"
CERT_AUTHORITY = "cert-authority"


class KnownHosts(asyncssh.SSHKnownHosts):
    """The parsed file, given to asyncssh as ``known_hosts``: its ``match`` is asyncssh's,
    plus every ``@revoked`` line that applies to the host."""

    def __init__(self, text: str = "") -> None:
        super().__init__(text)
        revoked = [line for line in _entries(text) if line.marker == REVOKED]
        self._revoked = asyncssh.import_known_hosts("\n".join(e.unmarked for e in revoked))

    @classmethod
    def read(cls, path: Path) -> KnownHosts:
        """The file; an empty set when it does not exist yet."""
        return cls(path.read_text(encoding="utf-8", errors="replace") if path.is_file() else "")

    def match(self, host: str, addr: str, port: int | None) -> tuple:  # type: ignore[override]
        trusted, cas, revoked, *x509 = super().match(host, addr, port)
        extra = [*self._revoked.match(host, addr, port)[0]]
        if port:
            extra += self._revoked.match(host, addr, None)[0]
        revoked = [*revoked, *(key for key in extra if key not in revoked)]
        return (trusted, cas, revoked, *x509)

    def keys_for(self, host: str, addr: str, port: int) -> tuple[list, list, list]:
        """(trusted keys, trusted CA keys, revoked keys) for a host as it was reached."""
        trusted, cas, revoked, *_ = self.match(host, addr, _port_arg(port))
        return list(trusted), list(cas), list(revoked)

    def host_key_algorithms(self, name: str, port: int, *, certificates: bool = True) -> list[str]:
        """OpenSSH's offer for ``name``: the key types on file for it first, then the rest;
        certificate algorithms first when a ``@cert-authority`` line applies and
        ``certificates`` allows them, else none."""
        trusted, cas, _revoked, *_ = self.match(name, "", _port_arg(port))
        algs: list[bytes] = []
        if cas and certificates:
            algs += get_default_certificate_algs()
        for key in trusted:
            algs += key.sig_algorithms
        algs += get_default_public_key_algs()
        return list(dict.fromkeys(alg.decode("ascii") for alg in algs))


@dataclass(frozen=True)
class KnownHostsLine:
    """One line of known_hosts: its number (from 1), marker (None, ``revoked``,
    ``cert-authority``), key, and the line without its marker."""

    lineno: int
    marker: str | None
    unmarked: str
    text: str

    @property
    def key(self) -> asyncssh.SSHKey | None:
        try:
            return asyncssh.import_public_key(self.unmarked.split(None, 1)[1])
        except (IndexError, asyncssh.KeyImportError):
            return None

    def describe(self) -> str:
        """``line 3: @revoked [gpu1]:2222 ssh-ed25519 SHA256:…`` (the key as a fingerprint)."""
        key = self.key
        head = self.text.split(None, 2 if self.marker else 1)[:-1]
        what = f"{key.get_algorithm()} {key.get_fingerprint('sha256')}" if key else "?"
        return f"line {self.lineno}: {' '.join(head)} {what}"


def _entries(text: str) -> list[KnownHostsLine]:
    entries = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        marker = None
        unmarked = line
        if line.startswith("@"):
            marker, unmarked = (*line[1:].split(None, 1), "")[:2]
        entries.append(KnownHostsLine(lineno, marker, unmarked, line))
    return entries


def matching_lines(path: Path, host: str, addr: str, port: int) -> list[KnownHostsLine]:
    """The lines of ``path`` that apply to the host (any marker), in file order."""
    if not path.is_file():
        return []
    port_arg = _port_arg(port)
    with_port: list[KnownHostsLine] = []
    without_port: list[KnownHostsLine] = []
    for entry in _entries(path.read_text(encoding="utf-8", errors="replace")):
        try:
            one = asyncssh.import_known_hosts(entry.unmarked)
        except (ValueError, asyncssh.KeyImportError):
            continue
        if port_arg is None:
            if one.match(host, addr, None)[0]:
                with_port.append(entry)
        elif any(one.match(f"[{name}]:{port_arg}", "", None)[0] for name in (host, addr) if name):
            with_port.append(entry)  # the ``[host]:port`` form, without asyncssh's fallback
        elif one.match(host, addr, None)[0]:
            without_port.append(entry)
    if any(entry.marker != REVOKED for entry in with_port):
        # like the lookup itself: the port-less form only counts when the port form is absent
        without_port = [entry for entry in without_port if entry.marker == REVOKED]
    return sorted([*with_port, *without_port], key=lambda entry: entry.lineno)


def lines_with_key(
    lines: Sequence[KnownHostsLine], key: asyncssh.SSHKey, marker: str | None
) -> list[KnownHostsLine]:
    return [line for line in lines if line.marker == marker and line.key == key]


def _port_arg(port: int) -> int | None:
    return None if port == DEFAULT_PORT else port
