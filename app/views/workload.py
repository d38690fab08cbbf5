"""The workload as frames: one row per query (partitions scanned, pruned,
fully covered, boundary; bytes scanned and wasted), the predicated-column frequency, the
waste per column and the query picker's labels.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from app.views.formatting import fmt_bytes


def _col(df: pd.DataFrame, *names: str, default: float = 0.0) -> pd.Series:
    for name in names:
        if name in df.columns:
            return df[name].fillna(default)
    return pd.Series(default, index=df.index, dtype=float)


def pruning_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per scan fragment (the API's ``pruning`` with selectivity), predicated
    columns as one string; which snapshot and whether exact are the page's context."""
    frame = pd.DataFrame(list(rows))  # one pass in pandas, not a copy of every row
    if frame.empty and not len(frame.columns):
        return frame
    frame = frame.drop(columns=[c for c in ("exact", "snapshot") if c in frame.columns])
    cols = frame["predicated_columns"] if "predicated_columns" in frame.columns else [None] * len(frame)
    frame["predicated_columns"] = [", ".join(c) if isinstance(c, (list, tuple)) else ""
                                   for c in cols]
    return frame


#: the workload table's columns: source column -> (label, scale); fractions become percentages
_QUERY_TABLE = {
    "query_id": ("query", None), "ts": ("time", None), "predicated_columns": ("filters on", None),
    "partitions": ("partitions", None), "scanned": ("scanned", None), "pruned": ("pruned", None),
    "fully_covered": ("fully covered", None), "boundary": ("boundary", None),
    "pruning_rate": ("pruned (%)", 100.0), "selectivity": ("rows matching (%)", 100.0),
    "average_utilization": ("utilization (%)", 100.0), "bytes_scanned": ("bytes scanned", 1.0),
    "wasted_bytes": ("bytes wasted", 1.0),
}
#: the query table's sort keys (``engine.api.QUERY_SORT_KEYS``) as the table's headers name them
QUERY_SORT_LABELS = {"log": "log order", **{k: label for k, (label, _) in _QUERY_TABLE.items()}}


def queries_table(per_query: pd.DataFrame,
                  sources: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The workload's per-query table as shown: whole bytes, percentages like the other
    pages (not fractions), readable headers, in the order of ``per_query``; ``sources``
    (query id -> :func:`range_sources` text) adds where each query's ranges came from.

    Example:
    >>> df = pd.DataFrame([{"query_id": "q1", "pruning_rate": 0.56, "bytes_scanned": 904097.4}])
    >>> queries_table(df).to_dict("records")
    [{'query': 'q1', 'pruned (%)': 56.0, 'bytes scanned': 904097}]
    >>> queries_table(df, {"q1": "ss_sold_date_sk: lookup date_dim@7"})["ranges from"].tolist()
    ['ss_sold_date_sk: lookup date_dim@7']
    """
    out = pd.DataFrame(index=per_query.index)
    for source, (label, scale) in _QUERY_TABLE.items():
        if source not in per_query.columns:
            continue
        col = per_query[source]
        if scale == 1.0:
            col = col.fillna(0).round().astype("int64")
        elif scale is not None:
            col = (col * scale).round(1)
        out[label] = col
    if sources is not None and "query_id" in per_query.columns:
        out["ranges from"] = per_query["query_id"].astype(str).map(sources).fillna("-")
    return out.reset_index(drop=True)


def _statements(frags: Sequence[Any], distinct: Any | None) -> tuple[Sequence[Any], Any, Any]:
    """(statements, counts, statement of each query): ``distinct``'s (the API's
    ``workload_distinct`` of the same log as ``frags``), else every query its own."""
    if distinct is None:
        return frags, np.ones(len(frags), dtype=np.int64), np.arange(len(frags))
    return distinct.fragments, distinct.counts, distinct.of_query


def range_sources(frags: Sequence[Any], text: Callable[[list[dict[str, Any]]], str],
                  distinct: Any | None = None) -> dict[str, str]:
    """Query id -> where its ranges came from, one line by ``text`` (the API's
    ``source_text``): direct, through a join from another column, or looked up in a
    dimension table at a snapshot; a join that gave no range is the lint's to explain.
    ``distinct`` (the API's ``workload_distinct`` of ``frags``): ``text`` runs once per
    distinct statement, not per query; the answer is the same.

    Example:
    >>> class F:
    ...     query_id, sources = "q1", ()
    >>> range_sources([F()], lambda sources: "direct")
    {'q1': 'direct'}
    """
    statements, _, of_query = _statements(frags, distinct)
    texts = [text([s.to_json() for s in getattr(f, "sources", ())]) for f in statements]
    out: dict[str, str] = {}
    for frag, code in zip(frags, of_query.tolist()):
        text_ = texts[code]
        prev = out.get(str(frag.query_id))
        out[str(frag.query_id)] = text_ if prev in (None, "-", text_) else f"{prev}; {text_}"
    return out


def picked_row(state: Any) -> int | None:
    """The row index a single-row dataframe selection state holds, else None.

    Example:
    >>> picked_row({"selection": {"rows": [2], "columns": []}}), picked_row(None)
    (2, None)
    """
    try:
        rows = list(state["selection"]["rows"])
    except (KeyError, TypeError):
        return None
    return int(rows[0]) if rows else None


def column_frequency(frags: Sequence[Any], weights: Sequence[int] | None = None) -> pd.Series:
    """How many queries filter on each column, most frequent first; ``weights``: how many
    queries each of ``frags`` stands for (a distinct statement's count), 1 each by default.

    Example:
    >>> class F:
    ...     def __init__(self, *cols): self.predicated_columns = cols
    >>> column_frequency([F("a"), F("a", "b"), F("b")], [1, 3, 2]).to_dict()
    {'b': 5, 'a': 4}
    """
    counts: dict[str, int] = {}
    for frag, weight in zip(frags, [1] * len(frags) if weights is None else weights):
        for col in frag.predicated_columns:
            counts[col] = counts.get(col, 0) + int(weight)
    return pd.Series(counts, dtype=int).sort_values(ascending=False)


def workload_summary(per_query: pd.DataFrame, frags: Sequence[Any],
                     distinct: Any | None = None) -> dict[str, Any]:
    """Totals of the workload: queries, mean pruning rate, bytes scanned and wasted, the
    boundary share of scanned partitions, and the predicated-column frequency (counted
    over ``distinct``'s statements when given: the same figures)."""
    scanned = _col(per_query, "scanned")
    boundary = _col(per_query, "boundary")
    return {
        "queries": int(len(per_query)),
        "pruning_rate": float(_col(per_query, "pruning_rate").mean()) if len(per_query) else 0.0,
        "bytes_scanned": float(_col(per_query, "bytes_scanned").sum()),
        "wasted_bytes": float(_col(per_query, "wasted_bytes", "bytes_wasted").sum()),
        "boundary_share": float(boundary.sum() / scanned.sum()) if scanned.sum() else 0.0,
        "column_frequency": (column_frequency(frags) if distinct is None else
                             column_frequency(distinct.fragments, distinct.counts)).to_dict(),
    }


def relevant_columns(metrics: Sequence[Mapping[str, Any]], summary: Mapping[str, Any] | None,
                     limit: int = 4) -> list[str]:
    """Columns worth a health card: the workload's predicated ones, then the worst clustered."""
    known = [m["column"] for m in metrics]
    picked = [c for c in (summary or {}).get("column_frequency", {}) if c in known][:limit]
    target = len(picked) if len(picked) >= 3 else (3 if picked else 4)
    by_depth = sorted(metrics, key=lambda m: -float(m.get("average_depth") or 0))
    for m in by_depth:
        if len(picked) >= target:
            break
        if m["column"] not in picked and int(m.get("total_constant_partition_count") or 0) < \
                int(m.get("total_partition_count") or 0):
            picked.append(m["column"])
    return picked


def query_times(frags: Sequence[Any]) -> pd.Series | None:
    """Query timestamps (UTC) when the log has them, else None."""
    ts = pd.to_datetime(pd.Series([f.ts for f in frags]), errors="coerce", utc=True)
    if ts.notna().sum() == 0:
        return None
    return ts.dropna().dt.tz_localize(None)


def selectivity(per_query: pd.DataFrame) -> np.ndarray:
    """Estimated fraction of the table's rows each query matches."""
    return _col(per_query, "selectivity").to_numpy(dtype=float)


def _query_waste(frags: Sequence[Any], per_query: pd.DataFrame) -> np.ndarray:
    """Each fragment's wasted bytes, found by its query id in ``per_query`` (0 if absent)."""
    ids = per_query["query_id"].astype(str) if "query_id" in per_query.columns else None
    if ids is not None and len(ids) == len(frags) and ids.is_unique and \
            all(a == str(f.query_id) for a, f in zip(ids.tolist(), frags)):
        # the engine's rows are the fragments' own, in their order: no lookup needed
        return _col(per_query, "wasted_bytes", "bytes_wasted").to_numpy(dtype=float)
    wasted = dict(zip(per_query["query_id"].astype(str), _col(per_query, "wasted_bytes", "bytes_wasted")))
    return np.fromiter((float(wasted.get(str(f.query_id), 0.0)) for f in frags), dtype=float,
                       count=len(frags))


def waste_per_column(frags: Sequence[Any], per_query: pd.DataFrame,
                     distinct: Any | None = None) -> pd.Series:
    """Wasted bytes summed per predicated column (a query's waste counts for each column),
    summed exactly (``math.fsum``: the same figure whatever the order of the queries);
    ``distinct``: the columns of each distinct statement are read once, not per query.

    Example:
    >>> class F:
    ...     def __init__(self, q, *cols): self.query_id, self.predicated_columns = q, cols
    >>> pq = pd.DataFrame({"query_id": ["1", "2"], "wasted_bytes": [0.1, 0.2]})
    >>> waste_per_column([F("1", "a"), F("2", "a", "b")], pq).to_dict()
    {'a': 0.30000000000000004, 'b': 0.2}
    """
    statements, _, of_query = _statements(frags, distinct)
    waste = _query_waste(frags, per_query)
    columns: dict[str, list[int]] = {}
    for code, f in enumerate(statements):
        for col in f.predicated_columns:
            columns.setdefault(col, []).append(code)
    out: dict[str, float] = {}
    for col, codes in columns.items():
        has = np.zeros(len(statements), dtype=bool)
        has[codes] = True
        out[col] = math.fsum(waste[has[of_query]].tolist())
    return pd.Series(out, dtype=float).sort_values(ascending=False)


def query_labels(frags: Sequence[Any], per_query: pd.DataFrame, limit: int | None = None,
                 hot_column: str | None = None, distinct: Any | None = None) -> dict[str, str]:
    """Query id -> a label for the picker: queries filtering on ``hot_column`` (the
    workload's most frequent) first, each group most wasteful first, ties in log order
    (the picker lists the first few; every query has a label for when a click or a search
    picks it). ``distinct``: each distinct statement's columns are joined once."""
    statements, _, of_query = _statements(frags, distinct)
    cols = [", ".join(f.predicated_columns) or "no filter" for f in statements]
    cold = np.array([hot_column not in f.predicated_columns for f in statements], dtype=bool)
    waste = _query_waste(frags, per_query)
    # stable: equal keys keep the log's order, as a stable sort on (not hot, -waste) does
    ranked = np.lexsort((-waste, cold[of_query]))[:limit]
    texts: dict[float, str] = {}
    out = {}
    for i in ranked.tolist():
        w = float(waste[i])
        text = texts.get(w)
        if text is None:
            text = texts[w] = fmt_bytes(w)
        out[str(frags[i].query_id)] = f"{frags[i].query_id} · {cols[of_query[i]]} · wastes {text}"
    return out


def workload_views(frags: Sequence[Any], per_query: pd.DataFrame,
                   distinct: Any | None = None) -> dict[str, Any]:
    """Column frequency, waste per column, the query picker's labels and the timestamps;
    ``distinct`` (the API's ``workload_distinct`` of ``frags``): the same figures, with
    each distinct statement's columns read once instead of once per query."""
    freq = (column_frequency(frags) if distinct is None else
            column_frequency(distinct.fragments, distinct.counts))
    hot = str(freq.index[0]) if len(freq) else None
    return {"freq": freq, "waste": waste_per_column(frags, per_query, distinct),
            "labels": query_labels(frags, per_query, hot_column=hot, distinct=distinct),
            "times": query_times(frags)}
