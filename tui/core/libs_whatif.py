"""What ``drop-shadowing-library-path`` would change, for the what-if (``tui.core.whatif``).

It removes the shadowing directories from ``LD_LIBRARY_PATH`` where the interpreter runs; a
serving process restarted that way has loaded nothing yet, so its mapped libraries are
forgotten and the rules resolve them as the loader would.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

from tui.core.facts import EnvContext, Facts
from tui.core.rules_libs import entries

FIX_ID = "drop-shadowing-library-path"


def without(value: str, drop: str) -> str:
    """``value`` (a colon list) without the directories of ``drop`` (also a colon list)."""
    gone = {d.rstrip("/") or "/" for d in drop.split(":") if d}
    return ":".join(d for d in value.split(":") if (d.rstrip("/") or "/") not in gone)


def env_change(entry: str) -> Callable[[EnvContext], EnvContext]:
    def change(ctx: EnvContext) -> EnvContext:
        value = ctx.vars.get("LD_LIBRARY_PATH")
        if value is None:
            return ctx
        env = {**ctx.vars, "LD_LIBRARY_PATH": without(value, entry)}
        mapped = () if ctx.pid is not None else ctx.mapped_libs
        return dataclasses.replace(ctx, vars=env, mapped_libs=mapped)

    return change


def choices(facts: Facts, python: str | None) -> list[dict[str, str]]:
    found = entries(facts, python)
    return [{"entry": ":".join(found)}] if found else []


def title(params: Mapping[str, str]) -> str:
    return f"Remove {params['entry']} from LD_LIBRARY_PATH where the interpreter runs"
