"""Fleet drift: hosts grouped by their stack, each broken group shown against the nearest
healthy one ("3 hosts differ from the 12 healthy ones only in nvcc 12.8").

A host's stack here is what decides its CUDA story — the driver's highest CUDA, torch's CUDA,
the nvcc on PATH, the CUDA FlashInfer's JIT resolves and the FlashInfer version — read from its
newest reached snapshot in the history. A group is healthy when its worst verdict is ``none``
or ``info``, broken at ``warning`` or ``critical``. The nearest healthy group differs in the
fewest of those values (ties: the larger group, then the first by name).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tui.core.records.history import Snapshot

DRIFT_KEYS = ("driver_cuda", "torch_cuda", "nvcc", "jit_cuda", "flashinfer")
KEY_WORDS = {
    "driver_cuda": "driver CUDA",
    "torch_cuda": "torch CUDA",
    "nvcc": "nvcc",
    "jit_cuda": "JIT CUDA",
    "flashinfer": "FlashInfer",
}
HEALTHY = ("none", "info")
_RANK = {"critical": 0, "warning": 1, "info": 2, "none": 3}


@dataclass(frozen=True)
class StackGroup:
    stack: tuple[str | None, ...]  # values in DRIFT_KEYS order
    hosts: tuple[str, ...]
    verdict: str  # the worst of its hosts'

    @property
    def healthy(self) -> bool:
        return self.verdict in HEALTHY

    def values(self) -> dict[str, str | None]:
        return dict(zip(DRIFT_KEYS, self.stack, strict=True))


def group(snaps: Sequence[Snapshot]) -> list[StackGroup]:
    """Judged, reached snapshots (one per host) grouped by stack and health (hosts of one
    stack that are broken and healthy make two groups), broken groups first."""
    by_stack: dict[tuple[tuple[str | None, ...], bool], list[Snapshot]] = {}
    for s in snaps:
        if s.facts is None or s.verdict is None:
            continue
        key = tuple(s.stack.get(k) for k in DRIFT_KEYS)
        by_stack.setdefault((key, s.verdict in HEALTHY), []).append(s)
    groups = [
        StackGroup(
            key,
            tuple(sorted(s.host for s in members)),
            min((s.verdict or "none" for s in members), key=lambda v: _RANK.get(v, 3)),
        )
        for (key, _), members in by_stack.items()
    ]
    return sorted(
        groups, key=lambda g: (g.healthy, _RANK.get(g.verdict, 3), -len(g.hosts), g.hosts)
    )


def _differences(a: StackGroup, b: StackGroup) -> list[tuple[str, str | None, str | None]]:
    return [(k, x, y) for k, x, y in zip(DRIFT_KEYS, a.stack, b.stack, strict=True) if x != y]


def nearest_healthy(broken: StackGroup, groups: Sequence[StackGroup]) -> StackGroup | None:
    healthy = [g for g in groups if g.healthy]
    if not healthy:
        return None
    return min(healthy, key=lambda g: (len(_differences(broken, g)), -len(g.hosts), g.hosts))


def _hosts(n: int, what: str = "") -> str:
    return f"{n} {what}host" + ("" if n == 1 else "s")


def words(broken: StackGroup, healthy: StackGroup | None) -> str:
    """ "3 hosts (a, b, c; critical) differ from the 12 healthy ones only in nvcc 12.8 (theirs:
    13.0)"."""
    who = f"{_hosts(len(broken.hosts))} ({', '.join(broken.hosts)}; {broken.verdict})"
    if healthy is None:
        return f"{who}: no healthy host to compare with"
    diffs = _differences(broken, healthy)
    one = len(broken.hosts) == 1
    other = f"the {_hosts(len(healthy.hosts), 'healthy ')} ({', '.join(healthy.hosts)})"
    if not diffs:
        verb = "shares" if one else "share"
        return f"{who} {verb} the stack of {other}: the difference is elsewhere (diff them)"
    said = ", ".join(f"{KEY_WORDS[k]} {v or '—'} vs {h or '—'}" for k, v, h in diffs)
    only = "only " if len(diffs) < len(DRIFT_KEYS) else ""
    return f"{who} {'differs' if one else 'differ'} from {other} {only}in {said}"


def drift_json(snaps: Sequence[Snapshot], not_reached: Sequence[str] = ()) -> dict[str, Any]:
    """``{"groups": [...], "drift": [...], "not_reached": [...]}`` (``drift --json``)."""
    groups = group(snaps)
    out: list[dict[str, Any]] = []
    for g in groups:
        if g.healthy:
            continue
        near = nearest_healthy(g, groups)
        out.append(
            {
                "hosts": list(g.hosts),
                "verdict": g.verdict,
                "stack": g.values(),
                "nearest_healthy": None
                if near is None
                else {"hosts": list(near.hosts), "stack": near.values()},
                "differences": []
                if near is None
                else [{"key": k, "value": v, "healthy": h} for k, v, h in _differences(g, near)],
                "words": words(g, near),
            }
        )
    return {
        "groups": [
            {
                "stack": g.values(),
                "hosts": list(g.hosts),
                "verdict": g.verdict,
                "healthy": g.healthy,
            }
            for g in groups
        ],
        "drift": out,
        "not_reached": list(not_reached),
    }
