"""One finding in full: severity, title, the causal explanation, evidence, and its fixes."""

from __future__ import annotations

from dataclasses import replace

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from tui.core.findings import Finding
from tui.core.redact import redact_text

SEVERITY_STYLE = {"critical": "bold $error", "warning": "bold $warning", "info": "bold $primary"}


def severity_label(severity: str) -> tuple[str, str]:
    return (f" {severity.upper()} ", f"reverse {SEVERITY_STYLE.get(severity, 'bold')}")


def finding_content(finding: Finding) -> Content:
    """The finding as shown, its texts redacted."""
    shown = replace(
        finding,
        title=redact_text(finding.title),
        explanation=redact_text(finding.explanation),
        evidence=tuple(redact_text(e) for e in finding.evidence),
    )
    return _content(shown)


def _content(finding: Finding) -> Content:
    parts: list[str | Content | tuple[str, str]] = [
        severity_label(finding.severity),
        " ",
        (finding.title, "bold"),
        ("  " + finding.id, "dim"),
        "\n\n",
        finding.explanation,
        "\n",
    ]
    if finding.python:
        parts += ["\n", ("Interpreter: ", "bold"), finding.python, "\n"]
    if finding.evidence:
        parts += ["\n", ("Evidence", "bold underline"), "\n"]
        for item in finding.evidence:
            parts += ["  • ", item, "\n"]
    if finding.fixes:
        parts += ["\n", ("Fixes (what-if)", "bold underline"), "\n"]
        for fix in finding.fixes:
            resolves = ", ".join(fix.resolves) if fix.resolves else "nothing by itself"
            root = "  [root]" if fix.needs_root else ""
            parts += ["  ▸ ", (fix.id, "bold"), f"  {fix.title}{root}\n", ("    resolves: ", "dim")]
            parts += [(resolves, "$success" if fix.resolves else "dim"), "\n"]
    return Content.assemble(*parts)


NO_FINDINGS = "No findings on this host."


class FindingView(Static):
    """The selected finding; without one, ``empty`` says why (no findings, not reached…)."""

    finding: reactive[Finding | None] = reactive(None)
    empty: reactive[str] = reactive(NO_FINDINGS)

    def watch_finding(self, finding: Finding | None) -> None:
        self.update(finding_content(finding) if finding else self.empty)

    def watch_empty(self, empty: str) -> None:
        if self.finding is None:
            self.update(empty)
