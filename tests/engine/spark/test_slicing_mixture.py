"""A sort group's task cuts from its files' zonemaps (engine.spark.slicing.mixture_quantiles)
by one sweep, against the (bounds x files) evaluation it replaces. No Spark needed."""

from __future__ import annotations

import numpy as np
import pytest

from engine.spark.slicing import boundaries, mixture_quantiles


def dense_mixture_quantiles(lows, highs, weights, fractions):
    """The (bounds x files) matrix evaluation: quadratic memory, the reference."""
    lo, hi, w = (np.asarray(v, dtype=float) for v in (lows, highs, weights))
    ok = np.isfinite(lo) & np.isfinite(hi) & (w > 0)
    lo, hi, w = lo[ok], hi[ok], w[ok]
    if not len(fractions) or w.sum() <= 0:
        return []
    xs = np.unique(np.concatenate([lo, hi]))
    width = np.maximum(hi - lo, 0.0)
    point = width == 0
    frac = np.where(point[None, :], (xs[:, None] >= lo[None, :]).astype(float),
                    np.clip((xs[:, None] - lo[None, :]) / np.where(point, 1.0, width)[None, :], 0.0, 1.0))
    cdf = (frac * w[None, :]).sum(axis=1) / w.sum()
    keep = np.concatenate([[True], np.diff(cdf) > 0])
    cuts = np.interp(np.asarray(fractions, dtype=float), cdf[keep], xs[keep])
    return boundaries(sorted(float(c) for c in cuts), len(cuts) + 1) if len(cuts) else []


@pytest.mark.parametrize("seed", range(20))
def test_sweep_cuts_equal_the_dense_evaluation(seed):
    rng = np.random.default_rng(seed)
    for n in (1, 2, 5, 30, 400):
        if seed % 2:  # integer bounds: ties, shared ends, zero-width files, gaps
            lo = rng.integers(0, 60, n).astype(float)
            hi = lo + rng.choice([0, 0, 1, 3, 20], n)
        else:
            lo = rng.uniform(-1e6, 1e6, n)
            hi = lo + np.where(rng.uniform(size=n) < 0.2, 0.0, rng.exponential(1e5, n))
        w = rng.integers(0, 100_000, n).astype(float)
        if seed % 5 == 0:
            lo[0] = np.nan  # unknown bounds are left out
        fractions = np.sort(rng.uniform(0, 1, int(rng.integers(1, 12)))).tolist()
        got, want = mixture_quantiles(lo, hi, w, fractions), dense_mixture_quantiles(lo, hi, w, fractions)
        span = float(np.nanmax(hi) - np.nanmin(lo)) or 1.0
        assert len(got) == len(want)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9 * span)


def test_cuts_on_a_hundred_thousand_files():
    # the matrix evaluation needs (2n x n) floats: 149 GiB here
    rng = np.random.default_rng(0)
    n = 100_000
    lo = rng.uniform(0, 1e6, n)
    cuts = mixture_quantiles(lo, lo + 1_000.0, np.full(n, 10_000.0), [0.25, 0.5, 0.75])
    assert len(cuts) == 3 and cuts == sorted(cuts)
    assert cuts[1] == pytest.approx(np.median(lo) + 500.0, rel=0.01)
