"""One fix for a finding group, as both front ends need it: which fixes the group's
diagnoses proposed, a plan per host with its own proposal, and after a run, what to restart
and what to undo. The fleet fix screen renders these; it decides nothing itself."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from tui.core.findings import FixSuggestion
from tui.core.fixes.restart import restart_after
from tui.core.run.fleet import FleetItem, HostFixResult, Probed, plan_host
from tui.core.run.outcome_words import serving_pids, some, still_runs


@dataclass(frozen=True)
class FixChoice:
    """One fix the group's diagnoses proposed for the finding, over the hosts proposing it."""

    fix_id: str
    title: str  # as proposed for the first of its hosts
    resolves: tuple[str, ...]
    needs_root: bool
    hosts: tuple[str, ...]  # where the diagnosis proposed it
    params_vary: bool  # the proposed parameters differ between hosts


def fix_choices(finding_id: str, hosts: Sequence[Probed]) -> tuple[FixChoice, ...]:
    """The union of the fixes proposed for ``finding_id``: most hosts first, then in the
    order the diagnoses rank them."""
    found: dict[str, list[tuple[str, FixSuggestion]]] = {}
    for probed in hosts:
        if probed.diagnosis is None:
            continue
        for finding in probed.diagnosis.findings:
            if finding.id != finding_id:
                continue
            for fix in finding.fixes:
                found.setdefault(fix.id, []).append((probed.host.name, fix))
    choices = []
    for fix_id, entries in found.items():
        fixes = [fix for _, fix in entries]
        choices.append(
            FixChoice(
                fix_id=fix_id,
                title=fixes[0].title,
                resolves=tuple(dict.fromkeys(r for fix in fixes for r in fix.resolves)),
                needs_root=any(fix.needs_root for fix in fixes),
                hosts=tuple(dict.fromkeys(name for name, _ in entries)),
                params_vary=len({tuple(sorted(fix.params.items())) for fix in fixes}) > 1,
            )
        )
    order = list(found)
    choices.sort(key=lambda c: (-len(c.hosts), order.index(c.fix_id)))
    return tuple(choices)


def plan_group(
    finding_id: str, fix_id: str, hosts: Sequence[Probed], stamp: str
) -> list[FleetItem]:
    """Plan ``fix_id`` on each host with the parameters its own ``finding_id`` proposed; a
    host where that finding did not propose it is left out with the reason."""
    return [
        plan_host(p, fix_id, finding_id=finding_id, proposed_only=True, stamp=stamp) for p in hosts
    ]


def undo_lines(results: Sequence[HostFixResult]) -> list[str]:
    """The command that reverses the fix, per host where it changed something."""
    return [
        f"Undo {r.item.host.name}: detective-tui fix {r.item.host.name} --undo {r.outcome.record}"
        + (" --demo" if r.item.host.demo else "")
        for r in results
        if r.outcome is not None and r.outcome.record
    ]


def restart_lines(
    results: Sequence[HostFixResult], environment: str = "the old environment"
) -> list[str]:
    """The units that still run with ``environment`` (the one before the run), by unit: their
    processes, and what restarts them."""
    pending: dict[tuple[str, ...], list[tuple[str, tuple[str, ...]]]] = {}
    for r in results:
        o = r.outcome
        if o is not None and restart_after(o) is not None:
            pids = serving_pids(o.facts_after, o.pending_restart)
            pending.setdefault(o.pending_restart, []).append((r.item.host.name, pids))
    lines = []
    for units, hosts in pending.items():
        names = ", ".join(name for name, _ in hosts)
        running = [f"{p.split(' ', 2)[1]} on {name}" for name, pids in hosts for p in pids]
        who = still_runs(units, environment)
        if running:
            who = who.replace(" still", f" (pid {some(running)}) still", 1)
        lines.append(
            f"Restart pending on {names}: {who}, and the fleet table judges it until it "
            f"restarts. r restarts {', '.join(units)} there (systemctl restart {' '.join(units)})"
        )
    return lines


def restart_items(results: Sequence[HostFixResult], stamp: str) -> list[FleetItem]:
    """A restart plan for each host whose run left units running the old environment."""
    items = []
    for r in results:
        plan = restart_after(r.outcome, stamp) if r.outcome is not None else None
        if plan is not None:
            items.append(FleetItem(host=r.item.host, facts=r.outcome.facts_after, plan=plan))
    return items


def undoable(
    results: Sequence[HostFixResult], undone: Collection[tuple[str, str]]
) -> list[HostFixResult]:
    """The hosts whose fix saved an undo record that is not undone yet (``undone``: host
    name and record id pairs; one run's records share their id on every host)."""
    return [
        r
        for r in results
        if r.outcome is not None
        and r.outcome.record
        and (r.item.host.name, r.outcome.record) not in undone
    ]
