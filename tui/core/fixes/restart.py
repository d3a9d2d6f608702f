"""Restarting the services a fix changed: a separate plan, confirmed on its own."""

from __future__ import annotations

from tui.core.fixes.plan import FixPlan, Step
from tui.core.fixes.shell import systemctl
from tui.core.hosts import Host


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
