"""Messages that travel up to the app: requests from screens, results from workers.

Workers post these and nothing else; they never touch widgets. ``ProbeActivity`` is the
coalescing signal for streamed probe output: the probe callback only records the newest
progress and lines in a buffer and posts one, and a queued one is replaced by the next, so
100 hosts streaming output cost one repaint per frame, not one per line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:
    from tui.core.judge.diagnosis import Diagnosis
    from tui.core.run.fix_executor import FixOutcome
    from tui.core.run.runner import ProbeResult
    from tui.core.run.validate_result import ValidationResult


class ProbeActivity(Message):
    """Buffered probe progress/output is waiting to be applied."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ProbeActivity)


class ProbeFinished(Message):
    def __init__(self, result: ProbeResult, diagnosis: Diagnosis | None) -> None:
        super().__init__()
        self.result = result
        self.diagnosis = diagnosis


class ProbeRequested(Message):
    """Probe these hosts (empty: every host)."""

    def __init__(self, names: tuple[str, ...]) -> None:
        super().__init__()
        self.names = names


class OpenHost(Message):
    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name


class FixRequested(Message):
    def __init__(self, host: str, fix_id: str, params: dict[str, str], python: str | None) -> None:
        super().__init__()
        self.host = host
        self.fix_id = fix_id
        self.params = params
        self.python = python


class UndoRecordRequested(Message):
    """Open the fix wizard with the undo of this ``tui.core.fixes.undo.UndoRecord``."""

    def __init__(self, record: Any) -> None:
        super().__init__()
        self.record = record


class PendingRequested(Message):
    """Act on a host's pending work (restart what a fix left pending, undo a fix that never
    finished), after a preview."""

    def __init__(self, host: str) -> None:
        super().__init__()
        self.host = host


class UndoRequested(Message):
    """Undo the newest fix still in place on each of these hosts (after a preview)."""

    def __init__(self, hosts: tuple[str, ...]) -> None:
        super().__init__()
        self.hosts = hosts


class RunsFinished(Message):
    """Fix, undo or restart runs ended (host name → the outcome, None: nothing ran there);
    the app keeps each host's pending work from them."""

    def __init__(self, outcomes: tuple[tuple[str, FixOutcome | None], ...]) -> None:
        super().__init__()
        self.outcomes = outcomes


class ValidateRequested(Message):
    def __init__(self, host: str, python: str | None) -> None:
        super().__init__()
        self.host = host
        self.python = python


class ValidationFinished(Message):
    def __init__(self, host: str, result: ValidationResult) -> None:
        super().__init__()
        self.host = host
        self.result = result
