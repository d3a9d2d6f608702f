"""The explain box (``x``): paste an error and see it traced to its cause on one host.

The text is matched as it changes (``tui.core.judge.explain``, no command runs anywhere) and each
candidate cause is judged on the host's last probe; what is shown goes through the one
redaction path. ``esc`` closes the box.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from tui.core.judge.explain import Explanation, explain, explanation_text
from tui.core.judge.judged import Judged
from tui.core.redact import redact_text
from tui.ui.fleet_state import HostState

PROMPT = "Paste the error (a traceback, a log tail) above: it is explained as you paste."


class ExplainScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="explain.close"),
    ]
    DEFAULT_CSS = """
    ExplainScreen { align: center middle; }
    #explain-box { width: 90%; height: 90%; border: round $primary; background: $surface; }
    #explain-title { height: auto; padding: 0 1; text-style: bold; }
    #explain-text { height: 40%; }
    #explain-scroll { height: 1fr; }
    #explain-result { padding: 0 1; }
    """

    def __init__(self, state: HostState) -> None:
        super().__init__()
        self.state = state
        self.explanation: Explanation | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="explain-box"):
            yield Static(f"Explain an error on {self.state.name}  (esc closes)", id="explain-title")
            yield TextArea(id="explain-text", soft_wrap=True, show_line_numbers=False)
            with VerticalScroll(id="explain-scroll"):
                yield Static(PROMPT, id="explain-result", markup=False)

    def on_mount(self) -> None:
        self.query_one("#explain-text", TextArea).focus()

    def _judged(self) -> tuple[Judged | None, str]:
        state = self.state
        if state.result is None or state.busy:
            return None, f"pasted text; {state.name} is not probed yet (p probes it)"
        return Judged(state.result, state.diagnosis), f"pasted text, judged on {state.name}"

    @on(TextArea.Changed, "#explain-text")
    def _changed(self, event: TextArea.Changed) -> None:
        text = event.text_area.text
        result = self.query_one("#explain-result", Static)
        if not text.strip():
            self.explanation = None
            result.update(PROMPT)
            return
        judged, source = self._judged()
        reached = judged is None or judged.result.reachable
        self.explanation = explain(
            text, judged, source=source, host_error=None if reached else judged.error
        )
        flags = " --demo" if self.state.host.demo else ""
        result.update(redact_text(explanation_text(self.explanation, flags)))

    def action_close(self) -> None:
        self.dismiss()
