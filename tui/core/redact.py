"""Secret redaction: the one path for everything that leaves the process (stdout in every
format, Markdown reports, transcripts and their exports, the TUI's screens and raw output).

``redact(value)`` takes a JSON-like value or a string and returns it with secrets masked;
every writer calls it (``tui.commands.output`` for stdout, ``Transcript.record`` and
``transcript.export`` for sessions, ``tui.core.records.report`` for reports, the TUI's widgets).

Rules, as data:
- a *name* that looks secret (``HF_TOKEN``, ``AWS_SECRET_ACCESS_KEY``, ``--api-key``,
  ``DB_PASSWORD``…) has its value masked wherever a value follows it: ``NAME=value`` in any
  shell, systemd (``Environment=A=B "C=D"``), env-file or ``export`` syntax, ``setenv NAME v``,
  ``set -x NAME v``, ``"NAME": "v"``/``NAME: v``, a mapping key, ``--flag value`` and
  ``--flag=value`` (in text and in argv lists);
- text that *looks* like a credential (``user:password@`` in URLs, bearer and basic
  authorization, JWTs, private-key blocks, well-known token prefixes: ``hf_``, ``sk-``,
  ``ghp_``, ``AKIA``…) is masked wherever it appears.
``probes/probe.sh`` masks the same names on the host (its ``is_secret`` follows
``is_secret_name``), so a value under a secret name never leaves the host at all.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

MASK = "***"

# -- names ------------------------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z0-9]+")
# camelCase boundaries inside a word: ``hfToken`` → hf|Token, ``HFToken`` → HF|Token
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
# a word (case-insensitive) that makes a name secret wherever it stands in the name
_SECRET_WORD = re.compile(
    r"^(?:.*(?:token|apikey|auth|authorization)|.*(?:secret|password|passwd|credential|cookie|privatekey).*)$"
)
# words that make a name secret only beside another word (``DB_PASS``, ``GITHUB_PAT``; ``PWD``
# alone is the working directory)
_SECRET_COMPANION = frozenset({"pass", "pwd", "pat"})


@functools.lru_cache(maxsize=4096)  # names repeat: variable names, keys, flags
def is_secret_name(name: str) -> bool:
    """Does a variable, key or flag with this name hold a secret? Judged word by word
    and, inside a word, camelCase part by part (``HF_TOKEN``, ``hfToken``, ``--api-key``,
    ``AWS_SECRET_ACCESS_KEY``, ``accountKey``, ``dbPass``: yes; ``TOKENIZER``,
    ``--max-total-tokens``, ``key_type``, ``keyType``, ``PWD``: no)."""
    words = _WORD.findall(name)
    if not words:
        return False
    parts = [p.lower() for w in words for p in _CAMEL.split(w)]
    if parts[-1] == "key" or any(_SECRET_WORD.match(w) for w in [*map(str.lower, words), *parts]):
        return True
    return len(parts) > 1 and any(p in _SECRET_COMPANION for p in parts)


# -- text -------------------------------------------------------------------------------------

# (pattern, replacement) for credential-shaped text, applied to any text first.
TEXT_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?-----END [A-Z0-9 ]*PRIVATE KEY-----", re.S
        ),
        "-----BEGIN PRIVATE KEY----- *** -----END PRIVATE KEY-----",
    ),
    (re.compile(r"(?i)\b((?:proxy-)?authorization:\s*(?:bearer|basic|token)\s+)\S+"), r"\1***"),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"), r"\1***"),
    # scheme://user:password@ and scheme://TOKEN@ (the last @ before the path)
    (re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)[^\s/@'\"<>]*:[^\s/'\"<>]*@"), r"\1***@"),
    (re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)[A-Za-z0-9_.~-]{20,}@"), r"\1***@"),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"), MASK),  # JWT
    (re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}"), MASK),
    (re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), MASK),
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}"), MASK),
    (re.compile(r"\bnvapi-[A-Za-z0-9_-]{20,}"), MASK),  # NGC / build.nvidia.com keys
    # Azure connection strings: AccountKey=…; SharedAccessKey=…; SharedAccessSignature=…
    (
        re.compile(r"(?i)\b((?:Account|SharedAccess)Key=|SharedAccessSignature=)[^;\s'\"]+"),
        r"\1***",
    ),
    # a camelCase or snake key of a JSON text (an argv value): "accessKey": "…", "secret_key"
    (
        re.compile(
            r"(?i)(\"[a-z0-9_]*(?:access|secret|api|private|account|auth)_?key\"\s*:\s*)\"[^\"]*\""
        ),
        r'\1"***"',
    ),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{20,}"), MASK),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), MASK),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"), MASK),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), MASK),
)
# What every match of a case-sensitive TEXT_RULES pattern (by its source) contains, one of: a
# text with none of them skips that rule — a 50 KB probe output holds a URL's "://" and no
# token, and each rule is a pass over the whole text. A pattern not listed (the
# case-insensitive ones, or one edited without this table) always runs.
# tests/test_redact.py checks each entry against samples drawn from its pattern.
RULE_NEEDS: Mapping[str, tuple[str, ...]] = {
    TEXT_RULES[0][0].pattern: ("-----BEGIN ",),
    TEXT_RULES[3][0].pattern: ("://",),
    TEXT_RULES[4][0].pattern: ("://",),
    r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*": ("eyJ",),
    r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}": ("ghp_", "gho_", "ghu_", "ghs_",
                                                              "ghr_", "github_pat_"),
    r"\bglpat-[A-Za-z0-9_-]{20,}": ("glpat-",),
    r"\bhf_[A-Za-z0-9]{20,}": ("hf_",),
    r"\bnvapi-[A-Za-z0-9_-]{20,}": ("nvapi-",),
    r"\bsk-[A-Za-z0-9_-]{20,}": ("sk-",),
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b": ("AKIA", "ASIA"),
    r"\bAIza[0-9A-Za-z_-]{35}\b": ("AIza",),
    r"\bxox[abprs]-[A-Za-z0-9-]{10,}": ("xox",),
}  # fmt: skip
# Of those, the patterns whose every match begins with one of the literals: they are tried only
# where one stands (``str.find``), not at every position of the text — a ``\b`` before the
# literal keeps ``re`` from skipping ahead to it (~6 ms per rule on a 120 KB text otherwise).
RULE_STARTS = frozenset(RULE_NEEDS) - {TEXT_RULES[3][0].pattern, TEXT_RULES[4][0].pattern}
_RULES = tuple((p, r, RULE_NEEDS.get(p.pattern), p.pattern in RULE_STARTS) for p, r in TEXT_RULES)


def _sub_where(
    pattern: re.Pattern[str], replacement: str, text: str, starts: tuple[str, ...]
) -> str:
    """``pattern.sub(replacement, text)`` for a pattern whose every match begins with one of
    ``starts``: matched only where one of them stands, leftmost first, as ``sub`` does."""
    out: list[str] = []
    pos = i = 0
    while found := [at for at in (text.find(s, i) for s in starts) if at >= 0]:
        at = min(found)
        m = pattern.match(text, at)  # ``\b`` still sees the character before ``at``
        if m is None:
            i = at + 1
            continue
        out += [text[pos:at], m.expand(replacement)]
        pos = i = m.end()
    out.append(text[pos:])
    return "".join(out)


# A value after a name: quoted, or a run without blanks and shell separators.
_VALUE = r"(?P<value>'[^'\n]*'|\"[^\"\n]*\"|[^\s'\";&|]+)"
# NAME= anywhere (also after another '=' as in ``Environment=NAME=v``, or after a quote)
_NAME_EQ = re.compile(r"(?<![A-Za-z0-9_])(?P<name>[A-Za-z_][A-Za-z0-9_]*)=")
_UNQUOTED_VALUE = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|[^\s'\";&|]*")
# --flag value, --flag=value, -flag value
_FLAG = re.compile(r"(?<![\w-])(?P<flag>--?[A-Za-z][A-Za-z0-9_.-]*)(?P<sep>=|[ \t]+)" + _VALUE)
# setenv NAME value (csh), set [-gx…] NAME value (fish)
_SET = re.compile(
    r"\b(?P<head>setenv[ \t]+|set(?:[ \t]+-[A-Za-z]+)*[ \t]+)(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"(?P<sep>[ \t]+)" + _VALUE
)
# "NAME": "value", NAME: value (JSON, YAML)
_COLON = re.compile(
    r"(?<![/\w.-])(?P<q>[\"']?)(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)(?P=q)(?P<sep>[ \t]*:[ \t]*)"
    r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s,}\]]+)"
)
# - name: HF_TOKEN / value: … (Kubernetes env lists)
_K8S_ENV = re.compile(
    r"(?P<head>\bname:[ \t]*[\"']?(?P<name>[A-Za-z_][A-Za-z0-9_]*)[\"']?[ \t]*\n[ \t-]*"
    r"value:[ \t]*)(?P<value>\"[^\"\n]*\"|'[^'\n]*'|\S+)"
)


def _masked_value(value: str) -> str:
    quote = value[0] if value[:1] in ("'", '"') and len(value) > 1 else ""
    return f"{quote}{MASK}{quote}"


def _assignments(text: str) -> str:
    """Mask the value of every secret ``NAME=value``, wherever it stands: shell and env-file
    lines, ``export``, systemd ``Environment=A=B "C=D"``, ``'NAME=v w'`` as shlex quotes it."""
    out: list[str] = []
    pos = 0
    for m in _NAME_EQ.finditer(text):
        if m.start() < pos or not is_secret_name(m.group("name")):
            continue
        start = m.end()
        opener = text[m.start() - 1] if m.start() > 0 else ""
        if opener in ("'", '"'):  # "NAME=v w": the value runs to the closing quote
            close = text.find(opener, start)
            end = close if close >= 0 and "\n" not in text[start:close] else start
            if end == start:
                end = _UNQUOTED_VALUE.match(text, start).end()  # type: ignore[union-attr]
            value = MASK
        else:
            end = _UNQUOTED_VALUE.match(text, start).end()  # type: ignore[union-attr]
            value = _masked_value(text[start:end])
        if end == start:
            continue
        out += [text[pos:start], value]
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _mask_named(m: re.Match[str]) -> str:
    if not is_secret_name(m.group("name")) or m.group("value") == MASK:
        return m.group(0)
    head = m.group(0)[: m.start("value") - m.start(0)]
    return head + _masked_value(m.group("value"))


def _mask_flag(m: re.Match[str]) -> str:
    value = m.group("value")
    if not is_secret_name(m.group("flag")) or value.startswith("-") or value == MASK:
        return m.group(0)
    return f"{m.group('flag')}{m.group('sep')}{_masked_value(value)}"


# Every match of a TEXT_RULES pattern contains one of these (a private-key block's "-----BEGIN ",
# "authorization" or "bearer" in any case, a URL's "://", a token prefix), and every assignment
# an "=": text without them is returned as it is, without running the patterns (most text is
# paths and versions). No replacement adds an "=".
_TEXT_RULE_HINT = re.compile(
    r"-----BEGIN |(?i:authorization|bearer|key[\"=]|SharedAccessSignature=)|://|eyJ"
    r"|(?:gh[pousr]|github_pat)_|glpat-|hf_|sk-|nvapi-|AKIA|ASIA|AIza|xox[abprs]-"
)


# -- control characters -------------------------------------------------------------------

# C0 but tab and newline, a CR not ending a line, DEL, C1, and the bidirectional overrides and
# isolates (text that reads differently from what it is): a terminal, a Markdown viewer or the
# TUI acts on them (``\x1b]52;c;…`` sets the clipboard, ``\x1b]0;…\a`` the title,
# ``\x1b[2J`` clears the screen), so no text from a host may carry one to the operator.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]|\r(?!\n)")


def _visible_char(m: re.Match[str]) -> str:
    code = ord(m.group(0))
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode control pictures: \x1b → ␛, \a → ␇
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"<U+{code:04X}>"


def visible(text: str) -> str:
    """``text`` with every control character and escape sequence made visible (``\x1b`` →
    ``␛``, other C0 as their control pictures, C1 and bidi overrides as ``<U+XXXX>``); tab,
    newline and a CR before a newline stay. Part of ``redact_text``: every path that shows
    or writes remote text takes it."""
    return _CONTROL.sub(_visible_char, text) if _CONTROL.search(text) else text


# Texts this long are kept with their redaction (a few: a probe script, 120 KB, takes ~0.1 s to
# redact and is recorded once per session, so it can be redacted while the host works).
CACHED_TEXT_CHARS = (32 * 1024, 1024 * 1024)


def redact_text(text: str) -> str:
    """Mask credentials inside free text (command lines, output, files, messages), and make
    control characters visible (``visible``)."""
    if len(text) >= REMEMBERED_CHARS and (done := _REMEMBERED.get(text)) is not None:
        return done
    done = _redact_text(text)
    if CACHED_TEXT_CHARS[0] <= len(text) <= CACHED_TEXT_CHARS[1]:
        _remember(text, done)
    return done


# A text a LineRedactor redacted line by line as it arrived is remembered (the last few), so
# that redacting the whole text once it is complete (a command's output, for the transcript)
# costs a lookup; so is a large text redact_text redacted (CACHED_TEXT_CHARS).
REMEMBERED_CHARS = 4096
_REMEMBERED: dict[str, str] = {}
_REMEMBER_AT_MOST = 12


def _remember(text: str, done: str) -> None:
    while len(_REMEMBERED) >= _REMEMBER_AT_MOST:
        del _REMEMBERED[next(iter(_REMEMBERED))]
    _REMEMBERED[text] = done


# What a match that spans lines contains (a private-key block, ``authorization:``/``bearer``
# then a newline, a JSON text's ``"…key": "…"`` over lines, a Kubernetes ``name:``/``value:``
# pair): every other rule matches within one line, so a text redacted line by line is the text
# redacted whole. A line with one of these (or ending in CR) makes ``LineRedactor`` redact the
# whole text at the end instead. tests/test_redact_lines.py checks both against whole texts.
_SPANS_LINES = re.compile(r"-----BEGIN |(?i:authorization|bearer|key\")|name:|\r$")


class LineRedactor:
    """``redact_text`` of a text that arrives a line at a time (a command's output, while the
    host works): ``add`` redacts each line as it comes, ``text`` gives the redaction of the
    whole and remembers it for ``redact_text``. A text shorter than ``REMEMBERED_CHARS`` is
    left to ``redact_text`` (its lines are not redacted twice)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.size = 0
        self.done: list[str] = []
        self.whole = False  # a line that a rule may continue on the next: redact the whole

    def add(self, line: str) -> None:
        self.lines.append(line)
        self.size += len(line) + 1
        if not self.whole:
            self.whole = bool(_SPANS_LINES.search(line))
            if self.size >= REMEMBERED_CHARS and not self.whole:
                self.done += map(_redact_text, self.lines[len(self.done) :])

    def text(self, text: str) -> str:
        """``redact_text(text)``, ``text`` being the lines added, each ended by a newline
        (else it is redacted as any text is)."""
        if (
            self.whole
            or len(text) < REMEMBERED_CHARS
            or text != "".join(f"{line}\n" for line in self.lines)
        ):
            return redact_text(text)
        done = "".join(f"{line}\n" for line in self.done)
        _remember(text, done)
        return done


def _redact_text(text: str) -> str:
    text = visible(text)
    if _TEXT_RULE_HINT.search(text):
        for pattern, replacement, needs, starts in _RULES:
            if starts:
                text = _sub_where(pattern, replacement, text, needs)
            elif needs is None or any(n in text for n in needs):
                text = pattern.sub(replacement, text)
    # Each pattern below needs a character it names ("name:", "set", "=", "-", ":"): text
    # without it is returned as it is (most text is paths and versions).
    if "name:" in text:
        text = _K8S_ENV.sub(_mask_named, text)
    if "set" in text:
        text = _SET.sub(_mask_named, text)
    if "=" in text:
        text = _assignments(text)
    if "-" in text:
        text = _FLAG.sub(_mask_flag, text)
    if ":" in text:
        text = _COLON.sub(_mask_named, text)
    return text


# -- structures -------------------------------------------------------------------------------

# Lower-case mapping keys that hold secrets; other lower-case keys (``author``, package names
# such as ``authlib``, ``key_type``) are data, so only env-style upper-case keys and camelCase
# keys (``hfToken``, ``awsSecretAccessKey``) are judged by ``is_secret_name``.
SECRET_KEYS = frozenset({"password", "passwd", "token", "secret", "api_key", "authorization"})
_CAMEL_KEY = re.compile(r"^[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+$")
_FLAG_WORD = re.compile(r"^--?[A-Za-z][A-Za-z0-9_.-]*$")
# one-letter flags that take a key in the servers and clients seen on hosts (``-k KEY``); a
# value that is a path, a URL or another flag is left (``curl -k https://…``)
SECRET_SHORT_FLAGS = frozenset({"-k"})


def _secret_flag(flag: str, value: str) -> bool:
    if flag in SECRET_SHORT_FLAGS:
        return not value.startswith(("-", "/")) and "://" not in value
    return bool(_FLAG_WORD.match(flag)) and is_secret_name(flag) and not value.startswith("-")


@functools.lru_cache(maxsize=4096)  # keys repeat: the facts' field names, variable names
def _secret_str_key(key: str) -> bool:
    judged = key.isupper() or bool(_CAMEL_KEY.match(key))
    return key.lower() in SECRET_KEYS or (judged and is_secret_name(key))


def _secret_key(key: object) -> bool:
    return isinstance(key, str) and _secret_str_key(key)


def _redact_list(items: list[Any] | tuple[Any, ...]) -> list[Any]:
    """Each item redacted; in an argv, the word after a secret ``--flag`` is masked too."""
    out = [redact(v) for v in items]
    for i in range(len(out) - 1):
        flag, value = out[i], out[i + 1]
        if isinstance(flag, str) and isinstance(value, str) and value and _secret_flag(flag, value):
            out[i + 1] = MASK
    return out


def redact(value: Any) -> Any:
    """The one redaction for every output: a JSON-like value (mapping values under secret
    names, argv lists, every string) or a string. Returns a redacted copy."""
    if isinstance(value, str):
        return redact_text(value)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, (dict, Mapping)):  # a dict is told without the Mapping ABC's check
        return {k: (MASK if _secret_key(k) and v else redact(v)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return _redact_list(value)
    return value
