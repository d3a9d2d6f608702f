"""``drop-cuda-compat-path``: stop loading the CUDA forward-compatibility libraries.

Where the compat directory comes from ``LD_LIBRARY_PATH``, that variable is set without it
for the serving unit (a drop-in) and the venv or login profile, as the toolkit fixes set
``CUDA_HOME``. Where an ``ld.so.conf.d`` file names it, the file is renamed aside (never
deleted) and the loader cache rebuilt with ``ldconfig``; undo renames it back. On a
root-prefixed host (a mounted image, a fake host) ``ldconfig`` is not run: the cache belongs
to the machine that boots that filesystem.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from tui.core.facts import Facts, PythonEnv
from tui.core.findings import cuda_compat_shadows_driver
from tui.core.findings.cuda_compat_shadows_driver import first_compat, is_compat_dir, without_compat
from tui.core.fixes.env_targets import env_targets, pick_python
from tui.core.fixes.envset import EnvChange, env_change, make_plan
from tui.core.fixes.plan import FixError, FixPlan, Step
from tui.core.fixes.record import Fix
from tui.core.fixes.shell import say_changed, say_unchanged, write_path
from tui.core.fixes.simulate import with_env
from tui.core.hosts import Host
from tui.core.rules.subject import judging_context

FIX_ID = "drop-cuda-compat-path"


def _ldconfig(host: Host) -> str:
    if host.root:
        return say_unchanged(
            f"skipped ldconfig: {host.name} is a filesystem under {host.root}; run ldconfig on "
            "the machine that runs it"
        )
    return "ldconfig"


def _conf_step(host: Host, conf: str, stamp: str) -> Step:
    path = write_path(host, conf)
    aside = write_path(host, f"{conf}.detective-tui-{stamp}.disabled")
    return Step(
        title=f"Move {conf} aside so the loader stops using its compat directory",
        command="\n".join(
            [
                f"if [ -f {path} ]; then",
                f"  mv {path} {aside}",
                f"  {_ldconfig(host)}",
                f"  {say_changed(f'moved {conf} aside')}",
                "else",
                f"  {say_unchanged(f'{conf} is already gone')}",
                "fi",
            ]
        ),
        undo="\n".join(
            [
                f"if [ -f {aside} ]; then",
                f"  mv {aside} {path}",
                f"  {_ldconfig(host)}",
                f"  {say_changed(f'restored {conf}')}",
                "fi",
            ]
        ),
        changes=f"renames {conf} to {conf}.detective-tui-{stamp}.disabled and rebuilds the "
        "loader cache",
        needs_root=True,
    )


def drop_cuda_compat_path(
    facts: Facts, host: Host, params: Mapping[str, str], python: str | None, stamp: str
) -> FixPlan:
    py = pick_python(facts, python)
    ctx = judging_context(facts, py) if py is not None else facts.context(None)
    load = first_compat(facts, ctx)
    if load is None:
        raise FixError(f"no CUDA compat libcuda loads ahead of the driver's on {host.name}")
    steps: list[Step] = []
    notes: list[str] = []
    change = EnvChange()
    if load.via == "LD_LIBRARY_PATH":
        value = without_compat((ctx.vars.get("LD_LIBRARY_PATH") if ctx else "") or "")
        change = env_change(
            host,
            env_targets(facts, py),
            name="compat",
            fix_id=FIX_ID,
            env={"LD_LIBRARY_PATH": value},
            stamp=stamp,
        )
        steps += change.steps
        notes += change.notes
    confs = sorted({f for f, d in facts.loader.ld_conf if is_compat_dir(d)})
    steps += [_conf_step(host, conf, stamp) for conf in confs]
    if not steps:
        raise FixError(
            f"nothing to change on {host.name}: the compat path is not set by a unit, "
            "profile or ld.so.conf.d file the probe read"
        )
    return make_plan(
        facts,
        host,
        FIX_ID,
        {},
        py,
        steps=tuple(steps),
        verify=(cuda_compat_shadows_driver.ID,),
        notes=tuple(notes),
        change=change,
        stamp=stamp,
    )


def _simulate(
    facts: Facts, params: Mapping[str, str], py: PythonEnv | None, labels: set[str]
) -> Facts:
    dropped = with_env(
        facts,
        labels,
        lambda c: dataclasses.replace(
            c,
            vars=dict(c.vars, LD_LIBRARY_PATH=without_compat(c.vars["LD_LIBRARY_PATH"]))
            if "LD_LIBRARY_PATH" in c.vars
            else c.vars,
        ),
    )
    conf = tuple(fd for fd in facts.loader.ld_conf if not is_compat_dir(fd[1]))
    return dataclasses.replace(dropped, loader=dataclasses.replace(facts.loader, ld_conf=conf))


FIX = Fix(
    id=FIX_ID,
    order=10,
    params=(),
    plan=drop_cuda_compat_path,
    simulate=_simulate,
    choices=lambda facts, python: [{}],
    title=lambda facts, params, python: (
        "Stop loading the CUDA forward-compatibility libcuda (LD_LIBRARY_PATH, ld.so.conf.d)"
    ),
)
