"""Remote values in Markdown: text that stays text, code that stays code.

A value from a host (a path, an error line, a version) must never become Markdown or HTML in a
report: ``<img src=x onerror=…>`` would be live HTML on a forge, ``</details>`` would close the
report's own block, a backtick run would end a code span or fence early. ``md_text`` escapes
what makes HTML or entities (``&``, ``<``, ``>``) for running text and table cells;
``md_code`` is an inline code span whose delimiter no backtick run inside can close;
``md_fence`` a fence for a block of lines. Control characters are ``tui.core.redact``'s
(every report goes through ``redact_text`` last).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

_BACKTICKS = re.compile(r"`+")


def md_text(value: object) -> str:
    """``value`` as running Markdown text: ``&``, ``<`` and ``>`` as entities (shown as the
    characters, never read as HTML)."""
    return html.escape(str(value), quote=False)


def _longest_run(text: str) -> int:
    return max((len(m) for m in _BACKTICKS.findall(text)), default=0)


def md_code(value: object) -> str:
    """``value`` as an inline code span, whatever backticks or newlines it holds."""
    text = str(value).replace("\n", " ")
    tick = "`" * (_longest_run(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{tick}{pad}{text}{pad}{tick}"


def md_fence(lines: Iterable[str]) -> str:
    """A code fence longer than any backtick run in ``lines`` (so none of them closes it)."""
    return "`" * max(3, max((_longest_run(line) for line in lines), default=0) + 1)
