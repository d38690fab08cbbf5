"""The Partitions page's table and EP-file view at warehouse scale.

At 1,000,000 partitions, sending the whole partition table to the browser, or one JSON
object per EP file (125,000 at 8 partitions an EP file), would dominate the page. Both are
cut on the engine side: :func:`partition_page` sorts and
filters the partitions with numpy and returns the indexes of one page (the caller decodes
and shows only those rows), and :func:`ep_overview` gives the patent's EP summary (US
12386863: average local depth, EP overlap and depth, the deepest sub-range and the EP
files covering it) with the per-file objects of at most ``top`` EP files (the highlighted,
the seed, then the deepest), not of every EP file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from engine.summaries.analysis import snapshot_of
from engine.core import logical_types
from engine.core.errors import InvalidParameterError
from engine.metrics import profile as _profile
from engine.metrics.ep import EPFiles, ep_files

if TYPE_CHECKING:
    from engine.workspace import Workspace
    from engine.table.model import ZoneMaps

__all__ = ["PARTITION_SORT_KEYS", "EP_FILES_SHOWN", "partition_page", "ep_overview",
           "partition_details"]

#: what the partition table can be ordered by (``min`` / ``max``: the column's bounds)
PARTITION_SORT_KEYS = ("depth", "overlaps", "bytes", "rows", "created", "min", "max")

#: EP files whose region :func:`ep_overview` returns by default (one plotly segment per
#: file). Kept at 1,000 so the chart's end markers stay under plotly's WebGL threshold,
#: whose software rendering is costly in a browser without a GPU (bench/ui/README.md)
EP_FILES_SHOWN = 1_000


def _sort_key(zonemaps: "ZoneMaps", column: str, depths: np.ndarray, overlaps: np.ndarray,
              sort: str) -> tuple[np.ndarray, np.ndarray]:
    """(key, known) per partition for ``sort``; unknown keys are listed last."""
    n = len(zonemaps)
    if sort in ("min", "max"):
        cz = zonemaps.column(column)
        return (cz.lo if sort == "min" else cz.hi), np.asarray(cz.valid, dtype=bool)
    if sort == "created":
        seq = zonemaps.created_seq if len(zonemaps.created_seq) == n else np.arange(n)
        return np.asarray(seq), np.ones(n, dtype=bool)
    key = {"depth": depths, "overlaps": overlaps, "bytes": zonemaps.bytes,
           "rows": zonemaps.rows}[sort]
    key = np.asarray(key, dtype=float)
    return key, key >= 0  # -1: unknown depth / overlaps (no statistics)


def partition_page(zonemaps: "ZoneMaps", column: str, depths: Any, overlaps: Any, *,
                   sort: str = "depth", descending: bool = True, min_depth: float = 0.0,
                   mask: Any = None, offset: int = 0, limit: int = 1_000) -> dict[str, Any]:
    """One page of the partition table: ``{"total", "matching", "offset", "index"}``.

    ``index`` holds the partition indexes (snapshot order) of rows ``offset`` to
    ``offset + limit`` of the partitions at least ``min_depth`` deep that ``mask`` keeps
    (a predicate's zonemap mask; None keeps all), ordered by ``sort`` (one of
    :data:`PARTITION_SORT_KEYS`), ties in snapshot order, unknown keys last. O(n log n)
    numpy on the arrays, no Python object per partition: the page decodes only its rows.

    Example (depths 1, 5, 9, 5: the deepest first, ties in table order):
    >>> from engine.table.model import ZoneMaps
    >>> zm = ZoneMaps(np.array(list("abcd"), dtype=object), np.ones(4, np.int64),
    ...               np.array([10, 40, 20, 30]), {})
    >>> partition_page(zm, "x", [1, 5, 9, 5], [0, 2, 3, 2], limit=3)["index"].tolist()
    [2, 1, 3]
    >>> out = partition_page(zm, "x", [1, 5, 9, 5], [0, 2, 3, 2], sort="bytes",
    ...                      descending=False, min_depth=2, offset=1)
    >>> out["matching"], out["index"].tolist()
    (3, [3, 1])
    """
    if sort not in PARTITION_SORT_KEYS:
        raise InvalidParameterError(
            f"sort must be one of {', '.join(PARTITION_SORT_KEYS)}, not {sort!r}")
    if offset < 0 or limit < 1:
        raise InvalidParameterError("offset must be >= 0 and limit >= 1")
    depths = np.asarray(depths, dtype=float)
    keep = depths >= min_depth
    if mask is not None:
        keep &= np.asarray(mask, dtype=bool)
    sel = np.flatnonzero(keep)
    key, known = _sort_key(zonemaps, column, depths, np.asarray(overlaps, dtype=float), sort)
    # dense ranks work for every key type (strings included) and negate for descending
    _, rank = np.unique(key[sel], return_inverse=True)
    rank = rank.reshape(-1)
    order = sel[np.lexsort((sel, -rank if descending else rank, ~known[sel]))]
    return {"total": len(zonemaps), "matching": len(sel), "offset": int(offset),
            "index": order[offset:offset + limit]}


def _ep_file_json(ep: EPFiles, i: int) -> dict[str, Any]:
    """One EP file as :func:`engine.metrics.ep.ep_metrics_json` lists it."""
    ok = bool(ep.valid[i])
    return {"ep_file": int(i), "partition_count": int(ep.partition_count[i]),
            "min": _profile.decode_value(ep.ltype, ep.lo[i]) if ok else None,
            "max": _profile.decode_value(ep.ltype, ep.hi[i]) if ok else None,
            "average_depth": round(float(ep.average_depth[i]), 4),
            "max_depth": int(ep.max_depth[i]), "overlap": int(ep.overlap[i]),
            "depth": int(ep.depth[i])}


def _deepest_subrange(ep: EPFiles) -> tuple[dict[str, Any] | None, int]:
    """(the deepest sub-range, the DD-EP seed, with the EP files covering it; the number
    of sub-ranges)."""
    sr = ep.subranges()
    if sr.deepest < 0:
        return None, len(sr)
    d = sr.deepest
    valid = np.flatnonzero(ep.valid)
    covering = valid[(ep.lo[valid] <= sr.starts[d]) & (ep.hi[valid] >= sr.ends[d])]
    return {"start": _profile.decode_value(ep.ltype, sr.starts[d]),
            "end": _profile.decode_value(ep.ltype, sr.ends[d]),
            "total_average_depth": float(sr.total_depth[d]),
            "ep_files": [int(i) for i in covering]}, len(sr)


def _top_files(ep: EPFiles, seed: Iterable[int], keep: Iterable[int], top: int) -> np.ndarray:
    """At most ``top`` EP files, in file order: those in ``keep`` first, then those
    covering the deepest sub-range (``seed``), then the deepest (EP-level depth); ties in
    file order. At 1M partitions the seed alone can be ~50,000 files (wide date ranges),
    too many to draw, so it is capped too."""
    n = len(ep)
    tier = np.full(n, 2, dtype=np.int64)
    tier[np.asarray([i for i in seed if 0 <= i < n], dtype=np.int64)] = 1
    tier[np.asarray([i for i in keep if 0 <= i < n], dtype=np.int64)] = 0
    order = np.lexsort((np.arange(n), -ep.depth, tier))
    return np.sort(order[:max(int(top), 0)])


def ep_overview(ws: "Workspace", table: str, column: str,
                ep_file_partitions: int | None = None, snapshot_id: str | None = None,
                top: int = EP_FILES_SHOWN, keep: Iterable[int] = ()) -> dict[str, Any]:
    """:func:`engine.api.ep_metrics` summarised: the same summary fields
    (``ep_file_count``, ``average_local_depth``, ``average_ep_overlap``,
    ``average_ep_depth``, ``subrange_count``, ``deepest_subrange``) but ``ep_files`` holds
    at most ``top`` EP files (:func:`_top_files`: those in ``keep``, then those covering
    the deepest sub-range, then the deepest), in file order; ``ep_files_shown`` says how
    many. Summaries equal :func:`engine.api.ep_metrics`'s (tested)."""
    snap = snapshot_of(ws, table, snapshot_id)
    col = snap.schema.resolve(column)
    n = int(ep_file_partitions or ws.settings.ep_file_partitions)
    ep = ep_files(snap.zonemaps(), col, n)
    deepest, subrange_count = _deepest_subrange(ep)
    chosen = _top_files(ep, (deepest or {}).get("ep_files", []), keep, top)
    valid = ep.valid

    def mean(values: np.ndarray) -> float:
        return round(float(values[valid].mean()), 4) if valid.any() else 0.0

    return {"column": ep.column, "ep_file_partitions": n, "ep_file_count": len(ep),
            "average_local_depth": mean(ep.average_depth), "average_ep_overlap": mean(ep.overlap),
            "average_ep_depth": mean(ep.depth),
            "subrange_count": subrange_count,
            "deepest_subrange": deepest, "ep_files_shown": len(chosen),
            "ep_files": [_ep_file_json(ep, int(i)) for i in chosen], "snapshot": snap.id}


def _bound_text(ltype: str, value: Any, known: bool) -> str | None:
    """One encoded bound as the partition details show it: the manifest value's ``str``
    (ISO dates, ``2024-01-01 10:30:00`` timestamps, ``True``); None where unknown.
    Decimals show the float64 the engine compares with."""
    if ltype == "string":
        return str(value) if known or value != "" else None
    if ltype == "other" or value is None:
        return None
    number = float(value)
    if np.isnan(number):
        return "nan" if known else None  # a NaN statistic with both bounds known
    return str(logical_types.decode_scalar(ltype, number))


def partition_details(ws: "Workspace", table: str, index: int,
                      snapshot_id: str | None = None) -> dict[str, Any]:
    """Partition ``index`` (snapshot order) of a snapshot read from its zonemap arrays:
    ``{"index", "path", "rows", "bytes", "created_seq", "columns": [{"column", "min",
    "max", "nulls", "compressed_bytes"}, ...]}`` (schema order; bounds as text, None where
    unknown). One row of each array, never the snapshot's :class:`Partition` objects (at
    1,000,000 partitions the first of those reads every path and statistic into Python
    lists)."""
    snap = snapshot_of(ws, table, snapshot_id)
    zm = snap.zonemaps()
    i = int(index)
    if not 0 <= i < len(zm):
        raise InvalidParameterError(f"partition index must be 0 to {len(zm) - 1}, not {index}")
    columns = []
    for name, _ in snap.schema.columns:
        cz = zm.column(name)
        known = bool(cz.valid[i])
        nulls = int(cz.null_count[i])
        columns.append({"column": name, "min": _bound_text(cz.ltype, cz.lo[i], known),
                        "max": _bound_text(cz.ltype, cz.hi[i], known),
                        "nulls": nulls if nulls >= 0 else None,
                        "compressed_bytes": int(cz.compressed_bytes[i])})
    seq = int(zm.created_seq[i]) if len(zm.created_seq) == len(zm) else i
    return {"index": i, "path": str(zm.paths[i]), "rows": int(zm.rows[i]),
            "bytes": int(zm.bytes[i]), "created_seq": seq, "columns": columns,
            "snapshot": snap.id}
