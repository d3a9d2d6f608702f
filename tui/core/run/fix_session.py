"""One fix session: decide → apply → verdict → offer the restart (or the undo) → decide again.

The CLI (``tui.commands.fix``, ``fix_undo``), the fix wizard and the fleet-fix screen only ask
the questions (a prompt or ``--yes``, a button) and render the lines and results; the order
lives here once:

1. ``decide(answer)`` records the user's answer (``tui.core.records.decision``) before
   anything runs; ``apply`` refuses to run without a "yes".
2. ``apply`` runs every planned host (``tui.core.run.fleet.apply_fleet``: each step journaled
   before it runs, the verdict re-probed after), at most ``rollout.at_once`` hosts at a time;
   with ``rollout.stop_on_failure`` no host starts once one failed, and those hosts are
   ``not-started`` (never fixed or failed).
3. ``restart()`` and ``undo()`` are the follow-ups, sessions of their own with their own
   decision: the restart of the units the run left on the old environment, the undo of what
   it changed (from the undo record each host's run saved).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from tui.core.facts import Facts
from tui.core.fixes import make_stamp
from tui.core.fixes.plan import FixPlan
from tui.core.fixes.undo import UndoRecord, load_record, undo_plan
from tui.core.hosts import Host
from tui.core.records.decision import Answer, Decision, record_decision
from tui.core.run.fleet import FleetItem, HostFixResult, apply_fleet, undo_items
from tui.core.run.fleet_group import restart_items
from tui.core.run.outcome_words import Kind, plan_kind
from tui.core.run.runner import Session

DEFAULT_AT_ONCE = 8  # hosts changed at the same time, unless a rollout says otherwise


@dataclass(frozen=True)
class Rollout:
    """How a run goes over several hosts: at most ``at_once`` at a time (a host starts when
    one ends); with ``stop_on_failure`` none starts after a host failed or was left
    unresolved."""

    at_once: int = DEFAULT_AT_ONCE
    stop_on_failure: bool = False

    def __post_init__(self) -> None:
        if self.at_once < 1:
            raise ValueError(f"hosts at a time must be at least 1, not {self.at_once}")

    def describe(self) -> str:
        """``2 hosts at a time, stop at the first failure``."""
        hosts = "1 host" if self.at_once == 1 else f"{self.at_once} hosts"
        stop = ", stop at the first failure" if self.stop_on_failure else ""
        return f"{hosts} at a time{stop}"


class NoConsent(RuntimeError):
    """``apply`` before a "yes" was recorded: a front end's bug, never a user's."""


class FixSession:
    """One run (a fix, an undo or a restart) on one or several hosts, from the decision to
    its results; ``fix_id`` names the fix it is about (for an undo or a restart: the fix
    it follows, when known)."""

    def __init__(
        self,
        session: Session,
        items: Sequence[FleetItem],
        *,
        kind: Kind = "fix",
        fix_id: str | None = None,
        rollout: Rollout | None = None,
    ) -> None:
        self.session = session
        self.items = list(items)
        self.kind: Kind = kind
        self.fix_id = fix_id
        self.rollout = rollout or Rollout()
        self.answer: Answer | None = None
        self.results: list[HostFixResult] = []

    @classmethod
    def one(
        cls,
        session: Session,
        host: Host,
        plan: FixPlan,
        before: Facts | None = None,
        *,
        undoing: UndoRecord | None = None,
    ) -> FixSession:
        """One host's plan: a fix, a restart, or the undo of ``undoing``'s record; ``before``
        is the probe the plan was built from (None: probed when it is applied)."""
        item = FleetItem(host=host, facts=before, plan=plan, undo_record=undoing)
        if undoing is not None:
            return cls(session, [item], kind="undo", fix_id=undoing.fix_id)
        kind = plan_kind(plan)
        return cls(session, [item], kind=kind, fix_id=plan.fix_id if kind == "fix" else None)

    @classmethod
    def undo_of(
        cls, session: Session, host: Host, record_id: str, *, sudo: bool, stamp: str | None = None
    ) -> FixSession:
        """The undo of one host's record (``UndoError`` when it cannot be read)."""
        record = load_record(host.name, record_id)
        plan = undo_plan(record, host, sudo=sudo, stamp=stamp or make_stamp())
        item = FleetItem(host=host, facts=None, plan=plan, undo_record=record)
        return cls(session, [item], kind="undo", fix_id=record.fix_id)

    @property
    def planned(self) -> list[FleetItem]:
        return [i for i in self.items if i.plan is not None]

    @property
    def hosts(self) -> tuple[str, ...]:
        """The hosts that run (their plan is built)."""
        return tuple(i.host.name for i in self.planned)

    # -- 1. the decision ---------------------------------------------------------------------
    def decide(self, answer: Answer, reason: str | None = None) -> None:
        """Record the user's answer about the planned hosts, before anything runs."""
        self.answer = answer
        for decision in self.decisions(answer, reason):
            record_decision(self.session, decision)

    def decisions(self, answer: Answer, reason: str | None = None) -> list[Decision]:
        """An undo's decision per host (each names its own record); else one for all, with
        the rollout in its details when it covers several hosts."""
        if self.kind == "undo":
            return [
                Decision.about(
                    "undo",
                    answer,
                    (i.host.name,),
                    undo=i.undo_record.id if i.undo_record else None,
                    fix=self.fix_id,
                    reason=reason,
                )
                for i in self.planned
            ]
        units = self._units() if self.kind == "restart" else ()
        rollout = self.rollout
        how = {"at_once": rollout.at_once, "stop_on_failure": rollout.stop_on_failure}
        details = how if len(self.planned) > 1 else {}
        return [
            Decision.about(
                self.kind,
                answer,
                self.hosts,
                fix=self.fix_id,
                units=units,
                reason=reason,
                details=details,
            )
        ]

    def _units(self) -> tuple[str, ...]:
        words = (i.plan.params.get("units", "") for i in self.planned if i.plan is not None)
        return tuple(dict.fromkeys(u for w in words for u in w.split()))

    # -- 2. the run ----------------------------------------------------------------------------
    async def apply(self, on_line: Callable[[str, str], None] | None = None) -> list[HostFixResult]:
        """Run every planned host; results in the order of ``items``. ``on_line(host, line)``.
        One host keeps its connection after the run (a front end goes on with it); a fleet
        releases each host's as soon as that host is done."""
        if self.answer != "yes":
            raise NoConsent(f"{self.kind} on {', '.join(self.hosts)}: no 'yes' was recorded")
        self.results = await apply_fleet(
            self.session,
            self.items,
            on_line,
            concurrency=self.rollout.at_once,
            record_undo=self.kind == "fix",
            stop_on_failure=self.rollout.stop_on_failure,
            release=len(self.items) > 1,
        )
        return self.results

    # -- 3. the follow-ups ---------------------------------------------------------------------
    def restart(self, stamp: str | None = None) -> FixSession | None:
        """The restart of the units this run left running the old environment (None:
        nothing to restart), under the same rollout."""
        items = restart_items(self.results, stamp or make_stamp())
        if not items:
            return None
        return FixSession(
            self.session, items, kind="restart", fix_id=self.fix_id, rollout=self.rollout
        )

    def undo(
        self, stamp: str | None = None, undone: Collection[tuple[str, str]] = ()
    ) -> FixSession:
        """The undo of this run on every host it changed (``undone``: host name and record
        id pairs already undone); the hosts with nothing to undo say why."""
        items = undo_items(self.results, stamp or make_stamp(), undone)
        return FixSession(
            self.session, items, kind="undo", fix_id=self.fix_id, rollout=self.rollout
        )
