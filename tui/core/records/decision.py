"""The ``decision`` transcript event: what the user answered to what, in one field set.

Every front end records a decision through ``record_decision`` (the CLI's prompts and
``--yes``, the fix wizard's and the fleet-fix screen's buttons, the quit dialog, host-key
trust). A decision event carries ``action`` and ``answer`` always, and of the other fields
those that apply (``None`` and empty ones are left out of the line):

- ``action``: ``fix``, ``undo``, ``restart``, ``quit`` or ``trust-host-key``
- ``answer``: ``yes``, ``no`` or ``refused`` (the tool refused before asking: ``reason`` says why)
- ``host``: the one host it is about; ``hosts``: every host it covers (a fleet: several)
- ``fix``: the fix id; ``undo``: the undo record id (one host's); ``units``: the units a
  restart restarts; ``reason``: why it was refused; ``details``: the action's own facts
  (a trusted key's type and fingerprint, the fixes running when quitting, a fleet run's
  ``at_once`` and ``stop_on_failure``)

``Decision.from_event`` also reads the shapes written before this one (``hosts=[…]`` or
``host=…`` with ``fleet=True``, no ``action`` on a fix or an undo, ``accepted`` for a trusted
key, no ``answer`` on a restart, which was recorded only when confirmed), so old transcripts
read the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, Protocol

Action = Literal["fix", "undo", "restart", "quit", "trust-host-key"]
Answer = Literal["yes", "no", "refused"]
KIND = "decision"
_OWN = ("action", "answer", "host", "hosts", "fix", "undo", "units", "reason", "details")
_HEAD = ("ts", "seq", "kind")
_OLD = ("fleet", "accepted")  # keys of the older shapes, read into the field set


class Recorder(Protocol):
    """Where events go: a ``Transcript`` or the runner's ``Session``."""

    def record(self, kind: str, **data: Any) -> None: ...


@dataclass(frozen=True)
class Decision:
    action: Action
    answer: Answer
    host: str | None = None
    hosts: tuple[str, ...] = ()
    fix: str | None = None
    undo: str | None = None
    units: tuple[str, ...] = ()
    reason: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "hosts", tuple(self.hosts))
        object.__setattr__(self, "units", tuple(self.units))
        object.__setattr__(self, "details", MappingProxyType(dict(self.details)))

    @classmethod
    def about(
        cls, action: Action, answer: Answer, hosts: tuple[str, ...] | list[str], **rest: Any
    ) -> Decision:
        """A decision covering ``hosts``: ``host`` set too when there is exactly one."""
        names = tuple(hosts)
        return cls(action, answer, host=names[0] if len(names) == 1 else None, hosts=names, **rest)

    def to_event(self) -> dict[str, Any]:
        """The event's fields (without ``ts``, ``seq``, ``kind``): the ones that apply."""
        out: dict[str, Any] = {"action": self.action, "answer": self.answer}
        for name in _OWN[2:]:
            value = getattr(self, name)
            if value:
                out[name] = dict(value) if name == "details" else value
        for name in ("hosts", "units"):
            if name in out:
                out[name] = list(out[name])
        return out

    @property
    def covers(self) -> tuple[str, ...]:
        """Every host it is about."""
        return self.hosts or ((self.host,) if self.host else ())

    @classmethod
    def from_event(cls, event: Mapping[str, Any]) -> Decision:
        """A ``decision`` event of any version as this record."""
        hosts = event.get("hosts") or ()
        rest = {k: v for k, v in event.items() if k not in (*_OWN, *_HEAD, *_OLD)}
        answer = event.get("answer")
        if answer is None and "accepted" in event:  # a trusted key, before this shape
            answer = "yes" if event["accepted"] else "no"
        if answer is None and event.get("action") == "restart":  # recorded only when yes
            answer = "yes"
        return cls(
            action=event.get("action") or _old_action(event),
            answer=answer or "no",
            host=event.get("host"),
            hosts=tuple(str(h) for h in hosts) if isinstance(hosts, list | tuple) else (),
            fix=event.get("fix"),
            undo=event.get("undo"),
            units=tuple(event.get("units") or ()),
            reason=event.get("reason"),
            details={**(event.get("details") or {}), **rest},
        )

    def summary(self) -> str:
        """``fix use-installed-toolkit on ct201, ct202: yes``: what was asked and the answer."""
        what = self.action
        name = self.fix if self.action in ("fix", "restart") else None
        if self.action == "undo" and self.undo:
            name = self.undo
        if name and name != what:
            what = f"{what} {name}"
        if self.units:
            what += f" ({', '.join(self.units)})"
        if len(self.covers) > 1:
            what += f" on {', '.join(self.covers)}"
        reason = f" ({self.reason})" if self.reason else ""
        return f"{what}: {self.answer}{reason}"


def _old_action(event: Mapping[str, Any]) -> Action:
    if event.get("undo"):
        return "undo"
    return "fix"


def record_decision(recorder: Recorder, decision: Decision) -> None:
    """The one writer of ``decision`` events."""
    recorder.record(KIND, **decision.to_event())
