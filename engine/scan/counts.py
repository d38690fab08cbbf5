"""Per-query pruning summaries without materialising the scanned partitions.

:func:`engine.scan.fragment_scan.fragment_summary` reads a query's sparse scan: O(scanned
partitions) per query. On a table whose partitions are wide against the queries' ranges
(lineitem's ship dates trail the order dates by 100-1,000 days: each partition spans ~1.5
of 6 years) a 7-90 day range scans ~25% of the partitions, so the dashboard's summary of
10,000 stored queries at 1,000,000 partitions touches 2.5e9 partitions (~200 CPU-s).

For the common query, one range on one column of a discrete kind (int, date, timestamp,
bool, string ranks: :mod:`engine.scan.estimate`'s coordinates, inclusive integer points
``[fa, fb]``), every field of the summary is a sum over partitions that 1-D prefix sums
over the column's sorted endpoints answer in O(log n) per query:

* scanned: the valid partitions with ``hi >= fa`` and ``lo <= fb``. Since ``lo <= hi`` and
  ``fa <= fb``, ``{hi < fa}`` is inside ``{lo <= fb}``, so
  ``scanned = #(lo <= fb) - #(hi < fa)``, plus the partitions with unknown bounds that
  might match (always scanned). ``bytes_scanned`` the same with the projection's read
  bytes as weights (integers: exact in any order).
* fully covered: ``no_nulls & lo >= fa & hi <= fb``, i.e. ``#(hi <= fb) - #(lo < fa &
  hi <= fb)``; the second term is a 2-D dominance count, answered with the partitions
  sorted by ``lo`` and cut into blocks of :data:`BLOCK` whose ``hi`` are sorted: the full
  blocks before ``#(lo < fa)`` by binary search (vectorised over the queries, one call per
  block), the one partial block by a comparison of at most :data:`BLOCK` elements.
* utilization sums (``average_utilization``, ``wasted_bytes``, ``selectivity``): a scanned
  valid partition's utilization is ``(min(hi, fb) - max(lo, fa) + 1) * inv * share``
  (:func:`engine.scan.estimate.column_fraction`, in (0, 1] there), so with
  ``c = inv * share * g`` for a weight ``g`` (1, read bytes, rows):
  ``sum min(hi, fb) c = sum_{fa <= hi <= fb} hi c + fb (sum_{lo <= fb} c - sum_{hi <= fb} c)``
  and ``sum max(lo, fa) c = sum_{fa <= lo <= fb} lo c + fa (sum_{lo < fa} c - sum_{hi < fa} c)``;
  unknown partitions add ``share * g``. The prefix sums are kept in extended precision
  (``np.longdouble``) over coordinates centred on the column's median, because the two
  sums nearly cancel (positions of ~10^4 days, overlaps of ~10^1).

Counts and bytes are therefore bit-identical to the sparse scan's summary; the three
utilization sums are added in another order, so they agree to ~1e-12 relative, not to the
last bit (property-tested against :func:`fragment_summary` with a 1e-9 tolerance).
Several boxes (OR, IN), several columns, continuous kinds, non-finite coordinates and
string ranges that fall between two endpoints are not answered here (None): the caller
keeps the exact evaluator for those.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from engine.scan.estimate import cached_read_bytes, one_range, prepared_column

if TYPE_CHECKING:
    from engine.table.zonemaps import ZoneMaps
    from engine.workload.model import ScanFragment

__all__ = ["BLOCK", "one_range_summaries"]

#: partitions per block of the covered-count structure (the partial block's comparison
#: per query is this long; the full blocks cost one binary search each per query)
BLOCK = 4096


@dataclass(frozen=True)
class _Sorted:
    """One column's valid endpoints sorted, with the per-column constants."""

    lo: np.ndarray  # valid lo, sorted
    hi: np.ndarray  # valid hi, sorted
    lo_order: np.ndarray
    hi_order: np.ndarray
    lo_c: np.ndarray  # centred lo / hi as long doubles (for the utilization sums)
    hi_c: np.ndarray
    origin: float
    inv_share: np.ndarray  # inv * share per partition (0 where invalid)
    unknown: np.ndarray  # positions with unknown bounds that might match
    unknown_share: np.ndarray
    cover_lo: np.ndarray  # no_nulls partitions' lo sorted
    cover_hi_blocks: list[np.ndarray]  # their hi in lo order, per block, sorted
    cover_hi_lo_order: np.ndarray
    cover_hi_sorted: np.ndarray


def _sorted(zonemaps: "ZoneMaps", column: str) -> _Sorted:
    cache = zonemaps.__dict__.setdefault("_counts_sorted", {})
    if column in cache:
        return cache[column]
    prep = prepared_column(zonemaps, column)
    valid = np.ones(len(prep.lo), bool) if prep.valid is None else prep.valid
    pos = np.flatnonzero(valid)
    lo_order = pos[np.argsort(prep.lo[pos], kind="stable")]
    hi_order = pos[np.argsort(prep.hi[pos], kind="stable")]
    origin = float(np.median(prep.lo[pos])) if pos.size else 0.0
    share = np.ones(len(prep.lo)) if prep.nonnull_share is None else prep.nonnull_share
    unknown = (np.flatnonzero(prep.unknown_might) if prep.unknown_might is not None
               else np.zeros(0, np.int64))
    cover = np.flatnonzero(prep.no_nulls)
    cover = cover[np.argsort(prep.lo[cover], kind="stable")]
    cover_hi = prep.hi[cover]
    blocks = [np.sort(cover_hi[s:s + BLOCK]) for s in range(0, cover.size, BLOCK)]
    with np.errstate(invalid="ignore"):  # lo > hi (a broken zonemap): ``prep.ordered`` is False
        inv_share = np.where(valid, prep.inv_width * share, 0.0)
    out = _Sorted(prep.lo[lo_order], prep.hi[hi_order], lo_order, hi_order,
                  prep.lo[lo_order].astype(np.longdouble) - origin,
                  prep.hi[hi_order].astype(np.longdouble) - origin, origin,
                  inv_share, unknown, share[unknown],
                  prep.lo[cover], blocks, cover_hi, np.sort(cover_hi))
    cache[column] = out
    return out


def _prefix(values: np.ndarray) -> np.ndarray:
    """Cumulative sums with a leading 0 (``out[k]`` = sum of the first k), long double."""
    out = np.zeros(values.size + 1, dtype=np.longdouble)
    np.cumsum(values, out=out[1:])
    return out


@dataclass(frozen=True)
class _Weighted:
    """Prefix sums of ``c = inv * share * g`` and of ``c`` times the centred endpoint,
    in lo order and in hi order, plus the unknown partitions' ``share * g``."""

    c_lo: np.ndarray
    xc_lo: np.ndarray
    c_hi: np.ndarray
    xc_hi: np.ndarray
    unknown: float


def _weighted(s: _Sorted, g: np.ndarray) -> _Weighted:
    c = s.inv_share * g
    c_lo = c[s.lo_order].astype(np.longdouble)
    c_hi = c[s.hi_order].astype(np.longdouble)
    return _Weighted(_prefix(c_lo), _prefix(c_lo * s.lo_c), _prefix(c_hi), _prefix(c_hi * s.hi_c),
                     float((s.unknown_share * g[s.unknown]).sum()))


#: (column, projection) prefix sums of read-bytes weights kept per ZoneMaps (each is 4 long
#: double arrays of n + 1: 64 bytes per partition)
READ_WEIGHTS_CACHE = 16


def _read_weighted(zonemaps: "ZoneMaps", s: _Sorted, column: str, proj: tuple[str, ...],
                   read: np.ndarray) -> _Weighted:
    """:func:`_weighted` of a projection's read bytes, cached: a workload repeats a few
    projections, and each costs O(n) to prepare."""
    cache = zonemaps.__dict__.setdefault("_counts_read", {})
    key = (column, tuple(sorted(proj)))
    if key not in cache:
        if len(cache) >= READ_WEIGHTS_CACHE:
            cache.pop(next(iter(cache)))
        cache[key] = _weighted(s, read)
    return cache[key]


def _util_sum(s: _Sorted, w: _Weighted, fa: np.ndarray, fb: np.ndarray,
              lo_le_fb: np.ndarray, lo_lt_fa: np.ndarray, hi_lt_fa: np.ndarray,
              hi_le_fb: np.ndarray) -> np.ndarray:
    """Sum over scanned partitions of utilization times the weight, per query."""
    a = fa.astype(np.longdouble) - s.origin
    b = fb.astype(np.longdouble) - s.origin
    might = w.c_lo[lo_le_fb] - w.c_hi[hi_lt_fa]
    hi_in = w.xc_hi[hi_le_fb] - w.xc_hi[hi_lt_fa]
    lo_in = w.xc_lo[lo_le_fb] - w.xc_lo[lo_lt_fa]
    above = w.c_lo[lo_le_fb] - w.c_hi[hi_le_fb]  # lo <= fb < hi
    below = w.c_lo[lo_lt_fa] - w.c_hi[hi_lt_fa]  # lo < fa <= hi
    with np.errstate(invalid="ignore"):  # inf * 0 where an end is open: the term is empty
        upper = hi_in + np.where(np.isfinite(b), b * above, 0.0)
        lower = lo_in + np.where(np.isfinite(a), a * below, 0.0)
    return (upper - lower + might).astype(np.float64) + w.unknown


def _covered(s: _Sorted, fa: np.ndarray, fb: np.ndarray) -> np.ndarray:
    """#(no_nulls & lo >= fa & hi <= fb) per query (block decomposition, see the module)."""
    below = np.searchsorted(s.cover_lo, fa, side="left")  # lo < fa: a prefix in lo order
    full = below // BLOCK
    inside = np.zeros(fa.size, dtype=np.int64)
    for k, block in enumerate(s.cover_hi_blocks):
        todo = full > k
        if not todo.any():
            break
        inside[todo] += np.searchsorted(block, fb[todo], side="right")
    for i in np.flatnonzero(below % BLOCK):
        start = int(full[i]) * BLOCK
        inside[i] += int(np.count_nonzero(s.cover_hi_lo_order[start:int(below[i])] <= fb[i]))
    return np.searchsorted(s.cover_hi_sorted, fb, side="right") - inside


def one_range_summaries(zonemaps: "ZoneMaps", fragments: Sequence["ScanFragment"],
                        selectivity: bool = False) -> list[dict[str, Any] | None]:
    """:func:`engine.scan.fragment_scan.fragment_summary` of each fragment that is one range on
    one discrete column (plus ``selectivity`` when asked, as :func:`engine.api.pruning`
    computes it), None for the others; O(log n) per answered query after one sort of the
    column's endpoints per snapshot (see the module docstring for what is exact)."""
    n = len(zonemaps)
    out: list[dict[str, Any] | None] = [None] * len(fragments)
    groups: dict[tuple[str, tuple[str, ...]], list[tuple[int, float, float]]] = {}
    for i, fragment in enumerate(fragments):
        hit = one_range(zonemaps, fragment)
        if hit is not None and prepared_column(zonemaps, hit[0]).kind == "discrete":
            column, (fa, _, fb, _) = hit  # inclusive integer points
            proj = tuple(dict.fromkeys([*fragment.columns, *fragment.predicated_columns]))
            groups.setdefault((column, proj), []).append((i, float(fa), float(fb)))
    rows = np.asarray(zonemaps.rows, dtype=np.float64)
    total_rows = float(rows.sum()) or 1.0
    ones = np.ones(n)
    by_column: dict[str, tuple[np.ndarray, ...]] = {}
    for (column, proj), members in groups.items():
        s = _sorted(zonemaps, column)
        idx = np.array([m[0] for m in members])
        fa = np.array([m[1] for m in members])
        fb = np.array([m[2] for m in members])
        lo_le_fb = np.searchsorted(s.lo, fb, side="right")
        lo_lt_fa = np.searchsorted(s.lo, fa, side="left")
        hi_lt_fa = np.searchsorted(s.hi, fa, side="left")
        hi_le_fb = np.searchsorted(s.hi, fb, side="right")
        cut = (fa, fb, lo_le_fb, lo_lt_fa, hi_lt_fa, hi_le_fb)
        read = cached_read_bytes(zonemaps, proj)
        read_int = read.astype(np.int64)
        cum_read = np.concatenate([[0], np.cumsum(read_int[s.lo_order])])
        cum_read_hi = np.concatenate([[0], np.cumsum(read_int[s.hi_order])])
        exact = bool((read_int == read).all())
        scanned = lo_le_fb - hi_lt_fa + s.unknown.size
        bytes_int = cum_read[lo_le_fb] - cum_read_hi[hi_lt_fa] + int(read_int[s.unknown].sum())
        if not exact:  # fractional bytes cannot be summed exactly in another order
            continue
        if column not in by_column:
            by_column[column] = (_weighted(s, ones), _weighted(s, rows))
        w_one, w_rows = by_column[column]
        used = _util_sum(s, w_one, *cut)
        used_bytes = _util_sum(s, _read_weighted(zonemaps, s, column, proj, read), *cut)
        used_rows = _util_sum(s, w_rows, *cut) if selectivity else None
        covered = _covered(s, fa, fb)
        for k, i in enumerate(idx.tolist()):
            sc, cov = int(scanned[k]), int(covered[k])
            row = {"query_id": fragments[i].query_id, "partitions": n, "scanned": sc,
                   "pruned": n - sc, "fully_covered": cov, "boundary": sc - cov,
                   "pruning_rate": round(float((n - sc) / n) if n else 0.0, 6),
                   "bytes_scanned": float(bytes_int[k]),
                   "wasted_bytes": float(bytes_int[k]) - float(used_bytes[k]) if sc else 0.0,
                   "average_utilization": round(float(used[k]) / sc, 6) if sc else 0.0,
                   "predicated_columns": list(fragments[i].predicated_columns)}
            if selectivity:
                row["selectivity"] = float(used_rows[k]) / total_rows
            out[i] = row
    return out
