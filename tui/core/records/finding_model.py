"""One finding as the operator reads it, whatever shows it: the CLI (``diagnose``), the Markdown
report and the TUI's finding pane each render this model, so they say the same things in the
same order, and its texts went through the one redaction path (``tui.core.redact``).

The model is made from a ``Finding`` (the TUI) or from its contract JSON object (the CLI and
the report, which work from ``host_json``); both give the same model.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tui.core.findings import Finding
from tui.core.redact import redact_text

SEVERITY_MARK: Mapping[str, str] = {
    "critical": "🔴 critical",
    "warning": "🟠 warning",
    "info": "🔵 info",
}
NOTHING_RESOLVED = "nothing by itself"


@dataclass(frozen=True)
class FixLine:
    """One suggested fix of the finding, numbered from 1 (least invasive first)."""

    number: int
    id: str
    title: str
    params: tuple[tuple[str, str], ...]
    resolves: tuple[str, ...]
    needs_root: bool

    @property
    def resolves_text(self) -> str:
        return ", ".join(self.resolves) or NOTHING_RESOLVED

    @property
    def params_text(self) -> str:
        """``key=value …`` as typed after the fix id (values quoted for a shell)."""
        return " ".join(f"{k}={shlex.quote(v)}" for k, v in self.params)

    def command(self, host: str, flags: str = "") -> str:
        """The ``detective-tui fix`` command that applies it on ``host``."""
        return f"detective-tui fix {host} {self.id} {self.params_text}".rstrip() + flags


@dataclass(frozen=True)
class FindingModel:
    id: str
    severity: str
    title: str
    explanation: str
    python: str | None
    evidence: tuple[str, ...]
    fixes: tuple[FixLine, ...]

    @property
    def mark(self) -> str:
        """``🔴 critical`` …: the severity as the CLI and the report spell it."""
        return SEVERITY_MARK.get(self.severity, self.severity)

    @classmethod
    def of(cls, finding: Finding | Mapping[str, Any]) -> FindingModel:
        """From a ``Finding`` or its contract JSON object; every text redacted."""
        data = finding.to_json() if isinstance(finding, Finding) else finding
        fixes = tuple(
            FixLine(
                number=i,
                id=fix["id"],
                title=redact_text(fix["title"]),
                params=tuple((k, redact_text(v)) for k, v in fix["params"].items()),
                resolves=tuple(fix["resolves"]),
                needs_root=bool(fix["needs_root"]),
            )
            for i, fix in enumerate(data["fixes"], 1)
        )
        python = data.get("python")
        return cls(
            id=data["id"],
            severity=data["severity"],
            title=redact_text(data["title"]),
            explanation=redact_text(data["explanation"]),
            python=redact_text(python) if python else None,
            evidence=tuple(redact_text(e) for e in data["evidence"]),
            fixes=fixes,
        )
