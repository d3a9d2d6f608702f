"""Fix plans as data: the exact shell each step runs, what it changes, and how to undo it.

A plan is built without touching the host (``tui.core.fixes.build_plan``), shown to the
user as a preview, and only then run by ``tui.core.run.fix_executor.apply_plan``.

Step commands print ``@@dt changed <what>`` when they change something and
``@@dt unchanged <why>`` when a guard found the work already done; the executor uses these
lines to tell a first run from an idempotent re-run and to undo only what really changed.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from tui.core.fixes.confine import with_resolver
from tui.core.hosts import Host

CHANGED = "@@dt changed"
STEP_DEADLINE_S = 120.0  # a step's remote deadline unless it names its own
UNCHANGED = "@@dt unchanged"


class FixError(Exception):
    """A fix cannot be planned for this host (bad parameter, unsupported OS, nothing to change).

    The message says what was wrong and what to do instead.
    """


@dataclass(frozen=True)
class Step:
    title: str
    command: str  # exact POSIX sh, arguments quoted, paths carrying the host's root prefix
    undo: str | None  # exact sh reversing the step when it reported a change; None: no undo
    changes: str  # what the step changes, in words ("adds a drop-in …")
    needs_root: bool
    deadline_s: float = STEP_DEADLINE_S  # the remote deadline for this step


@dataclass(frozen=True)
class FixPlan:
    fix_id: str
    host: Host
    params: Mapping[str, str]
    steps: tuple[Step, ...]
    verify_gone: tuple[str, ...]  # finding ids that must be absent after the re-probe
    notes: tuple[str, ...] = ()
    python: str | None = None  # the interpreter the fix is for
    sudo: bool = False  # the login is not root: root steps run under `sudo -n`
    contexts: tuple[str, ...] = ()  # labels of the serving-process contexts the fix changes
    units: tuple[str, ...] = ()  # systemd units whose environment the fix changes (restart needed)
    activate: str | None = None  # host path of the venv activate script the fix edits
    profile: bool = False  # the fix edits the login profile (~/.bash_profile or ~/.profile)
    env_keys: tuple[str, ...] = ()  # the environment variables the fix sets
    exec_units: tuple[str, ...] = ()  # units whose ExecStart the fix rewrites
    stamp: str = ""  # timestamp used in backup names

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    @property
    def needs_root(self) -> bool:
        return any(s.needs_root for s in self.steps)

    def effective_command(self, step: Step) -> str:
        """The command as it runs: under ``set -e``; root steps through ``sudo -n`` when the
        login is not root; ``dt_in_root`` defined where the step resolves paths inside a root
        prefix (``tui.core.fixes.confine``)."""
        command = f"set -e\n{with_resolver(step.command)}"
        return as_root(command) if (step.needs_root and self.sudo) else command

    def preview_commands(self) -> tuple[str, ...]:
        return tuple(self.effective_command(s) for s in self.steps)


@dataclass(frozen=True)
class StepFlags:
    """What one step's output said about it (parsed from its ``@@dt`` lines)."""

    changed: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()


def as_root(command: str) -> str:
    """Wrap a command for a non-root login; ``-n`` makes sudo fail instead of asking."""
    return f"sudo -n sh -c {shlex.quote(command)}"


def shown_line(line: str) -> str:
    """A step's output line as a person reads it: the ``@@dt changed``/``unchanged`` markers
    the executor counts on become plain words."""
    for marker, word in ((CHANGED, "changed"), (UNCHANGED, "unchanged")):
        if line.startswith(marker + " "):
            return f"{word}: {line[len(marker) + 1 :]}"
    return line


def parse_flags(output: str) -> StepFlags:
    changed: list[str] = []
    unchanged: list[str] = []
    for line in output.splitlines():
        if line.startswith(CHANGED + " "):
            changed.append(line[len(CHANGED) + 1 :])
        elif line.startswith(UNCHANGED + " "):
            unchanged.append(line[len(UNCHANGED) + 1 :])
    return StepFlags(changed=tuple(changed), unchanged=tuple(unchanged))
