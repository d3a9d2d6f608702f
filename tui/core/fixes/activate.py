"""A venv's ``activate`` read as text, never run: the variables it leaves set.

Sourcing the file would run whatever it holds, with the operator's login on the host (a venv
owned by another user) or on the inspecting machine (an image's tree). Instead the file is
read (``cat``, capped) and its top-level assignments are evaluated here, the way ``.`` would
leave them: ``NAME=value``, ``export NAME=value…``, ``unset NAME``, the ``*)`` arm of a
``case`` (where Python >= 3.12's venv sets ``VIRTUAL_ENV``), with ``$NAME``, ``${NAME}`` and
``${NAME:-default}`` expanded from what was set before. Function bodies and ``if`` blocks
are conditional and skipped; a value built by a command (``$(…)``, backquotes) is unknown,
and its variable is left as it was. Commands in the file are never run.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping

from tui.core.hosts import Host

ACTIVATE_MAX_BYTES = 256 * 1024  # a venv's activate is a few KiB
ENV_MARK = "@@env "
FILE_MARK = "@@file"

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_ASSIGN = re.compile(rf"^({_NAME})=(.*)$", re.S)
_FUNCTION = re.compile(rf"^(?:function\s+{_NAME}|{_NAME}\s*\(\s*\))\s*\{{?\s*$")
_EXPANSION = re.compile(rf"\$(?:\{{({_NAME})(?:(:?-)([^}}]*))?\}}|({_NAME}))")


class Unknown(Exception):
    """A value only running the file would give (a command substitution)."""


def read_script(host: Host, activate: str, names: tuple[str, ...]) -> str:
    """sh that prints the shell's values of ``names`` (those set), then the first bytes of
    the activate file."""
    f = shlex.quote((host.root or "").rstrip("/") + activate)
    shown = (
        f'[ -n "${{{k}+x}}" ] && printf {shlex.quote(ENV_MARK + k + "=%s")}"\\n" "${k}"'
        for k in names
        if re.fullmatch(_NAME, k)
    )
    return "\n".join(
        [*shown, f"[ -f {f} ] || exit 0", f"echo {FILE_MARK}", f"head -c {ACTIVATE_MAX_BYTES} {f}"]
    )


def split_read(output: str) -> tuple[dict[str, str], str | None]:
    """The shell's values and the file's text (None: no such file) from ``read_script``."""
    head, sep, text = output.partition(FILE_MARK + "\n")
    env = dict(
        ln[len(ENV_MARK) :].split("=", 1)
        for ln in head.splitlines()
        if ln.startswith(ENV_MARK) and "=" in ln
    )
    return env, (text if sep else None)


def _expand(word: str, env: Mapping[str, str]) -> str:
    """One word's value: quotes removed, parameters expanded; ``Unknown`` for a command."""
    out: list[str] = []
    i, quote = 0, ""
    while i < len(word):
        c = word[i]
        if c == "'" and not quote:
            end = word.index("'", i + 1)
            out.append(word[i + 1 : end])
            i = end + 1
            continue
        if c == '"':
            quote = "" if quote else '"'
        elif c == "\\" and i + 1 < len(word):
            out.append(word[i + 1])
            i += 2
            continue
        elif c == "`" or word.startswith("$(", i):
            raise Unknown(word)
        elif c == "$" and (m := _EXPANSION.match(word, i)):
            name = m.group(1) or m.group(4)
            value = env.get(name)
            if (m.group(2) == ":-" and not value) or (m.group(2) == "-" and value is None):
                value = _expand(m.group(3), env)
            out.append(value or "")
            i = m.end()
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


_OPENERS = ("if", "for", "while", "until", "{")
_CLOSERS = ("fi", "done", "}")
_CASE_ARM = re.compile(r"^\(?([^\s=()]*)\)\s*(.*)$")


def _words(line: str) -> list[str] | None:
    """The line split as sh splits words, quotes kept inside each word (``_expand`` removes
    them), ``;``/``&``/``|`` runs as words of their own, a ``#`` word and what follows dropped;
    ``None`` for an unbalanced quote."""
    words: list[str] = []
    cur: list[str] = []
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c in " \t\r\n":
            if cur:
                words.append("".join(cur))
                cur = []
            i += 1
        elif c == "#" and not cur:
            break
        elif c in ";&|":
            if cur:
                words.append("".join(cur))
                cur = []
            j = i
            while j < n and line[j] == c:
                j += 1
            words.append(line[i:j])
            i = j
        elif c == "'":
            end = line.find("'", i + 1)
            if end < 0:
                return None
            cur.append(line[i : end + 1])
            i = end + 1
        elif c == '"':
            j = i + 1
            while j < n and line[j] != '"':
                j += 2 if line[j] == "\\" else 1
            if j >= n:
                return None
            cur.append(line[i : j + 1])
            i = j + 1
        else:
            step = 2 if c == "\\" and i + 1 < n else 1
            cur.append(line[i : i + step])
            i += step
    if cur:
        words.append("".join(cur))
    return words


def _commands(line: str) -> list[list[str]]:
    """The line's simple commands (split at ``;``); a line sh alone could read gives none."""
    words = _words(line)
    if words is None:
        return []
    out: list[list[str]] = [[]]
    for w in words:
        if w in (";", ";;"):
            out.append([])
        elif w[:1] in "&|":  # a conditional or a pipeline: not read
            return [c for c in out[:-1] if c]
        else:
            out[-1].append(w)
    return [c for c in out if c]


def _assign(words: list[str], env: dict[str, str]) -> None:
    """``export A=b C``, ``unset A``, or a command of assignments only (``A=b cmd`` sets
    nothing in the shell)."""
    head, rest = words[0], words[1:]
    if head == "unset":
        for w in rest:
            env.pop(w, None)
        return
    exported = head == "export"
    assigns = [_ASSIGN.match(w) for w in (rest if exported else words)]
    if not exported and not all(assigns):
        return
    for m in assigns:
        if m is None:
            continue
        try:
            env[m.group(1)] = _expand(m.group(2), env)
        except (Unknown, ValueError):  # only running the file would tell
            continue


def activated_env(text: str, env: Mapping[str, str]) -> dict[str, str]:
    """The variables ``text`` (an activate file) leaves set, starting from ``env``."""
    out = dict(env)
    depth = 0  # inside a function body, an if block or a loop: skipped
    brace_due = False  # ``name ()`` with its ``{`` on the next line
    in_case = in_default = False
    for raw in text.splitlines():
        line = raw.strip()
        if brace_due and line == "{":
            brace_due = False
            continue
        brace_due = False
        if _FUNCTION.match(line):
            depth += 1
            brace_due = not line.endswith("{")
            continue
        commands = _commands(line)
        if not commands:
            continue
        head = commands[0][0]
        if head in _OPENERS:
            depth += 1
        elif head in _CLOSERS and depth:
            depth -= 1
        elif depth:
            continue
        elif head == "case":
            in_case, in_default = True, False
        elif head == "esac":
            in_case = in_default = False
        elif in_case:
            arm = _CASE_ARM.match(line)
            if arm is not None:
                in_default = arm.group(1) == "*"
                commands = _commands(arm.group(2))
            if in_default:
                for c in commands:
                    _assign(c, out)
        else:
            for c in commands:
                _assign(c, out)
    return out
