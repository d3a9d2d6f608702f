"""Where a fix changes the environment: serving units, unmanaged processes, the venv, the login.

FlashInfer in a server reads the server's environment, so a fix that only changed the SSH
session would report "fixed" while the server still starts with the old toolkit. This module
decides, from the facts, which environments an env-changing fix must reach.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from tui.core.facts import EnvContext, Facts, PythonEnv
from tui.core.facts.contexts import SYSTEMD_DEFAULT_PATH
from tui.core.fixes.plan import FixError

SERVING_KINDS = ("process", "unit")
SYSTEM_PREFIXES = ("/", "/usr", "/usr/local")


@dataclass(frozen=True)
class EnvTargets:
    units: tuple[tuple[str, EnvContext], ...]  # (unit name, a process of that unit)
    unmanaged: tuple[EnvContext, ...]  # serving processes no systemd unit owns
    activate: str | None  # host path of the venv's activate script
    profile: bool  # no venv: write the login profile snippet instead
    # unit → its EnvironmentFile= paths (they override Environment=, so a drop-in must add one)
    env_files: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def pick_python(facts: Facts, python: str | None) -> PythonEnv | None:
    """The interpreter a fix is for: the one named, else the first with FlashInfer."""
    if python is not None:
        for py in facts.pythons:
            if py.path == python:
                return py
        known = ", ".join(p.path for p in facts.pythons) or "none"
        raise FixError(f"interpreter {python} was not probed on this host (probed: {known})")
    with_fi = [p for p in facts.pythons if p.exists and p.flashinfer_version]
    if with_fi:
        return with_fi[0]
    existing = [p for p in facts.pythons if p.exists]
    return existing[0] if existing else None


def _serves(ctx: EnvContext, facts: Facts, py: PythonEnv | None) -> bool:
    """Does this serving process run ``py`` (any probe entry for the same interpreter path)?"""
    if py is None:
        return True
    if any(p.path == py.path and p.context == ctx.label for p in facts.pythons):
        return True
    if py.path in (ctx.exe, ctx.argv0):
        return True
    prefix = (py.prefix or "").rstrip("/")
    return bool(prefix and any((x or "").startswith(prefix + "/") for x in (ctx.exe, ctx.argv0)))


def serving_contexts(facts: Facts, py: PythonEnv | None) -> tuple[EnvContext, ...]:
    return tuple(
        c
        for c in facts.contexts
        if c.kind in SERVING_KINDS and c.pid is not None and _serves(c, facts, py)
    )


def venv_activate(py: PythonEnv | None) -> str | None:
    if py is None or not py.prefix:
        return None
    prefix = py.prefix.rstrip("/") or "/"
    if prefix in SYSTEM_PREFIXES or not py.path.startswith(prefix + "/bin/"):
        return None
    return prefix + "/bin/activate"


def env_targets(facts: Facts, py: PythonEnv | None) -> EnvTargets:
    units: dict[str, EnvContext] = {}
    unmanaged: list[EnvContext] = []
    for ctx in serving_contexts(facts, py):
        if ctx.unit:
            units.setdefault(ctx.unit, ctx)
        else:
            unmanaged.append(ctx)
    activate = venv_activate(py)
    return EnvTargets(
        units=tuple(units.items()),
        unmanaged=tuple(unmanaged),
        activate=activate,
        profile=activate is None,
        env_files=unit_env_files(facts, tuple(units)),
    )


def unit_env_files(facts: Facts, units: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """The ``EnvironmentFile=`` paths the probe found for each of ``units`` (its unit context)."""
    return {
        c.unit: c.env_files
        for c in facts.contexts
        if c.kind == "unit" and c.unit in units and c.env_files
    }


def unit_path_value(ctx: EnvContext, toolkit_bin: str) -> str:
    """The unit's PATH with ``toolkit_bin`` first and the old ``CUDA_HOME``'s bin dropped.

    systemd replaces PATH as a whole, so it starts from the process's current PATH. A system
    prefix (``/usr``: Debian's nvcc wrapper) is never dropped.
    """
    current = ctx.vars.get("PATH") or SYSTEMD_DEFAULT_PATH
    old_home = (ctx.vars.get("CUDA_HOME") or "").rstrip("/")
    drop = {toolkit_bin}
    if old_home and old_home not in SYSTEM_PREFIXES:
        drop.add(old_home + "/bin")
    rest = [p for p in current.split(":") if p and p not in drop]
    return ":".join([toolkit_bin, *rest])
