"""``drop-shadowing-library-path``: take the shadowing directories out of ``LD_LIBRARY_PATH``.

Each serving unit gets a drop-in (or, with ``EnvironmentFile=``, an environment file of its
own) setting ``LD_LIBRARY_PATH`` to the value it starts with today minus those directories;
the venv's ``activate`` (or the login profile) gets the same for the shell's value, when the
shell has them. systemd and the shell keep the last assignment, so the old line stays where it
is, untouched, and undo removes only what the fix wrote.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

from tui.core.facts import EnvContext, Facts
from tui.core.findings.cuda_library_shadowed import ID as FINDING_ID
from tui.core.findings.cuda_library_shadowed import entries
from tui.core.fixes.env_targets import env_targets, pick_python
from tui.core.fixes.envset import EnvChange, env_change, make_plan
from tui.core.fixes.plan import FixError, FixPlan, Step
from tui.core.fixes.record import Fix, Param
from tui.core.fixes.simulate import with_env
from tui.core.hosts import Host

FIX_ID = "drop-shadowing-library-path"
NAME = "ld-path"
VAR = "LD_LIBRARY_PATH"


def _unit_value(facts: Facts, unit: str, ctx: EnvContext) -> str | None:
    """The value the unit starts with: its unit context's, else its process's."""
    for c in facts.contexts:
        if c.kind == "unit" and c.unit == unit and VAR in c.vars:
            return c.vars[VAR]
    return ctx.vars.get(VAR)


def _shell_value(facts: Facts) -> str | None:
    for kind in ("current", "login", "ssh"):
        for c in facts.contexts:
            if c.kind == kind and c.vars.get(VAR):
                return c.vars[VAR]
    return None


def drop_shadowing_library_path(
    facts: Facts, host: Host, params: Mapping[str, str], python: str | None, stamp: str
) -> FixPlan:
    py = pick_python(facts, python)
    entry = params.get("entry") or ":".join(entries(facts, py.path if py else None))
    if not entry:
        raise FixError(
            "no LD_LIBRARY_PATH entry shadows a CUDA library here; name one with "
            "entry=/usr/local/cuda-12.4/lib64"
        )
    if any(not d.startswith("/") for d in entry.split(":") if d):
        raise FixError(f"entry={entry!r}: name absolute directories, separated by ':'")
    targets = env_targets(facts, py)
    steps: list[Step] = []
    notes: list[str] = []
    units: list[tuple[str, EnvContext]] = []
    for unit, ctx in targets.units:
        value = _unit_value(facts, unit, ctx)
        if value is None or without(value, entry) == value:
            continue
        one = dataclasses.replace(targets, units=((unit, ctx),))
        change = env_change(
            host, one, name=NAME, fix_id=FIX_ID, env={VAR: without(value, entry)}, stamp=stamp
        )
        steps.append(change.steps[0])
        notes += change.notes[:1]
        units.append((unit, ctx))
    shell = _shell_value(facts)
    shell_change = EnvChange()
    if shell is not None and without(shell, entry) != shell:
        shell_change = env_change(
            host,
            dataclasses.replace(targets, units=()),
            name=NAME,
            fix_id=FIX_ID,
            env={VAR: without(shell, entry)},
            stamp=stamp,
        )
        steps += shell_change.steps
        notes += shell_change.notes
    if not steps:
        raise FixError(
            f"{entry} is in no LD_LIBRARY_PATH this fix can change (the serving units' or the "
            "shell's); remove it where it is set by hand"
        )
    change = EnvChange(
        steps=tuple(steps),
        notes=tuple(notes),
        units=tuple(u for u, _c in units),
        contexts=tuple(c.label for _u, c in units),
        activate=shell_change.activate,
        profile=shell_change.profile,
        env_keys=(VAR,),
    )
    return make_plan(
        facts,
        host,
        FIX_ID,
        {"entry": entry},
        py,
        steps=change.steps,
        verify=(FINDING_ID,),
        notes=change.notes,
        change=change,
        stamp=stamp,
    )


# -- the record: how the what-if tries and simulates it ---------------------------------------


def without(value: str, drop: str) -> str:
    """``value`` (a colon list) without the directories of ``drop`` (also a colon list)."""
    gone = {d.rstrip("/") or "/" for d in drop.split(":") if d}
    return ":".join(d for d in value.split(":") if (d.rstrip("/") or "/") not in gone)


def _simulated_env(entry: str) -> Callable[[EnvContext], EnvContext]:
    def change(ctx: EnvContext) -> EnvContext:
        value = ctx.vars.get("LD_LIBRARY_PATH")
        if value is None:
            return ctx
        env = {**ctx.vars, "LD_LIBRARY_PATH": without(value, entry)}
        mapped = () if ctx.pid is not None else ctx.mapped_libs
        return dataclasses.replace(ctx, vars=env, mapped_libs=mapped)

    return change


def _choices(facts: Facts, python: str | None) -> list[dict[str, str]]:
    found = entries(facts, python)
    return [{"entry": ":".join(found)}] if found else []


def _title(params: Mapping[str, str]) -> str:
    return f"Remove {params['entry']} from LD_LIBRARY_PATH where the interpreter runs"


FIX = Fix(
    id=FIX_ID,
    order=2,
    params=(Param("entry", "the LD_LIBRARY_PATH directories to drop (a colon list)"),),
    plan=drop_shadowing_library_path,
    simulate=lambda facts, params, py, labels: with_env(
        facts, labels, _simulated_env(params["entry"])
    ),
    choices=_choices,
    title=lambda facts, params, python: _title(params),
)
