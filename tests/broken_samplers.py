"""Deliberately broken samplers: each gives the distribution a plausible kernel bug would
draw from, for the statistics tests (``test_sampling_stats.py``) and the false-failure and
power benchmark (``bench/bench_sampling_stats.py``). Standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from probes import sampling_stats as stats

Filters = dict[str, object]
Distorter = Callable[[list[float], Filters], list[float]]


def with_filters(filters: Filters, **changes: object) -> Filters:
    return {**filters, **changes}


def ignores_top_p(probs: list[float], f: Filters) -> list[float]:
    return stats.filtered_distribution(probs, **with_filters(f, top_p=None))


def top_k_plus_one(probs: list[float], f: Filters) -> list[float]:
    return stats.filtered_distribution(probs, **with_filters(f, top_k=int(f["top_k"]) + 1))


def top_k_minus_one(probs: list[float], f: Filters) -> list[float]:
    return stats.filtered_distribution(probs, **with_filters(f, top_k=int(f["top_k"]) - 1))


def ignores_min_p(probs: list[float], f: Filters) -> list[float]:
    return stats.filtered_distribution(probs, **with_filters(f, min_p=None))


def wrong_order(probs: list[float], f: Filters) -> list[float]:
    other = "joint" if f["order"] == "top_k_first" else "top_k_first"
    return stats.filtered_distribution(probs, **with_filters(f, order=other))


def tempered_by(temperature: float) -> Distorter:
    """Right support, wrong shape: the kept probabilities raised to 1/temperature (a kernel
    applying a stray temperature)."""

    def tempered(probs: list[float], f: Filters) -> list[float]:
        q = stats.filtered_distribution(probs, **f)
        w = [x ** (1 / temperature) if x > 0 else 0.0 for x in q]
        return [x / math.fsum(w) for x in w]

    tempered.__name__ = f"tempered_{temperature:g}"
    return tempered


def boosted_by(share: float) -> Distorter:
    """Right support, ``share`` of the mass moved to the most probable token."""

    def top_token_boost(probs: list[float], f: Filters) -> list[float]:
        q = stats.filtered_distribution(probs, **f)
        top = max(range(len(q)), key=q.__getitem__)
        return [(1 - share) * x + (share if i == top else 0.0) for i, x in enumerate(q)]

    top_token_boost.__name__ = f"top_boost_{share:g}"
    return top_token_boost


tempered = tempered_by(1.15)
top_token_boost = boosted_by(0.03)


def tail_cut(probs: list[float], f: Filters) -> list[float]:
    """A uniform draw scaled short of 1: the last 2% of the cumulative mass is never hit."""
    q = stats.filtered_distribution(probs, **f)
    order = sorted(range(len(q)), key=lambda i: -q[i])
    out, acc = [0.0] * len(q), 0.0
    for i in order:
        out[i] = max(0.0, min(q[i], 0.98 - acc))
        acc += q[i]
    return [x / math.fsum(out) for x in out]


# (case name, distortion): each must fail that case
BROKEN = [
    ("top_p_sampling_from_probs", ignores_top_p),
    ("top_k_top_p_sampling_from_probs[top_k_first]", ignores_top_p),
    ("top_k_sampling_from_probs", top_k_plus_one),
    ("top_k_sampling_from_probs", top_k_minus_one),
    ("top_k_top_p_sampling_from_probs[joint]", top_k_plus_one),
    ("min_p_sampling_from_probs", ignores_min_p),
    ("top_k_top_p_sampling_from_probs[top_k_first]", wrong_order),
    ("top_k_top_p_sampling_from_probs[joint]", wrong_order),
    ("sampling_from_probs", tempered),
    ("sampling_from_probs", top_token_boost),
    ("sampling_from_probs", tail_cut),
    ("top_k_sampling_from_probs", tempered),
    ("top_p_sampling_from_probs", top_token_boost),
]
