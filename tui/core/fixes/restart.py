"""Restarting the services a fix changed: a separate plan, confirmed on its own."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.core.fixes.plan import FixPlan, Step
from tui.core.fixes.shell import systemctl
from tui.core.hosts import Host

if TYPE_CHECKING:
    from tui.core.facts import Facts
    from tui.core.run.fix_executor import FixOutcome
    from tui.core.run.pending import PendingWork


def restart_plan(host: Host, units: tuple[str, ...], *, sudo: bool, stamp: str) -> FixPlan:
    """``systemctl restart`` each unit where systemd runs the host; reported as skipped where it
    does not, and for a root-prefixed host (a filesystem, not a running system).

    The plan changes no unit's environment (``units`` stays empty), so its verdict is the
    running service's before and after the restart, not the units' next start."""
    steps = tuple(
        Step(
            title=f"Restart {unit}",
            command=systemctl(
                host,
                ("restart", unit),
                f"restarted {unit}",
                f"skipped restarting {unit}",
                f"restart {unit}",
            ),
            undo=None,
            changes=f"restarts {unit} with its new environment (requests in flight fail)",
            needs_root=True,
        )
        for unit in units
    )
    return FixPlan(
        fix_id="restart",
        host=host,
        params={"units": " ".join(units)},
        steps=steps,
        verify_gone=(),
        sudo=sudo,
        stamp=stamp,
    )


def restart_after(outcome: FixOutcome, stamp: str | None = None) -> FixPlan | None:
    """The restart of the units an applied run left running the environment from before it,
    through sudo as that run was (None: nothing to restart). ``stamp``: the run's own."""
    if not outcome.applied or not outcome.pending_restart:
        return None
    plan = outcome.plan
    return restart_plan(
        plan.host, outcome.pending_restart, sudo=plan.sudo, stamp=stamp or plan.stamp
    )


def restart_pending(host: Host, work: PendingWork, facts: Facts | None, stamp: str) -> FixPlan:
    """The restart a past run left pending (``tui.core.run.pending``): through sudo when that
    run was, or when the host's probe says the user is not root."""
    sudo = work.sudo or (facts is not None and not facts.host.is_root)
    return restart_plan(host, work.units, sudo=sudo, stamp=stamp)
