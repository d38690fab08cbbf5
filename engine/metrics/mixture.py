"""The row distribution a set of zonemap ranges implies, and its equal-row cut points.

Pruning estimates assume a partition's rows are uniform within its ``[min, max]``
(:mod:`engine.scan.pruning`), so the rows of several partitions follow a row-weighted
mixture of uniform ranges; a zero-width range (``min == max``, or a reversed one) is a
point mass at its ``min``. The mixture's CDF is piecewise linear between the distinct
range ends: its slope rises by ``w / width`` at each range's ``lo`` and falls by as much
at its ``hi``, and it jumps by ``w`` at a point mass. One sort of the ``2n`` ends and
cumulative sums give it at every end, O(n log n) time and O(n) memory (a matrix of ends x
ranges would be 2n^2 floats: 149 GiB at 100,000 partitions).

Precision: the CDF is exact (sums of the weights) at every end no positive-weight range
strictly contains, so a gap between clusters of ranges is a plateau of exactly equal
values and a cut that falls on it lands where a direct evaluation of the sum puts it;
inside a cluster it is the running integral of the slope (rounding of order
``eps * total weight``).

Example (300 rows on [0, 10], 100 rows on [10, 20], 100 rows at 25):
>>> import numpy as np
>>> cdf = mixture_cdf(np.array([0., 10., 25.]), np.array([10., 20., 25.]), np.array([300., 100., 100.]))
>>> cdf.points.tolist(), cdf.below.tolist(), cdf.at.tolist()
([0.0, 10.0, 20.0, 25.0], [0.0, 300.0, 400.0, 400.0], [0.0, 300.0, 400.0, 500.0])
>>> equal_weight_cuts(np.array([0., 10.]), np.array([10., 20.]), np.array([300., 100.]), 2).round(6).tolist()
[0.0, 6.666667, 20.0]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class MixtureCDF:
    """The mixture's CDF at its distinct range ends ``points`` (ascending): ``below[k]``
    the weight strictly below ``points[k]``, ``at[k]`` the weight at or below it (they
    differ by the point masses at ``points[k]``). Linear between consecutive points."""

    points: np.ndarray
    below: np.ndarray
    at: np.ndarray


def mixture_cdf(lo: np.ndarray, hi: np.ndarray, weights: np.ndarray) -> MixtureCDF:
    """The CDF of the row-weighted mixture of uniform ``[lo, hi]`` ranges (module
    docstring), by one sweep over the sorted ends. ``lo``, ``hi``, ``weights``: 1-D, same
    length, finite (callers drop unknown bounds first); weights are rows (>= 0)."""
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    points = np.unique(np.concatenate([lo, hi]))
    m = len(points)
    width = hi - lo
    spread = width > 0
    i_lo = np.searchsorted(points, lo)
    i_hi = np.searchsorted(points, hi)
    # point masses at lo: at[k] counts those at points <= points[k], below[k] those < points[k]
    masses = np.cumsum(np.bincount(i_lo[~spread], weights=w[~spread], minlength=m))
    below_mass = np.concatenate([[0.0], masses[:-1]])
    # spread ranges: slope on the gap (points[k], points[k+1]) is the sum of w / width over
    # the ranges with lo <= points[k] and hi >= points[k + 1]
    s_lo, s_hi, s_w = i_lo[spread], i_hi[spread], w[spread]
    rate = s_w / width[spread]
    slope = (np.cumsum(np.bincount(s_lo, weights=rate, minlength=m))
             - np.cumsum(np.bincount(s_hi, weights=rate, minlength=m)))
    live = s_w > 0
    active = (np.cumsum(np.bincount(s_lo[live], minlength=m))
              - np.cumsum(np.bincount(s_hi[live], minlength=m)))
    slope = np.where(active > 0, np.maximum(slope, 0.0), 0.0)
    rise = np.concatenate([[0.0], np.cumsum(slope[:-1] * np.diff(points))])
    # exact anchors: where no positive-weight range strictly contains points[k], the ramp
    # part of the CDF is the weight of the ranges ending at or below it
    full = np.cumsum(np.bincount(s_hi, weights=s_w, minlength=m))
    inside = np.concatenate([[0], np.cumsum(np.bincount(s_lo[live], minlength=m))[:-1]]) \
        - np.cumsum(np.bincount(s_hi[live], minlength=m))
    anchor = np.maximum.accumulate(np.where(inside <= 0, np.arange(m), 0)) if m else np.zeros(0, np.int64)
    ramp = np.maximum.accumulate(full[anchor] + (rise - rise[anchor])) if m else np.zeros(0)
    return MixtureCDF(points, ramp + below_mass, ramp + masses)


def equal_weight_cuts(lo: np.ndarray, hi: np.ndarray, weights: np.ndarray, slices: int) -> np.ndarray:
    """``slices + 1`` equal-weight cut points of the mixture: the inverse of its CDF at
    ``0, total / slices, ..., total``, linear between range ends, a point mass's value
    where the target falls inside its jump, the first end reaching a target that a
    plateau (a gap between ranges) holds; the first and last cuts are the smallest and
    largest ends. O(n log n + slices log n)."""
    cdf = mixture_cdf(lo, hi, weights)
    grid = cdf.points
    if len(grid) == 0:
        raise ValueError("equal_weight_cuts needs at least one range")
    xs = np.repeat(grid, 2)
    values = np.column_stack([cdf.below, cdf.at]).ravel()
    values = np.maximum.accumulate(values)
    targets = np.linspace(0.0, float(np.asarray(weights).sum()), slices + 1)
    k = np.searchsorted(values, targets, side="left")
    last = len(xs) - 1
    kk = np.clip(k, 1, last) if last >= 1 else np.zeros_like(k)
    prev = np.maximum(kk - 1, 0)
    step = values[kk] - values[prev]
    jump = (k == 0) | (k > last) | (xs[kk] == xs[prev]) | (step == 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        inner = xs[prev] + (targets - values[prev]) / np.where(jump, 1.0, step) * (xs[kk] - xs[prev])
    cuts = np.where(jump, xs[np.minimum(k, last)], inner)
    cuts[0], cuts[-1] = grid[0], grid[-1]
    return cuts
