"""Sweep-line primitives over closed intervals ``[lo, hi]`` given as encoded arrays.

Everything here is O(n log n) in the number of intervals and works for float64 arrays
and numpy unicode arrays alike (see ``engine.core.logical_types``): the only operations used on the
values are sorting, ``searchsorted`` and equality. Callers pass only intervals with known
bounds (filter with ``ColumnZoneMap.valid`` first).

Closed intervals: two intervals that only touch at an endpoint overlap, and a point is
covered by every interval whose ``lo <= point <= hi``.

Example:
>>> import numpy as np
>>> lo, hi = np.array([0., 2., 4.]), np.array([2., 3., 5.])
>>> overlap_counts(lo, hi).tolist()
[1, 1, 0]
>>> partition_depths(lo, hi).tolist()
[2, 2, 1]
"""

from __future__ import annotations

import numpy as np


def normalize(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Arrays as ndarrays with ``lo <= hi`` (swapped where a statistic came in reversed)."""
    lo = np.asarray(lo)
    hi = np.asarray(hi)
    if lo.shape != hi.shape or lo.ndim != 1:
        raise ValueError("lo and hi must be 1-D arrays of the same length")
    if len(lo) and bool(np.any(lo > hi)):
        lo, hi = np.minimum(lo, hi), np.maximum(lo, hi)
    return lo, hi


class Sweep:
    """One sort of all 2n endpoints, shared by every metric of a column.

    ``pid_lo[i]`` / ``pid_hi[i]`` are the indices of interval i's endpoints among the
    sorted distinct endpoint values ``points``; ``le_lo[k] = #(lo <= points[k])``,
    ``le_hi[k] = #(hi <= points[k])`` and ``lt_hi[k] = #(hi < points[k])`` are prefix
    counts. Every metric is then a gather or a cumulative sum: no per-interval search.
    """

    def __init__(self, lo: np.ndarray, hi: np.ndarray) -> None:
        lo, hi = normalize(lo, hi)
        n = len(lo)
        self.n = n
        both = np.concatenate([lo, hi])
        order = np.argsort(both, kind="stable")  # timsort: fast on ingestion-ordered data
        ordered = both[order]
        new = np.ones(len(ordered), dtype=bool)
        if len(ordered) > 1:
            np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
        pid_sorted = np.cumsum(new) - 1
        pid = np.empty(len(ordered), dtype=np.int64)
        pid[order] = pid_sorted
        self.pid_lo = pid[:n]
        self.pid_hi = pid[n:]
        self.points = ordered[new]
        m = len(self.points)
        cnt_lo = np.bincount(self.pid_lo, minlength=m)
        cnt_hi = np.bincount(self.pid_hi, minlength=m)
        self.le_lo = np.cumsum(cnt_lo)
        self.le_hi = np.cumsum(cnt_hi)
        self.lt_hi = self.le_hi - cnt_hi

    def coverage(self) -> np.ndarray:
        """Number of intervals covering each distinct endpoint value."""
        return self.le_lo - self.lt_hi

    def overlaps(self) -> np.ndarray:
        """``others = (n - 1) - #{j: lo_j > hi_i} - #{j: hi_j < lo_i}``: the two excluded
        sets are disjoint and never contain ``i``."""
        if self.n == 0:
            return np.zeros(0, dtype=np.int64)
        starts_after = self.n - self.le_lo[self.pid_hi]
        ends_before = self.lt_hi[self.pid_lo]
        return (self.n - 1 - starts_after - ends_before).astype(np.int64)

    def depths(self) -> np.ndarray:
        """Coverage only rises at a left endpoint, so its maximum over ``[lo_i, hi_i]`` is
        reached at a distinct endpoint inside: a range-maximum query per interval."""
        if self.n == 0:
            return np.zeros(0, dtype=np.int64)
        cover = self.coverage().astype(np.int32 if self.n < 2**31 else np.int64)
        return range_max(cover, self.pid_lo, self.pid_hi).astype(np.int64)

    def profile(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """See :func:`profile_arrays`."""
        pts = self.points
        m = len(pts)
        if m == 0:
            return pts, pts, np.zeros(0, dtype=np.int64)
        depth_seq = np.empty(2 * m - 1, dtype=np.int64)
        depth_seq[0::2] = self.coverage()
        # open gap after p_k: lo <= p_k and hi >= p_{k+1}, i.e. #(lo<=p_k) - #(hi<=p_k)
        depth_seq[1::2] = self.le_lo[:-1] - self.le_hi[:-1]
        change = np.empty(len(depth_seq), dtype=bool)
        change[0] = True
        np.not_equal(depth_seq[1:], depth_seq[:-1], out=change[1:])
        first = np.flatnonzero(change)
        last = np.append(first[1:] - 1, len(depth_seq) - 1)
        # piece j is the point p_{j//2} when j is even, the gap (p_{j//2}, p_{j//2+1}) when odd
        return pts[first // 2], pts[(last + 1) // 2], depth_seq[first]


def overlap_counts(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Per interval, how many OTHER intervals intersect it (closed intervals)."""
    return Sweep(lo, hi).overlaps()


def range_max(values: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``max(values[left[i]:right[i] + 1])`` for every i (inclusive, left <= right).

    A sparse table built level by level and answered lazily: the queries whose length
    needs level k are answered when level k exists, then the level is dropped, so memory
    stays O(len(values)) while time is O(m log m + n).
    """
    out = np.empty(len(left), dtype=values.dtype)
    if len(left) == 0:
        return out
    length = right - left + 1
    level_of = np.floor(np.log2(length)).astype(np.int64)
    # floating log2 can be off by one at exact powers of two: fix both directions
    level_of[(1 << (level_of + 1)) <= length] += 1
    level_of[(1 << level_of) > length] -= 1
    # levels are < 64: as int8 keys numpy's stable sort is a radix sort (O(n), the same
    # permutation as a comparison sort of the int64 levels)
    order = np.argsort(level_of.astype(np.int8), kind="stable")
    bounds = np.searchsorted(level_of[order], np.arange(int(level_of.max()) + 2), side="left")
    table = values
    for k in range(int(level_of.max()) + 1):
        if k > 0:
            half = 1 << (k - 1)
            table = np.maximum(table[:-half], table[half:])
        idx = order[bounds[k]:bounds[k + 1]]
        if len(idx):
            span = 1 << k
            out[idx] = np.maximum(table[left[idx]], table[right[idx] - span + 1])
    return out


def partition_depths(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Per interval, the largest number of intervals covering any single value inside it
    (itself included)."""
    return Sweep(lo, hi).depths()


def profile_arrays(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The depth function over the value domain as maximal constant segments.

    Returns ``(starts, ends, depths)``. The depth function alternates between the distinct
    endpoints ``p_k`` (depth = coverage at the point) and the open gaps ``(p_k, p_k+1)``;
    consecutive pieces of equal depth are merged into one segment ``[start, end]``. A value
    shared by two neighbouring segments has the larger of their two depths (coverage at a
    point is never below the open gaps beside it). Gaps covered by nothing have depth 0.
    """
    return Sweep(lo, hi).profile()
