"""The Workload page's query table, query finder and histograms at warehouse scale.

At 1,000,000 partitions x 10,000 queries, raw histogram points and the table of every
query would be most of what the page sends over the websocket (bench/ui/README.md).
Here the table is sorted once with numpy and sent a page at a time (:func:`query_page`,
as :func:`engine.api.partition_page` does for partitions), a query is found by id or SQL
text (:func:`find_queries`) instead of listing every id in the picker, and histograms are
binned here (:func:`histogram_bins`): the browser receives the bins' counts, not the points.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from engine.summaries.analysis import one_query_scan, snapshot_of
from engine.core.errors import InvalidParameterError
from engine.scan.pruning import FragmentScan

if TYPE_CHECKING:
    from engine.workspace import Workspace
    from engine.workload.model import ScanFragment

__all__ = ["QUERY_SORT_KEYS", "query_page", "find_queries", "histogram_bins", "query_scan"]

#: what the query table can be ordered by: ``log`` (the import order) or a column of
#: :func:`engine.api.pruning_summary`'s rows
QUERY_SORT_KEYS = ("log", "query_id", "ts", "predicated_columns", "partitions", "scanned",
                   "pruned", "fully_covered", "boundary", "pruning_rate", "selectivity",
                   "average_utilization", "bytes_scanned", "wasted_bytes")


def _key(columns: Mapping[str, Any], sort: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(key, known) per query for ``sort``; missing values (None, NaN, absent column) are
    unknown and listed last whatever the direction."""
    if sort == "log":
        return np.arange(n), np.ones(n, dtype=bool)
    if sort not in columns:
        return np.zeros(n), np.zeros(n, dtype=bool)
    values = columns[sort]
    values = np.asarray(values.to_numpy() if hasattr(values, "to_numpy") else list(values))
    if values.dtype.kind in "biuf":
        key = values.astype(float)
        known = ~np.isnan(key)
        return np.where(known, key, 0.0), known
    known = np.array([v is not None and v == v for v in values], dtype=bool)  # v == v: not NaN
    return np.array([str(v) if k else "" for v, k in zip(values, known)]), known


def query_page(columns: Mapping[str, Any], *, sort: str = "log", descending: bool = False,
               offset: int = 0, limit: int = 100) -> dict[str, Any]:
    """One page of the query table: ``{"total", "offset", "index"}``.

    ``columns`` maps a column name to one value per query in log order (a pandas
    DataFrame of :func:`engine.api.pruning_summary`'s rows works); ``index`` holds the
    positions of rows ``offset`` to ``offset + limit`` ordered by ``sort`` (one of
    :data:`QUERY_SORT_KEYS`), ties in log order, missing values last. One numpy sort, no
    Python object per row: the page builds only its rows. Ask for the whole order once
    (``limit`` = total) and slice it to page through one sort.

    Example (wasted bytes 5, 9, 5, 1: the largest first, ties in log order):
    >>> cols = {"wasted_bytes": [5.0, 9.0, 5.0, 1.0], "query_id": ["q1", "q2", "q3", "q4"]}
    >>> query_page(cols, sort="wasted_bytes", descending=True)["index"].tolist()
    [1, 0, 2, 3]
    >>> query_page(cols, sort="query_id", descending=True, offset=1, limit=2)["index"].tolist()
    [2, 1]
    """
    if sort not in QUERY_SORT_KEYS:
        raise InvalidParameterError(
            f"sort must be one of {', '.join(QUERY_SORT_KEYS)}, not {sort!r}")
    if offset < 0 or limit < 1:
        raise InvalidParameterError("offset must be >= 0 and limit >= 1")
    n = len(columns["query_id"]) if "query_id" in columns else \
        len(next(iter(columns.values()), []))
    key, known = _key(columns, sort, n)
    # dense ranks work for every key type (strings included) and negate for descending
    _, rank = np.unique(key, return_inverse=True)
    rank = rank.reshape(-1)
    order = np.lexsort((np.arange(n), -rank if descending else rank, ~known))
    return {"total": n, "offset": int(offset), "index": order[offset:offset + limit]}


def find_queries(query_ids: Sequence[Any], text: str, sql: Sequence[Any] | None = None,
                 limit: int = 50) -> np.ndarray:
    """Positions of the queries ``text`` finds, at most ``limit``: the query whose id is
    ``text`` first, then ids starting with it, then ids containing it, then (with ``sql``)
    queries whose SQL contains it; case-insensitive, each tier in log order. An empty
    ``text`` finds nothing.

    Example:
    >>> find_queries(["s1", "s10", "s2", "xs1"], "S1").tolist()
    [0, 1, 3]
    >>> find_queries(["a", "b"], "shipdate", sql=["... l_commitdate ...", "... l_shipdate"]).tolist()
    [1]
    """
    text = str(text).strip().lower()
    if not text or limit < 1:
        return np.zeros(0, dtype=np.int64)
    ids = np.char.lower(np.asarray([str(q) for q in query_ids], dtype=str))
    tier = np.full(len(ids), 4, dtype=np.int64)
    if sql is not None:
        body = np.char.lower(np.asarray([str(s or "") for s in sql], dtype=str))
        tier[np.char.find(body, text) >= 0] = 3
    tier[np.char.find(ids, text) >= 0] = 2
    tier[np.char.startswith(ids, text)] = 1
    tier[ids == text] = 0
    hit = np.flatnonzero(tier < 4)
    return hit[np.argsort(tier[hit], kind="stable")][:limit]


def histogram_bins(values: Any, bins: int = 40,
                   value_range: tuple[float, float] | None = None) -> dict[str, np.ndarray]:
    """``{"edges", "counts"}``: ``bins`` equal bins over ``value_range`` (default: the
    values' min to max) and how many values fall in each (``numpy.histogram``: the last bin
    holds its right edge); NaN / NaT values are left out. Datetimes (``datetime64``) keep
    datetime edges. A chart draws the bins, so a browser receives ``bins`` counts instead
    of one point per value (300,000 scanned partitions made a 3 MB histogram).

    Example:
    >>> out = histogram_bins([0.0, 10.0, 55.0, 100.0, float("nan")], bins=4, value_range=(0, 100))
    >>> out["edges"].tolist(), out["counts"].tolist()
    ([0.0, 25.0, 50.0, 75.0, 100.0], [2, 0, 1, 1])
    """
    if bins < 1:
        raise InvalidParameterError("bins must be >= 1")
    vals = np.asarray(values.to_numpy() if hasattr(values, "to_numpy") else values)
    if vals.dtype.kind == "M":
        stamps = vals.astype("datetime64[ns]")
        ok = ~np.isnat(stamps)
        ints = stamps[ok].astype(np.int64).astype(float)
        if value_range is None and len(ints) and ints.min() == ints.max():
            value_range = (ints[0] - 3.6e12, ints[0] + 3.6e12)  # one instant: an hour each side
        out = histogram_bins(ints, bins, value_range)
        edges = np.round(out["edges"]).astype(np.int64).astype("datetime64[ns]")
        return {"edges": edges, "counts": out["counts"]}
    vals = vals.astype(float)
    vals = vals[~np.isnan(vals)]
    if value_range is None:
        value_range = (float(vals.min()), float(vals.max())) if len(vals) else (0.0, 1.0)
    lo, hi = float(value_range[0]), float(value_range[1])
    if hi <= lo:  # one distinct value: one bin around it
        lo, hi = lo - 0.5, lo + 0.5
    counts, edges = np.histogram(vals, bins=bins, range=(lo, hi))
    return {"edges": edges, "counts": counts.astype(np.int64)}


def query_scan(ws: "Workspace", table: str, fragment: "ScanFragment",
               snapshot_id: str | None = None) -> FragmentScan:
    """:func:`engine.api.fragment_scan` of a fragment the caller already holds (the
    dashboard keeps the workload's fragments): the same answer without reading the whole
    stored workload again to find one query (10,000 fragments: 0.3-0.8 s a query picked);
    charged by row groups with ``settings.prune_row_groups``, as :func:`fragment_scan`."""
    return one_query_scan(ws, table, snapshot_of(ws, table, snapshot_id), fragment)
