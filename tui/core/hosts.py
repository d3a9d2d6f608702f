"""The ``Host`` type: one entry of the inventory (see ``tui.core.inventory`` for loading)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True)
class Host:
    name: str
    ssh: str | None = None  # ~/.ssh/config alias or [user@]host[:port]; None when local
    local: bool = False
    python: tuple[str, ...] = ()  # interpreters to inspect, besides discovered ones
    tags: tuple[str, ...] = ()
    root: str | None = None  # probe root prefix: inspect a mounted image / a fake host tree
    env: Mapping[str, str] = field(default_factory=dict)  # exported before the probe runs
    simulate: str | None = None  # demo fleet only: "unreachable" never answers
    source: str | None = None  # "hosts.yaml:12" — where it was defined, for error messages

    def __post_init__(self) -> None:
        object.__setattr__(self, "env", MappingProxyType(dict(self.env)))

    @property
    def target(self) -> str:
        """What to show as the connection target."""
        return "local" if self.local else (self.ssh or self.name)
