"""``align-cuda-wheels``: pin a venv's NVIDIA CUDA wheels to one minor, with undo.

``pip install "cuda-toolkit[nvcc,crt,nvvm,cccl]==<release>"``: NVIDIA's metapackage pins
every part of the pip toolkit (nvcc, crt, nvvm, CCCL) to that release exactly, so pip moves
the ones of another minor and leaves the runtime torch pinned (the release is chosen to match
it). The undo puts back the versions the probe saw (and removes the wheels that were not
there).
"""

from __future__ import annotations

from collections.abc import Mapping

from tui.core.facts import Facts
from tui.core.fixes.envset import EnvChange, make_plan
from tui.core.fixes.plan import FixError, FixPlan, Step
from tui.core.fixes.shell import host_path, q, say_changed, say_unchanged
from tui.core.fixes.targets import SYSTEM_PREFIXES, pick_python
from tui.core.headers_whatif import FIX_ID, choices
from tui.core.hosts import Host
from tui.core.rules_headers import FINDING_ID, PIP_PARTS, mm

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
    if (py.prefix or "").rstrip("/") in (*SYSTEM_PREFIXES, ""):
        raise FixError(f"{py.path} is the system's Python, not a venv: pip would change the OS's")
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
    py_cmd = host_path(host, py.path)
    restore = [f"{d}=={v}" for d, v in before.items()]
    added = [d for d in (META, *PIP_PARTS) if d not in before]
    undo_lines = [
        f"{py_cmd} -m pip install --disable-pip-version-check " + " ".join(map(q, restore))
    ]
    if added:
        undo_lines.append(f"{py_cmd} -m pip uninstall -y " + " ".join(map(q, added)))
    undo_lines.append(say_changed("restored " + " ".join(restore + [f"-{d}" for d in added])))
    step = Step(
        title=f"Pin the CUDA wheels of {py.prefix or py.path} to cuda-toolkit {version}",
        command="\n".join(
            [
                f"if {_check(py_cmd, minor)}; then",
                f"  {say_unchanged(f'every CUDA wheel is already CUDA {minor}')}",
                "else",
                f"  {py_cmd} -m pip install --disable-pip-version-check {q(requirement)}",
                f"  {_check(py_cmd, minor)}",
                f"  {say_changed(f'installed {requirement}')}",
                "fi",
            ]
        ),
        undo="\n".join(undo_lines),
        changes=(
            f"pip installs {requirement}: nvcc, crt, nvvm and CCCL of CUDA {minor} replace those "
            f"of other releases (before: {', '.join(f'{d} {v}' for d, v in before.items())})"
        ),
        needs_root=False,
        deadline_s=1800.0,
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
