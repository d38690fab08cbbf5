"""Snowflake-style clustering metrics of one column (WAIR Figure 3, patent paragraph 70).

* overlap width of a partition: how many OTHER partitions' ranges intersect its range;
* depth of a partition: the largest number of partitions covering any single value in its
  range, itself included;
* constant partitions: ``min == max``;
* the depth histogram keyed like Snowflake's ``partition_depth_histogram``.

Ranges are closed (touching at an endpoint overlaps). Only partitions whose statistics are
known take part; the others are counted in ``unknown_partition_count``. Everything is a
sweep line over sorted endpoints (``engine.metrics.sweep``), never pairwise.

Example:
>>> depth_histogram([1, 1, 3, 17, 40])["00032"], depth_histogram([1, 1, 3])["00001"]
(1, 2)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from engine.metrics import profile as _profile
from engine.metrics.profile import depth_profile
from engine.metrics.sweep import Sweep, overlap_counts, partition_depths

if TYPE_CHECKING:
    from engine.table.model import ZoneMaps

__all__ = ["overlap_counts", "partition_depths", "depth_profile", "depth_histogram",
           "histogram_key", "ColumnClustering", "column_clustering", "clustering_verdict"]

HISTOGRAM_LINEAR_MAX = 16
DEEPEST_TOP = 5


def histogram_key(depth: int) -> str:
    """The Snowflake bucket of a depth: itself up to 16, then the next power of two."""
    d = max(0, int(depth))
    if d <= HISTOGRAM_LINEAR_MAX:
        return f"{d:05d}"
    key = 32
    while key < d:
        key *= 2
    return f"{key:05d}"


def depth_histogram(depths: Sequence[int] | np.ndarray) -> dict[str, int]:
    """Counts per Snowflake bucket: always ``"00000"``..``"00016"``, then ``"00032"``,
    ``"00064"``, ... up to the bucket of the largest depth (a depth falls in the smallest
    key >= it)."""
    arr = np.asarray(depths, dtype=np.int64)
    hist = {f"{k:05d}": 0 for k in range(HISTOGRAM_LINEAR_MAX + 1)}
    if arr.size == 0:
        return hist
    arr = np.maximum(arr, 0)
    small = np.bincount(arr[arr <= HISTOGRAM_LINEAR_MAX], minlength=HISTOGRAM_LINEAR_MAX + 1)
    for k in range(HISTOGRAM_LINEAR_MAX + 1):
        hist[f"{k:05d}"] = int(small[k])
    big = arr[arr > HISTOGRAM_LINEAR_MAX]
    if big.size:
        top = 32
        while top < int(big.max()):
            top *= 2
        key = 32
        lower = HISTOGRAM_LINEAR_MAX
        while key <= top:
            hist[f"{key:05d}"] = int(((big > lower) & (big <= key)).sum())
            lower, key = key, key * 2
    return hist


@dataclass(frozen=True)
class ColumnClustering:
    """Clustering metrics of one column; per-partition arrays align with the ZoneMaps
    (``-1`` where the partition's statistics are unknown)."""

    column: str
    ltype: str
    total_partition_count: int  # partitions with known statistics
    total_constant_partition_count: int
    average_overlaps: float
    average_depth: float
    partition_depth_histogram: dict[str, int]
    unknown_partition_count: int
    overlaps: np.ndarray = field(repr=False)
    depths: np.ndarray = field(repr=False)
    constant: np.ndarray = field(repr=False)  # bool
    profile_starts: np.ndarray = field(repr=False)  # encoded values
    profile_ends: np.ndarray = field(repr=False)
    profile_depths: np.ndarray = field(repr=False)
    deepest_ranges: tuple[dict[str, Any], ...] = ()
    max_depth: int = 0

    def profile(self, max_segments: int = 0) -> list[list[Any]]:
        """``[[start, end, depth], ...]`` with decoded values, optionally coarsened."""
        s, e, d = _profile.coarsen(self.profile_starts, self.profile_ends,
                                   self.profile_depths, max_segments)
        return _profile.decode_segments(self.ltype, s, e, d)

    def to_json(self, max_segments: int = 2000, per_partition: bool = False) -> dict[str, Any]:
        color, reason = clustering_verdict(self)
        out: dict[str, Any] = {
            "column": self.column,
            "type": self.ltype,
            "total_partition_count": self.total_partition_count,
            "total_constant_partition_count": self.total_constant_partition_count,
            "average_overlaps": round(self.average_overlaps, 4),
            "average_depth": round(self.average_depth, 4),
            "partition_depth_histogram": self.partition_depth_histogram,
            "max_depth": self.max_depth,
            "depth_profile": self.profile(max_segments),
            "deepest_ranges": list(self.deepest_ranges),
            "unknown_partition_count": self.unknown_partition_count,
            "verdict": color,
            "reason": reason,
        }
        if per_partition:
            out["overlaps"] = self.overlaps.tolist()
            out["depths"] = self.depths.tolist()
        return out


def column_clustering(zonemaps: "ZoneMaps", column: str) -> ColumnClustering:
    """All metrics of ``column`` over the partitions with known min/max."""
    czm = zonemaps.column(column)
    valid = np.asarray(czm.valid, dtype=bool)
    lo = czm.lo[valid]
    hi = czm.hi[valid]
    n_all = len(zonemaps)
    overlaps = np.full(n_all, -1, dtype=np.int64)
    depths = np.full(n_all, -1, dtype=np.int64)
    sweep = Sweep(lo, hi)
    ov = sweep.overlaps()
    dp = sweep.depths()
    overlaps[valid] = ov
    depths[valid] = dp
    constant = np.zeros(n_all, dtype=bool)
    constant[valid] = lo == hi
    starts, ends, pdepths = sweep.profile()
    deepest = tuple(
        {"start": _profile.decode_value(czm.ltype, starts[i]),
         "end": _profile.decode_value(czm.ltype, ends[i]),
         "depth": int(pdepths[i])}
        for i in _profile.deepest_ranges(starts, ends, pdepths, DEEPEST_TOP))
    n = int(valid.sum())
    return ColumnClustering(
        column=column, ltype=czm.ltype, total_partition_count=n,
        total_constant_partition_count=int(constant.sum()),
        average_overlaps=float(ov.mean()) if n else 0.0,
        average_depth=float(dp.mean()) if n else 0.0,
        partition_depth_histogram=depth_histogram(dp),
        unknown_partition_count=n_all - n,
        overlaps=overlaps, depths=depths, constant=constant,
        profile_starts=starts, profile_ends=ends, profile_depths=pdepths,
        deepest_ranges=deepest, max_depth=int(dp.max()) if n else 0)


# Traffic light: a point lookup scans about `average_depth` partitions of `n`.
GREEN_MAX_DEPTH = 2.0
GREEN_MAX_SHARE = 0.02
RED_MIN_DEPTH = 4.0
RED_MIN_SHARE = 0.10


def clustering_verdict(c: ColumnClustering) -> tuple[str, str]:
    """``("green" | "amber" | "red" | "grey", reason)`` for one column.

    A query asking for one value of the column reads about ``average_depth`` partitions,
    i.e. ``average_depth / total_partition_count`` of the table: green when that is at
    most 2 partitions or 2 % of the table, red when it is above 4 partitions and above
    10 % of the table, amber in between.
    """
    n = c.total_partition_count
    if n == 0:
        return "grey", "no partition has statistics for this column"
    share = c.average_depth / n
    where = ""
    if c.deepest_ranges:
        top = c.deepest_ranges[0]
        unit = "partition" if top["depth"] == 1 else "partitions"
        where = f"; deepest at {top['start']} .. {top['end']} ({top['depth']} {unit})"
    text = (f"a lookup of one value reads ~{c.average_depth:.1f} of {n} partitions "
            f"({share:.0%}); each overlaps {c.average_overlaps:.1f} others on average{where}")
    if c.average_depth <= GREEN_MAX_DEPTH or share <= GREEN_MAX_SHARE:
        return "green", "well clustered: " + text
    if c.average_depth > RED_MIN_DEPTH and share > RED_MIN_SHARE:
        return "red", "poorly clustered: " + text
    return "amber", "partly clustered: " + text
