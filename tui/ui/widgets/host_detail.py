"""The detail pane beside (or under) the hosts table, lazygit-style: the selected host's four
CUDAs, its top finding, the fix it proposes and its pending work, without leaving the table."""

from __future__ import annotations

from datetime import datetime

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from tui.core.redact import visible
from tui.ui.cuda_boxes import cuda_boxes
from tui.ui.fleet_state import HostState, gpu_summary, sm_summary, status_text, status_word
from tui.ui.freshness import is_stale, probed_text
from tui.ui.grouping import ATTRIBUTE_GROUPINGS, FindingGroup
from tui.ui.widgets.finding_view import severity_label
from tui.ui.widgets.gpu_view import load_summary

BOX_LABEL = {"driver": "driver", "torch": "torch", "path": "PATH nvcc", "jit": "JIT"}
BOX_STYLE = {"critical": "bold $error", "warning": "bold $warning", "odd": "$accent"}
Part = str | tuple[str, str] | Content


def detail_parts(state: HostState, now: datetime, stale_minutes: int = 0) -> list[Part]:
    """The pane's text for one host, as ``Content.assemble`` parts."""
    host = state.host
    parts: list[Part] = [(host.name, "bold")]
    if host.target != host.name:  # "local  local", "gpu1  gpu1" say nothing more
        parts.append(("  " + host.target, "dim"))
    if host.tags:
        parts.append(("  " + ", ".join(host.tags), "dim"))
    parts.append("\n")
    if state.busy:  # the table shows the progress; the pane stays still meanwhile
        parts.append("probing…")
    elif state.facts is None:
        # the status in a word: the error itself follows once, below (not twice)
        if state.status == "idle":
            parts.append("not probed yet (p)")
        else:
            parts.append((status_word(state), "bold $error") if state.error else status_text(state))
    else:
        age = probed_text(state, now)
        stale = is_stale(state, now, stale_minutes)
        parts.append((f"{'stale: ' if stale else ''}{age}", "$warning" if stale else "dim"))
    if state.facts is not None and state.facts.gpus:
        parts.append(f"  ·  {gpu_summary(state.facts)} · SM {sm_summary(state.facts)}")
    parts.append("\n")
    if state.facts is not None and state.facts.gpu_load:
        parts += [(load_summary(state.facts), "dim"), "\n"]
    if state.pending is not None:
        parts += [("⟳ " + state.pending.detail, "bold $warning"), ("  (R)", "dim"), "\n"]
    if state.facts is not None:
        parts.append(("CUDA ", "bold"))
        for i, box in enumerate(cuda_boxes(state.facts, state.diagnosis)):
            mark = " ✗" if box.severity in ("critical", "warning") else ""
            style = BOX_STYLE.get(box.severity or "", "bold")
            parts += [" · " if i else "", f"{BOX_LABEL[box.key]} ", (box.value + mark, style)]
        parts.append("\n")
    diagnosis = state.diagnosis
    if diagnosis is not None and diagnosis.findings:
        top = diagnosis.findings[0]
        more = len(diagnosis.findings) - 1
        parts += [severity_label(top.severity), " ", (state.row.reason.split(" (+")[0], "bold")]
        if more:
            parts.append((f"  (+{more} more)", "dim"))
        parts.append("\n")
        fix = next((f for f in top.fixes), None)
        if fix is not None:
            root = " [root]" if fix.needs_root else ""
            parts += [("fix: ", "bold"), (fix.id, "$success"), f" — {fix.title}{root}", "\n"]
    elif diagnosis is not None:
        parts += [("No findings: driver, torch, nvcc and FlashInfer agree.", "$success"), "\n"]
    elif state.error:  # a bad inventory entry lists each of its errors, one a line
        parts += [(state.error, "$error"), "\n"]
    parts.append(("enter open · p probe · space mark · f fix (groups) · y copy", "dim"))
    return parts


def group_parts(group: FindingGroup) -> list[Part]:
    """The pane for a group of the groups view: what the hosts share and what f does."""
    parts: list[Part] = [(group.label, "bold"), "\n", ", ".join(group.hosts), "\n"]
    if group.finding_id is not None:
        parts += [("finding: ", "bold"), group.finding_id, "\n"]
        parts.append(("f fixes every host of the group · p probes them · space marks them", "dim"))
    elif group.key[0] in ATTRIBUTE_GROUPINGS:
        what = "f fixes the finding most of them share · p probes them · space marks them"
        parts.append((what, "dim"))
    else:
        parts.append(("p probes them again · space marks them", "dim"))
    return parts


def _visible(part: Part) -> Part:
    """A part with a host's control characters made visible (``tui.core.redact.visible``)."""
    if isinstance(part, str):
        return visible(part)
    if isinstance(part, tuple):
        return (visible(part[0]), part[1])
    return part


class HostDetail(Widget):
    """Set with ``show(state, now, stale_minutes)`` or ``text``. A repaint of its own region,
    not ``Static.update``: that re-lays out the whole screen, on every probe update of the
    selected host (the pane's size is fixed by the layout, never by its text)."""

    text: reactive[Content] = reactive(Content, layout=False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._parts: list[Part] = []

    def render(self) -> Content:
        return self.text

    def show(self, state: HostState | None, now: datetime, stale_minutes: int = 0) -> None:
        parts = detail_parts(state, now, stale_minutes) if state else ["No host selected."]
        self.show_parts(parts)

    def show_parts(self, parts: list[Part]) -> None:
        """Repainted only when what it says changed (not on every probe update)."""
        if parts != self._parts:
            self._parts = parts
            self.text = Content.assemble(*(_visible(p) for p in parts))
