"""``install-cuda-torch``: replace a CPU-only torch with the CUDA build of the same release.

The CUDA variant is the newest one PyTorch publishes for that release which the driver runs
and which has kernels for every GPU (``tui.core.tables.torch_variants``); param ``cuda=12.8``
overrides it. A pip plan (``tui.core.fixes.pipplan``): the CUDA build comes from its variant's
index, and undo reinstalls the recorded ``+cpu`` build from the cpu index.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from tui.core.facts import Facts, PythonEnv
from tui.core.findings import torch_cpu_build
from tui.core.findings.torch_cpu_build import variant_for
from tui.core.fixes.env_targets import env_targets, pick_python
from tui.core.fixes.envset import EnvChange, make_plan
from tui.core.fixes.pipplan import pip_step, torch_indexes
from tui.core.fixes.plan import FixError, FixPlan
from tui.core.fixes.record import Fix, Param
from tui.core.fixes.simulate import python_env, with_python
from tui.core.hosts import Host
from tui.core.rules.subject import subjects
from tui.core.tables.torch_variants import CUDA_VARIANTS, is_cpu_build

FIX_ID = "install-cuda-torch"


def install_cuda_torch(
    facts: Facts, host: Host, params: Mapping[str, str], python: str | None, stamp: str
) -> FixPlan:
    py = pick_python(facts, python)
    if py is None or not is_cpu_build(py.torch_version, py.torch_cuda):
        raise FixError(f"no CPU-only torch was probed on {host.name}; nothing to replace")
    release = (py.torch_version or "").split("+")[0]
    cuda = params.get("cuda", "")
    known = CUDA_VARIANTS.get(".".join(release.split(".")[:2]), ())
    if cuda not in known:
        raise FixError(
            f"cuda={cuda or '?'}: torch {release} is published for CUDA "
            f"{', '.join(known) or 'no recorded variant'}; pass cuda= one of those"
        )
    variant = "cu" + cuda.replace(".", "")
    step = pip_step(
        host,
        py,
        stamp,
        title=f"Install torch {release}+{variant} in place of {py.torch_version}",
        args=[f"torch=={release}+{variant}"],
        indexes=torch_indexes(variant, "cpu"),
        changes=(
            f"pip replaces torch {py.torch_version} with {release}+{variant} and installs the "
            f"CUDA {cuda} libraries it needs (several GB)"
        ),
    )
    units = tuple(u for u, _ctx in env_targets(facts, py).units)
    return make_plan(
        facts,
        host,
        FIX_ID,
        {"cuda": cuda},
        py,
        steps=(step,),
        verify=(torch_cpu_build.ID,),
        notes=tuple(
            f"{u} keeps the CPU torch loaded until it restarts; the restart is offered separately."
            for u in units
        ),
        change=EnvChange(units=units),
        stamp=stamp,
    )


def _simulate(
    facts: Facts, params: Mapping[str, str], py: PythonEnv | None, labels: set[str]
) -> Facts:
    cuda = params["cuda"]
    return with_python(
        facts,
        py,
        lambda p: dataclasses.replace(
            p,
            torch_version=f"{(p.torch_version or '').split('+')[0]}+cu{cuda.replace('.', '')}",
            torch_cuda=cuda,
            torch_arch_list=None,
        ),
    )


def _choices(facts: Facts, python: str | None) -> list[dict[str, str]]:
    py = python_env(facts, python)
    subject = next((s for s in subjects(facts) if s.python is py), None)
    cuda = variant_for(facts, py, subject.devices) if py and subject else None
    return [{"cuda": cuda}] if cuda else []


FIX = Fix(
    id=FIX_ID,
    order=9,
    params=(Param("cuda", "the CUDA variant of torch to install, e.g. 12.8"),),
    plan=install_cuda_torch,
    simulate=_simulate,
    choices=_choices,
    title=lambda facts, params, python: (
        f"Install the CUDA {params['cuda']} build of the same torch release"
    ),
)
