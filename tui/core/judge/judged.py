"""A probe result with its verdict: what ``tui.core.run.service`` hands both front ends."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tui.core.facts import Facts
from tui.core.hosts import Host

if TYPE_CHECKING:
    from tui.core.judge.diagnosis import Diagnosis
    from tui.core.run.runner import ProbeResult


@dataclass(frozen=True)
class Judged:
    """A probe result, its diagnosis (None: nothing to judge) and the deep results, if run."""

    result: ProbeResult
    diagnosis: Diagnosis | None = None
    deep: dict[str, dict[str, Any]] = field(default_factory=dict)  # python → deep check
    notes: tuple[str, ...] = ()  # one line each: what went wrong beside the probe (history)
    # --deep's cuInit runs: (environment label, what probes/deep_cuinit.py printed)
    cuinit: tuple[tuple[str, dict[str, Any]], ...] = ()

    @property
    def host(self) -> Host:
        return self.result.host

    @property
    def facts(self) -> Facts | None:
        return self.result.facts

    @property
    def error(self) -> str | None:
        return self.result.error
