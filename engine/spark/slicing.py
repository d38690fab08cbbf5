"""The physical design of a job's output: rows per file, and how groups are cut into
key ranges and packed into the write's tasks (no sampling pass: cut points come from the
zonemaps, the fitting sample or the input files themselves; a wrong estimate only makes
one smaller file per range, never a wrong order)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from engine.core import logical_types
from engine.metrics.mixture import mixture_cdf
from engine.spark.jobspec import FITTED, KEY_COLUMN, ORD_COLUMN, GroupSpec

if TYPE_CHECKING:
    from engine.table.model import TableSchema


def boundaries(sorted_values: Sequence[Any], n: int) -> list[Any]:
    """n-1 cut points at the sample's quantiles, duplicates dropped (ties stay together).

    Example:
    >>> boundaries([1, 2, 3, 4, 5, 6, 7, 8], 4)
    [3, 5, 7]
    """
    m = len(sorted_values)
    if n <= 1 or m == 0:
        return []
    cuts = [sorted_values[min(m - 1, (i * m) // n)] for i in range(1, n)]
    out: list[Any] = []
    for c in cuts:
        if not out or c > out[-1]:
            out.append(c)
    return out


def mixture_quantiles(lows: Sequence[float], highs: Sequence[float], weights: Sequence[float],
                      fractions: Sequence[float]) -> list[float]:
    """Cut points at the given CDF ``fractions`` of a mixture of uniform distributions (one
    per file: its zonemap's [min, max], weighted by its rows).

    The CDF is piecewise linear between the files' bounds, so its inverse is exact there
    (:func:`engine.metrics.mixture.mixture_cdf`, its value at each bound with the point
    masses there; a point mass is interpolated from the bound before it).

    Example (two files, [0, 10] and [10, 30], 100 rows each):
    >>> mixture_quantiles([0, 10], [10, 30], [100, 100], [0.25, 0.5, 0.75])
    [5.0, 10.0, 20.0]
    """
    lo = np.asarray(lows, dtype=float)
    hi = np.asarray(highs, dtype=float)
    w = np.asarray(weights, dtype=float)
    ok = np.isfinite(lo) & np.isfinite(hi) & (w > 0)
    lo, hi, w = lo[ok], hi[ok], w[ok]
    if not len(fractions) or w.sum() <= 0:
        return []
    at = mixture_cdf(lo, hi, w)  # one sweep over the sorted bounds, O(n log n)
    xs, cdf = at.points, at.at / w.sum()
    targets = np.asarray(fractions, dtype=float)
    keep = np.concatenate([[True], np.diff(cdf) > 0])  # np.interp needs increasing xp
    cuts = np.interp(targets, cdf[keep], xs[keep])
    return boundaries(sorted(float(c) for c in cuts), len(cuts) + 1) if len(cuts) else []


def _zonemap_cuts(spec: GroupSpec, column: str, ltype: str, fractions: Sequence[float]) -> list[Any]:
    """Cut points of a sort group's first column from its files' zonemaps (no Spark job);
    [] where the zonemaps cannot say (strings, unknown bounds)."""
    if not len(fractions) or logical_types.is_string(ltype) or ltype == "bool":
        return []
    lows, highs, weights = [], [], []
    for p in spec.partitions:
        st = p.columns.get(column)
        if st is None or st.min is None or st.max is None:
            return []
        lows.append(logical_types.encode_scalar(ltype, st.min))
        highs.append(logical_types.encode_scalar(ltype, st.max))
        weights.append(p.rows)
    raw = mixture_quantiles(lows, highs, weights, fractions)
    decoded = [logical_types.decode_scalar(ltype, c) for c in raw]
    out: list[Any] = []
    for c in decoded:  # decoding rounds dates and ints: drop repeats
        if c is not None and (not out or c > out[-1]):
            out.append(c)
    return out


#: a group is split across tasks only into slices of at least this many output files (each
#: slice may end in one partial file, as the cuts are estimates)
MIN_FILES_PER_SLICE = 4
#: ... and of at least this many rows. Each slice but the last may end in a file
#: smaller than the target (its cut is estimated from the zonemaps), so a sliced group
#: writes up to ``slices - 1`` files more than ``ceil(rows / rows_per_file)``, the count the
#: cost model prices (``engine.policy.costmodel.group_files``): the sample demo's plan (one
#: group of 88,000 rows in files of 2,000) wrote 46 files for the 44 of its target. Below
#: this a group sorts in one task (bench/executor/README.md); 0 slices any group.
MIN_SLICE_ROWS = 250_000


def slice_fractions(rows: int, max_rows: int, share: float) -> list[float]:
    """Where to cut a group of ``rows`` into slices of about ``share`` rows: at whole
    output files (multiples of ``max_rows``), each slice at least MIN_FILES_PER_SLICE files
    and MIN_SLICE_ROWS rows.

    Example (1M rows in files of 100k, 4 tasks' worth of rows each 250k; 88k rows in files
    of 2k, the sample demo's plan):
    >>> slice_fractions(1_000_000, 100_000, 250_000.0)
    [0.5]
    >>> slice_fractions(600_000, 100_000, 150_000.0)  # 6 files: too few to split
    []
    >>> slice_fractions(88_000, 2_000, 22_000.0)  # too few rows to split
    []
    """
    files = math.ceil(rows / max(1, max_rows))
    k = max(1, min(int(rows // max(share, 1.0)), files // MIN_FILES_PER_SLICE,
                   rows // MIN_SLICE_ROWS if MIN_SLICE_ROWS > 0 else files))
    return [round(j * files / k) * max_rows / rows for j in range(1, k)]


def value_cuts(bounds: Sequence[tuple[Any, Any, int]], fractions: Sequence[float]) -> list[Any]:
    """Cut points for a group's ``partition_by`` column chosen among its files' zonemap
    bounds ``(min, max, rows)``, nearest to the wanted CDF ``fractions``. A range cut on the
    partition column itself never splits one value (``v < cut`` holds for all rows of a
    value or none), so each value is written by one task: one partial file per value, not
    one per value and slice. Rows of a file are counted below a cut when its max is, half
    when the cut falls inside its bounds. [] when the bounds show a single value.

    Example (files of regions: eu 600 rows, us 300, asia 100; two slices: asia and eu
    700 rows, us 300, nearer halves than asia 100 and the rest 900):
    >>> value_cuts([("eu", "eu", 600), ("us", "us", 300), ("asia", "asia", 100)], [0.5])
    ['us']
    >>> value_cuts([(1, 1, 10), (1, 1, 10)], [0.5])
    []
    """
    candidates = sorted({v for lo, hi, _ in bounds for v in (lo, hi)})[1:]
    total = sum(rows for _, _, rows in bounds)
    if not candidates or total <= 0:
        return []

    def below(cut: Any) -> float:
        return sum(rows if hi < cut else rows / 2 if lo < cut else 0 for lo, hi, rows in bounds)

    at = [(below(c), c) for c in candidates]
    picked = {min(at, key=lambda t: abs(t[0] - f * total))[1] for f in fractions}
    return sorted(picked)


def _partition_cuts(spec: GroupSpec, column: str, fractions: Sequence[float]) -> list[Any]:
    """:func:`value_cuts` of a group's ``partition_by`` column from its files' zonemaps;
    [] when a file has no bounds for it."""
    bounds = []
    for p in spec.partitions:
        st = p.columns.get(column)
        if st is None or st.min is None or st.max is None:
            return []
        bounds.append((st.min, st.max, p.rows))
    return value_cuts(bounds, fractions)


def plan_slices(specs: Sequence[GroupSpec], schema: "TableSchema", n_tasks: int,
                 max_rows: int) -> int:
    """Split big groups into key ranges (a ``partition_by`` group: into ranges of its
    partition values, :func:`value_cuts`, when its zonemaps show more than one) and pack
    all slices into at most ``n_tasks`` buckets (largest first into the least loaded);
    returns the number of buckets."""
    total = sum(s.rows for s in specs)
    share = total / max(1, n_tasks)
    sizes: list[tuple[float, GroupSpec, int]] = []
    for s in specs:
        fractions = slice_fractions(s.rows, max_rows, share)
        by = (s.group.layout_params or {}).get("partition_by")
        by_cuts = _partition_cuts(s, by, fractions) if fractions and by else []
        if by_cuts:  # whole partition values per slice (ranges of the key would split each)
            s.cuts, s.cut_on = by_cuts, by
        elif fractions and s.group.layout == "sort":
            first = s.group.columns[0]
            s.cuts, s.cut_on = _zonemap_cuts(s, first, schema.type_of(first), fractions), first
        elif fractions and s.group.layout == "binpack":
            s.cuts = [int(len(s.partitions) * f) for f in fractions]
            s.cuts, s.cut_on = sorted(set(c for c in s.cuts if c > 0)), ORD_COLUMN
        elif fractions and s.group.layout in FITTED and s.sample_keys is not None:
            keys = np.sort(s.sample_keys[~np.isnan(s.sample_keys)]
                           if s.sample_keys.dtype.kind == "f" else s.sample_keys)
            picked = [keys[min(len(keys) - 1, int(f * len(keys)))].item() for f in fractions]
            s.cuts, s.cut_on = sorted(set(picked)), KEY_COLUMN
        n = len(s.cuts) + 1
        sizes.extend((s.rows / n, s, j) for j in range(n))
        s.buckets = [0] * n
    n_buckets = min(len(sizes), max(1, n_tasks))
    load = [0.0] * n_buckets
    for rows, s, j in sorted(sizes, key=lambda t: -t[0]):
        b = int(np.argmin(load))
        load[b] += rows
        s.buckets[j] = b
    return n_buckets

