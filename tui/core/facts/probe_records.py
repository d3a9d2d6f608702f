"""The probe's record framing: which lines are records, and the escapes of their fields.

A record is ``@@DT1``, a TAB, the kind and TAB-separated fields (``probes/README.md``). From
probe version 2 every field is escaped at the source (``esc`` in ``probe.sh``, ``esc`` in
``pyrecord.py``): a backslash is ``\\\\``, a byte below 0x20 or a sentinel's ``D`` is ``\\ooo``,
so no value can end its record or start another. ``arg`` fields use the same escapes for every
byte that is not printable ASCII and are decoded as bytes (``unescape_arg``).
"""

from __future__ import annotations

import posixpath
import re

from probes import SENTINEL

MARK = SENTINEL + "\t"  # what starts a record, wherever it is in the line (engine prefixes)
ESCAPED_SINCE = 2  # the first probe version whose fields are escaped
ARG_ESCAPE = re.compile(r"\\(\\|[0-3][0-7]{2})")


def record_int(text: str | None) -> int | None:
    """A record's integer field; ``None`` for a missing or malformed one."""
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def norm_path(path: str) -> str:
    """An absolute host path normalised (``a/../b``, ``//``); any other text as it is."""
    return posixpath.normpath(path) if path.startswith("/") else path


def split_record(line: str) -> tuple[str, str] | None:
    """``(kind, the rest)`` of a record line, ``None`` for any other line."""
    at = line.find(MARK)
    if at < 0:
        return None
    kind, _, rest = line[at + len(MARK) :].rstrip("\r\n").partition("\t")
    return kind, rest


def unescape_field(text: str) -> str:
    """A field as the probe meant it (``\\\\`` and ``\\ooo`` decoded; anything else as sent)."""
    if "\\" not in text:
        return text
    return ARG_ESCAPE.sub(lambda m: "\\" if m.group(1) == "\\" else chr(int(m.group(1), 8)), text)


def escaped(version: str) -> bool:
    """Whether a probe of that ``begin`` version escapes its fields."""
    return version.isdigit() and int(version) >= ESCAPED_SINCE


def unescape_arg(text: str) -> str:
    """The argument an ``arg`` record carries; ``ValueError`` when it is not escaped as the
    probe escapes (printable ASCII, ``\\\\`` and ``\\ooo``) or its bytes are not UTF-8."""
    out = bytearray()
    pos = 0
    for m in [*ARG_ESCAPE.finditer(text), None]:
        plain = text[pos : m.start() if m else len(text)]
        if "\\" in plain:
            raise ValueError("a backslash that starts no escape")
        out += plain.encode("ascii")
        if m:
            out += b"\\" if m.group(1) == "\\" else bytes([int(m.group(1), 8)])
            pos = m.end()
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"byte {e.start} is not part of UTF-8 text") from e
