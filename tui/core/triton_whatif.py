"""What ``use-toolkit-ptxas-for-triton`` would change, for the what-if (``tui.core.whatif``).

The fix sets the override variables of the GPUs whose ptxas fails to a toolkit's ``bin/ptxas``;
its candidates are the ptxas of every toolkit the probe found executable, those of the driver's
CUDA major first, newest first (a cubin from a newer major's ptxas needs a newer driver).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

from packaging.version import InvalidVersion, Version

from tui.core.facts import EnvContext, Facts, PythonEnv
from tui.core.rules_triton import is_shell_name, plan_vars, triton_version

FIX_ID = "use-toolkit-ptxas-for-triton"


def env_change(facts: Facts, py: PythonEnv | None, path: str) -> Callable[[EnvContext], EnvContext]:
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


def choices(facts: Facts, python: str | None) -> list[dict[str, str]]:
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


def title(facts: Facts, params: Mapping[str, str], python: str | None) -> str:
    py = next((p for p in facts.pythons if p.path == python), None)
    names = " and ".join(plan_vars(facts, python))
    version = triton_version(py) if py else None
    triton = f"Triton {version}" if version else "Triton"
    return f"Set {names}={params['path']} ({triton} then uses that toolkit's ptxas)"
