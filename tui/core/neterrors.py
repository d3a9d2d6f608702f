"""Connection errors in words a person can act on, not Python's ("Connect call failed
('127.0.0.1', 1)" → "connection refused: nothing listens on that port — is sshd running
there, is the port right?")."""

from __future__ import annotations

import errno
import os
import socket

HINTS = {
    errno.ECONNREFUSED: "nothing listens on that port — is sshd running there, is the port right?",
    errno.EHOSTUNREACH: "no route to the host — is it up, is the address right?",
    errno.ENETUNREACH: "no route to that network from here",
    errno.ETIMEDOUT: "no answer — a firewall, or the host is down",
    errno.ECONNRESET: "the connection was reset by the other side",
}


def describe_os_error(exc: OSError) -> str:
    """``connection refused: <hint>`` for the errors a connect gives; else its own words."""
    if isinstance(exc, socket.gaierror):
        return f"cannot resolve the host name ({exc.strerror or exc}): is it spelled right?"
    code = exc.errno
    if code is None:  # "Multiple exceptions: …" from a host with several addresses
        return str(exc) or type(exc).__name__
    words = os.strerror(code)
    words = words[:1].lower() + words[1:]
    hint = HINTS.get(code) or (str(exc.filename) if exc.filename else None)
    return f"{words}: {hint}" if hint else words
