"""The host screen's headline: the worst finding in one line, or why there is no verdict."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.core.rules.completeness import partial_verdict

if TYPE_CHECKING:
    from tui.core.judge.diagnosis import Diagnosis


def headline(diagnosis: Diagnosis | None, unseen: tuple[str, ...] = ()) -> tuple[str, str]:
    """(severity, one line) for the top of the host screen. ``unseen``: what the probe could
    not see (``tui.core.rules.completeness``); then no all-clear is given."""
    if diagnosis is None:
        return "info", "not diagnosed yet"
    if not diagnosis.findings and unseen:
        return "warning", partial_verdict(unseen)
    if not diagnosis.findings:
        return "healthy", "No findings: driver, torch, nvcc and FlashInfer agree."
    first = diagnosis.findings[0]
    more = len(diagnosis.findings) - 1
    tail = f"  (+{more} more)" if more else ""
    return first.severity, f"{first.title}{tail}"
