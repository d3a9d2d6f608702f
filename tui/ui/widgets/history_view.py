"""The host screen's History tab: a timeline of the host's probes, newest first, each with its
verdict, findings and what changed since the probe before it (``history --json``'s entries)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textual.content import Content
from textual.widgets import Static

from tui.core.redact import redact_text

VERDICT_STYLE = {
    "critical": "bold $error",
    "warning": "bold $warning",
    "info": "$primary",
    "none": "bold $success",
    "unreachable": "$error",
}
STACK_WORDS = (
    ("driver", "driver"),
    ("driver_cuda", "CUDA"),
    ("torch", "torch"),
    ("nvcc", "nvcc"),
    ("jit_cuda", "JIT"),
    ("flashinfer", "FlashInfer"),
)


def _when(at: str) -> str:
    return at.replace("T", " ")[:16] + " UTC" if at.endswith("+00:00") else at


def timeline(entries: Sequence[dict[str, Any]]) -> Content:
    """The entries as lines: time, verdict, findings; the stack; then each change."""
    if not entries:
        return Content("No probe of this host in the history yet: press p to probe it.")
    parts: list[Content] = []
    for e in entries:
        verdict = e["verdict"] or "?"
        said = ", ".join(e["findings"]) or "no findings"
        if verdict == "unreachable":
            said = e.get("error") or "not reached"
        parts.append(
            Content.assemble(
                (_when(e["at"]), "bold"),
                "  ",
                (f"{verdict:<11}", VERDICT_STYLE.get(verdict, "")),
                " ",
                redact_text(said),
            )
        )
        if verdict != "unreachable":
            stack = e["stack"]
            words = " · ".join(f"{label} {stack.get(k) or '—'}" for k, label in STACK_WORDS)
            parts.append(Content.styled("    " + redact_text(words), "dim"))
        for change in e.get("changed", ()):
            parts.append(Content("    → " + redact_text(change)))
        parts.append(Content(""))
    return Content("\n").join(parts)


class HistoryView(Static):
    """Shows ``timeline(entries)``; ``None`` while the history loads."""

    def show(self, entries: Sequence[dict[str, Any]] | None, problem: str | None = None) -> None:
        if problem:
            self.update(Content.styled(redact_text(problem), "$error"))
        elif entries is None:
            self.update(Content.styled("Reading the history…", "dim"))
        else:
            self.update(timeline(entries))
