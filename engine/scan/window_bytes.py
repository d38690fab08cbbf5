"""Bytes each query of a window scans, without materialising the scanned partitions.

``window_bytes(zonemaps, fragments)`` equals ``[s.bytes_scanned for s in
analyze_workload(zonemaps, fragments)]`` (:mod:`engine.scan.window`), bit for bit, and
is what a caller that needs only the bytes (a plan's predicted losses, the output check:
:mod:`engine.policy.impact`) should ask for: the sparse scan costs O(scanned partitions)
per query, and after a rewrite sorted on one column a query on another column scans
nearly every new file (100,000 files x 2,000 such queries is 2 x 10^8 elements through
the exact evaluator).

For the common query, one range on one column, the bytes are a sum over the partitions
that might match (:func:`engine.scan.estimate.column_match`): the valid ones with
``hi >= fa`` and ``lo <= fb`` (strict where the bound is exclusive), plus those with
unknown bounds that are not all NULL. Since ``lo <= hi`` and ``fa <= fb``, the partitions
with ``hi < fa`` all have ``lo <= fb``, so::

    bytes = S_lo(lo <= fb) - S_hi(hi < fa) + bytes of the unknown ones

with ``S_lo`` / ``S_hi`` prefix sums of the read bytes over the valid partitions sorted
by ``lo`` / ``hi``: two binary searches per query after one sort per column (the same
identity :mod:`engine.scan.counts` uses for discrete kinds; here continuous kinds too,
the inclusive flags choosing the search side).

Exactness: the prefix sums are int64 over the projection's read bytes, so they are used
only when every read-bytes value is an integer and their total is below 2**53, where
any order of float64 additions is exact: the same float as the sparse scan's sum.
Everything else (several boxes, several columns, strings whose range falls between two
endpoints, non-finite bounds, fractional bytes, row-group charging) goes through the exact
evaluator, batched.

Example (three partitions on ``a``: [0, 1], [2, 3], [4, 5], 10 bytes each):
>>> import numpy as np
>>> from engine.table.model import ColumnZoneMap, ZoneMaps
>>> from engine.workload.model import Range, ScanFragment
>>> a = ColumnZoneMap("float", np.array([0., 2., 4.]), np.array([1., 3., 5.]), np.ones(3, bool),
...                   np.zeros(3, np.int64), np.full(3, 10, np.int64))
>>> zm = ZoneMaps(np.array(["p0", "p1", "p2"], dtype=object), np.full(3, 5), np.full(3, 10), {"a": a})
>>> frag = ScanFragment("q", "t", ({"a": Range(1.0, 2.5, True, False)},), ("a",))
>>> window_bytes(zm, [frag]).tolist()
[20.0]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from engine.scan.estimate import cached_read_bytes, one_range, prepared_column
from engine.scan.window import analyze_workload

if TYPE_CHECKING:
    from engine.scan.rowgroups import RowGroupMaps
    from engine.table.model import ZoneMaps
    from engine.workload.model import ScanFragment

__all__ = ["window_bytes"]

#: the largest total of read bytes whose float64 sums are exact in any order
EXACT_TOTAL = 2 ** 53


@dataclass(frozen=True)
class _Ends:
    """One column's valid partitions sorted by ``lo`` and by ``hi``; the positions of the
    partitions with unknown bounds that might match."""

    lo: np.ndarray
    hi: np.ndarray
    lo_order: np.ndarray
    hi_order: np.ndarray
    unknown: np.ndarray


def _ends(zonemaps: "ZoneMaps", column: str) -> _Ends:
    cache = zonemaps.__dict__.setdefault("_window_bytes_ends", {})
    if column not in cache:
        prep = prepared_column(zonemaps, column)
        pos = np.arange(len(prep.lo)) if prep.valid is None else np.flatnonzero(prep.valid)
        lo, hi = prep.lo[pos], prep.hi[pos]
        lo_order, hi_order = pos[np.argsort(lo, kind="stable")], pos[np.argsort(hi, kind="stable")]
        unknown = (np.flatnonzero(prep.unknown_might) if prep.unknown_might is not None
                   else np.zeros(0, np.int64))
        cache[column] = _Ends(prep.lo[lo_order], prep.hi[hi_order], lo_order, hi_order, unknown)
    return cache[column]


def window_bytes(zonemaps: "ZoneMaps", fragments: Sequence["ScanFragment"],
                 row_groups: "RowGroupMaps | None" = None) -> np.ndarray:
    """Bytes scanned per fragment, in order: ``analyze_workload(zonemaps, fragments,
    row_groups)``'s ``bytes_scanned``, the one-range fragments by prefix sums (module
    docstring), the rest by the exact evaluator. O(n log n) per column once, O(log n) per
    one-range query. With ``row_groups`` every fragment goes through the exact evaluator
    (a file's charge depends on which of its row groups the query meets)."""
    out = np.zeros(len(fragments), dtype=np.float64)
    rest: list[int] = []
    by_key: dict[tuple[str, tuple[str, ...]], list[tuple[int, tuple]]] = {}
    for i, fragment in enumerate(fragments):
        hit = None if row_groups is not None else one_range(zonemaps, fragment)
        if hit is None:
            rest.append(i)
        else:
            proj = tuple(sorted(dict.fromkeys([*fragment.columns, *fragment.predicated_columns])))
            by_key.setdefault((hit[0], proj), []).append((i, hit[1]))
    for (column, proj), members in by_key.items():
        read = cached_read_bytes(zonemaps, proj)
        read_int = read.astype(np.int64)
        if not (read_int == read).all() or int(np.abs(read_int).sum()) >= EXACT_TOTAL:
            rest.extend(i for i, _ in members)
            continue
        e = _ends(zonemaps, column)
        at = np.array([i for i, _ in members], dtype=np.int64)
        fa, a_inc, fb, b_inc = (np.array([b[k] for _, b in members]) for k in range(4))
        a_inc, b_inc = a_inc.astype(bool), b_inc.astype(bool)
        # lo <= fb (inclusive) or lo < fb; excluded below: hi < fa (inclusive) or hi <= fa
        upto = np.where(b_inc, np.searchsorted(e.lo, fb, side="right"), np.searchsorted(e.lo, fb, side="left"))
        below = np.where(a_inc, np.searchsorted(e.hi, fa, side="left"), np.searchsorted(e.hi, fa, side="right"))
        cum_lo = np.concatenate([[0], np.cumsum(read_int[e.lo_order])])
        cum_hi = np.concatenate([[0], np.cumsum(read_int[e.hi_order])])
        out[at] = (cum_lo[upto] - cum_hi[below] + int(read_int[e.unknown].sum())).astype(np.float64)
    if rest:
        rest.sort()
        out[rest] = analyze_workload(zonemaps, [fragments[i] for i in rest], row_groups).bytes_scanned()
    return out
