"""Reports: the ``diagnose --json`` object of CONTRACT.md, and a Markdown report a user can
paste into a vLLM / SGLang / FlashInfer GitHub issue (``tui.core.records.issue_report``).

Everything that leaves here goes through ``tui.core.redact`` first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tui.core.judge.diagnosis import Diagnosis, deep_differences
from tui.core.judge.explain import symptoms
from tui.core.judge.judged import Judged
from tui.core.records.issue_report import SEVERITY_MARK, issue_report
from tui.core.records.probe_json import result_json
from tui.core.redact import redact

if TYPE_CHECKING:  # a record of what the runner returned; the records never run anything
    from tui.core.run.runner import ProbeResult

__all__ = ["SEVERITY_MARK", "host_json", "markdown_report"]


def host_json(
    result: ProbeResult,
    diagnosis: Diagnosis | None,
    deep: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """One element of ``diagnose --json``. ``deep``: python path → what
    ``probes/deep_flashinfer.py`` printed there; adds ``deep`` and ``agrees`` to the replay."""
    flashinfer = []
    for replayed in diagnosis.flashinfer if diagnosis else ():
        entry = replayed.to_json()
        got = (deep or {}).get(replayed.python)
        if got is not None:
            entry["deep"] = dict(got)
            entry["agrees"] = None if "error" in got else not deep_differences(replayed, got)
        flashinfer.append(entry)
    extra: dict[str, Any] = {}
    if diagnosis is not None and result.facts is not None and result.facts.log_lines:
        found = symptoms(Judged(result, diagnosis))
        extra = {"symptoms": found} if found else {}
    return {
        **result_json(result),
        **redact(
            {
                "findings": [f.to_json() for f in diagnosis.findings] if diagnosis else [],
                "flashinfer": flashinfer,
                **extra,
            }
        ),
    }


# -- Markdown --------------------------------------------------------------------------------


def markdown_report(
    results: Sequence[tuple[ProbeResult, Diagnosis | None]],
    deep: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
    *,
    actions: Iterable[Mapping[str, Any]] = (),
    now: datetime | None = None,
) -> str:
    """The report for ``diagnose --markdown`` and ctrl+s (``tui.core.records.issue_report``).
    ``deep``: host name → python → deep result; ``actions``: the session's transcript
    events (its fixes, undos and restarts are listed)."""
    hosts = [host_json(r, d, (deep or {}).get(r.host.name)) for r, d in results]
    return issue_report(hosts, actions, now=now)
