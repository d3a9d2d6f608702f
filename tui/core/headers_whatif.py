"""What ``align-cuda-wheels`` would change, for the what-if (``tui.core.whatif``).

It pins the pip wheels of a pip-assembled JIT toolkit (``site-packages/nvidia/cu13``) to one
CUDA minor — the runtime's, which torch pins — through NVIDIA's ``cuda-toolkit`` metapackage
of that minor: the interpreter's wheels and the toolkit's nvcc and headers then agree.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from tui.core.facts import Facts
from tui.core.rules_headers import PIP_PARTS, mismatched, mm, pip_owner, target_minor

FIX_ID = "align-cuda-wheels"


def choices(facts: Facts, python: str | None) -> list[dict[str, str]]:
    # the newest cuda-toolkit release of each minor, as the pip install fix uses it
    from tui.core.fixes.toolkit import PIP_RELEASE_FOR_MINOR
    from tui.core.subject import subjects

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


def apply(facts: Facts, params: Mapping[str, str], python: str | None) -> Facts:
    """The interpreter's pip toolkit parts all at the release's minor."""
    minor = mm(params["version"])
    owners = {p.path for p in facts.pythons if python is None or p.path == python}
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


def title(params: Mapping[str, str]) -> str:
    return (
        f"Pin the venv's NVIDIA CUDA wheels to cuda-toolkit {params['version']} "
        "(nvcc, runtime headers, crt, nvvm and CCCL of one release)"
    )
