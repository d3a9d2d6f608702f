"""Secret redaction for everything that leaves the process (transcripts, exports, JSON).

Two rules, as data:
- a variable or mapping key whose *name* looks secret (``HF_TOKEN``, ``AWS_SECRET_ACCESS_KEY``,
  ``DB_PASSWORD``…) has its value replaced by ``***``;
- text that *looks* like a credential (bearer tokens, ``user:password@`` in URLs, private-key
  blocks, well-known token prefixes) is replaced wherever it appears.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

MASK = "***"

# Names of variables / keys whose values are secrets. Upper-case env-style names only for the
# generic ``_KEY`` suffix, so fields such as ``key_type`` or ``fingerprint`` stay readable.
SECRET_NAME = re.compile(
    r"(?i:TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|API_?KEY|PRIVATE_?KEY|COOKIE)"
    r"|(?:^|_)KEY$"
)

# NAME=value (optionally `export NAME=...`, quoted or not) inside free text.
_ASSIGNMENT = re.compile(
    r"(?P<name>\b[A-Za-z_][A-Za-z0-9_]*)=(?P<value>'[^'\n]*'|\"[^\"\n]*\"|[^\s'\";&|]+)"
)

# (pattern, replacement) applied to any text.
TEXT_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?-----END [A-Z0-9 ]*PRIVATE KEY-----", re.S
        ),
        "-----BEGIN PRIVATE KEY----- *** -----END PRIVATE KEY-----",
    ),
    (re.compile(r"(?i)\b(authorization:\s*(?:bearer|basic|token)\s+)\S+"), r"\1" + MASK),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"), r"\1" + MASK),
    (re.compile(r"(\b[a-z][a-z0-9+.-]*://)[^\s/:@]+:[^\s/@]+@"), r"\1" + MASK + "@"),
    (re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}"), MASK),
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}"), MASK),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{20,}"), MASK),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), MASK),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), MASK),
)


def is_secret_name(name: str) -> bool:
    return bool(SECRET_NAME.search(name))


def _mask_assignment(m: re.Match[str]) -> str:
    if not is_secret_name(m.group("name")):
        return m.group(0)
    value = m.group("value")
    quote = value[0] if value[:1] in ("'", '"') else ""
    return f"{m.group('name')}={quote}{MASK}{quote}"


# 'NAME=value with spaces' as shlex.quote writes an ``env`` argument on a command line.
_QUOTED_ASSIGNMENT = re.compile(r"'(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>[^'\n]*)'")


def _mask_quoted(m: re.Match[str]) -> str:
    return f"'{m.group('name')}={MASK}'" if is_secret_name(m.group("name")) else m.group(0)


def redact_text(text: str) -> str:
    """Mask credentials inside free text (command lines, output, messages)."""
    for pattern, replacement in TEXT_RULES:
        text = pattern.sub(replacement, text)
    text = _QUOTED_ASSIGNMENT.sub(_mask_quoted, text)
    return _ASSIGNMENT.sub(_mask_assignment, text)


# Lower-case mapping keys that hold secrets; other lower-case keys (``author``, package names
# such as ``authlib``) are data, so only env-style upper-case keys are judged by SECRET_NAME.
SECRET_KEYS = frozenset({"password", "passwd", "token", "secret", "api_key", "authorization"})


def _secret_key(key: object) -> bool:
    if not isinstance(key, str):
        return False
    return key.lower() in SECRET_KEYS or (key.isupper() and is_secret_name(key))


def redact(value: Any) -> Any:
    """Redact a JSON-like value: mapping values under secret names, and every string."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        return {k: (MASK if _secret_key(k) and v else redact(v)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v) for v in value]
    return value
