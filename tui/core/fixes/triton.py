"""``use-toolkit-ptxas-for-triton``: point Triton's ptxas override at a toolkit's ptxas.

The variable is the one the installed Triton reads for the GPUs that fail
(``tui.core.tables.triton_ptxas``): ``TRITON_PTXAS_PATH``, or ``TRITON_PTXAS_BLACKWELL_PATH`` for
the GPUs a 3.6+ release gives its second ptxas. It is set where the program runs — each serving
unit's drop-in and the venv's ``activate`` (or the login profile) — with the undo and backups
of every environment fix.
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Callable, Mapping

from packaging.version import InvalidVersion, Version

from tui.core.facts import EnvContext, Facts, PythonEnv
from tui.core.findings.triton_ptxas_too_old import (
    ID as FINDING_ID,
)
from tui.core.findings.triton_ptxas_too_old import (
    is_shell_name,
    override_vars,
    plan_vars,
    ptxas_version,
    triton_version,
)
from tui.core.fixes.env_targets import env_targets, pick_python
from tui.core.fixes.envset import env_change, make_plan
from tui.core.fixes.plan import FixError, FixPlan
from tui.core.fixes.record import Fix, Param
from tui.core.fixes.simulate import with_env
from tui.core.hosts import Host
from tui.core.tables import ptxas_targets
from tui.core.tables.triton_ptxas import release_for

FIX_ID = "use-toolkit-ptxas-for-triton"


def _triton_python(facts: Facts, python: str | None) -> PythonEnv:
    if python is None:
        with_triton = [p for p in facts.pythons if p.exists and triton_version(p)]
        if with_triton:
            python = next(
                (p.path for p in with_triton if override_vars(facts, p.path)),
                with_triton[0].path,
            )
    py = pick_python(facts, python)
    if py is None or not triton_version(py):
        raise FixError(f"{py.path if py else 'no interpreter'}: Triton is not installed there")
    return py


def use_toolkit_ptxas_for_triton(
    facts: Facts, host: Host, params: Mapping[str, str], python: str | None, stamp: str
) -> FixPlan:
    path = params.get("path", "")
    if not path.startswith("/"):
        raise FixError(
            f"path={path!r}: name the ptxas to use by its absolute path, e.g. "
            "path=/usr/local/cuda-13.0/bin/ptxas"
        )
    path = posixpath.normpath(path)
    py = _triton_python(facts, python)
    triton = triton_version(py)
    match = release_for(triton)
    if match is None:
        raise FixError(f"triton {triton} is older than 3.0: not supported")
    found = ptxas_version(facts, path)
    if found is None or found.version is None:
        raise FixError(
            f"{path} is not a ptxas the probe ran or a toolkit's bin/ptxas: name an installed "
            "toolkit's ptxas (detective-tui diagnose lists them)"
        )
    if match.release.accepts_ptxas(found.version) is False:
        raise FixError(
            f"triton {triton} cannot use a CUDA {found.version} ptxas (it accepts "
            f"{match.release.accepted_ptxas()}): choose another toolkit or upgrade Triton"
        )
    names = plan_vars(facts, py.path)
    bad = [n for n in names if not is_shell_name(n)]
    if bad:
        raise FixError(
            f"triton {triton} reads {', '.join(bad)}, a name no shell or systemd unit can set; "
            "upgrade Triton to ≥ 3.6 (it reads TRITON_PTXAS_BLACKWELL_PATH) instead"
        )
    for cc_text in sorted({g.compute_cap for g in facts.gpus if g.compute_cap}):
        major, _, minor = cc_text.partition(".")
        sm = int(major) * 10 + int(minor)
        target = match.release.target(sm)
        if match.release.override_var(match.release.binary_for(sm)) not in names:
            continue
        if ptxas_targets.accepts(found.version, target) is False:
            raise FixError(
                f"{path} (CUDA {found.version}) cannot build sm_{target} either; choose a "
                f"toolkit ≥ {ptxas_targets.first_toolkit_for(target) or '?'}"
            )
    change = env_change(
        host,
        env_targets(facts, py),
        name="triton-ptxas",
        fix_id=FIX_ID,
        env=dict.fromkeys(names, path),
        stamp=stamp,
    )
    return make_plan(
        facts,
        host,
        FIX_ID,
        {"path": path},
        py,
        steps=change.steps,
        verify=(FINDING_ID,),
        notes=change.notes,
        change=change,
        stamp=stamp,
    )


# -- the record: how the what-if tries and simulates it ---------------------------------------


def _simulated_env(
    facts: Facts, py: PythonEnv | None, path: str
) -> Callable[[EnvContext], EnvContext]:
    names = plan_vars(facts, py.path if py else None)

    def change(ctx: EnvContext) -> EnvContext:
        return dataclasses.replace(ctx, vars={**ctx.vars, **dict.fromkeys(names, path)})

    return change


def _key(version: str | None, driver_major: int | None) -> tuple[int, tuple[int, ...]]:
    """Sort key: the driver's CUDA major first, then newest first."""
    try:
        v = Version(version or "0")
    except InvalidVersion:
        v = Version("0")
    return (0 if v.major == driver_major else 1), tuple(-n for n in v.release)


def _choices(facts: Facts, python: str | None) -> list[dict[str, str]]:
    """``{"path": <toolkit>/bin/ptxas}`` for each toolkit with an executable ptxas; none when
    no shell or unit can set the variable (triton 3.3's ``TRITON_PTXAS-BLACKWELL_PATH``)."""
    if not all(is_shell_name(name) for name in plan_vars(facts, python)):
        return []
    try:
        driver_major = Version(facts.driver.max_cuda or "").major
    except InvalidVersion:
        driver_major = None
    seen: dict[str, tuple[tuple, str]] = {}
    for tk in facts.toolkits:
        if not (tk.ptxas and tk.version and tk.exists) or tk.wrapper_of:
            continue
        ident = (tk.realpath or tk.home).rstrip("/")
        if ident in seen and tk.realpath:  # prefer the real directory to a symlink naming it
            continue
        seen[ident] = (_key(tk.version, driver_major), tk.ptxas)
    ranked = sorted(seen.values(), key=lambda item: item[0])
    return [{"path": path} for _key_, path in ranked]


def _title(facts: Facts, params: Mapping[str, str], python: str | None) -> str:
    py = next((p for p in facts.pythons if p.path == python), None)
    names = " and ".join(plan_vars(facts, python))
    version = triton_version(py) if py else None
    triton = f"Triton {version}" if version else "Triton"
    return f"Set {names}={params['path']} ({triton} then uses that toolkit's ptxas)"


FIX = Fix(
    id=FIX_ID,
    order=1,
    params=(Param("path", "a toolkit's bin/ptxas"),),
    plan=use_toolkit_ptxas_for_triton,
    simulate=lambda facts, params, py, labels: with_env(
        facts, labels, _simulated_env(facts, py, params["path"])
    ),
    choices=_choices,
    title=_title,
)
