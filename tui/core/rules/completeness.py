"""What a probe could not see. Every report (CLI text, ``--json``, Markdown, the TUI) shows
this list instead of an all-clear when it is not empty: a failed or partial probe never ends
in "No problems found"."""

from __future__ import annotations

from typing import Protocol

from tui.core.facts import Facts
from tui.core.hosts import Host


class Probed(Protocol):
    """What a probe left: its facts (None: none collected) and its error. The runner's
    ``ProbeResult`` is one (the rules stay below the runner that produces it)."""

    @property
    def facts(self) -> Facts | None: ...

    @property
    def error(self) -> str | None: ...


def unseen(result: Probed | None) -> tuple[str, ...]:
    """Why the facts of ``result`` may be missing something, one reason a line (empty: the
    probe saw everything it looks at)."""
    if result is None:
        return ()
    reasons: list[str] = []
    if result.error:
        reasons.append(result.error)
    facts = result.facts
    if facts is None:
        return tuple(reasons) or ("no facts were collected",)
    probe = facts.probe
    if not probe.complete and not result.error:
        reasons.append("the probe's output ended before its end record")
    reasons += [f"{step}: no answer before the step deadline" for step in probe.timed_out]
    reasons += list(probe.errors)
    reasons += [f"{what} (not run)" for what in probe.not_run]
    reasons += list(probe.cut)
    return tuple(dict.fromkeys(reasons))


def partial_verdict(reasons: tuple[str, ...]) -> str:
    """The line that replaces an all-clear for a partial probe."""
    more = f" (+{len(reasons) - 1} more)" if len(reasons) > 1 else ""
    return f"No findings in what the probe could see, but it could not see: {reasons[0]}{more}"


def inventory_problems(facts: Facts, host: Host) -> tuple[str, ...]:
    """Inventory ``python:`` interpreters the probe found missing or not executable, each
    naming the inventory line that lists it."""
    where = "this machine" if host.local else host.target
    out = []
    for py in facts.pythons:
        if py.source != "inventory":
            continue
        problem = "does not exist" if not py.exists else py.error
        if problem in ("does not exist", "not executable"):
            out.append(
                f"{host.origin(f'python {py.path}')}: `python: {py.path}` {problem} on {where}; "
                "correct the path in the inventory or remove it"
            )
    return tuple(out)


def root_problem(host: Host) -> str:
    """The error for a ``root:`` that is not a directory, naming the inventory line."""
    where = "this machine" if host.local else host.target
    return (
        f"{host.origin('root')}: `root: {host.root}` is not a directory on {where}; mount the "
        "filesystem there, or correct or remove `root:` in the inventory"
    )
