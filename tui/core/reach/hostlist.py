"""Node sets in the ClusterShell / Slurm hostlist syntax: ``gpu[001-128]``, ``gpu[01-04,07]``,
``rack[1-2]-gpu[1-8]``, ``a[1-2],b3``, steps ``gpu[1-9/2]``.

The rules are ClusterShell's (``ClusterShell.RangeSet``, 1.10), checked against it by a test:

- bracket contents are comma-separated numbers or ``start-stop[/step]`` ranges;
- a zero-padded bound (``01``) pads every number to its length, and then both bounds must have the
  same length (``gpu[099-101]`` is fine, ``gpu[01-100]`` is not);
- several brackets in one name expand as a product, left bracket outermost, but two brackets may
  not touch (``dgx-[1-2][1-2]``: write ``dgx-[1-2]-[1-2]``);
- ranges are numeric only: ClusterShell (and Slurm, outside multi-dimensional machines) reject
  letter ranges such as ``dgx-[a-c]``, so this does too, and says how to write them instead;
- commas outside brackets separate node sets.

Unlike ClusterShell's ``NodeSet`` (a sorted set), the expansion keeps the order written, and a name
that comes out twice is an error (in an inventory it is a typo, not something to merge quietly).
Negative numbers, whitespace and ClusterShell's set operators (``!``, ``&``, ``^``, ``@group``) are
not supported here. No third-party dependency.
"""

from __future__ import annotations

import itertools
import re

MAX_NODES = 100_000  # one pattern; a typo such as gpu[1-1000000] is refused, not expanded
_BOUND = re.compile(r"^[0-9]+$")


class HostlistError(ValueError):
    """A pattern that is not a valid node set; ``str()`` says what and how to write it."""


def is_pattern(text: str) -> bool:
    """Whether ``text`` uses node-set syntax (a bracket not opening an ``[IPv6]`` address, or a
    comma outside brackets)."""
    host = text.rpartition("@")[2]
    if host.startswith("[") and ":" in host.partition("]")[0]:
        return False  # [v6addr] or [v6addr]:port
    return "[" in text or "]" in text or "," in text


def expand(pattern: str) -> list[str]:
    """Every name ``pattern`` stands for, in the order written; raises ``HostlistError``."""
    names: list[str] = []
    for part in _split_top(pattern):
        names += _expand_one(part, pattern)
        if len(names) > MAX_NODES:
            raise HostlistError(f"{pattern!r} expands to more than {MAX_NODES} names")
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise HostlistError(f"{pattern!r} names {name!r} more than once")
        seen.add(name)
    return names


def split_list(text: str) -> list[str]:
    """``a,gpu[1-2,4],b`` → ['a', 'gpu[1-2,4]', 'b']: commas outside brackets only, empty
    items dropped, nothing checked."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth = 1 if c == "[" else 0 if c == "]" else depth
        if c == "," and not depth:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p]


def _split_top(pattern: str) -> list[str]:
    """Split on commas outside brackets; malformed brackets and empty items are errors."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(pattern):
        if c == "[":
            if depth:
                raise HostlistError(f"{pattern!r}: a '[' inside brackets")
            depth = 1
        elif c == "]":
            if not depth:
                raise HostlistError(f"{pattern!r}: a ']' without its '['")
            depth = 0
        elif c == "," and not depth:
            parts.append(pattern[start:i])
            start = i + 1
    if depth:
        raise HostlistError(f"{pattern!r}: a '[' is never closed")
    parts.append(pattern[start:])
    for part in parts:
        if not part:
            raise HostlistError(f"{pattern!r}: an empty name between commas")
    return parts


def _expand_one(part: str, pattern: str) -> list[str]:
    pieces = re.split(r"(\[[^\]]*\])", part)  # literal, [range], literal, [range], …, literal
    choices: list[list[str]] = []
    for i, piece in enumerate(pieces):
        if i % 2 == 0:
            choices.append([piece])
            continue
        if i > 1 and pieces[i - 1] == "":
            fixed = "".join(pieces[:i]) + "-" + "".join(pieces[i:])
            raise HostlistError(
                f"{pattern!r}: two brackets touch ({pieces[i - 2]}{piece}); ClusterShell refuses "
                f"this too: put a character between them, e.g. {fixed}"
            )
        choices.append(_numbers(piece[1:-1], pattern))
    return ["".join(combo) for combo in itertools.product(*choices)]


def _numbers(ranges: str, pattern: str) -> list[str]:
    """``01-04,07`` → ['01', '02', '03', '04', '07']."""
    out: list[str] = []
    for sub in ranges.split(","):
        base, _, step_text = sub.partition("/")
        begin, dash, end = base.partition("-")
        if not dash:
            end = begin
        for bound in (begin, end):
            if not _BOUND.match(bound):
                raise HostlistError(_bad_bound(sub, bound, pattern))
        if step_text and (not dash or not _BOUND.match(step_text) or int(step_text) < 1):
            raise HostlistError(f"{pattern!r}: bad step in [{sub}]; write start-stop/step")
        padded = (len(begin) > 1 and begin.startswith("0")) or (
            len(end) > 1 and end.startswith("0")
        )
        if padded and len(begin) != len(end):
            raise HostlistError(
                f"{pattern!r}: [{sub}] mixes zero-padding lengths; give both bounds the same "
                f"number of digits (e.g. {begin.zfill(len(end))}-{end})"
            )
        start, stop, step = int(begin), int(end), int(step_text or 1)
        if start > stop:
            raise HostlistError(f"{pattern!r}: [{sub}] runs backwards; write {end}-{begin}")
        if (stop - start) // step >= MAX_NODES:
            raise HostlistError(f"{pattern!r} expands to more than {MAX_NODES} names")
        width = len(begin) if padded else 0
        out += [str(n).zfill(width) for n in range(start, stop + 1, step)]
    return out


def _bad_bound(sub: str, bound: str, pattern: str) -> str:
    if not sub.strip():
        return f"{pattern!r}: an empty range []"
    if bound.isalpha() or re.fullmatch(r"[A-Za-z]-[A-Za-z]", sub):
        return (
            f"{pattern!r}: [{sub}] is a letter range; like ClusterShell and Slurm, only numbers "
            "can range: list the letters, e.g. dgx-a[1-2],dgx-b[1-2]"
        )
    return f"{pattern!r}: [{sub}] is not a number or a start-stop range of numbers"


_LAST_NUMBER = re.compile(r"^(.*?)(\d+)(\D*)$")


def fold(names: list[str]) -> list[str]:
    """Names → the fewest node sets of this syntax that ``expand`` back to them (as a set):
    ``gpu001 gpu002 gpu003 gpu007`` → ``gpu[001-003,007]``. Ranges are over the last number of
    a name; a zero-padded group keeps its width. Order: first appearance of each group."""
    groups: dict[tuple[str, str, int], list[str]] = {}  # (prefix, suffix, width): digits
    padded_keys = {
        (m.group(1), m.group(3))
        for m in map(_LAST_NUMBER.match, names)
        if m and len(m.group(2)) > 1 and m.group(2).startswith("0")
    }
    for name in dict.fromkeys(names):
        m = _LAST_NUMBER.match(name)
        if m is None or "[" in name or "," in name:
            groups[(name, "", -1)] = []
            continue
        prefix, digits, suffix = m.groups()
        width = len(digits) if (prefix, suffix) in padded_keys else 0
        if width == 0 and len(digits) > 1 and digits.startswith("0"):
            width = len(digits)
        groups.setdefault((prefix, suffix, width), []).append(digits)
    out: list[str] = []
    for (prefix, suffix, width), digits in groups.items():
        if width < 0:  # no number to range over
            out.append(prefix)
            continue
        if len(digits) == 1:
            out.append(f"{prefix}{digits[0]}{suffix}")
            continue
        numbers = sorted({int(d) for d in digits})
        parts, start = [], numbers[0]
        for prev, cur in zip(numbers, [*numbers[1:], None], strict=True):
            if cur is None or cur != prev + 1:
                a, b = str(start).zfill(width), str(prev).zfill(width)
                parts.append(a if start == prev else f"{a}-{b}")
                start = cur if cur is not None else start
        out.append(f"{prefix}[{','.join(parts)}]{suffix}")
    return out
