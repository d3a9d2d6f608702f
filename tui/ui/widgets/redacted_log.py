"""A ``Log`` whose every line goes through ``tui.core.redact`` before it is shown: the raw probe
output tab and the live output of fixes show what the transcript holds, secrets masked."""

from __future__ import annotations

from collections.abc import Iterable

from textual.widgets import Log

from tui.core.redact import redact_text


class RedactedLog(Log):
    def write(self, data: str, scroll_end: bool | None = None) -> RedactedLog:
        super().write(redact_text(data), scroll_end)
        return self

    def write_lines(self, lines: Iterable[str], scroll_end: bool | None = None) -> RedactedLog:
        super().write_lines([redact_text(line) for line in lines], scroll_end)
        return self
