"""Keys of actions that are off right now say why instead of doing nothing.

A screen's ``check_action`` hides an action that cannot run (read-only mode, an unreachable
host, the table view for a group fix); Textual then drops its key silently. A screen that
mixes in ``ExplainsDisabledKeys`` and answers ``disabled_reason(action)`` turns that key
press into a notification with the reason.
"""

from __future__ import annotations

from textual import events
from textual.binding import Binding


class ExplainsDisabledKeys:
    """Mix into a ``Screen`` before ``Screen``; override ``disabled_reason``."""

    def disabled_reason(self, action: str) -> str | None:
        """Why ``action`` cannot run now (None: say nothing)."""
        return None

    def on_key(self, event: events.Key) -> None:
        for binding in getattr(self, "BINDINGS", ()):
            if not isinstance(binding, Binding) or "(" in binding.action:
                continue
            if event.key not in (k.strip() for k in binding.key.split(",")):
                continue
            if self.check_action(binding.action, ()):  # type: ignore[attr-defined]
                return
            reason = self.disabled_reason(binding.action)
            if reason:
                event.stop()
                self.notify(reason, severity="warning")  # type: ignore[attr-defined]
            return
