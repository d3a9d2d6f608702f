"""What ``fix``, its undo and its history share: how they speak (stdout, stderr, JSON), ask,
show a planned item, tabulate a fleet's results and turn them into an exit code."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from tui.commands import output
from tui.core import exitcodes
from tui.core.run.fix_executor import outcome_summary
from tui.core.run.fix_render import outcome_text, preview_text
from tui.core.run.fix_session import DEFAULT_AT_ONCE, FixSession, Rollout
from tui.core.run.fleet import (
    FleetItem,
    HostFixResult,
)

LAST = "last"  # --undo last: the newest fix still in place on each host


class UsageError(Exception):
    pass


def say(text: str = "") -> None:
    output.say(text)


def err(text: str) -> None:
    output.warn(f"detective-tui fix: {text}")


def confirm(question: str, assume_yes: bool) -> bool:
    if assume_yes:
        return True
    if not sys.stdin.isatty():
        raise UsageError(
            "refusing to change anything without confirmation: there is no terminal to ask on "
            "(pass --yes to apply, or --dry-run to only preview)"
        )
    answer = input(f"{question} [y/N] ").strip().lower()
    return answer in ("y", "yes")


def line_printer(prefix: str) -> Callable[[str], None]:
    def out(line: str) -> None:
        say(f"{prefix}{line}")

    return out


async def restart_fleet(run: FixSession, args: argparse.Namespace) -> None:
    """``--restart`` for a fleet: restart the changed units of every host that was fixed."""
    restart = run.restart()
    if restart is None:
        return
    restart.decide("yes")
    for r in await restart.apply():
        if not args.json:
            say(
                outcome_text(r.outcome)
                if r.outcome is not None
                else f"{r.item.host.name}: {r.detail}"
            )


def rollout(args: argparse.Namespace) -> Rollout:
    """``--rolling N`` and ``--stop-on-failure`` (a usage error for N below 1)."""
    at_once = getattr(args, "rolling", None) or DEFAULT_AT_ONCE
    if at_once < 1:
        raise UsageError(f"--rolling {at_once}: hosts at a time must be at least 1")
    return Rollout(at_once=at_once, stop_on_failure=getattr(args, "stop_on_failure", False))


def show_item(item: FleetItem, args: argparse.Namespace) -> None:
    if args.json:
        return
    if item.plan is None:
        err(f"{item.host.name}: {item.error}")
        return
    say(preview_text(item.plan))
    say()


def item_json(item: FleetItem) -> dict[str, Any]:
    plan = item.plan
    return {
        "host": item.host.name,
        "error": item.error,
        "fix": plan.fix_id if plan else None,
        "params": dict(plan.params) if plan else None,
        "python": plan.python if plan else None,
        "needs_root": plan.needs_root if plan else None,
        "commands": list(plan.preview_commands()) if plan else [],
        "undo": [s.undo for s in plan.steps] if plan else [],
        "verify_gone": list(plan.verify_gone) if plan else [],
        "notes": list(plan.notes) if plan else [],
    }


def dump(data: object) -> None:
    output.write_json(data)


def planning_code(items: list[FleetItem]) -> int:
    if any(i.unreachable for i in items):
        return exitcodes.UNREACHABLE
    if any(i.plan is None and not i.skipped for i in items):
        return exitcodes.USAGE
    return exitcodes.OK


def fleet_table(results: list[HostFixResult], args: argparse.Namespace) -> None:
    if args.json:
        dump(
            [
                {
                    "host": r.item.host.name,
                    "status": r.status,
                    "detail": r.detail,
                    "outcome": outcome_summary(r.outcome) if r.outcome else None,
                }
                for r in results
            ]
        )
        return
    width = max(len(r.item.host.name) for r in results)
    say()
    say(f"{'host'.ljust(width)}  {'result'.ljust(11)}  detail")
    for r in results:
        say(f"{r.item.host.name.ljust(width)}  {r.status.ljust(11)}  {r.detail}")


def fleet_code(results: list[HostFixResult]) -> int:
    statuses = {r.status for r in results}
    if statuses & {"failed", "stopped", "unresolved", "not-started"}:
        return exitcodes.CRITICAL
    if "unreachable" in statuses:
        return exitcodes.UNREACHABLE
    return exitcodes.OK


def host_line(host: str, line: str) -> None:
    say(f"[{host}] {line}")
