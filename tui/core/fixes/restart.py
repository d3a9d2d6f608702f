"""Restarting the services a fix changed: a separate plan, confirmed on its own."""

from __future__ import annotations

from tui.core.fixes.plan import FixPlan, Step
from tui.core.fixes.shell import host_path, q, say_changed, say_unchanged
from tui.core.hosts import Host


def restart_plan(host: Host, units: tuple[str, ...], *, sudo: bool, stamp: str) -> FixPlan:
    """``systemctl restart`` each unit; reported as skipped where systemd is not running."""
    steps = tuple(
        Step(
            title=f"Restart {unit}",
            command="\n".join(
                [
                    f"if [ -d {host_path(host, '/run/systemd/system')} ]; then",
                    f"  systemctl restart {q(unit)}",
                    f"  {say_changed(f'restarted {unit}')}",
                    "else",
                    f"  {say_unchanged(f'skipped restarting {unit}: systemd is not running here')}",
                    "fi",
                ]
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
        units=units,
        stamp=stamp,
    )
