"""One line of reason per host: a finding's cause in the host's own values and what follows
from it — "SM 12.0 + nvcc 12.8 → FlashInfer drops the GPU". The hosts table's Reason
column, the detail pane and the groups view (hosts share a group when this line is equal)
read it from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from tui.core.findings.record import VALUE_KEYS
from tui.core.findings.registry import FINDINGS

# finding id → (cause template over HostRow fields, consequence in a few words): each
# finding record's ``cause`` and ``consequence``
CAUSES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {f.id: (f.cause, f.consequence) for f in FINDINGS if f.consequence}
)


def cause(finding_id: str, title: str, values: Mapping[str, str]) -> tuple[str, str]:
    """(cause, consequence) of one finding with the host's values (``?`` where unknown);
    a finding without a template is its title."""
    if finding_id not in CAUSES:
        return "", title
    template, consequence = CAUSES[finding_id]
    return template.format(**{k: values.get(k) or "?" for k in VALUE_KEYS}), consequence


def reason_line(finding_id: str, title: str, values: Mapping[str, str], more: int = 0) -> str:
    """``cause → consequence`` (``(+N)`` when the host has N more findings)."""
    why, then = cause(finding_id, title, values)
    line = f"{why} → {then}" if why else then
    return f"{line} (+{more})" if more else line
