"""The fix engine: plans (data) → preview → confirmation → execution → re-probe → verdict → undo.

``build_plan`` turns a fix id and its parameters into a ``FixPlan`` for one host, without
touching the host: the fix's record (``tui.core.fixes.registry``) plans it.
``tui.core.run.fix_executor.apply_plan`` runs it; ``tui.core.fixes.undo``
keeps what is needed to reverse it; ``tui.core.run.fleet`` applies one fix to many hosts.

How a plan is written
- Every step is exact POSIX sh with every argument ``shlex.quote``d. Host paths are rendered
  under the host's root prefix (``Host.root``: fake hosts, mounted images) when the plan is
  built, so the preview is exactly what runs and nothing depends on variables crossing
  ``sudo``. Root steps of a non-root login run as ``sudo -n sh -c '…'`` (never a prompt).
- Steps are idempotent: whole files detective-tui owns (systemd drop-ins
  ``50-detective-tui-*.conf``) are compared before writing; edits of other files are
  marker-delimited blocks (``# >>> detective-tui NAME >>>``); installs are guarded by the
  file they produce. A step prints ``@@dt changed …`` or ``@@dt unchanged …``; only changed
  steps are recorded for undo. Backups are ``<file>.detective-tui-<stamp>.bak``; the JIT
  cache is renamed ``….moved-<stamp>``, never deleted.
- The environment a fix changes is where the program runs: a drop-in per systemd unit that
  runs the interpreter (restart is a separate, confirmed plan), plus the venv's ``activate``
  (or the login profile when there is no venv) for interactive use.

How it is verified (``tui.core.run.fix_executor``): the host is re-probed and diagnosed as the fixed
environments will see it — each changed unit as it will start next time (its unit files and
drop-ins), the venv as ``activate`` leaves it — and the live process is reported as
"restart pending" while it still runs with the old environment.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from tui.core.facts import Facts
from tui.core.fixes.plan import FixError, FixPlan, Step
from tui.core.fixes.registry import BY_ID, FIX_IDS
from tui.core.hosts import Host


def make_stamp() -> str:
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime())


def build_plan(
    facts: Facts,
    host: Host,
    fix_id: str,
    params: Mapping[str, str],
    python: str | None = None,
    *,
    stamp: str | None = None,
) -> FixPlan:
    """Plan ``fix_id`` for ``host`` from its probed facts; raises ``FixError`` when it cannot."""
    fix = BY_ID.get(fix_id)
    if fix is None:
        raise FixError(f"unknown fix {fix_id!r}; known fixes: {', '.join(FIX_IDS)}")
    unknown = sorted(set(params) - set(fix.param_names))
    if unknown:
        allowed = ", ".join(fix.param_names) or "none"
        raise FixError(f"{fix_id} does not take {', '.join(unknown)} (parameters: {allowed})")
    return fix.plan(facts, host, params, python, stamp or make_stamp())


__all__ = ["FIX_IDS", "FixError", "FixPlan", "Step", "build_plan", "make_stamp"]
