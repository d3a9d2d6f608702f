"""What a fix changes, read from the host: each changed unit as it will start next time (its
files, drop-ins and ``EnvironmentFile=`` files, and the ``nvcc`` its ``PATH`` finds) and the
venv as its ``activate`` leaves it — read as text and evaluated here, never sourced
(``tui.core.fixes.activate``) — and the facts judged under them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tui.core.facts import EnvContext, Facts
from tui.core.facts.contexts import SYSTEMD_DEFAULT_PATH
from tui.core.fixes.activate import activated_env, read_script, split_read
from tui.core.fixes.current_shell import in_changed_context
from tui.core.fixes.plan import FixPlan
from tui.core.fixes.unitenv import (
    UnitStart,
    next_start_context,
    unit_files_script,
    unit_start,
    which_nvcc_script,
    with_contexts,
)
from tui.core.hosts import Host

if TYPE_CHECKING:
    from tui.core.run.runner import Session

READ_DEADLINE_S = 30.0
READ_OUTPUT_CHARS = 1024 * 1024  # a read's output (unit files, an activate) keeps this much


@dataclass(frozen=True)
class EnvReads:
    """What was read from the host about the environments a plan changes."""

    units: Mapping[str, UnitStart] = field(default_factory=dict)
    unit_which: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    activate: EnvContext | None = None


async def _run_read(session: Session, host: Host, script: str) -> str:
    res = await session.run_script(
        host,
        script,
        env=dict(host.env),
        deadline_s=READ_DEADLINE_S,
        max_output_chars=READ_OUTPUT_CHARS,
    )
    return res.output


async def _read_activate(
    session: Session, host: Host, activate: str, keys: tuple[str, ...]
) -> EnvContext | None:
    """The venv as ``activate`` leaves the host's shell: the file is read, not run."""
    shown_names = tuple(dict.fromkeys((*keys, "CUDA_HOME", "PATH")))
    names = tuple(dict.fromkeys((*shown_names, "HOME")))  # HOME: for ``$HOME/…`` values
    shell, text = split_read(await _run_read(session, host, read_script(host, activate, names)))
    if text is None:
        return None
    env = activated_env(text, shell)
    shown = {k: env[k] for k in shown_names if k in env}
    if not shown:
        return None
    nvcc = await _run_read(session, host, which_nvcc_script(host, shown.get("PATH", "")))
    return EnvContext(
        kind="login",
        label=f"venv activated ({activate})",
        vars=shown,
        which_nvcc=tuple(x for x in nvcc.splitlines() if x.strip()),
    )


async def read_envs(session: Session, host: Host, plan: FixPlan) -> EnvReads:
    """Read the environments ``plan`` changes, as they are on the host right now."""
    units: dict[str, UnitStart] = {}
    which: dict[str, tuple[str, ...]] = {}
    for unit in plan.units:
        units[unit] = unit_start(
            await _run_read(session, host, unit_files_script(host, unit)), unit
        )
        path = units[unit].env.get("PATH", SYSTEMD_DEFAULT_PATH)
        out = await _run_read(session, host, which_nvcc_script(host, path))
        which[unit] = tuple(x for x in out.splitlines() if x.strip())
    activate = None
    if plan.activate:
        activate = await _read_activate(session, host, plan.activate, plan.env_keys)
    return EnvReads(units=units, unit_which=which, activate=activate)


def judged_facts(
    facts: Facts, plan: FixPlan, reads: EnvReads, reads_before: EnvReads | None = None
) -> Facts:
    """The facts as the fixed environments will see them.

    Serving processes of a changed unit get the unit's next-start environment (what they got
    from the unit's files before the plan ran, ``reads_before``, is replaced by what the files
    give now); an interpreter with no serving process is judged under its activated venv when
    the fix edited it. Without ``reads_before`` the units are read as they are now.
    """
    replaced: dict[str, EnvContext] = {}
    files = {
        unit: {"PATH": SYSTEMD_DEFAULT_PATH, **start.env}
        for unit, start in (reads_before or reads).units.items()
    }
    for ctx in facts.contexts:
        if ctx.unit and ctx.unit in reads.units:
            replaced[ctx.label] = next_start_context(
                ctx,
                reads.units[ctx.unit],
                reads.unit_which.get(ctx.unit, ()),
                command=ctx.unit in plan.exec_units,
                files_before=files.get(ctx.unit),
            )
    judged = in_changed_context(with_contexts(facts, replaced), plan, reads.activate)
    if reads.activate is None or plan.python is None:
        return judged
    serving = {c.label for c in facts.contexts if c.pid is not None}
    pythons = tuple(
        dataclasses.replace(p, context=reads.activate.label)
        if p.path == plan.python and p.context not in serving
        else p
        for p in judged.pythons
    )
    # first among the shells: an interpreter without a serving process is judged under the
    # first login-kind environment (tui.core.rules.evaluate.judging_context)
    shells = [i for i, c in enumerate(judged.contexts) if c.kind in ("current", "login", "ssh")]
    at = shells[0] if shells else len(judged.contexts)
    contexts = (*judged.contexts[:at], reads.activate, *judged.contexts[at:])
    return dataclasses.replace(judged, contexts=contexts, pythons=pythons)


def unit_problems(reads: EnvReads) -> tuple[str, ...]:
    """Why a unit the plan changed would not start next time (a missing environment file)."""
    return tuple(f"{unit}: {p}" for unit, start in reads.units.items() for p in start.problems)
