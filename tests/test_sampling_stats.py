"""The statistics that judge FlashInfer's samplers, on CPU, with stdlib samplers.

A correct sampler (exact filtered distribution, ``random.choices``) must pass every fixed case;
deliberately broken samplers must fail the case their bug touches, for every seed tried.
All seeds are fixed, so these tests are deterministic; the false-failure rate measured over
many more seeds is in ``bench/bench_sampling_stats.py`` and the README.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import subprocess
from pathlib import Path

import pytest
from broken_samplers import BROKEN, Distorter, with_filters
from torch_venv import torch_python

from probes import sampling_stats as stats

N = 1 << 16  # samples per row here (the GPU draws 4x more: more power, same false rate)
SEEDS = (11, 22, 33)
PROBES = Path(__file__).resolve().parents[1] / "probes"


def draw(q: list[float], n: int, rng: random.Random) -> list[int]:
    """A histogram of ``n`` samples from ``q`` (the stdlib reference sampler)."""
    counts = [0] * len(q)
    for token in rng.choices(range(len(q)), cum_weights=list(itertools.accumulate(q)), k=n):
        counts[token] += 1
    return counts


def run_case(
    case: stats.Case, distort: Distorter | None, seed: int, n: int = N
) -> list[stats.FitResult]:
    rng = random.Random(seed)
    fits = []
    for probs in stats.case_rows(case):
        filters = stats.row_filters(case, probs)
        q = stats.filtered_distribution(probs, **filters)
        drawn_from = distort(probs, filters) if distort else q
        fits.append(stats.goodness_of_fit(draw(drawn_from, n, rng), q))
    return fits


def case(name: str, vocab: int = stats.SMALL_VOCAB) -> stats.Case:
    return next(c for c in stats.CASES if c.name == name and c.vocab == vocab)


@pytest.mark.parametrize(("name", "distort"), BROKEN, ids=lambda x: getattr(x, "__name__", x))
def test_every_broken_sampler_fails(name: str, distort: Distorter) -> None:
    for seed in SEEDS:
        fits = run_case(case(name), distort, seed)
        assert not all(f.passed for f in fits), (name, distort.__name__, seed)


@pytest.mark.parametrize("c", stats.CASES, ids=lambda c: f"{c.name}-{c.vocab}")
def test_the_correct_sampler_passes_every_case(c: stats.Case) -> None:
    for seed in SEEDS:
        for fit in run_case(c, None, seed):
            assert fit.passed, fit.reasons


def test_pvalues_of_the_correct_sampler_are_calibrated() -> None:
    """Under a correct sampler p-values are uniform: about 10% of them fall below 0.1."""
    fine, coarse = [], []
    for seed in range(16):
        for c in stats.CASES[:4]:
            for fit in run_case(c, None, 1000 + seed, n=1 << 13):
                fine.append(fit.p_value)
                coarse.append(fit.coarse_p_value)
    for pvals in (fine, coarse):
        below = sum(p < 0.1 for p in pvals) / len(pvals)
        assert 0.03 <= below <= 0.2, below
        assert 0.35 <= sum(pvals) / len(pvals) <= 0.65


# -- the reference and the cases -------------------------------------------------------------


def test_filtered_distribution_semantics_by_hand() -> None:
    p = [0.15, 0.5, 0.05, 0.3]
    approx = pytest.approx
    assert stats.filtered_distribution(p, top_k=2) == approx([0, 0.625, 0, 0.375])
    assert stats.filtered_distribution(p, top_p=0.7) == approx([0, 0.625, 0, 0.375])
    assert stats.filtered_distribution(p, top_p=0.81) == approx(
        [0.15 / 0.95, 0.5 / 0.95, 0, 0.3 / 0.95]
    )
    assert stats.filtered_distribution(p, min_p=0.3) == approx(
        [0.15 / 0.95, 0.5 / 0.95, 0, 0.3 / 0.95]
    )
    # top-k 3 keeps mass 0.95: top_k_first judges top-p on 0.5/0.95, 0.8/0.95 = 0.842 ...
    assert stats.filtered_distribution(p, top_k=3, top_p=0.82, order="top_k_first") == approx(
        [0, 0.625, 0, 0.375]
    )
    # ... joint on the original mass 0.8 < 0.82, so it keeps three tokens
    assert stats.filtered_distribution(p, top_k=3, top_p=0.82, order="joint") == approx(
        [0.15 / 0.95, 0.5 / 0.95, 0, 0.3 / 0.95]
    )
    with pytest.raises(ValueError, match="order must be"):
        stats.filtered_distribution(p, order="sideways")


def test_snapping_keeps_the_kept_set_and_moves_the_threshold_off_it() -> None:
    p = [0.15, 0.5, 0.05, 0.3]
    snapped = stats.snap_filters(p, top_p=0.79999)
    assert snapped["top_p"] == pytest.approx(0.65)  # between 0.5 and 0.8: still two tokens
    assert stats.decision_margin(p, top_p=0.79999) < 1e-4
    assert stats.decision_margin(p, **snapped) == pytest.approx(0.15)
    assert stats.snap_filters(p, min_p=0.3)["min_p"] == pytest.approx((0.15 + 0.05) / 2 / 0.5)


@pytest.mark.parametrize("c", stats.CASES, ids=lambda c: f"{c.name}-{c.vocab}")
def test_every_fixed_case_is_far_from_float32_ambiguity(c: stats.Case) -> None:
    for probs in stats.case_rows(c):
        f = stats.row_filters(c, probs)
        assert stats.decision_margin(probs, **f) >= stats.MIN_MARGIN
        assert len(set(probs)) == len(probs)  # no ties: top-k is unambiguous


def test_filter_orders_disagree_on_most_rows() -> None:
    """Otherwise a kernel applying the wrong order could not be caught."""
    c = case("top_k_top_p_sampling_from_probs[joint]")
    differ = 0
    for probs in stats.case_rows(c):
        f = stats.row_filters(c, probs)
        a = stats.filtered_distribution(probs, **f)
        b = stats.filtered_distribution(probs, **with_filters(f, order="top_k_first"))
        differ += sum(x > 0 for x in a) != sum(x > 0 for x in b)
    assert differ >= 2


def test_rows_have_a_long_tail() -> None:
    for probs in stats.case_rows(stats.CASES[0]):
        ranked = sorted(probs, reverse=True)
        assert ranked[0] > 100 * ranked[-1] > 0
        assert math.fsum(ranked[100:]) > 0.01


# -- the tests themselves ----------------------------------------------------------------------


def test_chi2_sf_matches_closed_forms() -> None:
    for x in (0.01, 0.5, 1.0, 3.84, 10.0, 40.0, 200.0):
        assert stats.chi2_sf(x, 1) == pytest.approx(
            math.erfc(math.sqrt(x / 2)), rel=1e-9, abs=1e-300
        )
        assert stats.chi2_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-9, abs=1e-300)
        assert stats.chi2_sf(x, 4) == pytest.approx(
            math.exp(-x / 2) * (1 + x / 2), rel=1e-9, abs=1e-300
        )
    assert stats.chi2_sf(0.0, 5) == 1.0
    # the median of chi-square(k) is about k(1 - 2/(9k))^3
    for k in (15, 100, 1023):
        assert stats.chi2_sf(k * (1 - 2 / (9 * k)) ** 3, k) == pytest.approx(0.5, abs=0.01)


def test_goodness_of_fit_exact_histogram_passes_and_outside_samples_fail() -> None:
    q = [0.5, 0.25, 0.125, 0.125, 0.0]
    exact = [5000, 2500, 1250, 1250, 0]
    fit = stats.goodness_of_fit(exact, q)
    assert fit.passed and fit.chi2 == 0.0 and fit.p_value == 1.0 and fit.tv == 0.0
    leaked = stats.goodness_of_fit([5000, 2500, 1250, 1249, 1], q)
    assert not leaked.passed and leaked.outside == 1
    assert "1 of 10000 samples are tokens the filters exclude" in leaked.reasons[0]
    skewed = stats.goodness_of_fit([6000, 2000, 1000, 1000, 0], q)
    assert not skewed.passed and any("chi-square" in r for r in skewed.reasons)
    assert not stats.goodness_of_fit([0] * 5, q).passed
    with pytest.raises(ValueError):
        stats.goodness_of_fit([1, 2], q)


def test_tv_bound_holds_its_promise_on_a_small_simulation() -> None:
    """The BHC bound at delta=0.05 is exceeded by a correct sampler in < 5% of runs."""
    q = [0.4, 0.3, 0.2, 0.1]
    rng = random.Random(5)
    over = 0
    for _ in range(400):
        counts = draw(q, 500, rng)
        tv = 0.5 * sum(abs(c / 500 - x) for c, x in zip(counts, q, strict=True))
        over += tv > stats.tv_bound(len(q) + 1, 500, 0.05)
    assert over / 400 < 0.05


# -- the same harness with torch (the remote script's code), when torch is available ------------


TORCH_HARNESS = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import torch
import sampling_stats as stats
import validate_sampling as v

torch.manual_seed(7)

def sampler(case, change=None, invalid_share=0.0):
    def sample(probs, per_row):
        rows = len(case.rows)
        unique = per_row[:rows]
        if change:
            unique = [dict(f, **change(f)) for f in unique]
        stacked = {k: ([f[k] for f in unique] if unique[0].get(k) is not None else None)
                   for k in ("top_p", "min_p")}
        stacked.update(top_k=unique[0].get("top_k"), order=unique[0].get("order"))
        ref = v.torch_reference(torch, probs[:rows], stacked)
        take = probs.shape[0] // rows
        ids = torch.multinomial(ref, take, replacement=True).t().reshape(-1)
        if not invalid_share:
            return ids, None
        valid = torch.rand(ids.shape[0]) >= invalid_share
        return torch.where(valid, ids, torch.full_like(ids, -1)), valid
    return sample

flip = lambda f: {"order": "joint" if f["order"] == "top_k_first" else "top_k_first"}
runs = [
    ("sampling_from_probs", None, 0.0),
    ("sampling_from_probs", None, 1e-4),  # a few samples flagged invalid: tolerated
    ("sampling_from_probs", "invalid", 0.01),  # too many: a broken kernel
    ("top_k_sampling_from_probs", None, 0.0),
    ("top_p_sampling_from_probs", None, 0.0),
    ("min_p_sampling_from_probs", None, 0.0),
    ("top_k_top_p_sampling_from_probs[top_k_first]", None, 0.0),
    ("top_k_top_p_sampling_from_probs[joint]", None, 0.0),
    ("top_p_sampling_from_probs", lambda f: {"top_p": None}, 0.0),
    ("top_k_sampling_from_probs", lambda f: {"top_k": f["top_k"] + 1}, 0.0),
    ("min_p_sampling_from_probs", lambda f: {"min_p": None}, 0.0),
    ("top_k_top_p_sampling_from_probs[joint]", flip, 0.0),
]
out = []
for name, change, invalid_share in runs:
    case = next(c for c in stats.CASES if c.name == name and c.vocab == stats.SMALL_VOCAB)
    callable_change = change if callable(change) else None
    rec = v.check_case(torch, case, sampler(case, callable_change, invalid_share), "cpu", 1 << 15)
    out.append({"name": name, "broken": change is not None, "verdict": rec["verdict"],
                "disagreement": rec["reference_disagreement"], "invalid": rec.get("invalid"),
                "message": rec.get("message")})
print(json.dumps(out))
"""


@pytest.mark.slow
def test_remote_harness_with_torch_reference_and_broken_torch_samplers() -> None:
    python = torch_python()
    proc = subprocess.run(
        [python, "-c", TORCH_HARNESS, str(PROBES)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    for r in results:
        assert r["disagreement"] <= 1e-9, r  # torch and stdlib references agree
        assert r["verdict"] == ("fail" if r["broken"] else "pass"), r
    assert results[1]["invalid"] > 0
    assert results[2]["message"].endswith("samples flagged invalid by the kernel")
