"""One fix on many hosts: plan each from its own probe, apply concurrently, one row per host.

A host that cannot be reached, cannot be planned for, or fails never stops the others, unless
the run was asked to stop on the first failure: the hosts it did not start then are
``not-started``. The same goes for undoing fixes on many hosts: each host's undo plan comes
from its own undo record, the undo is journaled there, and a record is moved aside only where
its undo applied.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from tui.core.facts import Facts
from tui.core.findings import Finding, FixSuggestion
from tui.core.fixes import FixError, build_plan, make_stamp
from tui.core.fixes.plan import FixPlan
from tui.core.fixes.undo import (
    UndoError,
    UndoRecord,
    list_records,
    load_record,
    records_dir,
    require_undo_order,
    undo_plan,
)
from tui.core.hosts import Host
from tui.core.judge.diagnosis import Diagnosis, diagnose
from tui.core.judge.judged import Judged
from tui.core.run.fix_executor import FixOutcome, apply_plan
from tui.core.run.outcome_words import plan_kind, undo_restored

if TYPE_CHECKING:
    from tui.core.run.runner import Session

HostStatus = Literal[
    "fixed",
    "applied",
    "undone",
    "restarted",
    "failed",
    "stopped",
    "unresolved",
    "not-planned",
    "not-started",
    "skipped",
    "unreachable",
]
FAILED: tuple[HostStatus, ...] = ("failed", "stopped", "unresolved")  # what stops a rollout


@dataclass(frozen=True)
class FleetItem:
    """A host with its probe and the plan built from it (or why there is none)."""

    host: Host
    facts: Facts | None
    plan: FixPlan | None
    error: str | None = None
    unreachable: bool = False
    skipped: bool = False  # left out on purpose (it lacks the finding the fleet fix is for)
    undo_record: UndoRecord | None = None  # the record an undo plan reverses


@dataclass(frozen=True)
class HostFixResult:
    item: FleetItem
    outcome: FixOutcome | None
    error: str | None = None
    not_started: str | None = None  # why a planned host was never started (a stopped rollout)

    @property
    def status(self) -> HostStatus:
        if self.item.unreachable:
            return "unreachable"
        if self.item.skipped:
            return "skipped"
        if self.item.plan is None:
            return "not-planned"
        if self.not_started is not None:
            return "not-started"
        if self.outcome is None or not self.outcome.applied:
            return "stopped" if self.outcome is not None and self.outcome.stopped else "failed"
        if self.item.undo_record is not None:
            return "undone"
        if plan_kind(self.outcome.plan) == "restart":
            return "restarted"
        if self.outcome.unresolved or self.outcome.introduced:
            return "unresolved"
        return "fixed" if self.outcome.plan.verify_gone else "applied"

    @property
    def detail(self) -> str:
        if self.not_started is not None:
            return self.not_started
        if self.error or self.item.error:
            return self.error or self.item.error or ""
        o = self.outcome
        if o is None:
            return ""
        parts = []
        if o.error:
            parts.append(o.error)
        record = self.item.undo_record
        if record is not None:
            parts += _undo_verdict(o, record)
        elif plan_kind(o.plan) == "restart":
            if o.applied and o.facts_after is not None:
                parts.append(
                    f"running service now: {', '.join(o.findings_after) or 'none'} "
                    f"(before the restart: {', '.join(o.findings_before) or 'none'})"
                )
        elif o.applied:
            if o.resolved:
                parts.append("gone: " + ", ".join(o.resolved))
            if o.unresolved:
                parts.append("still there: " + ", ".join(o.unresolved))
            if o.introduced:
                parts.append("new: " + ", ".join(o.introduced))
        if o.pending_restart:
            parts.append("restart pending: " + ", ".join(o.pending_restart))
        if o.changed:
            parts.append(f"{len(o.changed)} step(s) changed")
        if o.uncertain:
            parts.append(f"{len(o.uncertain)} step(s) may have changed (undo covers them)")
        if o.nothing_changed:
            parts.append("nothing changed")
        return "; ".join(parts)


def _undo_verdict(outcome: FixOutcome, record: UndoRecord) -> list[str]:
    """After an undo: is the verdict back to what it was before the fix?"""
    restored = undo_restored(outcome, record.findings_before)
    if restored is None:
        return []
    if restored:
        return ["verdict as before the fix: " + (", ".join(record.findings_before) or "none")]
    return [
        "before the fix: " + (", ".join(record.findings_before) or "none"),
        "now: " + (", ".join(outcome.findings_after) or "none"),
    ]


class Probed(Protocol):
    """A host as a front end knows it: its probe's facts and diagnosis (None: not probed, or
    nothing to judge) and the probe's error. The TUI's ``HostState`` and the core's
    ``Judged`` both are one."""

    @property
    def host(self) -> Host: ...

    @property
    def facts(self) -> Facts | None: ...

    @property
    def diagnosis(self) -> Diagnosis | None: ...

    @property
    def error(self) -> str | None: ...


def proposal(
    diagnosis: Diagnosis, fix_id: str, finding_id: str | None = None
) -> tuple[Finding, FixSuggestion] | None:
    """The finding that proposed ``fix_id`` and its suggestion: ``finding_id``'s when given
    (the one the user chose), else the first finding proposing it."""
    for finding in diagnosis.findings:
        if finding_id is not None and finding.id != finding_id:
            continue
        for fix in finding.fixes:
            if fix.id == fix_id:
                return finding, fix
    return None


def plan_host(
    probed: Probed,
    fix_id: str,
    *,
    finding_id: str | None = None,
    params: Mapping[str, str] | None = None,
    python: str | None = None,
    proposed_only: bool = False,
    stamp: str | None = None,
) -> FleetItem:
    """Plan ``fix_id`` for one probed host: with ``params`` when given, else with what the
    chosen finding (``finding_id``; None: the first proposing it) proposed, for its Python.
    A host without the finding is skipped, and so is one where the fix was not proposed when
    ``proposed_only``; a plan that cannot be built, or a builder's bug, is that host's error."""
    host, facts, diagnosis = probed.host, probed.facts, probed.diagnosis
    if facts is None or diagnosis is None:
        why = probed.error or "not probed"
        return FleetItem(host=host, facts=None, plan=None, error=why, unreachable=True)
    finding_ids = [f.id for f in diagnosis.findings]
    if finding_id is not None and finding_id not in finding_ids:
        return FleetItem(
            host=host, facts=facts, plan=None, error=f"no {finding_id} finding", skipped=True
        )
    chosen = dict(params or {})
    found = proposal(diagnosis, fix_id, finding_id)
    if found is None and proposed_only:
        finding = next((f for f in diagnosis.findings if f.id == finding_id), None)
        others = ", ".join(x.id for x in finding.fixes) if finding else ""
        why = f"{fix_id} was not proposed here (proposed: {others or 'nothing'})"
        return FleetItem(host=host, facts=facts, plan=None, error=why, skipped=True)
    if found is not None and not chosen:
        chosen = dict(found[1].params)
        python = python or found[0].python
    try:
        plan = build_plan(facts, host, fix_id, chosen, python, stamp=stamp)
    except FixError as exc:
        return FleetItem(host=host, facts=facts, plan=None, error=str(exc))
    except Exception as exc:  # one host's bug must not stop the others
        return FleetItem(host=host, facts=facts, plan=None, error=f"internal error: {exc!r}")
    return FleetItem(host=host, facts=facts, plan=plan)


async def plan_fleet(
    session: Session,
    hosts: Sequence[Host],
    fix_id: str,
    params: Mapping[str, str],
    python: str | None = None,
    *,
    finding: str | None = None,
    stamp: str | None = None,
) -> list[FleetItem]:
    """Probe every host and plan the fix (``plan_host``); ``finding`` keeps only hosts that
    have it, and its proposal is the one used."""
    results = await session.probe_many(hosts)
    return [
        plan_host(
            Judged(r, diagnose(r.facts, r.host) if r.facts is not None else None),
            fix_id,
            finding_id=finding,
            params=params,
            python=python,
            stamp=stamp,
        )
        for r in results
    ]


async def apply_fleet(
    session: Session,
    items: Sequence[FleetItem],
    on_line: Callable[[str, str], None] | None = None,
    *,
    concurrency: int = 8,
    record_undo: bool = True,
    stop_on_failure: bool = False,
    release: bool = True,
) -> list[HostFixResult]:
    """Apply each planned item, at most ``concurrency`` at a time in the order given (a host
    starts when one ends); results in the order given. ``on_line(host_name, line)``.
    ``record_undo=False`` for plans with nothing to undo (restarts). ``stop_on_failure``:
    once a host's result is one of ``FAILED``, the hosts not yet started are not started.
    ``release``: close each host's connection when it is done."""
    gate = asyncio.Semaphore(concurrency)
    failed: list[str] = []  # hosts whose result stops the rollout, first first

    async def one(item: FleetItem) -> HostFixResult:
        if item.plan is None:
            return HostFixResult(item=item, outcome=None)

        def sink(line: str) -> None:
            if on_line is not None:
                on_line(item.host.name, line)

        async with gate:
            if stop_on_failure and failed:
                why = f"not started: the run stopped after {failed[0]} failed"
                return HostFixResult(item=item, outcome=None, not_started=why)
            try:
                outcome = await apply_plan(
                    session,
                    item.host,
                    item.plan,
                    sink,
                    before=item.facts,
                    record_undo=record_undo and item.undo_record is None,
                    undoing=item.undo_record,
                )
                result = HostFixResult(item=item, outcome=outcome)
            except Exception as exc:  # one host's bug must not stop the fleet
                result = HostFixResult(item=item, outcome=None, error=f"internal error: {exc!r}")
            finally:  # each host's session ends with its own run, not the fleet's slowest
                if release:
                    await session.release(item.host)
            if result.status in FAILED:
                failed.append(item.host.name)  # before the gate lets the next host in
        return result

    return list(await asyncio.gather(*(one(i) for i in items)))


def undo_item(
    host: Host, record: UndoRecord, facts: Facts | None, *, sudo: bool, stamp: str
) -> FleetItem:
    """The undo of one host's record, as a fleet item (``facts=None``: probed when applied)."""
    plan = undo_plan(record, host, sudo=sudo, stamp=stamp)
    return FleetItem(host=host, facts=facts, plan=plan, undo_record=record)


def _nothing_to_undo(host: Host, why: str) -> FleetItem:
    return FleetItem(
        host=host, facts=None, plan=None, error=f"nothing to undo: {why}", skipped=True
    )


def undo_items(
    results: Sequence[HostFixResult], stamp: str, undone: Collection[tuple[str, str]] = ()
) -> list[FleetItem]:
    """An undo plan for each host a fix run changed, from the record that run saved; the
    other hosts of the run with the reason. ``undone``: (host name, record id) pairs already
    undone."""
    items = []
    for r in results:
        host, o = r.item.host, r.outcome
        if o is None or o.record is None:
            items.append(_nothing_to_undo(host, f"the fix changed nothing on {host.name}"))
            continue
        if (host.name, o.record) in undone:
            items.append(_nothing_to_undo(host, f"{o.record} is already undone"))
            continue
        try:
            record = load_record(host.name, o.record)
            require_undo_order(record)
        except UndoError as exc:
            items.append(FleetItem(host=host, facts=None, plan=None, error=str(exc)))
            continue
        items.append(undo_item(host, record, None, sudo=o.plan.sudo, stamp=stamp))
    return items


async def plan_undo_last(
    session: Session, hosts: Sequence[Host], *, stamp: str | None = None
) -> list[FleetItem]:
    """Undo the newest fix still in place on each host; only hosts that have one are probed
    (for reachability and sudo). Results in the order given."""
    records: dict[str, UndoRecord] = {}
    items: dict[str, FleetItem] = {}
    for host in hosts:
        try:
            found = list_records(host.name)
        except UndoError as exc:
            items[host.name] = FleetItem(host=host, facts=None, plan=None, error=str(exc))
            continue
        if found:
            records[host.name] = found[0]
        else:
            where = records_dir(host.name)
            undone = len(list(where.glob("*.undone"))) if where.is_dir() else 0
            why = (
                f"every fix recorded for {host.name} is already undone ({undone} in {where})"
                if undone
                else f"no fix recorded for {host.name} in {where}"
            )
            items[host.name] = _nothing_to_undo(host, why)
    stamp = stamp or make_stamp()
    probed = await session.probe_many([h for h in hosts if h.name in records])
    for p in probed:
        if p.facts is None:
            items[p.host.name] = FleetItem(
                host=p.host, facts=None, plan=None, error=p.error, unreachable=True
            )
            continue
        items[p.host.name] = undo_item(
            p.host,
            records[p.host.name],
            p.facts,
            sudo=not p.facts.host.is_root,
            stamp=stamp,
        )
    return [items[h.name] for h in hosts]
