"""How a fix plan's dry-run golden is spelled: the plan's commands with the path resolver that every
root-prefixed step starts with (tui.core.fixes.confine, tested on its own) folded to one line."""

from __future__ import annotations

from tui.core.fixes.confine import RESOLVER

RESOLVER_LINE = "dt_in_root() { … }"


def shown(plan) -> str:
    """The plan's preview commands as one golden string."""
    return "\n-----\n".join(plan.preview_commands()).replace(RESOLVER, RESOLVER_LINE)
