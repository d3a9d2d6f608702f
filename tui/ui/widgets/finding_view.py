"""One finding in full: severity, title, the causal explanation, evidence, and its fixes."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from tui.core.findings import Finding
from tui.core.records.finding_model import FindingModel

SEVERITY_STYLE = {"critical": "bold $error", "warning": "bold $warning", "info": "bold $primary"}


def severity_label(severity: str) -> tuple[str, str]:
    return (f" {severity.upper()} ", f"reverse {SEVERITY_STYLE.get(severity, 'bold')}")


def finding_content(finding: Finding) -> Content:
    """The finding as shown (``FindingModel``: its texts redacted)."""
    m = FindingModel.of(finding)
    parts: list[str | Content | tuple[str, str]] = [
        severity_label(m.severity),
        " ",
        (m.title, "bold"),
        ("  " + m.id, "dim"),
        "\n\n",
        m.explanation,
        "\n",
    ]
    if m.python:
        parts += ["\n", ("Interpreter: ", "bold"), m.python, "\n"]
    if m.evidence:
        parts += ["\n", ("Evidence", "bold underline"), "\n"]
        for item in m.evidence:
            parts += ["  • ", item, "\n"]
    if m.fixes:
        parts += ["\n", ("Fixes (what-if)", "bold underline"), "\n"]
        for fix in m.fixes:
            root = "  [root]" if fix.needs_root else ""
            parts += ["  ▸ ", (fix.id, "bold"), f"  {fix.title}{root}\n", ("    resolves: ", "dim")]
            parts += [(fix.resolves_text, "$success" if fix.resolves else "dim"), "\n"]
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
