"""Pruning estimated from zonemaps: the per-column arithmetic and the dense evaluator.

``analyze_fragment_dense(zonemaps, fragment) -> FragmentScan`` works on the driver with
numpy only, conservatively (a missing bound means "might match"). Utilization is the
estimated fraction of a scanned partition's rows that match (uniform within the zonemap
range), 1.0 for fully covered partitions and 0.0 for pruned ones. The faster evaluators
(:mod:`engine.scan.endpoints`, :mod:`engine.scan.batched`) run the same element-wise
arithmetic (:func:`column_match`, :func:`column_fraction`) on fewer partitions, so their
answers agree to the last bit.

For each box (a conjunction of per-column ranges) and each constrained column, three
per-partition arrays are computed with numpy:

* ``might``: the zonemap does not prove that no row satisfies the range. Conservative as
  in pyiceberg's metrics evaluator: unknown bounds or an unknown column might match. A
  range comparison is never true for NULL, so a partition whose rows are all NULL in
  the column (``null_count == rows``, empty partitions included) cannot match.
* ``covered``: every row satisfies the range: known bounds inside it and no NULLs
  (an unknown null count is taken as none, as Parquet writers always record it).
* ``fraction``: the estimated share of rows satisfying the range, values assumed uniform
  within ``[min, max]`` (WAIR section 4.1): the covered share of the range for
  continuous types (float, decimal), the covered share of the integer points for
  discrete ones (int, date, timestamp in microseconds, bool), and for strings the covered
  share of *ranks* among all distinct zonemap endpoints of the column (an equi-depth
  assumption: no arithmetic on strings); times the non-NULL share of the partition.

A partition is scanned when some box might match on every constrained column; fully
covered when some box covers it on every constrained column; its utilization is 1.0
when fully covered, else the sum over boxes of the product of the column fractions,
capped at 1 (boxes of one fragment rarely overlap), and 0.0 when pruned.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.core import logical_types
from engine.scan.fragment_scan import FragmentScan

if TYPE_CHECKING:
    from engine.table.model import ZoneMaps
    from engine.workload.model import Range, ScanFragment

#: logical types whose coordinates are integer points (strings become ranks, also discrete)
DISCRETE_TYPES = ("int", "date", "timestamp", "bool")


def _encoded_bounds(ltype: str, rng: "Range") -> tuple[Any, bool, Any, bool]:
    """(low, low_inclusive, high, high_inclusive) encoded; None for an open end."""
    lo = None if rng.min is None else logical_types.encode_scalar(ltype, rng.min)
    hi = None if rng.max is None else logical_types.encode_scalar(ltype, rng.max)
    return lo, bool(rng.min_inclusive), hi, bool(rng.max_inclusive)


@dataclass(frozen=True)
class PreparedColumn:
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
    ordered: bool  # lo <= hi wherever known (the sorted-endpoint identities need it)


def prepared_column(zonemaps: "ZoneMaps", column: str) -> PreparedColumn:
    """The column's :class:`PreparedColumn`, computed once and kept on ``zonemaps``."""
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
    prep = PreparedColumn(kind, lo, hi, inv, floor, None if valid.all() else valid,
                          unknown_might if unknown_might.any() else None,
                          no_nulls, share, ranks, finite,
                          bool((lo <= hi).all()))  # lo = hi = 0 where unknown
    cache[column] = prep
    return prep


def range_bounds(prep: PreparedColumn, ltype: str, rng: "Range") -> tuple[float, bool, float, bool] | None:
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
    per element, the batched evaluator). :func:`column_match` and
    :func:`column_fraction` are the one place of this arithmetic, so a range gives the
    same bits whichever evaluator runs it."""
    might, covered = column_match(kind, lo, hi, no_nulls, valid, unknown_might, fa, a_inc, fb, b_inc)
    return might, covered, column_fraction(kind, finite, lo, hi, inv, floor, share, fa, fb)


def column_match(kind: str, lo: np.ndarray, hi: np.ndarray, no_nulls: np.ndarray,
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


def column_fraction(kind: str, finite: bool, lo: np.ndarray, hi: np.ndarray, inv: np.ndarray,
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
    prep = prepared_column(zonemaps, column)
    bounds = range_bounds(prep, zonemaps.columns[column].ltype, rng)
    if bounds is None:  # an empty range
        return np.zeros(n, bool), np.zeros(n, bool), np.zeros(n)
    fa, a_inc, fb, b_inc = bounds
    return _column_eval(prep.kind, prep.finite, _take(prep.lo, sel), _take(prep.hi, sel),
                        _take(prep.inv_width, sel), _take(prep.frac_floor, sel),
                        _take(prep.no_nulls, sel), _take(prep.valid, sel),
                        _take(prep.unknown_might, sel), _take(prep.nonnull_share, sel),
                        fa, a_inc, fb, b_inc)


#: what :func:`box_bounds` returns for a box that an empty range makes match nothing
EMPTY_BOX = "empty"


def box_bounds(zonemaps: "ZoneMaps", box: dict) -> tuple[tuple[str, ...], list[tuple | None]] | str | None:
    """A box's columns and each one's prepared bounds (None: a column outside the
    zonemaps); ``EMPTY_BOX`` when an empty range makes the box match nothing; None when no
    column of the box is in the zonemaps (it restricts nothing: the per-fragment path)."""
    bounds: list[tuple | None] = []
    for column, rng in box.items():
        if column not in zonemaps.columns:
            bounds.append(None)
            continue
        b = range_bounds(prepared_column(zonemaps, column), zonemaps.columns[column].ltype, rng)
        if b is None:
            return EMPTY_BOX
        bounds.append(b)
    if all(b is None for b in bounds):
        return None
    return tuple(box), bounds


def one_range(zonemaps: "ZoneMaps", fragment: "ScanFragment") -> tuple[str, tuple] | None:
    """``(column, (fa, a_inc, fb, b_inc))`` when ``fragment`` is one range on one column that
    sums over the column's sorted endpoints answer exactly (:mod:`engine.scan.counts`,
    :mod:`engine.scan.window_bytes`): one box of one zonemap column, a non-empty range,
    finite coordinates and ``lo <= hi`` wherever the bounds are known; else None."""
    if len(fragment.boxes) != 1 or len(fragment.boxes[0]) != 1:
        return None
    parsed = box_bounds(zonemaps, fragment.boxes[0])
    if parsed is None or parsed is EMPTY_BOX:
        return None
    (column,), (bounds,) = parsed
    prep = prepared_column(zonemaps, column)
    if not prep.finite or not bounds[0] <= bounds[2] or not prep.ordered:
        return None
    return column, bounds


#: projections whose read-bytes arrays are kept (each is 8 bytes per partition)
READ_BYTES_CACHE = 32


def cached_read_bytes(zonemaps: "ZoneMaps", columns: tuple[str, ...]) -> np.ndarray:
    """``zonemaps.read_bytes(columns)`` cached per column set (callers must not mutate)."""
    cache = zonemaps.__dict__.setdefault("_pruning_read_bytes", {})
    key = tuple(sorted(columns))
    if key not in cache:
        if len(cache) >= READ_BYTES_CACHE:
            cache.pop(next(iter(cache)))
        cache[key] = zonemaps.read_bytes(list(key) or None)
        cache[key].setflags(write=False)
    return cache[key]


def evaluate_boxes(zonemaps: "ZoneMaps", fragment: "ScanFragment", sel: np.ndarray | None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(scanned, covered, utilization) of a fragment with boxes, over all partitions or
    over ``sel`` (see the module notes)."""
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
    read = cached_read_bytes(zonemaps, tuple(dict.fromkeys([*fragment.columns, *predicated])))
    if not fragment.boxes:
        ones = np.ones(n, bool)
        return FragmentScan(fragment.query_id, ones, ones.copy(), np.ones(n), read, predicated)
    scanned, covered, util = evaluate_boxes(zonemaps, fragment, None)
    return FragmentScan(fragment.query_id, scanned, covered, util, read, predicated)
