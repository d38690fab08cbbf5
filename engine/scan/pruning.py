"""Pruning analysis: which partitions each scan fragment prunes, scans, fully covers.

``analyze_fragment(zonemaps, fragment) -> FragmentScan`` works on the driver with numpy
only, conservatively (a missing bound means "might match"). Utilization is the estimated
fraction of a scanned partition's rows that match (uniform within the zonemap range),
1.0 for fully covered partitions and 0.0 for pruned ones.
"""

from __future__ import annotations

from collections.abc import Sequence as SequenceABC
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import numpy as np

from engine.core import logical_types

if TYPE_CHECKING:
    from engine.scan.rowgroups import RowGroupMaps
    from engine.table.model import ZoneMaps
    from engine.workload.model import Range, ScanFragment


class FragmentScan:
    """Outcome of one fragment over one snapshot, held sparsely (issue 15).

    Only the partitions the fragment scans are stored: ``index`` (sorted partition
    positions in ZoneMaps order), and aligned with it ``covered`` (fully covered) and
    ``util`` (utilization in [0, 1]). Everything else is pruned: utilization 0. Memory is
    O(scanned partitions), not O(partitions), so a window of 100,000 queries over
    1,000,000 partitions fits. ``read_bytes`` is the dense, shared, read-only
    projection-aware bytes per partition (one array per distinct projection).

    The constructor takes the dense arrays of the original interface (consumers that
    build scans themselves keep working); :meth:`sparse` builds one from the index. The
    properties ``scanned``, ``fully_covered`` and ``utilization`` are dense *views* built
    on each access (O(partitions) each): for callers that need them, not for loops over
    a large window.

    >>> s = FragmentScan("q", np.array([True, False, True]), np.array([True, False, False]),
    ...                  np.array([1.0, 0.0, 0.25]), np.array([5.0, 6.0, 7.0]), ("a",))
    >>> s.index.tolist(), s.boundary_index.tolist(), s.utilization.tolist()
    ([0, 2], [2], [1.0, 0.0, 0.25])
    """

    __slots__ = ("query_id", "n", "index", "covered", "util", "read_bytes", "predicated_columns",
                 "charged", "row_groups")

    def __init__(self, query_id: str, scanned: np.ndarray, fully_covered: np.ndarray,
                 utilization: np.ndarray, read_bytes: np.ndarray,
                 predicated_columns: tuple[str, ...]) -> None:
        scanned = np.asarray(scanned, dtype=bool)
        idx = np.flatnonzero(scanned)
        self._set(query_id, len(scanned), idx, np.asarray(fully_covered, dtype=bool)[idx],
                  np.asarray(utilization, dtype=np.float64)[idx], read_bytes, predicated_columns)

    def _set(self, query_id: str, n: int, index: np.ndarray, covered: np.ndarray,
             util: np.ndarray, read_bytes: np.ndarray, predicated: tuple[str, ...],
             charged: np.ndarray | None = None, row_groups: tuple[int, int] | None = None) -> None:
        for name, value in (("query_id", query_id), ("n", int(n)), ("index", index),
                            ("covered", covered), ("util", util), ("read_bytes", read_bytes),
                            ("predicated_columns", tuple(predicated)), ("charged", charged),
                            ("row_groups", row_groups)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("FragmentScan is immutable")

    @classmethod
    def sparse(cls, query_id: str, n: int, index: np.ndarray, covered: np.ndarray,
               util: np.ndarray, read_bytes: np.ndarray,
               predicated_columns: tuple[str, ...], charged: np.ndarray | None = None,
               row_groups: tuple[int, int] | None = None) -> "FragmentScan":
        """A scan from its scanned partitions (``index`` sorted, unique, within ``n``).

        ``charged`` (aligned with ``index``) is what each scanned partition costs when
        less than its whole ``read_bytes`` is read (row-group pruning,
        :mod:`engine.scan.rowgroups`); ``row_groups`` is then (row groups read, row groups
        of the table)."""
        scan = object.__new__(cls)
        scan._set(query_id, n, np.asarray(index, dtype=np.int64), np.asarray(covered, dtype=bool),
                  np.asarray(util, dtype=np.float64), read_bytes, predicated_columns,
                  None if charged is None else np.asarray(charged, dtype=np.float64), row_groups)
        return scan

    def renamed(self, query_id: str) -> "FragmentScan":
        """The same outcome for another (identical) query: arrays shared, not copied."""
        return FragmentScan.sparse(query_id, self.n, self.index, self.covered, self.util,
                                   self.read_bytes, self.predicated_columns, self.charged,
                                   self.row_groups)

    def __repr__(self) -> str:
        return (f"FragmentScan({self.query_id!r}, n={self.n}, scanned={self.index.size}, "
                f"covered={int(self.covered.sum())})")

    # dense views (O(partitions) per access)
    @property
    def scanned(self) -> np.ndarray:
        out = np.zeros(self.n, dtype=bool)
        out[self.index] = True
        return out

    @property
    def fully_covered(self) -> np.ndarray:
        out = np.zeros(self.n, dtype=bool)
        out[self.index[self.covered]] = True
        return out

    @property
    def utilization(self) -> np.ndarray:
        out = np.zeros(self.n, dtype=np.float64)
        out[self.index] = self.util
        return out

    @property
    def boundary(self) -> np.ndarray:
        out = np.zeros(self.n, dtype=bool)
        out[self.boundary_index] = True
        return out

    @property
    def pruned(self) -> np.ndarray:
        return ~self.scanned

    # sparse accessors (O(scanned))
    @property
    def boundary_index(self) -> np.ndarray:
        """Scanned partitions that are not fully covered (WAIR's boundary partitions)."""
        return self.index[~self.covered]

    @property
    def scanned_count(self) -> int:
        return int(self.index.size)

    @property
    def scanned_bytes(self) -> np.ndarray:
        """Bytes each scanned partition costs (aligned with ``index``): its whole
        ``read_bytes``, or only its row groups' share under row-group pruning."""
        return self.read_bytes[self.index] if self.charged is None else self.charged

    @property
    def waste(self) -> np.ndarray:
        """Bytes each scanned partition reads that the query does not need (aligned with
        ``index``): ``(1 - u) * read_bytes``, or under row-group pruning what is charged
        beyond the matching share ``u * read_bytes`` (``util`` stays the share of the
        whole partition's rows)."""
        read = self.read_bytes[self.index]
        if self.charged is None:
            return (1.0 - self.util) * read
        return np.maximum(self.charged - self.util * read, 0.0)

    @property
    def bytes_scanned(self) -> float:
        return float(self.scanned_bytes.sum())

    @property
    def pruning_rate(self) -> float:
        return float((self.n - self.index.size) / self.n) if self.n else 0.0


# --------------------------------------------------------------------------------------
# Estimation from zonemaps
# --------------------------------------------------------------------------------------
#
# For each box (a conjunction of per-column ranges) and each constrained column, three
# per-partition arrays are computed with numpy:
#
# * ``might``: the zonemap does not prove that no row satisfies the range. Conservative as
#   in pyiceberg's metrics evaluator: unknown bounds or an unknown column might match. A
#   range comparison is never true for NULL, so a partition whose rows are all NULL in
#   the column (``null_count == rows``, empty partitions included) cannot match.
# * ``covered``: every row satisfies the range: known bounds inside it and no NULLs
#   (an unknown null count is taken as none, as Parquet writers always record it).
# * ``fraction``: the estimated share of rows satisfying the range, values assumed uniform
#   within ``[min, max]`` (WAIR section 4.1): the covered share of the range for
#   continuous types (float, decimal), the covered share of the integer points for
#   discrete ones (int, date, timestamp in microseconds, bool), and for strings the covered
#   share of *ranks* among all distinct zonemap endpoints of the column (an equi-depth
#   assumption: no arithmetic on strings); times the non-NULL share of the partition.
#
# A partition is scanned when some box might match on every constrained column; fully
# covered when some box covers it on every constrained column; its utilization is 1.0
# when fully covered, else the sum over boxes of the product of the column fractions,
# capped at 1 (boxes of one fragment rarely overlap), and 0.0 when pruned.

DISCRETE_TYPES = ("int", "date", "timestamp", "bool")


def _encoded_bounds(ltype: str, rng: "Range") -> tuple[Any, bool, Any, bool]:
    """(low, low_inclusive, high, high_inclusive) encoded; None for an open end."""
    lo = None if rng.min is None else logical_types.encode_scalar(ltype, rng.min)
    hi = None if rng.max is None else logical_types.encode_scalar(ltype, rng.max)
    return lo, bool(rng.min_inclusive), hi, bool(rng.max_inclusive)


@dataclass(frozen=True)
class _Prepared:
    """Per-column arrays that do not depend on the query, computed once per ZoneMaps.

    Every type is brought to one of two shapes: *discrete* coordinates (ints, dates,
    timestamps, bools as encoded; strings as ranks among the column's distinct endpoints),
    where a range becomes inclusive integer bounds, or *continuous* ones (floats,
    decimals). ``lo``/``hi`` are filled with 0 where unknown so arithmetic stays finite.
    """

    kind: str  # "discrete" | "continuous"
    lo: np.ndarray
    hi: np.ndarray
    inv_width: np.ndarray  # 1 / (points or length in the range); 0 where unknown/constant
    frac_floor: np.ndarray  # 1.0 where unknown (no information) or constant (continuous)
    valid: np.ndarray | None  # known bounds (None when all are known)
    unknown_might: np.ndarray | None  # unknown bounds, not all NULL: might match
    no_nulls: np.ndarray  # known bounds, rows > 0, no NULLs: can be fully covered
    nonnull_share: np.ndarray | None  # share of non-NULL rows where some are NULL
    ranks: np.ndarray | None  # strings: sorted distinct endpoints
    finite: bool


def _prepared(zonemaps: "ZoneMaps", column: str) -> _Prepared:
    cache = zonemaps.__dict__.setdefault("_pruning_cache", {})
    if column in cache:
        return cache[column]
    czm = zonemaps.columns[column]
    valid = np.asarray(czm.valid, dtype=bool)
    rows = np.asarray(zonemaps.rows, dtype=np.int64)
    nulls = np.asarray(czm.null_count, dtype=np.int64)
    all_null = (nulls >= 0) & (nulls >= rows)
    unknown_might = ~valid & ~all_null
    no_nulls = valid & (nulls <= 0) & (rows > 0)
    some_null = (nulls > 0) & (rows > 0)
    share = (np.where(some_null, 1.0 - np.minimum(nulls, rows) / np.maximum(rows, 1), 1.0)
             if some_null.any() else None)
    ranks = None
    if czm.ltype == "string":
        ranks = np.unique(np.concatenate([czm.lo[valid], czm.hi[valid]]))
        lo = np.where(valid, np.searchsorted(ranks, czm.lo), 0).astype(np.float64)
        hi = np.where(valid, np.searchsorted(ranks, czm.hi), 0).astype(np.float64)
        kind = "discrete"
    else:
        lo = np.where(valid, czm.lo, 0.0).astype(np.float64)
        hi = np.where(valid, czm.hi, 0.0).astype(np.float64)
        kind = "discrete" if czm.ltype in DISCRETE_TYPES else "continuous"
    finite = bool(np.isfinite(lo).all() and np.isfinite(hi).all())
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "discrete":
            inv = np.where(valid, 1.0 / (hi - lo + 1.0), 0.0)
            floor = np.where(valid, 0.0, 1.0)
        else:
            width = hi - lo
            inv = np.where(valid & (width > 0), 1.0 / width, 0.0)
            floor = np.where(valid & (width > 0), 0.0, 1.0)
    prep = _Prepared(kind, lo, hi, inv, floor, None if valid.all() else valid,
                     unknown_might if unknown_might.any() else None,
                     no_nulls, share, ranks, finite)
    cache[column] = prep
    return prep


def _range_bounds(prep: _Prepared, ltype: str, rng: "Range") -> tuple[float, bool, float, bool] | None:
    """``(fa, a_inc, fb, b_inc)`` of a range in the prepared coordinates (±inf for an open
    end; inclusive integer points for discrete kinds), or None when the range is empty."""
    a, a_inc, b, b_inc = _encoded_bounds(ltype, rng)
    if isinstance(a, float) and np.isnan(a):
        a = None
    if isinstance(b, float) and np.isnan(b):
        b = None
    if a is not None and b is not None and (a > b or (a == b and not (a_inc and b_inc))):
        return None
    if prep.kind == "continuous":
        return (-np.inf if a is None else float(a), a_inc,
                np.inf if b is None else float(b), b_inc)
    if prep.ranks is not None:
        fa = -np.inf if a is None else float(
            np.searchsorted(prep.ranks, a, side="left" if a_inc else "right"))
        fb = np.inf if b is None else float(
            np.searchsorted(prep.ranks, b, side="right" if b_inc else "left") - 1)
        # fa > fb only says no zonemap endpoint lies in the range; a partition spanning it
        # may still hold matching values: the tests below say which
        return fa, True, fb, True
    fa = -np.inf if a is None else (np.ceil(a) if a_inc else np.floor(a) + 1.0)
    fb = np.inf if b is None else (np.floor(b) if b_inc else np.ceil(b) - 1.0)
    if fa > fb:  # no integer point in the range: empty
        return None
    return fa, True, fb, True


def _take(arr: np.ndarray | None, sel: np.ndarray | None) -> np.ndarray | None:
    return arr if arr is None or sel is None else arr[sel]


def _column_eval(kind: str, finite: bool, lo: np.ndarray, hi: np.ndarray, inv: np.ndarray,
                 floor: np.ndarray, no_nulls: np.ndarray, valid: np.ndarray | None,
                 unknown_might: np.ndarray | None, share: np.ndarray | None,
                 fa: Any, a_inc: Any, fb: Any, b_inc: Any
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(might, covered, fraction) from gathered per-partition arrays and a range's
    prepared bounds: scalars (one range) or arrays aligned with the partitions (one range
    per element, the batched evaluator). :func:`_column_match` and
    :func:`_column_fraction` are the one place of this arithmetic, so a range gives the
    same bits whichever evaluator runs it."""
    might, covered = _column_match(kind, lo, hi, no_nulls, valid, unknown_might, fa, a_inc, fb, b_inc)
    return might, covered, _column_fraction(kind, finite, lo, hi, inv, floor, share, fa, fb)


def _column_match(kind: str, lo: np.ndarray, hi: np.ndarray, no_nulls: np.ndarray,
                  valid: np.ndarray | None, unknown_might: np.ndarray | None,
                  fa: Any, a_inc: Any, fb: Any, b_inc: Any) -> tuple[np.ndarray, np.ndarray]:
    """(might, covered); inclusive flags only matter for the continuous kind (discrete
    bounds are inclusive points)."""
    if kind == "discrete":
        might = (hi >= fa) & (lo <= fb)
        covered = (lo >= fa) & (hi <= fb)
    else:
        might = _cmp(hi, fa, a_inc, np.greater_equal, np.greater) & _cmp(
            lo, fb, b_inc, np.less_equal, np.less)
        covered = _cmp(lo, fa, a_inc, np.greater_equal, np.greater) & _cmp(
            hi, fb, b_inc, np.less_equal, np.less)
    covered &= no_nulls
    if valid is not None:  # filled bounds of unknown partitions mean nothing
        might &= valid
        if unknown_might is not None:
            might |= unknown_might
    return might, covered


def _column_fraction(kind: str, finite: bool, lo: np.ndarray, hi: np.ndarray, inv: np.ndarray,
                     floor: np.ndarray, share: np.ndarray | None, fa: Any, fb: Any) -> np.ndarray:
    """The estimated matching share (meaningful where the partition might match)."""
    if kind == "discrete":
        inter = np.minimum(hi, fb) - np.maximum(lo, fa) + 1.0
    else:
        inter = np.minimum(hi, fb) - np.maximum(lo, fa)
    with np.errstate(invalid="ignore"):
        frac = np.clip(inter * inv, 0.0, 1.0)
    frac += floor
    if not finite:
        frac = np.nan_to_num(frac, nan=1.0)
    np.minimum(frac, 1.0, out=frac)
    if share is not None:
        frac *= share
    return frac


def _cmp(x: np.ndarray, bound: Any, inclusive: Any, inc_op: Any, exc_op: Any) -> np.ndarray:
    """``inc_op(x, bound)`` where inclusive, else ``exc_op``; ``inclusive`` a bool or a
    per-element array."""
    if isinstance(inclusive, (bool, np.bool_)):
        return inc_op(x, bound) if inclusive else exc_op(x, bound)
    return np.where(inclusive, inc_op(x, bound), exc_op(x, bound))


def _column_test(zonemaps: "ZoneMaps", column: str, rng: "Range", sel: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(might, covered, fraction) of one range on one column, per partition (of ``sel``
    only when given: the same element-wise arithmetic on gathered arrays, so the answers
    are bit-identical to the dense ones); the fraction is meaningful only where
    ``might`` holds (the caller masks it)."""
    n = len(zonemaps) if sel is None else len(sel)
    if column not in zonemaps.columns:
        return np.ones(n, bool), np.zeros(n, bool), np.ones(n)
    prep = _prepared(zonemaps, column)
    bounds = _range_bounds(prep, zonemaps.columns[column].ltype, rng)
    if bounds is None:  # an empty range
        return np.zeros(n, bool), np.zeros(n, bool), np.zeros(n)
    fa, a_inc, fb, b_inc = bounds
    return _column_eval(prep.kind, prep.finite, _take(prep.lo, sel), _take(prep.hi, sel),
                        _take(prep.inv_width, sel), _take(prep.frac_floor, sel),
                        _take(prep.no_nulls, sel), _take(prep.valid, sel),
                        _take(prep.unknown_might, sel), _take(prep.nonnull_share, sel),
                        fa, a_inc, fb, b_inc)


#: projections whose read-bytes arrays are kept (each is 8 bytes per partition)
READ_BYTES_CACHE = 32


def _read_bytes(zonemaps: "ZoneMaps", columns: tuple[str, ...]) -> np.ndarray:
    """``zonemaps.read_bytes(columns)`` cached per column set (callers must not mutate)."""
    cache = zonemaps.__dict__.setdefault("_pruning_read_bytes", {})
    key = tuple(sorted(columns))
    if key not in cache:
        if len(cache) >= READ_BYTES_CACHE:
            cache.pop(next(iter(cache)))
        cache[key] = zonemaps.read_bytes(list(key) or None)
        cache[key].setflags(write=False)
    return cache[key]


def _evaluate(zonemaps: "ZoneMaps", fragment: "ScanFragment", sel: np.ndarray | None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(scanned, covered, utilization) of a fragment with boxes, over all partitions or
    over ``sel`` (see the notes above)."""
    n = len(zonemaps) if sel is None else len(sel)
    scanned = covered = util = None
    for box in fragment.boxes:
        b_might = b_cov = b_frac = None
        for column, rng in box.items():
            might, cov, frac = _column_test(zonemaps, column, rng, sel)
            if b_might is None:
                b_might, b_cov, b_frac = might, cov, frac
            else:
                b_might = b_might & might
                b_cov = b_cov & cov
                b_frac = b_frac * frac
        if b_might is None:  # an empty box: no constraint, every row matches
            b_might, b_cov, b_frac = np.ones(n, bool), np.ones(n, bool), np.ones(n)
        b_util = np.where(b_might, b_frac, 0.0)
        if scanned is None:
            scanned, covered, util = b_might, b_cov & b_might, b_util
        else:
            scanned = scanned | b_might
            covered = covered | (b_cov & b_might)
            util = np.minimum(util + b_util, 1.0)
    util[covered] = 1.0
    return scanned, covered, util


def analyze_fragment_dense(zonemaps: "ZoneMaps", fragment: "ScanFragment") -> FragmentScan:
    """The reference evaluator: every partition tested (O(partitions) per range).

    :func:`analyze_fragment` must give exactly the same answer (property-tested); keep
    this one simple. A fragment without boxes cannot be pruned: every partition is
    scanned and, since no range of it could be served better by any ordering, counted as
    fully used.
    """
    n = len(zonemaps)
    predicated = fragment.predicated_columns
    read = _read_bytes(zonemaps, tuple(dict.fromkeys([*fragment.columns, *predicated])))
    if not fragment.boxes:
        ones = np.ones(n, bool)
        return FragmentScan(fragment.query_id, ones, ones.copy(), np.ones(n), read, predicated)
    scanned, covered, util = _evaluate(zonemaps, fragment, None)
    return FragmentScan(fragment.query_id, scanned, covered, util, read, predicated)


# --------------------------------------------------------------------------------------
# Fast pruning: per-column sorted endpoints (issue 15)
# --------------------------------------------------------------------------------------
#
# A partition can match a range [fa, fb] of a column only if lo <= fb and hi >= fa (with
# the bounds of ``_range_bounds``; exclusive ends only shrink that set). Per column, the
# partitions with known, non-NaN bounds are sorted by lo; ``pmax`` is the running maximum
# of hi in that order. With q = #(lo <= fb) and j = the first position where pmax >= fa,
# every candidate lies in order[j:q] (before j every hi < fa; from q on every lo > fb):
# two binary searches, then the exact test on those positions only. Partitions with
# unknown bounds that might match are always candidates. The window order[j:q] holds the
# k answers plus the partitions of lo < fa whose hi is below fa but after a wider one
# in lo order: none when widths are about equal (a clustered or an ingestion-ordered
# column), so the cost is O(log n + k) there; at worst it degrades to the dense scan.


@dataclass(frozen=True)
class _ColumnIndex:
    order: np.ndarray  # partition positions with known, non-NaN bounds, sorted by lo
    lo_sorted: np.ndarray
    pmax: np.ndarray  # running max of hi in that order
    always: np.ndarray  # positions that might match whatever the range (unknown bounds)
    #: how to sort a window's positions: "stable" (a merge sort, linear on presorted runs)
    #: when lo order mostly follows table order (an ingestion-ordered column), else
    #: numpy's default quicksort (faster on random positions)
    sort_kind: str = "quicksort"


def _column_index(zonemaps: "ZoneMaps", column: str) -> _ColumnIndex:
    cache = zonemaps.__dict__.setdefault("_pruning_index", {})
    if column in cache:
        return cache[column]
    prep = _prepared(zonemaps, column)
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
    idx = _ColumnIndex(order, lo_sorted, pmax, always, "stable" if ascending > 0.9 else "quicksort")
    cache[column] = idx
    return idx


@dataclass(frozen=True)
class _SortedColumn:
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


def _sorted_column(zonemaps: "ZoneMaps", column: str) -> _SortedColumn:
    cache = zonemaps.__dict__.setdefault("_pruning_sorted", {})
    if column not in cache:
        prep, order = _prepared(zonemaps, column), _column_index(zonemaps, column).order
        cache[column] = _SortedColumn(
            _column_index(zonemaps, column).lo_sorted, prep.hi[order], prep.inv_width[order],
            prep.frac_floor[order], prep.no_nulls[order],
            None if prep.nonnull_share is None else prep.nonnull_share[order])
    return cache[column]


def _candidates(zonemaps: "ZoneMaps", column: str, rng: "Range") -> np.ndarray | None:
    """Unsorted positions that might match ``rng`` on ``column`` (a superset of the exact
    answer); None when the column does not restrict anything (not in the zonemaps)."""
    if column not in zonemaps.columns:
        return None
    prep = _prepared(zonemaps, column)
    bounds = _range_bounds(prep, zonemaps.columns[column].ltype, rng)
    if bounds is None:
        return np.zeros(0, dtype=np.int64)
    fa, _, fb, _ = bounds
    ix = _column_index(zonemaps, column)
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
    searches on the column's sorted endpoints (O(log n + k), see above) instead of a
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
    prep, ix = _prepared(zonemaps, column), _column_index(zonemaps, column)
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
    column (see above); the exact test of :func:`analyze_fragment_dense` then runs on
    those partitions only, so the answer is the same to the last bit.
    """
    predicated = fragment.predicated_columns
    if not fragment.boxes:
        return analyze_fragment_dense(zonemaps, fragment)
    n = len(zonemaps)
    read = _read_bytes(zonemaps, tuple(dict.fromkeys([*fragment.columns, *predicated])))
    sel = _fragment_candidates(zonemaps, fragment)
    scanned, covered, util = _evaluate(zonemaps, fragment, sel)
    base = np.arange(n, dtype=np.int64) if sel is None else sel
    return FragmentScan.sparse(fragment.query_id, n, base[scanned], covered[scanned],
                               util[scanned], read, predicated)


# --------------------------------------------------------------------------------------
# Batched pruning: a whole window at once (issue 15)
# --------------------------------------------------------------------------------------
#
# Per query, the path above pays some fifty numpy calls on arrays of ~k elements: at
# 100,000 queries that Python overhead, not the arithmetic, is the cost. The batched path
# takes every fragment whose boxes each constrain a column of the zonemaps; a fragment of
# several boxes (an OR, an IN list) is split into one-box parts that are batched with the
# rest (others, with no box or an unconstrained one, go through the path above):
#
# 1. each range's prepared bounds (one Python call per range: value encoding);
# 2. per column, the two binary searches of every range on it at once
#    (``np.searchsorted`` with arrays of bounds); per box the column with the fewest
#    candidates drives, as above;
# 3. fragments grouped by (driving column, box columns in order); per group, chunks of
#    fragments whose candidate windows are laid end to end: the driving column's arrays
#    read from its sorted copy (contiguous), the other columns gathered by position, the
#    bounds repeated per element; :func:`_column_eval` then runs once per column over the
#    chunk with the same element-wise arithmetic as the path above, so the bits agree
#    (property-tested);
# 4. the scanned elements sorted by (fragment, partition) and cut into one sparse
#    :class:`FragmentScan` per fragment;
# 5. a several-box fragment's parts merged per partition (:func:`_merge_boxes`): scanned
#    by some box, covered by some box, utilization accumulated box by box in the
#    fragment's order with :func:`_evaluate`'s ``min(util + box_util, 1)``. A box that
#    does not scan a partition adds exactly 0.0 there, so skipping it keeps the bits.

#: candidate elements evaluated together: ~30 temporaries of this length must stay in
#: the CPU caches (measured at 1M partitions x 10k queries: 2.1x the per-fragment path
#: at 65,536, 0.8-1.2x at 2,000,000 where the arrays spill to memory)
BATCH_ELEMENTS = 65_536

_EMPTY = "empty"


def _box_bounds(zonemaps: "ZoneMaps", box: dict) -> tuple[tuple[str, ...], list[tuple | None]] | str | None:
    """A box's columns and each one's prepared bounds (None: a column outside the
    zonemaps); ``_EMPTY`` when an empty range makes the box match nothing; None when no
    column of the box is in the zonemaps (it restricts nothing: the per-fragment path)."""
    bounds: list[tuple | None] = []
    for column, rng in box.items():
        if column not in zonemaps.columns:
            bounds.append(None)
            continue
        b = _range_bounds(_prepared(zonemaps, column), zonemaps.columns[column].ltype, rng)
        if b is None:
            return _EMPTY
        bounds.append(b)
    if all(b is None for b in bounds):
        return None
    return tuple(box), bounds


def _boxes(zonemaps: "ZoneMaps", fragment: "ScanFragment"
           ) -> list[tuple[int, tuple[str, ...], list[tuple | None]]] | None:
    """(box number, columns, bounds) of every box of ``fragment`` that can match (boxes
    with an empty range dropped: they add nothing), or None for the per-fragment path (no
    box, or a box that restricts nothing: every partition is a candidate)."""
    if not fragment.boxes:
        return None
    out = []
    for k, box in enumerate(fragment.boxes):
        parsed = _box_bounds(zonemaps, box) if box else None
        if parsed is None:
            return None
        if parsed is not _EMPTY:
            out.append((k, *parsed))
    return out


def _windows(zonemaps: "ZoneMaps", column: str, fa: np.ndarray, fb: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
    """Candidate windows ``order[j:q]`` of many ranges on one column (``q >= j``)."""
    ix = _column_index(zonemaps, column)
    q = np.searchsorted(ix.lo_sorted, fb, side="right")
    j = np.searchsorted(ix.pmax, fa, side="left")
    return j, np.maximum(q, j)


def _ragged(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``concatenate([arange(s, s + l) for s, l in zip(starts, lengths)])`` in numpy."""
    total = int(lengths.sum())
    ends = np.cumsum(lengths)
    return np.arange(total, dtype=np.int64) + np.repeat(starts - (ends - lengths), lengths)


#: one group's bounds per box column: (fa, a_inc, fb, b_inc) arrays over its fragments,
#: None for a column outside the zonemaps
_Bounds = list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None]


def _eval_chunk(zonemaps: "ZoneMaps", columns: tuple[str, ...], drive: int, bounds: _Bounds,
                j: np.ndarray, q: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Scanned (fragment, position, covered, utilization) of a chunk of one-box fragments
    sharing ``columns`` and the driving column ``columns[drive]``, grouped by fragment
    (positions in window order); ``bounds`` are the chunk's bounds, ``j``/``q`` its
    candidate windows.

    Two passes: which candidates might match and which are covered (every element), then
    the matching fraction only for the scanned, not covered ones (a range much wider
    than its partitions covers most of what it scans, whose utilization is 1 whatever
    the fraction): the same arithmetic per element as :func:`_evaluate`, on fewer."""
    m = len(j)
    ix = _column_index(zonemaps, columns[drive])
    lengths = q - j
    win = _ragged(j, lengths)
    frag = np.repeat(np.arange(m), lengths)
    pos = ix.order[win]
    if ix.always.size:  # unknown bounds: candidates of every range
        frag = np.concatenate([frag, np.repeat(np.arange(m), ix.always.size)])
        pos = np.concatenate([pos, np.tile(ix.always, m)])
    srcs = [None if bounds[c] is None else _Source(zonemaps, column, pos, win if c == drive else None)
            for c, column in enumerate(columns)]
    per_el = [None if b is None else _per_element(b, lengths, ix.always.size) for b in bounds]
    b_might = np.ones(pos.size, bool)
    b_cov = b_might.copy()
    for c, src in enumerate(srcs):
        if src is None:  # outside the zonemaps: might match, never covers
            b_cov[:] = False
            continue
        fa, a_inc, fb, b_inc = per_el[c]
        might, cov = _column_match(src.prep.kind, src.lo, src.hi, src.read("no_nulls"),
                                   src.valid(), src.unknown_might(), fa, a_inc, fb, b_inc)
        b_might &= might
        b_cov &= cov
    covered = b_cov & b_might
    util = covered.astype(np.float64)
    part = np.flatnonzero(b_might & ~covered)
    b_frac = None
    for c, src in enumerate(srcs):
        if src is None:
            frac = np.ones(part.size)
        else:
            fa, _, fb, _ = per_el[c]
            frac = _column_fraction(src.prep.kind, src.prep.finite, src.lo[part], src.hi[part],
                                    src.read("inv_width", part), src.read("frac_floor", part),
                                    src.read("nonnull_share", part), _at(fa, part), _at(fb, part))
        b_frac = frac if b_frac is None else b_frac * frac
    util[part] = b_frac
    keep = np.flatnonzero(b_might)
    if ix.always.size:  # two runs sorted by fragment: a stable sort merges them
        keep = keep[np.argsort(frag[keep], kind="stable")]
    return frag[keep], pos[keep], covered[keep], util[keep]


def _at(value: Any, el: np.ndarray) -> Any:
    """A per-element bound at the elements ``el`` (a scalar bound as it is)."""
    return value[el] if isinstance(value, np.ndarray) else value


class _Source:
    """Where a chunk's elements read one column's prepared arrays: the driving column's
    window elements from its sorted copy (contiguous), every other element by position.
    ``lo`` and ``hi`` are read for every element; the rest on demand, for all or some."""

    def __init__(self, zonemaps: "ZoneMaps", column: str, pos: np.ndarray,
                 win: np.ndarray | None) -> None:
        self.prep = _prepared(zonemaps, column)
        self.srt = None if win is None else _sorted_column(zonemaps, column)
        self.pos, self.win = pos, win
        self.lo, self.hi = self.read("lo"), self.read("hi")

    def read(self, name: str, el: np.ndarray | None = None) -> np.ndarray | None:
        """The prepared array ``name`` at every element, or at the elements ``el``."""
        dense = getattr(self.prep, name)
        if dense is None:
            return None
        if self.win is None:
            return dense[self.pos] if el is None else dense[self.pos[el]]
        srt, w = getattr(self.srt, name), self.win.size
        if el is None:
            head = srt[self.win]
            return np.concatenate([head, dense[self.pos[w:]]]) if self.pos.size > w else head
        out = np.empty(el.size, dtype=dense.dtype)
        inside = el < w
        out[inside] = srt[self.win[el[inside]]]
        out[~inside] = dense[self.pos[el[~inside]]]
        return out

    def valid(self) -> np.ndarray | None:
        """Known bounds (None: all known); the window's partitions all have them."""
        if self.prep.valid is None:
            return None
        if self.win is None:
            return self.prep.valid[self.pos]
        rest = self.pos[self.win.size:]
        return None if not rest.size else np.concatenate([np.ones(self.win.size, bool),
                                                          self.prep.valid[rest]])

    def unknown_might(self) -> np.ndarray | None:
        """Unknown bounds that might match, where :meth:`valid` is given."""
        if self.valid() is None or self.prep.unknown_might is None:
            return None
        if self.win is None:
            return self.prep.unknown_might[self.pos]
        return np.concatenate([np.zeros(self.win.size, bool),
                               self.prep.unknown_might[self.pos[self.win.size:]]])


def _per_element(bounds: tuple[np.ndarray, ...], lengths: np.ndarray, always: int
                 ) -> tuple[Any, ...]:
    """A chunk's (fa, a_inc, fb, b_inc) repeated over its elements (window elements
    fragment by fragment, then ``always`` elements per fragment); an inclusive flag the
    whole chunk shares stays one bool (a plain comparison instead of a select)."""
    out: list[Any] = []
    for k, arr in enumerate(bounds):
        if k in (1, 3) and (arr.all() or not arr.any()):
            out.append(bool(arr[0]) if arr.size else True)
            continue
        el = np.repeat(arr, lengths)
        out.append(np.concatenate([el, np.repeat(arr, always)]) if always else el)
    return tuple(out)


def analyze_fragments(zonemaps: "ZoneMaps", fragments: Sequence["ScanFragment"]
                      ) -> list[FragmentScan]:
    """:func:`analyze_fragment` of every fragment, batched over the fragments (see the
    notes above): the same results, bit for bit, in far fewer numpy calls. What a
    caller pruning many queries against one snapshot should use (``WindowScans`` does).
    """
    out: list[FragmentScan | None] = [None] * len(fragments)
    groups: dict[tuple[str, ...], list[tuple[_Target, list]]] = {}
    pending: dict[int, list[_Part]] = {}  # several-box fragments: their boxes' parts
    for i, frag in enumerate(fragments):
        boxes = _boxes(zonemaps, frag)
        if boxes is None:
            out[i] = analyze_fragment(zonemaps, frag)
        elif not boxes:  # every box holds an empty range
            out[i] = _scan_of(zonemaps, frag, np.zeros(0, np.int64), np.zeros(0, bool), np.zeros(0))
        else:
            several = len(boxes) > 1
            if several:
                pending[i] = []
            for k, columns, bounds in boxes:
                groups.setdefault(columns, []).append(((i, k if several else None), bounds))
    for columns, members in groups.items():
        bounds = _group_bounds(members, len(columns))
        for drive, j, q, chosen in _drive(zonemaps, columns, bounds):
            sub = [None if b is None else tuple(a[chosen] for a in b) for b in bounds]
            _eval_group(zonemaps, columns, drive, [members[k][0] for k in chosen], sub, j, q,
                        fragments, out, pending)
    for i, parts in pending.items():
        out[i] = _scan_of(zonemaps, fragments[i], *_merge_boxes(parts))
    return out  # type: ignore[return-value]  # every slot is filled above


#: who a batched one-box evaluation is for: (fragment position, box number), the box
#: number None when the fragment has one box (its scan is final)
_Target = tuple[int, "int | None"]
#: one box's scanned partitions: (box number, positions, covered, utilization)
_Part = tuple[int, np.ndarray, np.ndarray, np.ndarray]


def _merge_boxes(parts: list[_Part]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(index, covered, utilization) of a several-box fragment from its boxes' scanned
    partitions, exactly as :func:`_evaluate` folds boxes: scanned by any, covered by any
    (then utilization 1), else ``util = min(util + box_util, 1.0)`` in box order. Boxes
    that do not scan a partition are skipped there: adding their 0.0 changes no bit (the
    running utilization is in [0, 1])."""
    box = np.concatenate([np.full(p[1].size, p[0], dtype=np.int64) for p in parts])
    pos = np.concatenate([p[1] for p in parts])
    cov = np.concatenate([p[2] for p in parts])
    util = np.concatenate([p[3] for p in parts])
    o = np.lexsort((box, pos))  # by partition, then box order
    pos, cov, util = pos[o], cov[o], util[o]
    first = np.ones(pos.size, dtype=bool)
    first[1:] = pos[1:] != pos[:-1]
    starts = np.flatnonzero(first)
    index = pos[starts]
    if index.size == pos.size:  # no partition scanned by two boxes: nothing to fold
        return index, cov, util
    covered = np.logical_or.reduceat(cov, starts)
    acc = util[starts].copy()
    group = np.cumsum(first) - 1
    rank = np.arange(pos.size) - starts[group]
    for r in range(1, int(rank.max()) + 1):  # the r-th box scanning each partition
        el = np.flatnonzero(rank == r)
        acc[group[el]] = np.minimum(acc[group[el]] + util[el], 1.0)
    acc[covered] = 1.0
    return index, covered, acc


def _group_bounds(members: list[tuple[_Target, list]], width: int) -> _Bounds:
    """Per box column, the prepared bounds of every member as arrays."""
    out: _Bounds = []
    for c in range(width):
        if members[0][1][c] is None:
            out.append(None)
            continue
        fa, a_inc, fb, b_inc = zip(*(b[c] for _, b in members))
        out.append((np.array(fa, dtype=np.float64), np.array(a_inc, dtype=bool),
                    np.array(fb, dtype=np.float64), np.array(b_inc, dtype=bool)))
    return out


def _drive(zonemaps: "ZoneMaps", columns: tuple[str, ...], bounds: _Bounds
           ) -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
    """The vectorised look-ups of one group: every range's window on every column of the
    box (two ``searchsorted`` calls per column for all ranges), then per fragment the
    column with the fewest candidates (the first on ties, as :func:`_fragment_candidates`).
    Yields (driving column, j, q, member positions) per driving column."""
    m = len(next(b for b in bounds if b is not None)[0])
    counts = np.full((m, len(columns)), np.iinfo(np.int64).max, dtype=np.int64)
    js, qs = np.zeros_like(counts), np.zeros_like(counts)
    for c, column in enumerate(columns):
        if bounds[c] is not None:
            js[:, c], qs[:, c] = _windows(zonemaps, column, bounds[c][0], bounds[c][2])
            counts[:, c] = qs[:, c] - js[:, c] + _column_index(zonemaps, column).always.size
    drive = np.argmin(counts, axis=1)
    for c in np.unique(drive):
        chosen = np.flatnonzero(drive == c)
        yield int(c), js[chosen, c], qs[chosen, c], chosen


def _eval_group(zonemaps: "ZoneMaps", columns: tuple[str, ...], drive: int,
                positions: list[_Target], bounds: _Bounds, j: np.ndarray, q: np.ndarray,
                fragments: Sequence["ScanFragment"], out: list,
                pending: dict[int, list[_Part]]) -> None:
    """Evaluate the boxes at ``positions`` (one group, one driving column) in chunks of
    about :data:`BATCH_ELEMENTS` candidates; store a one-box fragment's scan in ``out``,
    a box of a several-box fragment in ``pending`` (merged once all its boxes are in)."""
    ix = _column_index(zonemaps, columns[drive])
    extra, kind = ix.always.size, ix.sort_kind
    sizes = np.cumsum(q - j + extra)
    start = 0
    while start < len(positions):
        base = sizes[start - 1] if start else 0
        stop = max(start + 1, int(np.searchsorted(sizes, base + BATCH_ELEMENTS, side="right")))
        part = [None if b is None else tuple(a[start:stop] for a in b) for b in bounds]
        frag, pos, cov, util = _eval_chunk(zonemaps, columns, drive, part,
                                           j[start:stop], q[start:stop])
        cuts = np.searchsorted(frag, np.arange(stop - start + 1))
        for k, (i, box) in enumerate(positions[start:stop]):
            a, b = cuts[k], cuts[k + 1]
            if box is not None:  # merged (and sorted) with the fragment's other boxes
                pending[i].append((box, pos[a:b].copy(), cov[a:b].copy(), util[a:b].copy()))
                continue
            o = np.argsort(pos[a:b], kind=kind) + a  # one small sort per fragment
            out[i] = _scan_of(zonemaps, fragments[i], pos[o], cov[o], util[o])
        start = stop


def _scan_of(zonemaps: "ZoneMaps", fragment: "ScanFragment", index: np.ndarray,
             covered: np.ndarray, util: np.ndarray) -> FragmentScan:
    predicated = fragment.predicated_columns
    read = _read_bytes(zonemaps, tuple(dict.fromkeys([*fragment.columns, *predicated])))
    return FragmentScan.sparse(fragment.query_id, len(zonemaps), index, covered, util, read,
                               predicated)


def fragment_key(fragment: "ScanFragment") -> tuple:
    """What makes two fragments' pruning identical: their boxes (column order kept: it
    fixes the float arithmetic) and the columns they read."""
    boxes = tuple(tuple(box.items()) for box in fragment.boxes)
    return boxes, tuple(dict.fromkeys([*fragment.columns, *fragment.predicated_columns]))


#: fragments a lazy window prunes together (a batch of ~1,000 scanned partitions each
#: holds ~17 MB of results before the memo)
BATCH_FRAGMENTS = 1024


class _Memo:
    """Pruning outcomes by :func:`fragment_key`, at most ``entries`` scanned partitions
    in all (the oldest outcome goes first)."""

    def __init__(self, entries: int) -> None:
        self.scans: dict[tuple, FragmentScan] = {}
        self.size, self.entries = 0, entries

    def put(self, key: tuple, scan: FragmentScan) -> None:
        self.scans[key] = scan
        self.size += scan.index.size
        while self.size > self.entries and len(self.scans) > 1:
            self.size -= self.scans.pop(next(iter(self.scans))).index.size


class WindowScans(SequenceABC):
    """The :class:`FragmentScan` of each fragment of a window, computed on access.

    Identical fragments (same boxes and projection, :func:`fragment_key`) are pruned
    once; up to ``memo_entries`` scanned partitions are kept in a memo (oldest dropped
    first), so a small window is analyzed once and a window of 100,000 queries over
    1,000,000 partitions streams in O(partitions + queries) memory. :meth:`distinct`
    yields each distinct outcome once with the positions of its fragments: what the
    streaming savings fold (``engine.policy.wair.savings``).
    """

    def __init__(self, zonemaps: "ZoneMaps", fragments: Sequence["ScanFragment"],
                 memo_entries: int = 20_000_000, row_groups: "RowGroupMaps | None" = None) -> None:
        self.zonemaps = zonemaps
        self.row_groups = row_groups
        self.fragments = list(fragments)
        self._keys = [fragment_key(f) for f in self.fragments]
        self._memo = _Memo(memo_entries)
        self._bytes: dict[tuple, float] = {}  # bytes scanned per key: kept past the memo

    def __len__(self) -> int:
        return len(self.fragments)

    def _scan(self, i: int) -> FragmentScan:
        key = self._keys[i]
        scan = self._memo.scans.get(key)
        if scan is None:
            scan = self._refined(analyze_fragment(self.zonemaps, self.fragments[i]), i)
            self._memo.put(key, scan)
            self._bytes[key] = scan.bytes_scanned
        return scan

    def _scans(self, positions: Sequence[int]) -> list[FragmentScan]:
        """The outcomes at ``positions`` (first fragment's query id), the ones not in the
        memo pruned together by :func:`analyze_fragments`."""
        todo: dict[tuple, int] = {}
        for i in positions:
            key = self._keys[i]
            if key not in self._memo.scans:
                todo.setdefault(key, i)
        fresh = dict(zip(todo, (self._refined(scan, i) for scan, i in zip(
            analyze_fragments(self.zonemaps, [self.fragments[i] for i in todo.values()]),
            todo.values()))))
        for key, scan in fresh.items():
            self._memo.put(key, scan)
            self._bytes[key] = scan.bytes_scanned
        return [fresh.get(self._keys[i]) or self._memo.scans.get(self._keys[i]) or self._scan(i)
                for i in positions]

    def _refined(self, scan: FragmentScan, i: int) -> FragmentScan:
        """The file-level outcome charged by row groups when the window has them."""
        if self.row_groups is None:
            return scan
        from engine.scan.rowgroups import refine  # it builds on this module
        return refine(scan, self.row_groups, self.fragments[i], self.zonemaps.rows)

    def bytes_scanned(self) -> np.ndarray:
        """``[scan.bytes_scanned for scan in self]`` without pruning again what was pruned
        once: one float per distinct fragment is kept whatever the memo drops (a window of
        100,000 queries over 1,000,000 partitions holds ~85 M scanned entries, beyond the
        memo: iterating it a second time prunes it a second time)."""
        missing = [i for i, k in enumerate(self._keys) if k not in self._bytes]
        for start in range(0, len(missing), BATCH_FRAGMENTS):
            self._scans(missing[start:start + BATCH_FRAGMENTS])
        return np.array([self._bytes[k] for k in self._keys], dtype=np.float64)

    def _named(self, scan: FragmentScan, i: int) -> FragmentScan:
        qid = self.fragments[i].query_id
        return scan if scan.query_id == qid else scan.renamed(qid)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return WindowScans._view(self, range(len(self))[i])
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        return self._named(self._scan(i), i)

    def __iter__(self) -> Iterator[FragmentScan]:
        """Every fragment's outcome in order, pruned :data:`BATCH_FRAGMENTS` at a time."""
        for start in range(0, len(self), BATCH_FRAGMENTS):
            positions = range(start, min(start + BATCH_FRAGMENTS, len(self)))
            for i, scan in zip(positions, self._scans(positions)):
                yield self._named(scan, i)

    @classmethod
    def _view(cls, parent: "WindowScans", positions: range) -> "WindowScans":
        view = object.__new__(cls)
        view.zonemaps = parent.zonemaps
        view.row_groups = parent.row_groups
        view.fragments = [parent.fragments[p] for p in positions]
        view._keys = [parent._keys[p] for p in positions]
        view._memo = parent._memo  # shared: a slice reuses what the whole has analyzed
        view._bytes = parent._bytes
        return view

    def distinct(self) -> Iterator[tuple[FragmentScan, list[int]]]:
        """Each distinct outcome once, in first-seen order, with the positions of the
        fragments that share it (the scan carries the first one's query id); pruned
        :data:`BATCH_FRAGMENTS` distinct fragments at a time."""
        members: dict[tuple, list[int]] = {}
        for i, key in enumerate(self._keys):
            members.setdefault(key, []).append(i)
        groups = list(members.values())
        for start in range(0, len(groups), BATCH_FRAGMENTS):
            block = groups[start:start + BATCH_FRAGMENTS]
            for positions, scan in zip(block, self._scans([p[0] for p in block])):
                yield self._named(scan, positions[0]), positions


def analyze_workload(zonemaps: "ZoneMaps", fragments: Sequence["ScanFragment"],
                     row_groups: "RowGroupMaps | None" = None) -> WindowScans:
    """:func:`analyze_fragment` for every fragment, in order, computed lazily (a
    :class:`WindowScans`: iterate it, index it, or fold its :meth:`~WindowScans.distinct`
    outcomes). With ``row_groups`` (:mod:`engine.scan.rowgroups`) files of several row
    groups are charged only the row groups a query meets; None keeps the file level."""
    return WindowScans(zonemaps, fragments, row_groups=row_groups)


def fragment_summary(scan: FragmentScan) -> dict[str, Any]:
    """Per-query counts for reports: partitions scanned, pruned, fully covered, boundary,
    the pruning rate, projection-aware bytes scanned, and the bytes a perfect layout
    would not have read (``wasted_bytes = sum((1 - u) * read_bytes)`` over scanned ones).
    O(scanned partitions): works on the sparse scan."""
    used = scan.util
    covered = int(scan.covered.sum())
    out = {
        "query_id": scan.query_id,
        "partitions": scan.n,
        "scanned": scan.scanned_count,
        "pruned": scan.n - scan.scanned_count,
        "fully_covered": covered,
        "boundary": scan.scanned_count - covered,
        "pruning_rate": round(scan.pruning_rate, 6),
        "bytes_scanned": scan.bytes_scanned,
        "wasted_bytes": float(scan.waste.sum()),
        "average_utilization": round(float(used.mean()), 6) if len(used) else 0.0,
        "predicated_columns": list(scan.predicated_columns),
    }
    if scan.row_groups is not None:  # row-group pruning (engine.scan.rowgroups)
        out["row_groups_read"], out["row_groups"] = scan.row_groups
    return out
