"""Fast pruning of one fragment from per-column sorted zonemap endpoints.

A partition can match a range [fa, fb] of a column only if lo <= fb and hi >= fa (with
the bounds of ``range_bounds``; exclusive ends only shrink that set). Per column, the
partitions with known, non-NaN bounds are sorted by lo; ``pmax`` is the running maximum
of hi in that order. With q = #(lo <= fb) and j = the first position where pmax >= fa,
every candidate lies in order[j:q] (before j every hi < fa; from q on every lo > fb):
two binary searches, then the exact test on those positions only. Partitions with
unknown bounds that might match are always candidates. The window order[j:q] holds the
k answers plus the partitions of lo < fa whose hi is below fa but after a wider one
in lo order: none when widths are about equal (a clustered or an ingestion-ordered
column), so the cost is O(log n + k) there; at worst it degrades to the dense scan.

:func:`analyze_fragment` finds each box's candidates this way and runs the dense
evaluator's exact test (:mod:`engine.scan.estimate`) on them only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.scan.estimate import (
    analyze_fragment_dense,
    cached_read_bytes,
    evaluate_boxes,
    prepared_column,
    range_bounds,
)
from engine.scan.fragment_scan import FragmentScan

if TYPE_CHECKING:
    from engine.table.model import ZoneMaps
    from engine.workload.model import Range, ScanFragment


@dataclass(frozen=True)
class ColumnIndex:
    """One column's partitions sorted by their lower bound, with the running maximum of
    their upper bounds (see the module notes), computed once per ZoneMaps."""

    order: np.ndarray  # partition positions with known, non-NaN bounds, sorted by lo
    lo_sorted: np.ndarray
    pmax: np.ndarray  # running max of hi in that order
    always: np.ndarray  # positions that might match whatever the range (unknown bounds)
    #: how to sort a window's positions: "stable" (a merge sort, linear on presorted runs)
    #: when lo order mostly follows table order (an ingestion-ordered column), else
    #: numpy's default quicksort (faster on random positions)
    sort_kind: str = "quicksort"


def column_index(zonemaps: "ZoneMaps", column: str) -> ColumnIndex:
    """The column's :class:`ColumnIndex`, computed once and kept on ``zonemaps``."""
    cache = zonemaps.__dict__.setdefault("_pruning_index", {})
    if column in cache:
        return cache[column]
    prep = prepared_column(zonemaps, column)
    known = ~np.isnan(prep.lo) & ~np.isnan(prep.hi)
    if prep.valid is not None:
        known &= prep.valid
    pos = np.flatnonzero(known)
    order = pos[np.argsort(prep.lo[pos], kind="stable")]
    lo_sorted = prep.lo[order]
    pmax = np.maximum.accumulate(prep.hi[order]) if order.size else prep.hi[order]
    always = (np.flatnonzero(prep.unknown_might) if prep.unknown_might is not None
              else np.zeros(0, dtype=np.int64))
    ascending = float(np.mean(order[1:] > order[:-1])) if order.size > 1 else 1.0
    idx = ColumnIndex(order, lo_sorted, pmax, always, "stable" if ascending > 0.9 else "quicksort")
    cache[column] = idx
    return idx


@dataclass(frozen=True)
class SortedColumn:
    """A column's prepared arrays permuted into its index order, so the batched evaluator
    reads a candidate window ``order[j:q]`` as contiguous memory instead of gathering
    ~k random partitions per query (partitions there all have known bounds: ``valid`` and
    ``unknown_might`` would be no-ops)."""

    lo: np.ndarray
    hi: np.ndarray
    inv_width: np.ndarray
    frac_floor: np.ndarray
    no_nulls: np.ndarray
    nonnull_share: np.ndarray | None


def sorted_column(zonemaps: "ZoneMaps", column: str) -> SortedColumn:
    """The column's :class:`SortedColumn`, computed once and kept on ``zonemaps``."""
    cache = zonemaps.__dict__.setdefault("_pruning_sorted", {})
    if column not in cache:
        prep, order = prepared_column(zonemaps, column), column_index(zonemaps, column).order
        cache[column] = SortedColumn(
            column_index(zonemaps, column).lo_sorted, prep.hi[order], prep.inv_width[order],
            prep.frac_floor[order], prep.no_nulls[order],
            None if prep.nonnull_share is None else prep.nonnull_share[order])
    return cache[column]


def _candidates(zonemaps: "ZoneMaps", column: str, rng: "Range") -> np.ndarray | None:
    """Unsorted positions that might match ``rng`` on ``column`` (a superset of the exact
    answer); None when the column does not restrict anything (not in the zonemaps)."""
    if column not in zonemaps.columns:
        return None
    prep = prepared_column(zonemaps, column)
    bounds = range_bounds(prep, zonemaps.columns[column].ltype, rng)
    if bounds is None:
        return np.zeros(0, dtype=np.int64)
    fa, _, fb, _ = bounds
    ix = column_index(zonemaps, column)
    q = int(np.searchsorted(ix.lo_sorted, fb, side="right"))
    j = int(np.searchsorted(ix.pmax, fa, side="left"))
    window = ix.order[j:q] if j < q else ix.order[:0]
    return np.concatenate([window, ix.always]) if ix.always.size else window


def _fragment_candidates(zonemaps: "ZoneMaps", fragment: "ScanFragment") -> np.ndarray | None:
    """Sorted unique positions some box might scan (None: every partition)."""
    parts = []
    for box in fragment.boxes:
        best = None
        for column, rng in box.items():
            cand = _candidates(zonemaps, column, rng)
            if cand is not None and (best is None or cand.size < best.size):
                best = cand
        if best is None:  # no restricting column in this box
            return None
        parts.append(best)
    # a window of the sorted endpoints holds each partition once and the always-candidates
    # are disjoint from it: one box needs a sort, several a sort and a de-duplication
    out = np.sort(parts[0]) if len(parts) == 1 else np.sort(np.concatenate(parts))
    if len(parts) > 1 and out.size:
        out = out[np.concatenate(([True], out[1:] != out[:-1]))]
    return out if out.size < len(zonemaps) else None


def covering_candidates(zonemaps: "ZoneMaps", column: str, value: Any) -> np.ndarray:
    """Positions of the partitions whose known bounds might cover the encoded ``value``
    (``lo <= value <= hi``): a sorted superset of the exact answer, found with two binary
    searches on the column's sorted endpoints (O(log n + k), see the module notes) instead of a
    pass over every partition. Partitions with unknown or NaN bounds are not included:
    the caller decides what those mean (WAIR Algorithm 1 counts unknown ones as
    covering, :mod:`engine.policy.boundary`).

    >>> from engine.table.model import ColumnStats, Partition, TableSchema, ZoneMaps
    >>> zm = ZoneMaps.from_partitions(TableSchema((("a", "int"),)), [
    ...     Partition(f"p{i}", 10, 100, {"a": ColumnStats(lo, hi, 0)})
    ...     for i, (lo, hi) in enumerate([(0, 9), (10, 19), (5, 14), (30, 39)])])
    >>> covering_candidates(zm, "a", 12.5).tolist()
    [1, 2]
    """
    prep, ix = prepared_column(zonemaps, column), column_index(zonemaps, column)
    if prep.ranks is not None:  # strings: the coordinates are ranks among the endpoints
        fa = float(np.searchsorted(prep.ranks, value, side="left"))
        fb = float(np.searchsorted(prep.ranks, value, side="right") - 1)
    else:
        fa = fb = float(value)
    q = int(np.searchsorted(ix.lo_sorted, fb, side="right"))
    j = int(np.searchsorted(ix.pmax, fa, side="left"))
    return np.sort(ix.order[j:q]) if j < q else ix.order[:0]


def analyze_fragment(zonemaps: "ZoneMaps", fragment: "ScanFragment") -> FragmentScan:
    """Which partitions ``fragment`` scans, fully covers and how well it uses them.

    The candidates of each box come from the sorted endpoints of its most selective
    column (see the module notes); the exact test of
    :func:`engine.scan.estimate.analyze_fragment_dense` then runs on
    those partitions only, so the answer is the same to the last bit.
    """
    predicated = fragment.predicated_columns
    if not fragment.boxes:
        return analyze_fragment_dense(zonemaps, fragment)
    n = len(zonemaps)
    read = cached_read_bytes(zonemaps, tuple(dict.fromkeys([*fragment.columns, *predicated])))
    sel = _fragment_candidates(zonemaps, fragment)
    scanned, covered, util = evaluate_boxes(zonemaps, fragment, sel)
    base = np.arange(n, dtype=np.int64) if sel is None else sel
    return FragmentScan.sparse(fragment.query_id, n, base[scanned], covered[scanned],
                               util[scanned], read, predicated)
