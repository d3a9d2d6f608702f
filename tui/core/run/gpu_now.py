"""A refresh of the live GPU state alone: the probe's nvidia-smi part (``DT_ONLY=gpus``), under
the same trust rule, the step deadline per command and a deadline for the whole run, read by
the same record parser. Cheap: one ``nvidia-smi`` table, one ``--query-gpu`` (and ``-L`` on a
GPU in MIG mode); nothing else of the probe runs.
"""

from __future__ import annotations

from datetime import datetime

from probes import probe_env, probe_script
from tui.core import locations
from tui.core.facts.build import FactBuilder
from tui.core.facts.gpu_state import GpuNow
from tui.core.hosts import Host
from tui.core.run.runner import Session

DEADLINE_S = 20.0  # the whole refresh, on top of the step deadline of each nvidia-smi call


async def read_gpu_now(session: Session, host: Host, now: datetime) -> GpuNow:
    """The GPU state now; never raises for host trouble (``error`` says what went wrong)."""
    if host.invalid:
        return GpuNow(now, error=host.invalid)
    env = {
        **host.env,
        **probe_env(
            host.python,
            root=host.root,
            step_timeout_s=session.step_timeout_s,
            session="current" if host.local and not host.root else None,
            tree_exec=host.fake_tree,
            only="gpus",
        ),
    }
    result = await session.run_script(
        host, probe_script(locations.cache_dir()), env=env, deadline_s=DEADLINE_S
    )
    if result.timed_out:
        return GpuNow(now, error=f"nvidia-smi did not answer within {DEADLINE_S:g} s")
    if result.exit_status is None:
        return GpuNow(now, error=result.error or "no answer")
    builder = FactBuilder()
    for line in result.output.splitlines():
        builder.feed(line)
    facts = builder.facts()
    if facts.driver.state != "ok":
        why = facts.driver.message or facts.driver.state
        return GpuNow(now, error=f"nvidia-smi: {why}")
    if not facts.gpu_load:
        return GpuNow(now, error="nvidia-smi did not answer the state query")
    return GpuNow(now, facts.gpu_load, facts.gpu_processes, facts.mig_devices)
