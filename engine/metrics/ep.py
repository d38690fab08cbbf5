"""EP-file metrics from the Snowflake patent (US 12386863, paragraphs 37-40, 70-83, 92-96).

Partitions are grouped, in creation order (``ZoneMaps.created_seq``, then snapshot
order), into expression-property (EP) files of N partitions (``Settings.ep_file_partitions``).
For one column:

* an EP file's data region spans the smallest min to the largest max of its members;
* the *local depth* of a member is its depth among the members of its own EP file only,
  and the EP file's *average depth* is their mean (FIG. 5: depths 1, 2, 2, 2 -> 1.75);
* the *EP-level overlap* is how many other EP regions intersect its region, the
  *EP-level depth* the largest number of EP regions covering one value of it (itself
  included, as for partitions);
* the *sub-ranges* are the intervals between adjacent distinct min/max values of the EP
  regions (paragraph 93); a sub-range's *total average depth* is the sum of the average
  depths of the EP regions covering it, and the deepest sub-range has the largest one
  (paragraph 96).

All groups are computed at once: values are replaced by their dense rank and each EP
file's ranks are shifted into a disjoint band, so one sweep line gives every local depth.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.core.errors import InvalidParameterError
from engine.metrics import profile as _profile
from engine.metrics.sweep import Sweep

if TYPE_CHECKING:
    from engine.table.model import ZoneMaps


def ep_groups(zonemaps: "ZoneMaps", ep_file_partitions: int) -> np.ndarray:
    """EP-file number of every partition: creation order cut into runs of N."""
    if ep_file_partitions < 1:
        raise InvalidParameterError(
            f"ep_file_partitions must be >= 1, got {ep_file_partitions}")
    n = len(zonemaps)
    seq = zonemaps.created_seq if len(zonemaps.created_seq) == n else np.zeros(n, np.int64)
    order = np.lexsort((np.arange(n), seq))
    group = np.empty(n, dtype=np.int64)
    group[order] = np.arange(n) // ep_file_partitions
    return group


@dataclass(frozen=True)
class SubRanges:
    """Sub-ranges of the data range delimited by the EP regions' mins and maxes.

    ``starts``/``ends`` are encoded values; a sub-range is an open gap between adjacent
    distinct endpoints, or a single value when an EP region is constant there.
    ``total_depth`` sums the weights (average depths) of the regions covering it, ``regions``
    counts them. ``deepest`` is the index of the largest total (-1 when there is none).
    """

    starts: np.ndarray
    ends: np.ndarray
    total_depth: np.ndarray
    regions: np.ndarray
    deepest: int

    def __len__(self) -> int:
        return len(self.starts)


def subranges(lo: np.ndarray, hi: np.ndarray, weights: np.ndarray) -> SubRanges:
    """Sub-ranges of regions ``[lo, hi]`` and their total weights (sweep line, O(n log n)).

    A region covers a sub-range when ``lo <= start and end <= hi``. Ties for the deepest
    sub-range go to the one covered by more regions, then to the lowest values.

    Example (two regions overlapping on [2, 3]):
    >>> import numpy as np
    >>> s = subranges(np.array([0., 2.]), np.array([3., 5.]), np.array([1., 2.]))
    >>> s.starts.tolist(), s.ends.tolist(), s.total_depth.tolist(), s.deepest
    ([0.0, 2.0, 3.0], [2.0, 3.0, 5.0], [1.0, 3.0, 2.0], 1)
    """
    w = np.asarray(weights, dtype=np.float64)
    if len(lo) == 0:
        empty = np.asarray(lo)[:0]
        return SubRanges(empty, empty, np.zeros(0), np.zeros(0, np.int64), -1)
    sw = Sweep(lo, hi)
    m = len(sw.points)
    # gap k = (p_k, p_k+1) is covered by regions with pid_lo <= k < pid_hi
    diff_w = (np.bincount(sw.pid_lo, weights=w, minlength=m + 1)
              - np.bincount(sw.pid_hi, weights=w, minlength=m + 1))
    diff_c = (np.bincount(sw.pid_lo, minlength=m + 1)
              - np.bincount(sw.pid_hi, minlength=m + 1)).astype(np.int64)
    gap_w = np.cumsum(diff_w)[: m - 1]
    gap_c = np.cumsum(diff_c)[: m - 1]
    # a constant region adds a single-value sub-range at its value
    const_pts = np.unique(sw.pid_lo[sw.pid_lo == sw.pid_hi])
    if len(const_pts):
        w_lo = np.bincount(sw.pid_lo, weights=w, minlength=m)
        w_hi = np.bincount(sw.pid_hi, weights=w, minlength=m)
        at_w = np.cumsum(w_lo) - (np.cumsum(w_hi) - w_hi)
        at_c = sw.coverage()
        kinds = np.concatenate([np.arange(m - 1) * 2 + 1, const_pts * 2])  # point k -> 2k
        order = np.argsort(kinds, kind="stable")
        kinds = kinds[order]
        k = kinds // 2
        is_gap = kinds % 2 == 1
        starts = sw.points[k]
        ends = np.where(is_gap, sw.points[np.minimum(k + 1, m - 1)], sw.points[k])
        tot = np.where(is_gap, gap_w[np.minimum(k, max(m - 2, 0))] if m > 1 else 0.0, at_w[k])
        cnt = np.where(is_gap, gap_c[np.minimum(k, max(m - 2, 0))] if m > 1 else 0, at_c[k])
    else:
        starts, ends, tot, cnt = sw.points[:-1], sw.points[1:], gap_w, gap_c
    tot = np.round(np.asarray(tot, dtype=np.float64), 9)
    cnt = np.asarray(cnt, dtype=np.int64)
    if len(tot) == 0:
        return SubRanges(starts, ends, tot, cnt, -1)
    best = np.lexsort((np.arange(len(tot)), -cnt, -tot))[0]
    return SubRanges(starts, ends, tot, cnt, int(best))


@dataclass(frozen=True)
class EPFiles:
    """Per EP file of one column (index = EP-file number)."""

    column: str
    ltype: str
    ep_file_partitions: int
    group: np.ndarray  # EP-file number of each partition (aligned with the ZoneMaps)
    partition_count: np.ndarray  # members per EP file (all of them, known stats or not)
    known_count: np.ndarray  # members with known statistics
    valid: np.ndarray  # the region is known (some member has statistics)
    lo: np.ndarray  # encoded region bounds (meaningless where not valid)
    hi: np.ndarray
    average_depth: np.ndarray  # mean local depth of the members with statistics
    max_depth: np.ndarray
    overlap: np.ndarray  # EP-level: other EP regions intersecting (-1 if not valid)
    depth: np.ndarray  # EP-level depth, itself included (-1 if not valid)
    local_depths: np.ndarray = field(repr=False)  # per partition (-1 if unknown)

    def __len__(self) -> int:
        return len(self.partition_count)

    def members(self, ep: int) -> np.ndarray:
        return np.flatnonzero(self.group == ep)

    def subranges(self) -> SubRanges:
        idx = np.flatnonzero(self.valid)
        sr = subranges(self.lo[idx], self.hi[idx], self.average_depth[idx])
        return sr


def ep_files(zonemaps: "ZoneMaps", column: str, ep_file_partitions: int,
             groups: np.ndarray | None = None) -> EPFiles:
    """Group partitions into EP files and compute every per-EP-file metric of ``column``.

    ``groups`` (EP-file number per partition, 0..k-1) replaces the creation-order grouping
    when the grouping is known otherwise (e.g. the patent's FIG. 5 with uneven EP files).
    """
    czm = zonemaps.column(column)
    if groups is None:
        group = ep_groups(zonemaps, ep_file_partitions)
    else:
        group = np.asarray(groups, dtype=np.int64)
        if len(group) != len(zonemaps) or (len(group) and group.min() < 0):
            raise InvalidParameterError("groups must give one EP-file number >= 0 per partition")
    n_ep = int(group.max()) + 1 if len(group) else 0
    valid = np.asarray(czm.valid, dtype=bool)
    idx = np.flatnonzero(valid)
    lo, hi = czm.lo[idx], czm.hi[idx]
    g = group[idx]
    local = np.full(len(zonemaps), -1, dtype=np.int64)
    region_valid = np.zeros(n_ep, dtype=bool)
    # one dtype wide enough for both bounds (numpy strings have a fixed width)
    kind = np.result_type(czm.lo.dtype, czm.hi.dtype) if len(czm.lo) else np.float64
    r_lo = np.zeros(n_ep, dtype=kind)
    r_hi = r_lo.copy()
    avg = np.zeros(n_ep)
    mx = np.zeros(n_ep, dtype=np.int64)
    known = np.bincount(g, minlength=n_ep).astype(np.int64)
    if len(idx):
        # dense ranks, then one disjoint band per EP file: groups cannot interact
        sw = Sweep(lo, hi)
        band = np.int64(len(sw.points) + 1)
        depths = Sweep(g * band + sw.pid_lo, g * band + sw.pid_hi).depths()
        local[idx] = depths
        sums = np.bincount(g, weights=depths, minlength=n_ep)
        region_valid = known > 0
        avg = np.divide(sums, known, out=np.zeros(n_ep), where=known > 0)
        np.maximum.at(mx, g, depths)
        rank_lo = np.full(n_ep, np.iinfo(np.int64).max)
        rank_hi = np.full(n_ep, -1, dtype=np.int64)
        np.minimum.at(rank_lo, g, sw.pid_lo)
        np.maximum.at(rank_hi, g, sw.pid_hi)
        ok = region_valid
        r_lo[ok] = sw.points[rank_lo[ok]]
        r_hi[ok] = sw.points[rank_hi[ok]]
    overlap = np.full(n_ep, -1, dtype=np.int64)
    depth = np.full(n_ep, -1, dtype=np.int64)
    if region_valid.any():
        esw = Sweep(r_lo[region_valid], r_hi[region_valid])
        overlap[region_valid] = esw.overlaps()
        depth[region_valid] = esw.depths()
    return EPFiles(column=column, ltype=czm.ltype, ep_file_partitions=ep_file_partitions,
                   group=group, partition_count=np.bincount(group, minlength=n_ep).astype(np.int64),
                   known_count=known, valid=region_valid, lo=r_lo, hi=r_hi,
                   average_depth=avg, max_depth=mx, overlap=overlap, depth=depth,
                   local_depths=local)


def ep_metrics_json(ep: EPFiles, max_subranges: int = 2000) -> dict[str, Any]:
    """JSON-friendly EP metrics: summary, per EP file, sub-ranges and the deepest one."""
    dec = lambda v: _profile.decode_value(ep.ltype, v)  # noqa: E731
    sr = ep.subranges()
    files = [{
        "ep_file": int(i),
        "partition_count": int(ep.partition_count[i]),
        "min": dec(ep.lo[i]) if ep.valid[i] else None,
        "max": dec(ep.hi[i]) if ep.valid[i] else None,
        "average_depth": round(float(ep.average_depth[i]), 4),
        "max_depth": int(ep.max_depth[i]),
        "overlap": int(ep.overlap[i]),
        "depth": int(ep.depth[i]),
    } for i in range(len(ep))]
    valid = ep.valid
    deepest = None
    if sr.deepest >= 0:
        d = sr.deepest
        covering = np.flatnonzero(valid)[
            (ep.lo[valid] <= sr.starts[d]) & (ep.hi[valid] >= sr.ends[d])]
        deepest = {"start": dec(sr.starts[d]), "end": dec(sr.ends[d]),
                   "total_average_depth": float(sr.total_depth[d]),
                   "ep_files": [int(i) for i in covering]}
    s, e, t = _profile.coarsen(sr.starts, sr.ends, sr.total_depth, max_subranges)
    return {
        "column": ep.column,
        "ep_file_partitions": ep.ep_file_partitions,
        "ep_file_count": len(ep),
        "average_local_depth": round(float(ep.average_depth[valid].mean()), 4) if valid.any() else 0.0,
        "average_ep_overlap": round(float(ep.overlap[valid].mean()), 4) if valid.any() else 0.0,
        "average_ep_depth": round(float(ep.depth[valid].mean()), 4) if valid.any() else 0.0,
        "subrange_count": len(sr),
        "deepest_subrange": deepest,
        "subranges": [[dec(a), dec(b), round(float(c), 4)] for a, b, c in zip(s, e, t)],
        "ep_files": files,
    }
