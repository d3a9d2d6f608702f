"""Measure the sampling validation's false-failure rate and its power, at the GPU's sample size.

    python bench/bench_sampling_stats.py [--runs 1000] [--power-runs 50] [--samples 262144]

Simulates what ``probes/validate_sampling.py`` does on a GPU, with a correct sampler in place
of the kernels: every fixed case (``sampling_stats.CASES``), every row, ``--samples`` draws
per row, judged by ``sampling_stats.goodness_of_fit`` with the shipped thresholds. A run
fails when any row of any case fails, exactly as a validation run would.

- false failures: ``--runs`` seeded runs of the correct sampler (seed = run index);
- calibration: the fraction of row p-values below 0.01 / 0.05 (should be ~1% / ~5%);
- power: ``--power-runs`` seeded runs of each broken sampler of ``tests/broken_samplers.py``
  on the case it breaks — the fraction caught — and of weaker biases (temperature 1.005-1.02,
  0.25-1% of the mass moved to the top token), to show the smallest bias that is caught.

Draws with ``torch.multinomial`` when torch is importable (fast), else ``random.choices``.
Not a test: it asserts nothing. Prints a table; the figures go into the README.
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from broken_samplers import BROKEN, boosted_by, tempered_by  # noqa: E402

from probes import sampling_stats as stats  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


class Drawer:
    """Histograms of ``n`` draws from ``q`` under one seed."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.gen = torch.Generator().manual_seed(seed) if torch is not None else None

    def __call__(self, q: list[float], n: int) -> list[int]:
        support = [i for i, x in enumerate(q) if x > 0]
        if torch is not None:
            weights = torch.tensor([q[i] for i in support], dtype=torch.float64)
            picks = torch.multinomial(weights, n, replacement=True, generator=self.gen)
            local = (
                torch.zeros(len(support), dtype=torch.int64)
                .scatter_add_(0, picks, torch.ones_like(picks))
                .tolist()
            )
        else:
            cum = list(itertools.accumulate(q[i] for i in support))
            local = [0] * len(support)
            for j in self.rng.choices(range(len(support)), cum_weights=cum, k=n):
                local[j] += 1
        counts = [0] * len(q)
        for j, i in enumerate(support):
            counts[i] = local[j]
        return counts


def prepared() -> list[tuple[stats.Case, list[tuple[list[float], dict, list[float]]]]]:
    """Each case with its rows: (probs as float32 would give them, filters, reference)."""
    out = []
    for case in stats.CASES:
        rows = []
        for probs in stats.case_rows(case):
            filters = stats.row_filters(case, probs)
            rows.append((probs, filters, stats.filtered_distribution(probs, **filters)))
        out.append((case, rows))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--power-runs", type=int, default=50)
    ap.add_argument("--samples", type=int, default=stats.SAMPLES_PER_ROW)
    args = ap.parse_args()
    cases = prepared()
    rows_per_run = sum(len(rows) for _, rows in cases)
    print(
        f"sampler: {'torch.multinomial' if torch is not None else 'random.choices'}; "
        f"{len(cases)} cases, {rows_per_run} rows per run, {args.samples} samples per row; "
        f"ALPHA={stats.ALPHA:g} (fine and coarse chi-square {stats.ALPHA / 2:g} each), "
        f"TV_DELTA={stats.TV_DELTA:g}"
    )
    started = time.monotonic()
    failed_runs = 0
    by_test = {"support": 0, "fine": 0, "coarse": 0, "tv": 0}
    pvals: list[float] = []
    for run in range(args.runs):
        draw = Drawer(run)
        run_failed = False
        for _case, rows in cases:
            for _probs, _filters, q in rows:
                fit = stats.goodness_of_fit(draw(q, args.samples), q)
                pvals += [fit.p_value, fit.coarse_p_value]
                for reason in fit.reasons:
                    key = next(
                        (k for k, word in (("support", "exclude"), ("fine", "fine"),
                         ("coarse", "coarse"), ("tv", "variation")) if word in reason),
                        "tv",
                    )  # fmt: skip
                    by_test[key] += 1
                run_failed |= not fit.passed
        failed_runs += run_failed
    elapsed = time.monotonic() - started
    print(f"\ncorrect sampler: {failed_runs} of {args.runs} runs failed ({elapsed:.0f} s)")
    print(f"  row-test failures by test: {by_test} (of {args.runs * rows_per_run} rows)")
    for level in (0.01, 0.05):
        share = sum(p < level for p in pvals) / len(pvals)
        print(f"  p-values below {level}: {share:.4f} (uniform: {level})", flush=True)
    sweep = [("sampling_from_probs", tempered_by(t)) for t in (1.005, 1.01, 1.02)]
    sweep += [("sampling_from_probs", boosted_by(b)) for b in (0.0025, 0.005, 0.01)]
    print(f"\npower ({args.power_runs} runs each):")
    print(f"  {'case':48} {'broken sampler':18} caught")
    for name, distort in [*BROKEN, *sweep]:
        case, rows = next((c, r) for c, r in cases if c.name == name and c.vocab == 1024)
        caught = 0
        for run in range(args.power_runs):
            draw = Drawer(10_000 + run)
            fits = [
                stats.goodness_of_fit(draw(distort(probs, filters), args.samples), q)
                for probs, filters, q in rows
            ]
            caught += not all(f.passed for f in fits)
        print(f"  {case.name:48} {distort.__name__:18} {caught}/{args.power_runs}", flush=True)


if __name__ == "__main__":
    main()
