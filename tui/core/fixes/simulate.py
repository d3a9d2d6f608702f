"""The what-if's shared moves: which environments a fix changes, and changing them on a copy
of the facts (each fix record's ``simulate`` is made of these; ``tui.core.judge.whatif`` runs them).

A fix for an interpreter changes the shells (``SHELL_KINDS``) and the serving processes and
units that run it (``serves``); a restarted server sees the new environment.
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Callable

from packaging.version import Version

from tui.core.facts import EnvContext, Facts, PythonEnv, Toolkit
from tui.core.fixes.env_targets import SERVING_KINDS

SHELL_KINDS = ("current", "login", "ssh")


def python_env(facts: Facts, python: str | None) -> PythonEnv | None:
    """The interpreter a fix is for: ``python``, else the first with FlashInfer, else the
    first that exists."""
    if python is not None:
        return next((p for p in facts.pythons if p.path == python), None)
    with_fi = [p for p in facts.pythons if p.exists and p.flashinfer_version]
    existing = [p for p in facts.pythons if p.exists]
    return (with_fi or existing or [None])[0]


def serves(facts: Facts, ctx: EnvContext, py: PythonEnv | None) -> bool:
    """Is ``ctx`` a serving process or unit that runs ``py``?"""
    if ctx.kind not in SERVING_KINDS:
        return False
    if py is None:
        return True
    own = {p.context for p in facts.pythons if p.path == py.path}
    if ctx.label in own or ctx.exe == py.path:
        return True
    if py.prefix and (ctx.argv0 or "").startswith(py.prefix.rstrip("/") + "/"):
        return True
    units = {c.unit for c in facts.contexts if c.label in own and c.unit}
    return ctx.unit is not None and ctx.unit in units


def touched(facts: Facts, py: PythonEnv | None) -> set[str]:
    """Labels of the environments a fix for ``py`` changes: its servers and the shells."""
    return {c.label for c in facts.contexts if c.kind in SHELL_KINDS or serves(facts, c, py)}


def with_env(facts: Facts, labels: set[str], change: Callable[[EnvContext], EnvContext]) -> Facts:
    contexts = tuple(change(c) if c.label in labels else c for c in facts.contexts)
    return dataclasses.replace(facts, contexts=contexts)


def with_vars(facts: Facts, labels: set[str], **env: str) -> Facts:
    """The environments ``labels`` with ``env`` set."""
    return with_env(facts, labels, lambda c: dataclasses.replace(c, vars={**c.vars, **env}))


def point_at(facts: Facts, labels: set[str], home: str) -> Facts:
    """``CUDA_HOME`` and ``PATH`` of the environments ``labels`` at the toolkit ``home``."""
    nvcc = posixpath.join(home, "bin/nvcc")

    def change(ctx: EnvContext) -> EnvContext:
        path = ctx.vars.get("PATH")
        env = dict(ctx.vars, CUDA_HOME=home, PATH=f"{home}/bin" + (f":{path}" if path else ""))
        which = (nvcc, *(w for w in ctx.which_nvcc if w != nvcc))
        return dataclasses.replace(ctx, vars=env, which_nvcc=which)

    return with_env(facts, labels, change)


def add_toolkit(facts: Facts, home: str, version: str, full: str, source: str) -> Facts:
    """The facts with a toolkit installed at ``home`` (unchanged when one is there)."""
    if facts.toolkit_at(home) is not None:
        return facts
    tk = Toolkit(
        home=home,
        nvcc=posixpath.join(home, "bin/nvcc"),
        version=version,
        full_version=full,
        version_source="nvcc",
        sources=(source,),
    )
    return dataclasses.replace(facts, toolkits=(*facts.toolkits, tk))


def with_python(
    facts: Facts, py: PythonEnv | None, change: Callable[[PythonEnv], PythonEnv]
) -> Facts:
    """The facts with ``change`` applied to the interpreter ``py`` (none: unchanged)."""
    pythons = tuple(change(p) if py is not None and p.path == py.path else p for p in facts.pythons)
    return dataclasses.replace(facts, pythons=pythons)


def mm(version: str) -> str:
    v = Version(version)
    return f"{v.major}.{v.minor}"


def one(params: dict[str, str] | None) -> list[dict[str, str]]:
    """A single parameter set, or none."""
    return [params] if params else []
