"""The ``Host`` type: one entry of the inventory (see ``tui.core.reach.inventory`` for loading)."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

DEMO_SOURCE = "demo fleet"  # Host.source of every host of the built-in demo fleet
DEMO_TARGET = "demo (simulated)"  # what a demo host shows as its connection target


@dataclass(frozen=True)
class Host:
    name: str
    ssh: str | None = None  # ~/.ssh/config alias or [user@]host[:port]; None when local
    local: bool = False
    python: tuple[str, ...] = ()  # interpreters to inspect, besides discovered ones
    tags: tuple[str, ...] = ()
    root: str | None = None  # probe root prefix: inspect a mounted image / a fake host tree
    env: Mapping[str, str] = field(default_factory=dict)  # exported before the probe runs
    # "tree": ``root`` is a fake host tree detective-tui built, whose stand-in programs
    # (nvidia-smi, nvcc) may run
    simulate: str | None = None
    # a transport of the host's own instead of SSH, local or exec (the demo fleet's host that
    # never answers: tui.demo.unreachable); never set from an inventory. It makes a
    # tui.core.reach.transport.Transport, which the pool checks (the base sits below reach)
    transport: Callable[[Host], object] | None = None
    source: str | None = None  # "hosts.yaml:12" — where it was defined, for error messages
    exec: tuple[str, ...] = ()  # a command (argv) that runs the script instead of SSH; one
    # word is SCRIPT_WORD (the script as one argument), ``{name}`` already filled in
    # where single values were written: "root" and "python <path>" → "hosts.yaml:14"
    origins: Mapping[str, str] = field(default_factory=dict)
    # a bad inventory entry: its ``file:line`` errors (one a line); never probed or changed
    invalid: str | None = None
    # a root-prefixed host's stand-ins for the machine's own tools (``systemctl``, ``dpkg``,
    # ``apt-get``, ``curl``): tool → the program a fix runs instead. Set only by the code that
    # built the host's tree (``tui.demo``, tests), never by an inventory or by a file found in
    # a tree; a root-prefixed host without one has that tool's steps refused or skipped.
    standins: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "env", MappingProxyType(dict(self.env)))
        object.__setattr__(self, "origins", MappingProxyType(dict(self.origins)))
        object.__setattr__(self, "standins", MappingProxyType(dict(self.standins)))

    def origin(self, key: str) -> str:
        """``file:line`` where ``key`` ("root", "python <path>") was set, else the host's."""
        return self.origins.get(key) or self.source or self.name

    @property
    def demo(self) -> bool:
        """A simulated host of the demo fleet (a fake tree probed locally, or one that never
        answers), not a machine."""
        return self.source == DEMO_SOURCE

    @property
    def fake_tree(self) -> bool:
        """Whether ``root`` is a fake host tree whose programs may run (the trust rule runs
        nothing from any other tree): the demo fleet's, or one marked ``simulate: tree``."""
        return bool(self.root) and (self.demo or self.simulate in ("tree", "shell"))

    @property
    def current_shell(self) -> bool:
        """Whether the probe judges the caller's own environment (``local``: detective-tui's
        shell; ``simulate: shell``: a fake tree whose ``env`` stands for that shell)."""
        return (self.local and not self.root) or (self.fake_tree and self.simulate == "shell")

    @property
    def target(self) -> str:
        """What to show as the connection target."""
        if self.exec:
            return " ".join(w if w == SCRIPT_WORD else shlex.quote(w) for w in self.exec)
        if self.demo:
            return DEMO_TARGET
        return "local" if self.local else (self.ssh or self.name)


SCRIPT_WORD = "{script}"  # the word of ``Host.exec`` that the script replaces
