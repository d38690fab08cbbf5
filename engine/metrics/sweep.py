"""Sweep-line primitives over closed intervals ``[lo, hi]`` given as encoded arrays.

Everything here is O(n log n) in the number of intervals and works for float64 arrays
and numpy unicode arrays alike (see ``engine.values``): the only operations used on the
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


def distinct_points(sorted_lo: np.ndarray, sorted_hi: np.ndarray) -> np.ndarray:
    """Sorted distinct endpoint values (a merge of two sorted arrays, ~linear)."""
    both = np.concatenate([sorted_lo, sorted_hi])
    both.sort(kind="stable")  # timsort/radix: two sorted runs merge in linear time
    if len(both) == 0:
        return both
    keep = np.empty(len(both), dtype=bool)
    keep[0] = True
    np.not_equal(both[1:], both[:-1], out=keep[1:])
    return both[keep]


def overlap_counts(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Per interval, how many OTHER intervals intersect it (closed intervals).

    ``others = (n - 1) - #{j: lo_j > hi_i} - #{j: hi_j < lo_i}``; the two excluded sets are
    disjoint and never contain ``i``, so two sorts and two binary searches suffice.
    """
    lo, hi = normalize(lo, hi)
    n = len(lo)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    slo = np.sort(lo)
    shi = np.sort(hi)
    starts_after = n - np.searchsorted(slo, hi, side="right")
    ends_before = np.searchsorted(shi, lo, side="left")
    return (n - 1 - starts_after - ends_before).astype(np.int64)


def point_coverage(lo: np.ndarray, hi: np.ndarray, points: np.ndarray,
                   sorted_lo: np.ndarray | None = None,
                   sorted_hi: np.ndarray | None = None) -> np.ndarray:
    """How many intervals cover each of ``points`` (closed): #(lo <= p) - #(hi < p)."""
    slo = np.sort(lo) if sorted_lo is None else sorted_lo
    shi = np.sort(hi) if sorted_hi is None else sorted_hi
    return (np.searchsorted(slo, points, side="right")
            - np.searchsorted(shi, points, side="left")).astype(np.int64)


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
    order = np.argsort(level_of, kind="stable")
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
    (itself included).

    Coverage only rises at a left endpoint, so its maximum over ``[lo_i, hi_i]`` is
    reached at a distinct endpoint value inside the interval: coverage is evaluated at all
    distinct endpoints, then a range-maximum query per interval.
    """
    lo, hi = normalize(lo, hi)
    if len(lo) == 0:
        return np.zeros(0, dtype=np.int64)
    slo = np.sort(lo)
    shi = np.sort(hi)
    pts = distinct_points(slo, shi)
    cover = point_coverage(lo, hi, pts, slo, shi)
    left = np.searchsorted(pts, lo, side="left")
    right = np.searchsorted(pts, hi, side="left")
    return range_max(cover, left, right).astype(np.int64)


def profile_arrays(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The depth function over the value domain as maximal constant segments.

    Returns ``(starts, ends, depths)``. The depth function alternates between the distinct
    endpoints ``p_k`` (depth = coverage at the point) and the open gaps ``(p_k, p_k+1)``;
    consecutive pieces of equal depth are merged into one segment ``[start, end]``. A value
    shared by two neighbouring segments has the larger of their two depths (coverage at a
    point is never below the open gaps beside it). Gaps covered by nothing have depth 0.
    """
    lo, hi = normalize(lo, hi)
    if len(lo) == 0:
        return lo[:0], hi[:0], np.zeros(0, dtype=np.int64)
    slo = np.sort(lo)
    shi = np.sort(hi)
    pts = distinct_points(slo, shi)
    m = len(pts)
    at_point = point_coverage(lo, hi, pts, slo, shi)
    # open gap after p_k: intervals with lo <= p_k and hi >= p_{k+1}, i.e. #(lo<=p_k) - #(hi<=p_k)
    gap = (np.searchsorted(slo, pts[:-1], side="right")
           - np.searchsorted(shi, pts[:-1], side="right")).astype(np.int64)
    depth_seq = np.empty(2 * m - 1, dtype=np.int64)
    depth_seq[0::2] = at_point
    depth_seq[1::2] = gap
    # piece j: point p_{j//2} when j even; gap (p_{j//2}, p_{j//2+1}) when odd
    piece_start = np.arange(2 * m - 1) // 2
    piece_end = (np.arange(2 * m - 1) + 1) // 2
    change = np.empty(len(depth_seq), dtype=bool)
    change[0] = True
    np.not_equal(depth_seq[1:], depth_seq[:-1], out=change[1:])
    first = np.flatnonzero(change)
    last = np.append(first[1:] - 1, len(depth_seq) - 1)
    starts = pts[piece_start[first]]
    ends = pts[piece_end[last]]
    return starts, ends, depth_seq[first]
