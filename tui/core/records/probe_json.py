"""The ``probe --json`` element of CONTRACT.md, on its own so that ``probe`` does not import
the rules and the diagnosis it never runs (``tui.core.records.report`` builds ``diagnose --json`` on
it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tui.core.redact import redact
from tui.core.rules.completeness import unseen

if TYPE_CHECKING:  # a record of what the runner returned; the records never run anything
    from tui.core.run.runner import ProbeResult


def result_json(result: ProbeResult) -> dict[str, Any]:
    """One element of ``probe --json`` (and the first keys of ``diagnose --json``), redacted.
    ``unseen``: what the probe could not see (``tui.core.rules.completeness``; empty:
    everything)."""
    return redact(
        {
            "host": result.host.name,
            "reachable": result.reachable,
            "error": result.error,
            "error_kind": result.error_kind,
            "unseen": list(unseen(result)),
            "facts": result.facts.to_json() if result.facts is not None else None,
        }
    )
