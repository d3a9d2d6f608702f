"""``align-cuda-wheels``: pin a venv's NVIDIA CUDA wheels to one minor, with undo.

``pip install "cuda-toolkit[nvcc,crt,nvvm,cccl]==<release>"``: NVIDIA's metapackage pins
every part of the pip toolkit (nvcc, crt, nvvm, CCCL) to that release exactly, so pip moves
the ones of another minor and leaves the runtime torch pinned (the release is chosen to match
it). Behind a check that some part is of another minor; a pip plan
(``tui.core.fixes.pipplan``) whose undo restores every package as ``pip freeze`` recorded it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from tui.core.facts import Facts, PythonEnv
from tui.core.findings.toolkit_headers_mismatch import (
    ID as FINDING_ID,
)
from tui.core.findings.toolkit_headers_mismatch import (
    PIP_PARTS,
    mismatched,
    mm,
    pip_owner,
    target_minor,
)
from tui.core.fixes.env_targets import pick_python
from tui.core.fixes.envset import EnvChange, make_plan
from tui.core.fixes.pipplan import pip_step
from tui.core.fixes.plan import FixError, FixPlan
from tui.core.fixes.record import Fix, Param
from tui.core.fixes.shell import host_path, q
from tui.core.hosts import Host
from tui.core.rules.subject import subjects
from tui.core.tables.cuda_toolkits import PIP_RELEASE_FOR_MINOR

FIX_ID = "align-cuda-wheels"
EXTRAS = "nvcc,crt,nvvm,cccl"
META = "cuda-toolkit"


def _check(py_cmd: str, minor: str) -> str:
    """sh that is true when every part present is already at ``minor``."""
    script = (
        "import importlib.metadata as m, sys\n"
        f"want = {minor!r}\n"
        f"for d in {tuple(PIP_PARTS)!r}:\n"
        "    try:\n"
        "        v = m.version(d)\n"
        "    except m.PackageNotFoundError:\n"
        "        continue\n"
        "    if '.'.join(v.split('.')[:2]) != want:\n"
        "        sys.exit(1)\n"
    )
    return f"{py_cmd} -I -c {q(script)}"


def align_cuda_wheels(
    facts: Facts, host: Host, params: Mapping[str, str], python: str | None, stamp: str
) -> FixPlan:
    py = pick_python(facts, python)
    if python is None:
        proposed = [p for p in facts.pythons if p.exists and choices(facts, p.path)]
        py = proposed[0] if proposed else py
    if py is None:
        raise FixError(f"no Python interpreter was probed on {host.name}; name one with python=")
    found = choices(facts, py.path)
    version = params.get("version") or (found[0]["version"] if found else "")
    minor = mm(version)
    if not version or minor is None or not version.startswith("13."):
        raise FixError(
            f"version={version!r}: name the cuda-toolkit release to pin to, e.g. version=13.0.2 "
            "(only CUDA 13 wheels make a pip toolkit)"
        )
    before = {d: py.packages[d] for d in (META, *PIP_PARTS) if d in py.packages}
    requirement = f"{META}[{EXTRAS}]=={version}"
    check = _check(host_path(host, py.path), minor)
    step = pip_step(
        host,
        py,
        stamp,
        title=f"Pin the CUDA wheels of {py.prefix or py.path} to cuda-toolkit {version}",
        args=[requirement],
        indexes=[],
        changes=(
            f"pip installs {requirement}: nvcc, crt, nvvm and CCCL of CUDA {minor} replace those "
            f"of other releases (before: {', '.join(f'{d} {v}' for d, v in before.items())})"
        ),
        unless=(check, f"every CUDA wheel is already CUDA {minor}"),
        check=check,
    )
    return make_plan(
        facts,
        host,
        FIX_ID,
        {"version": version},
        py,
        steps=(step,),
        verify=(FINDING_ID,),
        notes=(),
        change=EnvChange(),
        stamp=stamp,
    )


# -- the record: how the what-if tries and simulates it ---------------------------------------


def choices(facts: Facts, python: str | None) -> list[dict[str, str]]:
    """The newest cuda-toolkit release of the runtime's minor (as the pip install fix uses
    it), when the interpreter's JIT toolkit is a mismatched pip one."""
    for s in subjects(facts):
        if python is not None and (s.python is None or s.python.path != python):
            continue
        tk = s.jit_toolkit
        if tk is None or not mismatched(facts, tk) or pip_owner(facts, tk) is None:
            continue
        release = PIP_RELEASE_FOR_MINOR.get(target_minor(facts, tk) or "")
        if release:
            return [{"version": release}]
    return []


def _simulate(
    facts: Facts, params: Mapping[str, str], py: PythonEnv | None, labels: set[str]
) -> Facts:
    """The interpreter's pip toolkit parts all at the release's minor."""
    minor = mm(params["version"])
    owners = {p.path for p in facts.pythons if py is None or p.path == py.path}
    pythons = tuple(
        dataclasses.replace(
            p,
            packages={
                k: (params["version"] if k in PIP_PARTS else v) for k, v in p.packages.items()
            },
        )
        if p.path in owners
        else p
        for p in facts.pythons
    )
    fixed = dataclasses.replace(facts, pythons=pythons)
    toolkits = tuple(
        dataclasses.replace(tk, version=minor, full_version=None, headers_version=minor)
        if (owner := pip_owner(fixed, tk)) is not None and owner.path in owners
        else tk
        for tk in fixed.toolkits
    )
    return dataclasses.replace(fixed, toolkits=toolkits)


def _title(params: Mapping[str, str]) -> str:
    return (
        f"Pin the venv's NVIDIA CUDA wheels to cuda-toolkit {params['version']} "
        "(nvcc, runtime headers, crt, nvvm and CCCL of one release)"
    )


FIX = Fix(
    id=FIX_ID,
    order=3,
    params=(
        Param("version", "a cuda-toolkit release (default: the newest of the runtime's minor)"),
    ),
    plan=align_cuda_wheels,
    simulate=_simulate,
    choices=choices,
    title=lambda facts, params, python: _title(params),
)
