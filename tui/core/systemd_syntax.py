"""systemd unit-file syntax: ``ExecStart=`` command lines and ``Environment=`` words, written
exactly and read back as systemd does.

systemd unquotes each word (``extract_first_word`` with ``EXTRACT_UNQUOTE|EXTRACT_CUNESCAPE``:
single and double quotes, C escapes inside and outside them), resolves ``%`` specifiers in
each word (``%%`` is a ``%``), then at exec time substitutes environment variables (``$$`` is a
``$``; ``$NAME`` as a whole word and ``${NAME}`` are variables) unless the executable has the
``:`` prefix. An unquoted lone ``;`` separates commands. ``exec_start_value`` writes every word
in double quotes with every ``\\``, ``"``, ``%`` and ``$`` escaped and control characters as C
escapes, so ``split_exec_start`` — which follows those rules — gives back the same argv.
``Environment=`` takes the same words without ``$`` substitution and without ``;``, and
stops at the first word it cannot parse (``split_environment``).
"""

from __future__ import annotations

import string
from collections.abc import Sequence

# systemd's cunescape_one: the one-letter escapes
_NAMED = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    '"': '"',
    "'": "'",
    "s": " ",
}
_WRITTEN = {"\\": "\\\\", '"': '\\"', "%": "%%", "$": "$$", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_WRITTEN_ENVIRONMENT = {k: v for k, v in _WRITTEN.items() if k != "$"}
_SEPARATORS = " \t\n\r"
_PREFIXES = "-@:+!|"
# what the executable (argv[0]) may not hold: systemd refuses quotes, backslashes and control
# characters there (string_is_safe), and substitutes $ in argv[0] but not in the path it runs
_UNSAFE_EXECUTABLE = set("\"'\\$") | {chr(c) for c in range(32)} | {"\x7f"}


def quote_exec_arg(arg: str) -> str:
    """One ``ExecStart=`` word that systemd turns back into exactly ``arg``."""
    return _quote(arg, _WRITTEN)


def quote_environment_word(assignment: str) -> str:
    """One ``Environment=`` word (``NAME=value``) that systemd reads back as exactly that:
    the same quoting as ``ExecStart=`` except ``$``, which ``Environment=`` does not expand."""
    return _quote(assignment, _WRITTEN_ENVIRONMENT)


def _quote(arg: str, written: dict[str, str]) -> str:
    out = []
    for ch in arg:
        if ch in written:
            out.append(written[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def exec_start_value(argv: Sequence[str]) -> str:
    """The value of ``ExecStart=`` that runs ``argv`` (``argv[0]`` is the executable).

    Raises ``ValueError`` when systemd would not run ``argv[0]`` under exactly that name: it
    must be an absolute path or a bare file name (systemd looks that up), without quotes,
    backslashes, ``$`` or control characters, and not start with an ExecStart= prefix.
    """
    if not argv or not argv[0]:
        raise ValueError("there is no executable to write")
    exe = argv[0]
    bad = sorted(set(exe) & _UNSAFE_EXECUTABLE)
    if bad:
        raise ValueError(
            f"the executable {exe!r} holds {', '.join(repr(c) for c in bad)}, which systemd "
            "does not accept in ExecStart='s executable"
        )
    if ("/" in exe and not exe.startswith("/")) or exe.endswith("/"):
        raise ValueError(
            f"the executable {exe!r} is neither an absolute path nor a bare file name, "
            "which is all systemd runs"
        )
    if exe[0] in _PREFIXES:
        raise ValueError(f"the executable {exe!r} would be read as ExecStart= prefixes")
    return " ".join(quote_exec_arg(a) for a in argv)


def _byte_or_char(value: int) -> str:
    """An ASCII character, or (above 0x7f) a byte, held as a surrogate until the word is
    decoded as UTF-8."""
    return chr(value) if value < 0x80 else chr(0xDC00 + value)


def _unescape(text: str, i: int) -> tuple[str, int]:
    """What the backslash before ``text[i]`` stands for, and the index after the escape.
    Like ``extract_first_word_and_warn``, an escape systemd does not know (``\\d``, ``\\x0g``,
    ``\\000``) is kept as written, with its backslash; so is a backslash ending the value."""
    if i >= len(text):
        return "\\", i
    c = text[i]
    if c in _NAMED:
        return _NAMED[c], i + 1
    width = {"x": 2, "u": 4, "U": 8}.get(c)
    if width is not None:
        digits = text[i + 1 : i + 1 + width]
        if len(digits) == width and all(d in string.hexdigits for d in digits):
            value = int(digits, 16)
            if c == "x" and value:
                return _byte_or_char(value), i + 1 + width
            if c != "x" and 0 < value <= 0x10FFFF and not 0xD800 <= value <= 0xDFFF:
                return chr(value), i + 1 + width
    elif c in string.octdigits:
        digits = text[i : i + 3]
        if len(digits) == 3 and all(d in string.octdigits for d in digits):
            value = int(digits, 8)
            if 0 < value <= 0xFF:
                return _byte_or_char(value), i + 3
    return "\\" + c, i + 1


def _at_lone_semicolon(value: str, i: int) -> bool:
    return value.startswith(";", i) and (i + 1 == len(value) or value[i + 1] in _SEPARATORS)


class Unparsable(ValueError):
    """A value systemd rejects part-way; ``words`` are those it had already taken."""

    def __init__(self, message: str, words: list[str | None]) -> None:
        super().__init__(message)
        self.words = words


def split_environment(value: str) -> tuple[list[str], str | None]:
    """The words of ``Environment=value`` as systemd takes them, and why it stopped early (or
    None). ``config_parse_environ`` calls the strict ``extract_first_word(UNQUOTE|CUNESCAPE)``
    word by word: an escape it does not know or a quote left open ends the line ("Invalid
    syntax, ignoring"), the words before it already set; ``%%`` is a ``%`` in each word;
    ``;`` is a plain character there."""
    try:
        words, error = _words(value, semicolons=False, strict=True), None
    except Unparsable as stop:
        words, error = stop.words, str(stop)
    return [w.replace("%%", "%") for w in words if w is not None], error


def _words(value: str, *, semicolons: bool = True, strict: bool = False) -> list[str | None]:
    """``extract_first_word(UNQUOTE|CUNESCAPE)`` over the whole value, as ``config_parse_exec``
    calls it (its ``_and_warn`` form keeps an unknown escape as written; ``strict``: it ends
    the value): an unquoted lone ``;`` (a command separator) is ``None``, ``\\;`` the word
    ``;`` (with ``semicolons``)."""
    words: list[str | None] = []
    i, n = 0, len(value)
    while True:
        while i < n and value[i] in _SEPARATORS:
            i += 1
        if i >= n:
            return words
        if semicolons and _at_lone_semicolon(value, i):
            words.append(None)
            i += 1
            continue
        if semicolons and value.startswith("\\", i) and _at_lone_semicolon(value, i + 1):
            words.append(";")
            i += 2
            continue
        word: list[str] = []
        quote = ""
        while i < n:
            c = value[i]
            if c == "\\":
                ch, after = _unescape(value, i + 1)
                if strict and (after == i + 1 or (len(ch) == 2 and ch[0] == "\\")):
                    raise Unparsable(f"unknown escape {value[i:after]!r}", words)
                i = after
                word.append(ch)
            elif quote:
                if c == quote:
                    quote = ""
                else:
                    word.append(c)
                i += 1
            elif c in "'\"":
                quote = c
                i += 1
            elif c in _SEPARATORS:
                break
            else:
                word.append(c)
                i += 1
        if quote:
            raise Unparsable("a quote is not closed", words)
        # bytes from \\xHH and \\ooo above 0x7f join the characters as UTF-8
        words.append("".join(word).encode("utf-8", "surrogateescape").decode("utf-8"))


def split_exec_start(value: str) -> list[str]:
    """The argv systemd runs for ``ExecStart=value`` (the first command of the line).

    Prefixes (``-@:+!|``) are taken off the executable; with ``@`` the second word is
    ``argv[0]``. ``$$`` becomes ``$`` unless the ``:`` prefix turns substitution off;
    variables (``$NAME``, ``${NAME}``) and specifiers other than ``%%`` are left as written,
    as they depend on the service's environment and unit name. Raises ``ValueError`` for what
    systemd rejects: a quote that is not closed, bytes that are not UTF-8.
    """
    command: list[str] = []
    for word in _words(value):
        if word is None or (not command and word == ";"):
            if command:
                break
            continue
        command.append(word)
    if not command:
        return []
    first = command[0]
    prefixes = first[: len(first) - len(first.lstrip(_PREFIXES))]
    # specifiers: %% is a %; the others (%i, %n …) stay as written
    exe = first[len(prefixes) :].replace("%%", "%")
    rest = [w.replace("%%", "%") for w in command[1:]]
    argv = rest if "@" in prefixes else [exe, *rest]
    if ":" in prefixes:
        return argv
    return [a.replace("$$", "$") for a in argv]


# systemd's unit_name_is_valid: a prefix of [A-Za-z0-9:_.\-], an optional @instance, a type
# suffix; at most 255 characters. Nothing else may become a drop-in directory or an argument.
_UNIT_CHARS = frozenset(string.ascii_letters + string.digits + ":-_.\\")
UNIT_SUFFIXES = (".service", ".socket", ".scope", ".slice", ".timer", ".target", ".mount")


def unit_name_problem(unit: str) -> str | None:
    """Why ``unit`` (a name found on a host: a cgroup, a unit file) is not a systemd unit
    name systemd would accept, or ``None`` when it is."""
    stem = next((unit[: -len(s)] for s in UNIT_SUFFIXES if unit.endswith(s)), None)
    if stem is None or len(unit) > 255:
        return (
            f"{unit!r} is not a systemd unit name (NAME{UNIT_SUFFIXES[0]}, at most 255 characters)"
        )
    prefix, at, instance = stem.partition("@")
    if not prefix or set(prefix + instance) - _UNIT_CHARS or (at and "@" in instance):
        return (
            f"{unit!r} is not a systemd unit name: only letters, digits and :-_.\\ "
            "(and one @instance) are allowed"
        )
    return None
