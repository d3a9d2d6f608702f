"""Move FlashInfer's JIT cache aside (never delete it) so it is rebuilt with the new toolkit.

The cache key has no CUDA version in it (flashinfer-logic.md §7): modules built by the old
nvcc are reused until the cache is moved.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from tui.core.facts import Facts, PythonEnv
from tui.core.fixes.env_targets import pick_python, serving_contexts
from tui.core.fixes.plan import FixError, FixPlan, Step
from tui.core.fixes.record import Fix
from tui.core.fixes.shell import (
    home_path,
    not_a_running_system,
    q,
    say_changed,
    say_unchanged,
    write_path,
)
from tui.core.fixes.simulate import python_env
from tui.core.hosts import Host

CACHE_TAIL = "/.cache/flashinfer"


def cache_bases(facts: Facts, py: PythonEnv | None) -> tuple[str, ...]:
    """Host paths of ``<base>/.cache/flashinfer`` directories the interpreter(s) use."""
    pythons = [py] if py is not None else list(facts.pythons)
    bases: list[str] = []
    for p in pythons:
        for d in p.jit_cache_dirs:
            cut = d.find(CACHE_TAIL)
            if cut >= 0:
                bases.append(d[: cut + len(CACHE_TAIL)])
    for ctx in serving_contexts(facts, py):
        base = ctx.vars.get("FLASHINFER_WORKSPACE_BASE")
        if base:
            bases.append(base.rstrip("/") + CACHE_TAIL)
    return tuple(dict.fromkeys(bases))


def _move_step(dir_expr: str, shown: str, stamp: str, needs_root: bool) -> Step:
    moved = f".moved-{stamp}"
    return Step(
        title=f"Move the FlashInfer JIT cache {shown} aside",
        command="\n".join(
            [
                f"d={dir_expr}",
                'if [ -e "$d" ]; then',
                f'  mv "$d" "$d"{q(moved)}',
                f"  {say_changed(f'moved {shown} to {shown}{moved}')}",
                "else",
                f"  {say_unchanged(f'no cache at {shown}')}",
                "fi",
            ]
        ),
        undo="\n".join(
            [
                f"d={dir_expr}",
                f'if [ ! -e "$d"{q(moved)} ]; then',
                f"  {say_unchanged(f'nothing of this fix run to move back ({shown}{moved})')}",
                'elif [ -e "$d" ]; then',
                f"  echo {q(f'{shown} was rebuilt since the move; move it away, undo again')} >&2",
                "  exit 1",
                "else",
                f'  mv "$d"{q(moved)} "$d"',
                f"  {say_changed(f'moved {shown}{moved} back to {shown}')}",
                "fi",
            ]
        ),
        changes=f"renames {shown} to {shown}{moved}; FlashInfer rebuilds its kernels on next use",
        needs_root=needs_root,
    )


def clear_flashinfer_jit_cache(
    facts: Facts, host: Host, params: Mapping[str, str], python: str | None, stamp: str
) -> FixPlan:
    py = pick_python(facts, python) if python is not None else None
    user_home = f"/home/{facts.host.user}/" if facts.host.user else None
    steps = []
    for base in cache_bases(facts, py):
        owned = user_home is not None and base.startswith(user_home)
        root = not facts.host.is_root and not owned
        steps.append(_move_step(write_path(host, base), base, stamp, needs_root=root))
    if not steps and host.root:  # $HOME here is the inspecting login's, not the image's
        raise FixError(
            f"no FlashInfer JIT cache was found, and {not_a_running_system(host)}: its "
            "~/.cache/flashinfer is not this login's; remove it inside the image"
        )
    if not steps:
        home_cache = home_path(host, ".cache/flashinfer")
        steps.append(_move_step(home_cache, "~/.cache/flashinfer", stamp, needs_root=False))
    return FixPlan(
        fix_id="clear-flashinfer-jit-cache",
        host=host,
        params={},
        steps=tuple(steps),
        verify_gone=(),
        notes=("A running server keeps the modules it already loaded until it restarts.",),
        python=py.path if py else None,
        sudo=not facts.host.is_root,
        stamp=stamp,
    )


def _simulate_clear(
    facts: Facts, params: Mapping[str, str], py: PythonEnv | None, labels: set[str]
) -> Facts:
    pythons = tuple(
        dataclasses.replace(p, jit_cache_dirs=()) if py is None or p.path == py.path else p
        for p in facts.pythons
    )
    return dataclasses.replace(facts, pythons=pythons)


def _clear_choices(facts: Facts, python: str | None) -> list[dict[str, str]]:
    py = python_env(facts, python)
    return [{}] if py is not None and py.jit_cache_dirs else []


FIX = Fix(
    id="clear-flashinfer-jit-cache",
    order=13,  # a follow-up after a toolkit change: it resolves nothing by itself
    params=(),
    plan=clear_flashinfer_jit_cache,
    simulate=_simulate_clear,
    choices=_clear_choices,
    title=lambda facts, params, python: (
        "Move FlashInfer's JIT cache aside so modules are rebuilt with the new toolkit"
    ),
)
