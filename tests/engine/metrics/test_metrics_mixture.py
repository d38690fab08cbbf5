"""The mixture-of-uniforms CDF by one sweep (engine.metrics.mixture) against the dense
evaluation it replaces: the same cut points on random ranges with ties, zero-width ranges,
gaps and zero weights, and exactly the same where a cut falls on a plateau."""

from __future__ import annotations

import numpy as np
import pytest

from engine.metrics.mixture import equal_weight_cuts, mixture_cdf


def dense_quantile_cuts(lo: np.ndarray, hi: np.ndarray, weights: np.ndarray, slices: int) -> np.ndarray:
    """The (ends x ranges) evaluation the planner used: quadratic memory, the reference."""
    lo, hi = lo.astype(np.float64), hi.astype(np.float64)
    grid = np.unique(np.concatenate([lo, hi]))
    width = hi - lo
    spread = width > 0
    ramp = (weights[spread][None, :] * np.clip(
        (grid[:, None] - lo[spread][None, :]) / width[spread][None, :], 0, 1)).sum(1)
    mass_lo, mass_w = lo[~spread], weights[~spread]
    left = ramp + (mass_w[None, :] * (mass_lo[None, :] < grid[:, None])).sum(1)
    right = ramp + (mass_w[None, :] * (mass_lo[None, :] <= grid[:, None])).sum(1)
    xs, cdf = np.repeat(grid, 2), np.column_stack([left, right]).ravel()
    targets = np.linspace(0.0, float(weights.sum()), slices + 1)
    cuts = np.empty(slices + 1)
    for n, target in enumerate(targets):
        k = int(np.searchsorted(cdf, target, side="left"))
        k = min(k, len(xs) - 1)  # (the last target may round above the sum)
        if k == 0 or xs[k] == xs[k - 1] or cdf[k] == cdf[k - 1]:
            cuts[n] = xs[min(k, len(xs) - 1)]
        else:
            cuts[n] = xs[k - 1] + (target - cdf[k - 1]) / (cdf[k] - cdf[k - 1]) * (xs[k] - xs[k - 1])
    cuts[0], cuts[-1] = grid[0], grid[-1]
    return cuts


def random_ranges(rng: np.random.Generator, n: int, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n ranges: integer ends (ties, shared ends, zero widths, gaps) or float ends, with
    integer row counts (some zero) or float weights."""
    if kind.startswith("int"):
        lo = rng.integers(0, 40, n).astype(np.float64)
        hi = lo + rng.choice([0, 0, 1, 2, 5, 13], n)
    else:
        lo = rng.uniform(-1e3, 1e3, n)
        hi = lo + np.where(rng.uniform(size=n) < 0.2, 0.0, rng.exponential(50.0, n))
    if kind.endswith("rows"):
        w = rng.integers(0, 5_000, n).astype(np.float64)
        w[0] = max(w[0], 1.0)
    else:
        w = rng.uniform(0.0, 10.0, n)
    return lo, hi, w


@pytest.mark.parametrize("kind", ["int_rows", "int_weights", "float_rows", "float_weights"])
@pytest.mark.parametrize("seed", range(12))
def test_sweep_cuts_equal_the_dense_evaluation(kind, seed):
    rng = np.random.default_rng(seed)
    for n in (1, 2, 3, 7, 40, 300):
        lo, hi, w = random_ranges(rng, n, kind)
        span = float(max(hi.max() - lo.min(), 1.0))
        for slices in (1, 2, 3, 4, 10, 64):
            want = dense_quantile_cuts(lo, hi, w, slices)
            got = equal_weight_cuts(lo, hi, w, slices)
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-9 * span, err_msg=f"n={n} slices={slices}")
            assert np.all(np.diff(got) >= 0)


def test_plateaus_and_point_masses_cut_exactly_where_the_dense_evaluation_does():
    # two clusters with a gap between them; a point mass in the gap; integer rows
    lo, hi = np.array([0.0, 1.0, 10.0, 5.0, 30.0]), np.array([3.0, 3.0, 20.0, 5.0, 30.0])
    w = np.array([100.0, 100.0, 200.0, 200.0, 200.0])
    ends = set(lo.tolist()) | set(hi.tolist())
    for slices in range(1, 17):
        got, want = equal_weight_cuts(lo, hi, w, slices), dense_quantile_cuts(lo, hi, w, slices)
        np.testing.assert_allclose(got, want, rtol=1e-12)
        # a cut on a range end (a plateau's start, a point mass) is that end, exactly
        assert [g for g, x in zip(got.tolist(), want.tolist()) if x in ends] == [x for x in want.tolist() if x in ends]
    # half the rows end at 3: the cut is the first value reaching them, not inside the gap
    assert equal_weight_cuts(np.array([0.0, 7.0]), np.array([3.0, 10.0]), np.array([50.0, 50.0]), 2).tolist() \
        == [0.0, 3.0, 10.0]


def test_cdf_values_at_the_ends():
    lo, hi, w = np.array([0.0, 0.0, 4.0, 2.0]), np.array([4.0, 2.0, 4.0, 2.0]), np.array([40.0, 10.0, 5.0, 7.0])
    cdf = mixture_cdf(lo, hi, w)
    assert cdf.points.tolist() == [0.0, 2.0, 4.0]
    # at 2: half of [0, 4] (20) + all of [0, 2] (10) below; the point mass at 2 (7) at it
    assert cdf.below.tolist() == [0.0, 30.0, 57.0]
    assert cdf.at.tolist() == [0.0, 37.0, 62.0]


def test_a_hundred_thousand_ranges_need_no_matrix():
    # the dense evaluation would need 2n x n floats (149 GiB at this size)
    rng = np.random.default_rng(3)
    n = 100_000
    lo = rng.uniform(0, 1, n)
    hi = lo + rng.uniform(0, 0.5, n)
    cuts = equal_weight_cuts(lo, hi, np.full(n, 1_000_000.0), n)
    assert len(cuts) == n + 1 and np.all(np.diff(cuts) >= 0)
    assert cuts[0] == lo.min() and cuts[-1] == hi.max()
