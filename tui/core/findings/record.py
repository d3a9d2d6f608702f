"""What one finding is: the record each module of ``tui.core.findings`` defines (``FINDING``).

A record holds the finding's whole definition — its id, the severities it can have, the facts
it judges, the rule(s) that emit it, the fixes that can resolve it, the one-line reason the
hosts table shows, the CUDA boxes it implicates, and its documentation (the module's own
docstring) with the public threads it cites. ``tui.core.findings.registry`` collects them;
everything else (the id lists, the Reason column, docs/findings.md, the README table, the
what-if candidates) is derived from there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tui.core.facts import Facts
from tui.core.findings import Finding, Severity

if TYPE_CHECKING:
    from tui.core.rules.subject import Subject

Rule = Callable[[Facts, "Sequence[Subject]"], Iterable[Finding]]
BOXES = ("driver", "torch", "path", "jit")  # the CUDA boxes of the host screen
VALUE_KEYS = ("sm", "jit", "torch_cuda", "driver_cuda", "driver")  # a reason's host values


@dataclass(frozen=True)
class FindingRecord:
    id: str
    title: str  # what the finding is about, in a few words
    severities: tuple[Severity, ...]
    reads: tuple[str, ...]  # the facts it judges: dotted paths into ``Facts``
    rules: tuple[Rule, ...]  # evaluated in registry order
    late_rules: tuple[Rule, ...] = ()  # evaluated after every record's ``rules``
    fixes: tuple[str, ...] = ()  # fix ids the what-if tries (it decides whether they resolve)
    follow_ups: tuple[str, ...] = ()  # fixes added after a resolving one (resolve nothing)
    cause: str = ""  # reason template over the host's values (``VALUE_KEYS``)
    consequence: str = ""  # what follows, in a few words
    implicates: tuple[str, ...] = ()  # the CUDA boxes (``BOXES``) it points at
    fires_when: str = ""  # the README table's "fires when"
    example: str = ""  # the README table's example
    doc: str = ""  # its section of docs/findings.md (Markdown)
    examples: tuple[str, ...] = ()  # public threads showing it (cited in ``doc``)
    heading_note: str = ""  # after the id in its docs heading, e.g. "(only with `--deep`)"

    def to_json(self) -> dict[str, Any]:
        """The ``findings --json`` object of CONTRACT.md."""
        return {
            "id": self.id,
            "title": self.title,
            "severities": list(self.severities),
            "reads": list(self.reads),
            "fixes": list(self.fixes),
            "examples": list(self.examples),
        }
