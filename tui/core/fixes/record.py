"""What one fix is: the record each fix module defines (``FIX``).

A record holds the fix's whole definition — its id, its typed ``NAME=VALUE`` parameters with
their defaults, its place in the least-invasive-first order, how the what-if simulates it on a
copy of the facts, which parameters the what-if tries on a host, how it is planned for a host,
and its title. ``tui.core.fixes.registry`` collects them; ``tui.core.judge.whatif`` and
``tui.core.fixes.build_plan`` iterate the records, never a list of ids.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from tui.core.facts import Facts, PythonEnv
from tui.core.fixes.plan import FixPlan
from tui.core.hosts import Host

Params = Mapping[str, str]
# (facts, host, params, python, stamp) → the plan for that host; raises FixError when it cannot
Plan = Callable[[Facts, Host, Params, "str | None", str], FixPlan]
# (facts, params, the interpreter, labels of the environments it changes) → facts after it
Simulate = Callable[[Facts, Params, "PythonEnv | None", "set[str]"], Facts]
# (facts, python) → the parameter sets the what-if tries on this host (none: not applicable)
Choices = Callable[[Facts, "str | None"], "list[dict[str, str]]"]
# (facts, params, python) → the one-line title of the proposal
Title = Callable[[Facts, Params, "str | None"], str]


@dataclass(frozen=True)
class Param:
    name: str
    help: str
    default: str | None = None  # None: the diagnosis proposes the value for the host


@dataclass(frozen=True)
class Fix:
    id: str
    order: int  # least invasive first: the what-if lists a finding's fixes in this order
    params: tuple[Param, ...]
    plan: Plan
    simulate: Simulate
    choices: Choices
    title: Title
    needs_root: bool = False  # what a proposal says before a plan for the host is built

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)
