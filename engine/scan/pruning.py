"""Pruning analysis: which partitions each scan fragment prunes, scans, fully covers.

``analyze_fragment(zonemaps, fragment) -> FragmentScan`` works on the driver with numpy
only, conservatively (a missing bound means "might match"). Utilization is the estimated
fraction of a scanned partition's rows that match (uniform within the zonemap range),
1.0 for fully covered partitions and 0.0 for pruned ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from engine.core import logical_types

if TYPE_CHECKING:
    from engine.table.model import ZoneMaps
    from engine.workload.model import Range, ScanFragment


@dataclass(frozen=True)
class FragmentScan:
    """Per-partition outcome of one fragment over one snapshot (arrays align with ZoneMaps)."""

    query_id: str
    scanned: np.ndarray  # bool
    fully_covered: np.ndarray  # bool, subset of scanned
    utilization: np.ndarray  # float in [0, 1]; 0 where pruned
    read_bytes: np.ndarray  # float: projection-aware bytes read per partition if scanned
    predicated_columns: tuple[str, ...]

    @property
    def boundary(self) -> np.ndarray:
        return self.scanned & ~self.fully_covered

    @property
    def pruned(self) -> np.ndarray:
        return ~self.scanned

    @property
    def bytes_scanned(self) -> float:
        return float(self.read_bytes[self.scanned].sum())

    @property
    def pruning_rate(self) -> float:
        n = len(self.scanned)
        return float((~self.scanned).sum() / n) if n else 0.0


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


def _column_test(zonemaps: "ZoneMaps", column: str, rng: "Range"
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(might, covered, fraction) of one range on one column, per partition; the fraction
    is meaningful only where ``might`` holds (the caller masks it)."""
    n = len(zonemaps)
    if column not in zonemaps.columns:
        return np.ones(n, bool), np.zeros(n, bool), np.ones(n)
    ltype = zonemaps.columns[column].ltype
    prep = _prepared(zonemaps, column)
    a, a_inc, b, b_inc = _encoded_bounds(ltype, rng)
    if isinstance(a, float) and np.isnan(a):
        a = None
    if isinstance(b, float) and np.isnan(b):
        b = None
    if a is not None and b is not None and (a > b or (a == b and not (a_inc and b_inc))):
        return np.zeros(n, bool), np.zeros(n, bool), np.zeros(n)  # an empty range
    lo, hi = prep.lo, prep.hi
    if prep.kind == "discrete":
        # inclusive integer bounds: first and last point of the range
        if prep.ranks is not None:
            fa = -np.inf if a is None else float(
                np.searchsorted(prep.ranks, a, side="left" if a_inc else "right"))
            fb = np.inf if b is None else float(
                np.searchsorted(prep.ranks, b, side="right" if b_inc else "left") - 1)
        else:
            fa = -np.inf if a is None else (np.ceil(a) if a_inc else np.floor(a) + 1.0)
            fb = np.inf if b is None else (np.floor(b) if b_inc else np.ceil(b) - 1.0)
        if fa > fb and prep.ranks is None:  # no integer point in the range: empty
            return np.zeros(n, bool), np.zeros(n, bool), np.zeros(n)
        # (for string ranks, fa > fb only says no zonemap endpoint lies in the range; a
        # partition spanning it may still hold matching values: the tests below say which)
        might = (hi >= fa) & (lo <= fb)
        covered = (lo >= fa) & (hi <= fb)
        inter = np.minimum(hi, fb) - np.maximum(lo, fa) + 1.0
    else:
        fa = -np.inf if a is None else float(a)
        fb = np.inf if b is None else float(b)
        might = (hi > fa if not a_inc else hi >= fa) & (lo < fb if not b_inc else lo <= fb)
        covered = (lo > fa if not a_inc else lo >= fa) & (hi < fb if not b_inc else hi <= fb)
        inter = np.minimum(hi, fb) - np.maximum(lo, fa)
    covered &= prep.no_nulls
    if prep.valid is not None:  # filled bounds of unknown partitions mean nothing
        might &= prep.valid
        if prep.unknown_might is not None:
            might |= prep.unknown_might
    with np.errstate(invalid="ignore"):
        frac = np.clip(inter * prep.inv_width, 0.0, 1.0)
    frac += prep.frac_floor
    if not prep.finite:
        frac = np.nan_to_num(frac, nan=1.0)
    np.minimum(frac, 1.0, out=frac)
    if prep.nonnull_share is not None:
        frac *= prep.nonnull_share
    return might, covered, frac


def _read_bytes(zonemaps: "ZoneMaps", columns: tuple[str, ...]) -> np.ndarray:
    """``zonemaps.read_bytes(columns)`` cached per column set (callers must not mutate)."""
    cache = zonemaps.__dict__.setdefault("_pruning_read_bytes", {})
    key = tuple(sorted(columns))
    if key not in cache:
        if len(cache) > 256:
            cache.clear()
        cache[key] = zonemaps.read_bytes(list(key) or None)
        cache[key].setflags(write=False)
    return cache[key]


def analyze_fragment(zonemaps: "ZoneMaps", fragment: "ScanFragment") -> FragmentScan:
    """Which partitions ``fragment`` scans, fully covers and how well it uses them.

    Vectorized over partitions, a loop over boxes and their columns (see the notes above).
    A fragment without boxes cannot be pruned: every partition is scanned and, since no
    range of it could be served better by any ordering, counted as fully used.
    """
    n = len(zonemaps)
    predicated = fragment.predicated_columns
    read = _read_bytes(zonemaps, tuple(dict.fromkeys([*fragment.columns, *predicated])))
    if not fragment.boxes:
        ones = np.ones(n, bool)
        return FragmentScan(fragment.query_id, ones, ones.copy(), np.ones(n), read, predicated)
    scanned = covered = util = None
    for box in fragment.boxes:
        b_might = b_cov = b_frac = None
        for column, rng in box.items():
            might, cov, frac = _column_test(zonemaps, column, rng)
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
    return FragmentScan(fragment.query_id, scanned, covered, util, read, predicated)


def analyze_workload(zonemaps: "ZoneMaps", fragments: Sequence["ScanFragment"]) -> list[FragmentScan]:
    """:func:`analyze_fragment` for every fragment, in order."""
    return [analyze_fragment(zonemaps, f) for f in fragments]


def fragment_summary(scan: FragmentScan) -> dict[str, Any]:
    """Per-query counts for reports: partitions scanned, pruned, fully covered, boundary,
    the pruning rate, projection-aware bytes scanned, and the bytes a perfect layout
    would not have read (``wasted_bytes = sum((1 - u) * read_bytes)`` over scanned ones)."""
    s = scan.scanned
    used = scan.utilization[s]
    return {
        "query_id": scan.query_id,
        "partitions": int(len(s)),
        "scanned": int(s.sum()),
        "pruned": int((~s).sum()),
        "fully_covered": int(scan.fully_covered.sum()),
        "boundary": int(scan.boundary.sum()),
        "pruning_rate": round(scan.pruning_rate, 6),
        "bytes_scanned": scan.bytes_scanned,
        "wasted_bytes": float(((1.0 - used) * scan.read_bytes[s]).sum()),
        "average_utilization": round(float(used.mean()), 6) if len(used) else 0.0,
        "predicated_columns": list(scan.predicated_columns),
    }
