"""Pruning analysis: which partitions each scan fragment prunes, scans, fully covers.

CONTRACT (other modules code against it; the implementation fills in the functions):

``analyze_fragment(zonemaps, fragment) -> FragmentScan`` works on the driver with numpy
only, conservatively (a missing bound means "might match"). Utilization is the estimated
fraction of a scanned partition's rows that match (uniform within the zonemap range),
1.0 for fully covered partitions and 0.0 for pruned ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from engine import values

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
    lo = None if rng.min is None else values.encode_scalar(ltype, rng.min)
    hi = None if rng.max is None else values.encode_scalar(ltype, rng.max)
    return lo, bool(rng.min_inclusive), hi, bool(rng.max_inclusive)


def _string_ranks(zonemaps: "ZoneMaps", column: str) -> np.ndarray:
    """Sorted distinct endpoints of a string column, cached on the ZoneMaps object."""
    cache = zonemaps.__dict__.setdefault("_pruning_rank_cache", {})
    if column not in cache:
        czm = zonemaps.columns[column]
        ok = np.asarray(czm.valid, dtype=bool)
        cache[column] = np.unique(np.concatenate([czm.lo[ok], czm.hi[ok]]))
    return cache[column]


def _column_test(zonemaps: "ZoneMaps", column: str, rng: "Range"
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(might, covered, fraction) of one range on one column, per partition."""
    n = len(zonemaps)
    if column not in zonemaps.columns:
        return np.ones(n, bool), np.zeros(n, bool), np.ones(n)
    czm = zonemaps.columns[column]
    ltype = czm.ltype
    valid = np.asarray(czm.valid, dtype=bool)
    a, a_inc, b, b_inc = _encoded_bounds(ltype, rng)
    lo, hi = czm.lo, czm.hi
    if isinstance(a, float) and np.isnan(a):
        a = None
    if isinstance(b, float) and np.isnan(b):
        b = None
    with np.errstate(invalid="ignore"):
        below = np.zeros(n, bool) if a is None else ((hi < a) | ((hi == a) & (not a_inc)))
        above = np.zeros(n, bool) if b is None else ((lo > b) | ((lo == b) & (not b_inc)))
        inside_lo = np.ones(n, bool) if a is None else ((lo > a) | ((lo == a) & a_inc))
        inside_hi = np.ones(n, bool) if b is None else ((hi < b) | ((hi == b) & b_inc))
    if a is not None and b is not None and (a > b or (a == b and not (a_inc and b_inc))):
        return np.zeros(n, bool), np.zeros(n, bool), np.zeros(n)  # empty range
    rows = zonemaps.rows
    nulls = np.asarray(czm.null_count, dtype=np.int64)
    all_null = (nulls >= 0) & (nulls >= rows)
    nonnull_share = np.where((nulls > 0) & (rows > 0),
                             1.0 - np.minimum(nulls, rows) / np.maximum(rows, 1), 1.0)
    might = (~valid | (~below & ~above)) & ~all_null
    covered = valid & inside_lo & inside_hi & (nulls <= 0) & (rows > 0)
    frac = np.ones(n)
    v = np.flatnonzero(valid & might)
    if len(v):
        vl, vh = lo[v], hi[v]
        if ltype == "string":
            ranks = _string_ranks(zonemaps, column)
            rl = np.searchsorted(ranks, vl, side="left")
            rh = np.searchsorted(ranks, vh, side="left")
            ra = -1 if a is None else np.searchsorted(ranks, a, side="left" if a_inc else "right")
            rb = len(ranks) if b is None else (
                np.searchsorted(ranks, b, side="right" if b_inc else "left") - 1)
            count = np.minimum(rh, rb) - np.maximum(rl, ra) + 1
            share = count / (rh - rl + 1)
        elif ltype in DISCRETE_TYPES:
            fa = -np.inf if a is None else (np.ceil(a) if a_inc else np.floor(a) + 1)
            fb = np.inf if b is None else (np.floor(b) if b_inc else np.ceil(b) - 1)
            count = np.minimum(vh, fb) - np.maximum(vl, fa) + 1
            share = count / (vh - vl + 1)
            might[v[count <= 0]] = False  # no integer point of the range in [min, max]
        else:
            fa = -np.inf if a is None else a
            fb = np.inf if b is None else b
            width = vh - vl
            inter = np.minimum(vh, fb) - np.maximum(vl, fa)
            share = np.where(width > 0, inter / np.where(width > 0, width, 1.0), 1.0)
        frac[v] = np.clip(share, 0.0, 1.0)
    frac = frac * nonnull_share
    frac[~might] = 0.0
    return might, covered & might, frac


def analyze_fragment(zonemaps: "ZoneMaps", fragment: "ScanFragment") -> FragmentScan:
    """Which partitions ``fragment`` scans, fully covers and how well it uses them.

    Vectorized over partitions, a loop over boxes and their columns (see the notes above).
    A fragment without boxes cannot be pruned: every partition is scanned and, since no
    range of it could be served better by any ordering, counted as fully used.
    """
    n = len(zonemaps)
    predicated = fragment.predicated_columns
    wanted = list(dict.fromkeys([*fragment.columns, *predicated]))
    read = zonemaps.read_bytes(wanted or None)
    if not fragment.boxes:
        ones = np.ones(n, bool)
        return FragmentScan(fragment.query_id, ones, ones.copy(), np.ones(n), read, predicated)
    scanned = np.zeros(n, bool)
    covered = np.zeros(n, bool)
    util = np.zeros(n)
    for box in fragment.boxes:
        b_might = np.ones(n, bool)
        b_cov = np.ones(n, bool)
        b_frac = np.ones(n)
        for column, rng in box.items():
            might, cov, frac = _column_test(zonemaps, column, rng)
            b_might &= might
            b_cov &= cov
            b_frac *= frac
        scanned |= b_might
        covered |= b_cov & b_might
        util += np.where(b_might, b_frac, 0.0)
    util = np.where(covered, 1.0, np.where(scanned, np.minimum(util, 1.0), 0.0))
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
