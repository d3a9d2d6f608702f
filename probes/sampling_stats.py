"""Statistics that judge a token sampler against the exact distribution it should draw from.

Pure Python standard library, Python >= 3.8: this file is sent to GPU hosts inside the
validation script (``probes/validate_sampling.py``) and is imported by ``tui`` and the tests.

What a sampler is judged against
--------------------------------
``filtered_distribution`` computes FlashInfer's documented semantics exactly (float64):

- top-k keeps the k most probable tokens;
- top-p keeps token i iff the mass of the tokens strictly more probable than i is < top_p
  (the smallest prefix of the sorted distribution whose mass reaches top_p);
- min-p keeps token i iff p_i >= min_p * max(p);
- ``top_k_first`` applies top-k, renormalises, then top-p on the renormalised mass;
  ``joint`` keeps the tokens that pass top-k and top-p, both judged on the original probs.

The fixed cases below (``CASES``, ``case_rows``) keep every such decision far from its
threshold (``decision_margin`` >= ``MIN_MARGIN``), so float32 rounding in a kernel cannot flip
which tokens are allowed.

How a histogram is judged (``goodness_of_fit``), per distribution row
---------------------------------------------------------------------
1. Support: any sample of a token the filters exclude fails the row (exact, no statistics).
2. Fine chi-square: each allowed token is a cell; cells expected to get fewer than
   ``MIN_EXPECTED`` samples are pooled with their neighbours in rank. Catches a missing or an
   extra token, and local distortions.
3. Coarse chi-square: the allowed tokens in rank order are cut into ``COARSE_BINS`` bins of
   about equal expected mass. Catches smooth distortions (wrong temperature, mass moved from
   the tail to the head) that the fine test dilutes over many degrees of freedom.
4. Total variation on the fine cells, against the Bretagnolle–Huber–Carol bound
   ``sqrt((k ln 2 + ln(1/TV_DELTA)) / (2n))``: a distribution-free check whose false-failure
   probability is at most ``TV_DELTA`` whatever the chi-square approximation does.

The two chi-square tests share ``ALPHA`` (Bonferroni: ``ALPHA / 2`` each), so one correct row
fails with probability <= ALPHA + TV_DELTA (the chi-square part up to the accuracy of the
chi-square approximation; measured rates are in the README).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

ALPHA = 1e-5  # per-row significance, shared by the fine and the coarse chi-square tests
TV_DELTA = 1e-6  # per-row bound on the probability that a correct sampler fails the TV test
MIN_EXPECTED = 5.0  # expected count below which fine cells are pooled
COARSE_BINS = 16
MIN_MARGIN = 2e-4  # required distance of every filter decision from its threshold (see
# ``decision_margin``); float32 sums over a row err by ~1e-6 relative, so this is 100x safe
SAMPLES_PER_ROW = 1 << 18  # what the GPU draws per distribution row and case
ORDERS = ("top_k_first", "joint")


# -- the exact reference -------------------------------------------------------------------


def _normalised(probs: Sequence[float]) -> list[float]:
    total = math.fsum(probs)
    if not total > 0:
        raise ValueError("probabilities must have a positive sum")
    return [p / total for p in probs]


def _rank(probs: Sequence[float]) -> list[int]:
    """Token ids by decreasing probability (ties by id, as a stable sort gives)."""
    return sorted(range(len(probs)), key=lambda i: -probs[i])


def _mass_above(probs: Sequence[float], order: Sequence[int]) -> list[float]:
    """For each token, the mass of the tokens ranked before it (``order`` is ``_rank``)."""
    above = [0.0] * len(probs)
    acc = 0.0
    for i in order:
        above[i] = acc
        acc += probs[i]
    return above


def _keep_top_k(probs: Sequence[float], order: Sequence[int], k: int | None) -> list[bool]:
    keep = [True] * len(probs)
    if k is not None and 0 < k < len(probs):
        for i in order[k:]:
            keep[i] = False
    return keep


def filtered_distribution(
    probs: Sequence[float],
    *,
    top_k: int | None = None,
    top_p: float | None = None,
    min_p: float | None = None,
    order: str = "top_k_first",
) -> list[float]:
    """The distribution FlashInfer's sampler must draw from: filtered, renormalised, float64."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, not {order!r}")
    p = _normalised(probs)
    rank = _rank(p)
    keep = _keep_top_k(p, rank, top_k)
    if top_p is not None:
        basis, _ = _top_p_basis(p, rank, top_k, order)
        above = _mass_above(basis, rank)
        keep = [keep[i] and above[i] < top_p for i in range(len(p))]
    if min_p is not None:
        threshold = min_p * p[rank[0]]
        keep = [keep[i] and p[i] >= threshold for i in range(len(p))]
    return _normalised([p[i] if keep[i] else 0.0 for i in range(len(p))])


def _top_p_basis(p: Sequence[float], rank: Sequence[int], top_k: int | None, order: str):
    """The probabilities top-p is judged on, and which tokens it can still keep."""
    keep = _keep_top_k(p, rank, top_k)
    if order == "joint":
        return list(p), [i for i in rank if keep[i]]
    kept_mass = math.fsum(p[i] for i in range(len(p)) if keep[i])
    basis = [p[i] / kept_mass if keep[i] else 0.0 for i in range(len(p))]
    return basis, [i for i in rank if keep[i]]


def snap_filters(
    probs: Sequence[float],
    *,
    top_k: int | None = None,
    top_p: float | None = None,
    min_p: float | None = None,
    order: str = "top_k_first",
) -> dict[str, object]:
    """Move ``top_p``/``min_p`` to the middle of the gap they fall in for this row.

    The kept set stays what the requested value gives; the threshold just stops being
    within rounding distance of a token, so a float32 kernel and the float64 reference agree.
    """
    p = _normalised(probs)
    rank = _rank(p)
    snapped: dict[str, object] = {"top_k": top_k, "top_p": top_p, "min_p": min_p, "order": order}
    if top_p is not None:
        basis, candidates = _top_p_basis(p, rank, top_k, order)
        above = [0.0]
        for i in candidates:
            above.append(above[-1] + basis[i])
        kept = sum(1 for a in above[:-1] if a < top_p)
        if 0 < kept < len(candidates):
            snapped["top_p"] = (above[kept - 1] + above[kept]) / 2.0
    if min_p is not None:
        values = [p[i] for i in rank]
        threshold = min_p * values[0]
        kept = sum(1 for v in values if v >= threshold)
        if 0 < kept < len(values):
            snapped["min_p"] = (values[kept - 1] + values[kept]) / 2.0 / values[0]
    return snapped


def decision_margin(
    probs: Sequence[float],
    *,
    top_k: int | None = None,
    top_p: float | None = None,
    min_p: float | None = None,
    order: str = "top_k_first",
) -> float:
    """The smallest distance of any keep/drop decision from its threshold, relative to the
    quantity compared (probability for top-k, mass for top-p, the min-p cut for min-p).

    A case is only fair to a float32 kernel when this is far above float32 rounding.
    """
    p = _normalised(probs)
    rank = _rank(p)
    margins = [1.0]
    if top_k is not None and 0 < top_k < len(p):
        a, b = p[rank[top_k - 1]], p[rank[top_k]]
        margins.append((a - b) / a)
    if top_p is not None:
        basis, candidates = _top_p_basis(p, rank, top_k, order)
        above = _mass_above(basis, rank)
        margins.append(min(abs(above[i] - top_p) for i in candidates))
    if min_p is not None:
        cut = min_p * p[rank[0]]
        margins.append(min(abs(x - cut) for x in p) / cut)
    return min(margins)


# -- chi-square tail probability -------------------------------------------------------------


def _gamma_p_series(a: float, x: float) -> float:
    term = total = 1.0 / a
    n = a
    for _ in range(100000):
        n += 1.0
        term *= x / n
        total += term
        if abs(term) < abs(total) * 1e-16:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _gamma_q_fraction(a: float, x: float) -> float:
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 100000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return math.exp(-x + a * math.log(x) - math.lgamma(a)) * h


def chi2_sf(x: float, df: int) -> float:
    """P(X >= x) for X ~ chi-square with ``df`` degrees of freedom (regularised gamma Q)."""
    if df <= 0:
        raise ValueError("df must be positive")
    if x <= 0:
        return 1.0
    a, half = df / 2.0, x / 2.0
    if half < a + 1.0:
        return max(0.0, 1.0 - _gamma_p_series(a, half))
    return _gamma_q_fraction(a, half)


# -- judging one histogram -------------------------------------------------------------------


@dataclass
class FitResult:
    """The verdict on one distribution row. ``reasons`` is empty exactly when it passed."""

    n: int
    outside: int  # samples of tokens the filters exclude
    support: int  # how many tokens are allowed
    chi2: float
    df: int
    p_value: float  # fine chi-square
    coarse_chi2: float
    coarse_df: int
    coarse_p_value: float
    tv: float  # total variation between the observed and expected fine cells
    tv_bound: float
    reasons: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.reasons

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["passed"] = self.passed
        return data


def _pool(ranked: Sequence[int], expected: Sequence[float], minimum: float) -> list[list[int]]:
    """Group ranked tokens into cells whose expected count reaches ``minimum``."""
    cells: list[list[int]] = []
    current: list[int] = []
    mass = 0.0
    for i in ranked:
        current.append(i)
        mass += expected[i]
        if mass >= minimum:
            cells.append(current)
            current, mass = [], 0.0
    if current:
        if cells:
            cells[-1].extend(current)
        else:
            cells.append(current)
    return cells


def _coarse(ranked: Sequence[int], q: Sequence[float], bins: int) -> list[list[int]]:
    """Cut ranked tokens into at most ``bins`` groups of about equal expected mass."""
    groups: list[list[int]] = []
    current: list[int] = []
    acc = 0.0
    for i in ranked:
        current.append(i)
        acc += q[i]
        if acc >= (len(groups) + 1) / bins and len(groups) < bins - 1:
            groups.append(current)
            current = []
    if current:
        groups.append(current)
    return groups


def _chi2(cells: Sequence[Sequence[int]], counts: Sequence[int], expected: Sequence[float]):
    stat = 0.0
    for cell in cells:
        e = math.fsum(expected[i] for i in cell)
        o = sum(counts[i] for i in cell)
        stat += (o - e) ** 2 / e
    df = len(cells) - 1
    return stat, df, (chi2_sf(stat, df) if df > 0 else 1.0)


def tv_bound(categories: int, n: int, delta: float = TV_DELTA) -> float:
    """TV a correct sampler exceeds with probability <= delta (Bretagnolle–Huber–Carol)."""
    return math.sqrt((categories * math.log(2.0) + math.log(1.0 / delta)) / (2.0 * n))


def goodness_of_fit(
    counts: Sequence[int],
    q: Sequence[float],
    *,
    alpha: float = ALPHA,
    delta: float = TV_DELTA,
) -> FitResult:
    """Judge a histogram of samples (``counts[token]``) against the distribution ``q``."""
    if len(counts) != len(q):
        raise ValueError(f"counts has {len(counts)} tokens, the reference {len(q)}")
    n = sum(counts)
    support = [i for i in range(len(q)) if q[i] > 0.0]
    outside = n - sum(counts[i] for i in support)
    reasons: list[str] = []
    if n == 0:
        return FitResult(0, 0, len(support), 0.0, 0, 1.0, 0.0, 0, 1.0, 0.0, 1.0, ["no samples"])
    if outside:
        reasons.append(
            f"{outside} of {n} samples are tokens the filters exclude ({100.0 * outside / n:.3g}%)"
        )
    ranked = sorted(support, key=lambda i: -q[i])
    inside = n - outside
    expected = [x * inside for x in q]
    cells = _pool(ranked, expected, MIN_EXPECTED)
    chi2, df, p_fine = _chi2(cells, counts, expected)
    coarse = _coarse(ranked, q, COARSE_BINS)
    coarse_chi2, coarse_df, p_coarse = _chi2(coarse, counts, expected)
    if inside and p_fine < alpha / 2:
        reasons.append(f"fine chi-square {chi2:.1f} on {df} df: p={p_fine:.2e} < {alpha / 2:.1e}")
    if inside and p_coarse < alpha / 2:
        reasons.append(
            f"coarse chi-square {coarse_chi2:.1f} on {coarse_df} df:"
            f" p={p_coarse:.2e} < {alpha / 2:.1e}"
        )
    tv = 0.5 * (
        math.fsum(
            abs(sum(counts[i] for i in cell) / n - math.fsum(q[i] for i in cell)) for cell in cells
        )
        + outside / n
    )
    bound = tv_bound(len(cells) + 1, n, delta)
    if tv > bound:
        reasons.append(f"total variation {tv:.4f} > bound {bound:.4f}")
    return FitResult(
        n=n,
        outside=outside,
        support=len(support),
        chi2=chi2,
        df=df,
        p_value=p_fine,
        coarse_chi2=coarse_chi2,
        coarse_df=coarse_df,
        coarse_p_value=p_coarse,
        tv=tv,
        tv_bound=bound,
        reasons=reasons,
    )


# -- the fixed cases -------------------------------------------------------------------------


@dataclass(frozen=True)
class RowSpec:
    """One distribution: weights ``(rank + 1) ** -exponent`` (times ``head_boost`` for the
    first ``head`` ranks), assigned to token ids in a fixed shuffled order."""

    name: str
    exponent: float
    head: int = 0
    head_boost: float = 1.0
    seed: int = 0


@dataclass(frozen=True)
class Case:
    """One kernel call to validate: which function, its parameters, which rows."""

    kernel: str
    params: tuple[tuple[str, object], ...]
    vocab: int
    rows: tuple[RowSpec, ...]

    @property
    def name(self) -> str:
        order = dict(self.params).get("filter_apply_order")
        return f"{self.kernel}[{order}]" if order else self.kernel

    @property
    def targets(self) -> dict[str, object]:
        """The requested parameters as ``filtered_distribution`` keywords (before snapping)."""
        p = dict(self.params)
        return {
            "top_k": p.get("top_k"),
            "top_p": p.get("top_p"),
            "min_p": p.get("min_p"),
            "order": p.get("filter_apply_order", "top_k_first"),
        }


SMALL_VOCAB = 1024
LARGE_VOCAB = 131072  # >= 65536: FlashInfer >= 0.6.14 takes its top-k fast path here

SMALL_ROWS = (
    RowSpec("zipf-1.1", 1.1, seed=1),
    RowSpec("zipf-0.8", 0.8, seed=2),
    RowSpec("peaked", 1.3, head=3, head_boost=8.0, seed=3),
    RowSpec("zipf-1.6", 1.6, seed=4),
)
LARGE_ROWS = (RowSpec("zipf-1.0-128k", 1.0, seed=5), RowSpec("zipf-1.2-128k", 1.2, seed=6))

CASES = (
    Case("sampling_from_probs", (), SMALL_VOCAB, SMALL_ROWS),
    Case("top_k_sampling_from_probs", (("top_k", 20),), SMALL_VOCAB, SMALL_ROWS),
    Case("top_p_sampling_from_probs", (("top_p", 0.5),), SMALL_VOCAB, SMALL_ROWS),
    Case("min_p_sampling_from_probs", (("min_p", 0.04),), SMALL_VOCAB, SMALL_ROWS),
    Case(
        "top_k_top_p_sampling_from_probs",
        (("top_k", 40), ("top_p", 0.6), ("filter_apply_order", "top_k_first")),
        SMALL_VOCAB,
        SMALL_ROWS,
    ),
    Case(
        "top_k_top_p_sampling_from_probs",
        (("top_k", 40), ("top_p", 0.6), ("filter_apply_order", "joint")),
        SMALL_VOCAB,
        SMALL_ROWS,
    ),
    Case(
        "top_k_top_p_sampling_from_probs",
        (("top_k", 64), ("top_p", 0.9), ("filter_apply_order", "top_k_first")),
        LARGE_VOCAB,
        LARGE_ROWS,
    ),
)


def row_distribution(spec: RowSpec, vocab: int) -> list[float]:
    """The normalised probabilities of one fixed row (deterministic for a given spec)."""
    weights = [(r + 1) ** -spec.exponent for r in range(vocab)]
    for r in range(min(spec.head, vocab)):
        weights[r] *= spec.head_boost
    ids = list(range(vocab))
    random.Random(spec.seed).shuffle(ids)
    probs = [0.0] * vocab
    for r, token in enumerate(ids):
        probs[token] = weights[r]
    return _normalised(probs)


def case_rows(case: Case) -> list[list[float]]:
    return [row_distribution(spec, case.vocab) for spec in case.rows]


def row_filters(case: Case, probs: Sequence[float]) -> dict[str, object]:
    """The per-row parameters a kernel gets: the case's targets, snapped for this row."""
    return snap_filters(probs, **case.targets)
