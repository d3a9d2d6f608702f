"""``match-extension-to-torch``: make a compiled extension and torch agree again.

By default the extension follows torch: pip picks the newest build of it whose requirements
accept the installed torch (pinned exactly, so torch itself stays), from torch's own index
when torch came from one. Extensions published only as source (flash-attn …) are rebuilt for
the installed torch instead. With ``torch=VERSION`` torch follows the extension. Either way
a pip plan whose undo restores every package (``tui.core.fixes.pipplan``).
"""

from __future__ import annotations

from collections.abc import Mapping

from tui.core.facts import ExtensionBuild, Facts, PythonEnv, extensions
from tui.core.findings import extension_torch_abi_mismatch
from tui.core.findings.extension_torch_abi_mismatch import extension_params
from tui.core.fixes.env_targets import env_targets, pick_python
from tui.core.fixes.envset import EnvChange, make_plan
from tui.core.fixes.pipplan import pip_step, torch_indexes
from tui.core.fixes.plan import FixError, FixPlan
from tui.core.fixes.record import Fix, Param
from tui.core.fixes.simulate import python_env, with_python
from tui.core.hosts import Host
from tui.core.tables.torch_index import variant

FIX_ID = "match-extension-to-torch"
VERIFY = (extension_torch_abi_mismatch.ID,)
# published on PyPI as source only: a wheel for the installed torch is built on the host
# (needs nvcc and takes long)
FROM_SOURCE = ("flash-attn", "causal-conv1d", "mamba-ssm", "apex")


def _extension(py: PythonEnv, package: str) -> ExtensionBuild:
    ext = next((e for e in py.extensions if e.name == package), None)
    if ext is None:
        known = ", ".join(e.name for e in py.extensions) or "none"
        raise FixError(
            f"{package} is not a compiled extension the probe found in {py.path} "
            f"(found: {known}); pass package= one of those"
        )
    return ext


def match_extension_to_torch(
    facts: Facts, host: Host, params: Mapping[str, str], python: str | None, stamp: str
) -> FixPlan:
    py = pick_python(facts, python)
    if py is None or not py.torch_version:
        raise FixError(
            f"no interpreter with torch was probed on {host.name}; name one with python="
        )
    package = params.get("package", "")
    if not package:
        raise FixError(f"{FIX_ID} needs package=<extension>[,<extension>…], e.g. package=xformers")
    exts = [_extension(py, name) for name in package.split(",")]
    torch = py.torch_version
    torch_variant = variant(torch)
    indexes = torch_indexes(torch_variant) if torch_variant else []
    wanted = params.get("torch")
    notes: list[str] = []
    steps = []
    if wanted:
        steps.append(
            pip_step(
                host,
                py,
                stamp,
                title=f"Install torch {wanted}, the torch {package} was built for",
                args=[f"torch=={wanted}"],
                indexes=indexes,
                changes=f"pip replaces torch {torch} with {wanted} (and what it pulls in)",
            )
        )
        notes.append(
            f"Other extensions of torch {torch} in this venv may then need rebuilding too; "
            "the re-probe checks each of them."
        )
    binary = [e.name for e in exts if e.name not in FROM_SOURCE]
    if binary and not wanted:
        steps.append(
            pip_step(
                host,
                py,
                stamp,
                title=f"Install the {', '.join(binary)} build(s) made for torch {torch}",
                args=["--upgrade", *binary, f"torch=={torch}"],
                indexes=indexes,
                changes=(
                    f"pip replaces {', '.join(binary)} with the newest release(s) that accept "
                    f"torch {torch} (torch stays)"
                ),
            )
        )
    for ext in exts:
        if wanted or ext.name not in FROM_SOURCE:
            continue
        if not ext.version:
            raise FixError(f"the probe read no version of {ext.name}; pass torch= instead")
        steps.append(
            pip_step(
                host,
                py,
                stamp,
                title=f"Rebuild {ext.name} {ext.version} against torch {torch}",
                args=[
                    "--no-build-isolation",
                    "--no-deps",
                    "--force-reinstall",
                    "--no-binary",
                    ext.name,
                    f"{ext.name}=={ext.version}",
                ],
                indexes=indexes,
                changes=f"pip builds {ext.name} {ext.version} from source against torch {torch}",
            )
        )
        notes.append(f"Building {ext.name} needs nvcc and can take an hour or more.")
    units = tuple(u for u, _ctx in env_targets(facts, py).units)
    notes += [
        f"{u} keeps the old modules loaded until it restarts; the restart is offered separately."
        for u in units
    ]
    params_out = {"package": package, **({"torch": wanted} if wanted else {})}
    return make_plan(
        facts,
        host,
        FIX_ID,
        params_out,
        py,
        steps=tuple(steps),
        verify=VERIFY,
        notes=tuple(notes),
        change=EnvChange(units=units),
        stamp=stamp,
    )


def _title(facts: Facts, params: Mapping[str, str], python: str | None) -> str:
    if params.get("torch"):
        return f"Install torch {params['torch']}, the torch {params['package']} was built for"
    return f"Install the {params['package']} build(s) made for the installed torch"


FIX = Fix(
    id=FIX_ID,
    order=8,
    params=(
        Param("package", "the extension(s), comma-separated"),
        Param("torch", "install this torch instead (the one the extension was built for)"),
    ),
    plan=match_extension_to_torch,
    simulate=lambda facts, params, py, labels: with_python(
        facts,
        py,
        lambda p: extensions.matched(p, params["package"].split(","), params.get("torch")),
    ),
    choices=lambda facts, python: extension_params(python_env(facts, python)),
    title=_title,
)
