"""Four boxes side by side: driver max CUDA · torch CUDA · PATH nvcc · FlashInfer's JIT toolkit."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from tui.core.findings.record import BOXES
from tui.ui.cuda_boxes import CudaBox

SEVERITY_CLASSES = ("-critical", "-warning", "-info", "-odd")


class CudaComparison(Horizontal):
    """Set ``boxes`` (from ``tui.ui.cuda_boxes.cuda_boxes``); boxes a finding implicates
    are coloured."""

    boxes: reactive[tuple[CudaBox, ...]] = reactive((), init=False)

    def compose(self) -> ComposeResult:
        for key in BOXES:
            yield Static(id=f"cuda-{key}", classes="cuda-box")

    def watch_boxes(self, boxes: tuple[CudaBox, ...]) -> None:
        for box in boxes:
            widget = self.query_one(f"#cuda-{box.key}", Static)
            widget.border_title = box.label
            mark = "  ✗" if box.severity in ("critical", "warning") else ""
            widget.update(
                Content.assemble((box.value, "bold"), (mark, "bold"), "\n", (box.detail, "dim"))
            )
            widget.remove_class(*SEVERITY_CLASSES)
            if box.severity:
                widget.add_class(f"-{box.severity}")
