"""``upgrade-flashinfer``: ``pip install flashinfer-python==<version>`` (default the first release
that builds SM 12.0 as ``12.0a`` with CUDA 12.8, ``SM120_CUDA128_FIXED_IN``), where the
explanation of ``flashinfer-arch-rejected`` says the upgrade alone would fix it — that is, where
replaying that release on the host's facts passes.

An installed ``flashinfer-cubin`` moves to the same version (FlashInfer refuses a cubin package
of another version at import). ``flashinfer-jit-cache`` comes from FlashInfer's own per-CUDA
index, not from where pip finds ``flashinfer-python``: with it installed the fix is refused with
what to do by hand. A pip plan (``tui.core.fixes.pipplan``): ``pip freeze`` is recorded first and
the undo puts the old release back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from packaging.version import InvalidVersion, Version

from tui.core.facts import Facts, PythonEnv
from tui.core.findings import flashinfer_arch_rejected
from tui.core.fixes.env_targets import env_targets, pick_python
from tui.core.fixes.envset import EnvChange, make_plan
from tui.core.fixes.pipplan import pip_step
from tui.core.fixes.plan import FixError, FixPlan
from tui.core.fixes.record import Fix, Param
from tui.core.fixes.shell import host_path, q
from tui.core.fixes.simulate import python_env, with_python
from tui.core.hosts import Host
from tui.core.rules.subject import subjects
from tui.core.tables.flashinfer_eras import SM120_CUDA128_FIXED_IN

FIX_ID = "upgrade-flashinfer"
PACKAGE = "flashinfer-python"
CUBIN = "flashinfer-cubin"
# python -I -c INSTALLED VERSION: exit 0 when flashinfer-python is at VERSION already
INSTALLED = (
    "import importlib.metadata as m, sys\n"
    f"raise SystemExit(m.version({PACKAGE!r}) != sys.argv[1])\n"
)


def _version(params: Mapping[str, str]) -> str:
    value = params.get("version", "")
    try:
        ok = Version(value) >= Version(SM120_CUDA128_FIXED_IN)
    except InvalidVersion:
        ok = False
    if not ok:
        raise FixError(
            f"version={value or '?'}: pass a flashinfer-python release ≥ "
            f"{SM120_CUDA128_FIXED_IN}, e.g. version={SM120_CUDA128_FIXED_IN}"
        )
    return value


def upgrade_flashinfer(
    facts: Facts, host: Host, params: Mapping[str, str], python: str | None, stamp: str
) -> FixPlan:
    version = _version(params)
    py = pick_python(facts, python)
    if py is None or not py.flashinfer_version:
        raise FixError(f"no FlashInfer was probed on {host.name}; nothing to upgrade")
    if py.flashinfer_jit_cache_version:
        raise FixError(
            f"{py.path} has flashinfer-jit-cache {py.flashinfer_jit_cache_version}, which must "
            f"match flashinfer-python and comes from FlashInfer's own index for its CUDA: "
            f"upgrade both by hand (pip install {PACKAGE}=={version} flashinfer-jit-cache=="
            f"{version} --extra-index-url <that index>), or uninstall flashinfer-jit-cache first"
        )
    args = [f"{PACKAGE}=={version}"]
    if py.flashinfer_cubin_version:
        args.append(f"{CUBIN}=={version}")
    step = pip_step(
        host,
        py,
        stamp,
        title=f"Upgrade {PACKAGE} {py.flashinfer_version} → {version}",
        args=args,
        indexes=[],
        changes=(
            f"pip replaces {PACKAGE} {py.flashinfer_version} with {version}"
            + (f" (and {CUBIN} with the same version)" if py.flashinfer_cubin_version else "")
        ),
        unless=(
            f"{host_path(host, py.path)} -I -c {q(INSTALLED)} {q(version)} 2>/dev/null",
            f"{PACKAGE} is at {version} already",
        ),
    )
    units = tuple(u for u, _ctx in env_targets(facts, py).units)
    return make_plan(
        facts,
        host,
        FIX_ID,
        {"version": version},
        py,
        steps=(step,),
        verify=(flashinfer_arch_rejected.ID,),
        notes=tuple(
            f"{u} keeps FlashInfer {py.flashinfer_version} loaded until it restarts; the "
            "restart is offered separately."
            for u in units
        ),
        change=EnvChange(units=units),
        stamp=stamp,
    )


def _simulate(
    facts: Facts, params: Mapping[str, str], py: PythonEnv | None, labels: set[str]
) -> Facts:
    version = params["version"]
    return with_python(
        facts,
        py,
        lambda p: dataclasses.replace(
            p,
            flashinfer_version=version,
            flashinfer_cubin_version=version if p.flashinfer_cubin_version else None,
        ),
    )


def _choices(facts: Facts, python: str | None) -> list[dict[str, str]]:
    """The release the explanation names, where replaying it on this host passes."""
    py = python_env(facts, python)
    if py is None or py.flashinfer_jit_cache_version:
        return []
    if any(
        s.python is py and flashinfer_arch_rejected.upgrade_resolves(s) for s in subjects(facts)
    ):
        return [{"version": SM120_CUDA128_FIXED_IN}]
    return []


FIX = Fix(
    id=FIX_ID,
    order=12,
    params=(Param("version", f"the flashinfer-python release, ≥ {SM120_CUDA128_FIXED_IN}"),),
    plan=upgrade_flashinfer,
    simulate=_simulate,
    choices=_choices,
    title=lambda facts, params, python: f"Upgrade {PACKAGE} to {params['version']}",
)
