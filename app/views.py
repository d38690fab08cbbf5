"""Engine results as the frames and labels the pages show. Pure pandas and numpy: no
Streamlit, no engine call (:mod:`app.services` fetches, this module only reshapes), so
every function here can be tested on plain data.

The formatters print a dash for a missing value and thousands separators, unlike the
CLI's :mod:`engine.core.fmt`.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from engine.core import logical_types
from engine.core.fmt import format_number, human_bytes

# --------------------------------------------------------------------------- numbers


def fmt_bytes(n: float | None) -> str:
    """Bytes in the largest unit below 1024 of it, a dash when unknown.

    Example:
    >>> fmt_bytes(1536), fmt_bytes(None)
    ('1.5 KB', '–')
    """
    if n is None:
        return "–"
    n = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} TB"


def fmt_seconds(s: float | None) -> str:
    if s is None:
        return "–"
    s = float(s)
    if abs(s) < 1:
        return f"{s * 1000:,.0f} ms"
    if abs(s) < 120:
        return f"{s:,.1f} s"
    if abs(s) < 7200:
        return f"{s / 60:,.1f} min"
    return f"{s / 3600:,.1f} h"


def fmt_money(m: float | None) -> str:
    """Money with sensible rounding: cents, and "< $0.01" rather than ``$1.2e-06``.

    Example:
    >>> fmt_money(1.2e-06), fmt_money(0), fmt_money(0.456), fmt_money(1234.5), fmt_money(-0.004)
    ('< $0.01', '$0', '$0.46', '$1,234.50', '> -$0.01')
    """
    if m is None:
        return "–"
    m = float(m)
    if m == 0:
        return "$0"
    if abs(m) < 0.01:
        return "< $0.01" if m > 0 else "> -$0.01"
    return f"${m:,.2f}" if m > 0 else f"-${-m:,.2f}"


#: characters that start Markdown or Streamlit syntax anywhere in a line: emphasis, code,
#: links and images (``[``), HTML and autolinks, math, strikethrough, and backslash itself
_MARKDOWN_ACTIVE = re.compile(r"([\\`*\[\]<>$~])")
#: ``_`` only emphasises at a word boundary; ``:`` starts a Streamlit directive or emoji
#: (``:red[``, ``:material/x:``) or a URL scheme (``http://``) when a non-space follows
_MARKDOWN_CONTEXT = re.compile(r"((?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|:(?=\S))")
#: a line start that makes a heading, quote, list or numbered list
_MARKDOWN_LINE_START = re.compile(r"^([#>+\-]|\d+[.)])")


def md_text(value: Any) -> str:
    r"""A user-supplied string (a name, reason, path, SQL, error message) made inert for
    Streamlit's Markdown: what Markdown, GitHub autolinks or Streamlit's directives
    (``:color[...]``, ``:material/...:``, ``$math$``) would interpret is escaped, line breaks
    become spaces, and the rest is left as typed, so it always shows as the text it is.

    Example:
    >>> print(md_text("![x](http://e/x.png) **bob** no_such_table"))
    !\[x\](http\://e/x.png) \*\*bob\*\* no_such_table
    """
    text = " ".join(str(value).split()).replace("www.", "www\\.")
    text = _MARKDOWN_CONTEXT.sub(r"\\\1", _MARKDOWN_ACTIVE.sub(r"\\\1", text))
    return _MARKDOWN_LINE_START.sub(r"\\\1", text)


def fmt_num(x: Any, digits: int = 2) -> str:
    if x is None:
        return "–"
    try:
        return f"{float(x):,.{digits}f}"
    except (TypeError, ValueError):
        return str(x)


def _plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


# --------------------------------------------------------------------------- badges

LIGHT_WORDS = {"green": "Well clustered", "amber": "Partly clustered", "red": "Poorly clustered",
               "grey": "Unknown"}
_LIGHT_STYLE = {"green": ("green", ":material/check_circle:"), "amber": ("orange", ":material/warning:"),
                "red": ("red", ":material/error:"), "grey": ("gray", ":material/help:")}
STATUS_BADGE = {"proposed": ":blue-badge[proposed]", "approved": ":violet-badge[approved]",
                "running": ":orange-badge[running]", "succeeded": ":green-badge[succeeded]",
                "failed": ":red-badge[failed]", "rejected": ":gray-badge[rejected]",
                "stale": ":gray-badge[stale]", "cancelled": ":gray-badge[cancelled]"}


def light_badge(light: str) -> str:
    """Markdown for a traffic-light badge (colored, with an icon; no emoji font needed)."""
    color, icon = _LIGHT_STYLE.get(light, _LIGHT_STYLE["grey"])
    return f":{color}-badge[{icon} {LIGHT_WORDS.get(light, light)}]"


def verdict_reason(light: str, reason: str) -> str:
    """The engine's reason without its leading verdict words (the badge already says them)."""
    word = LIGHT_WORDS.get(light, "").lower()
    if word and reason.lower().startswith(word + ": "):
        return reason[len(word) + 2:]
    return reason


# --------------------------------------------------------------------------- tables

def snapshot_history(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The table's snapshot history, newest first, with a ``current`` flag (the engine
    lists the chain oldest first, ending at the current snapshot)."""
    df = pd.DataFrame([dict(r) for r in rows])
    if df.empty:
        return df
    if "current" not in df.columns:
        df["current"] = False
        df.loc[df.index[-1], "current"] = True
    df["id"] = df["id"].astype(str)
    return df.iloc[::-1].reset_index(drop=True)


#: the format's snapshot history (``api.snapshot_history``) as the dashboard shows it
_HISTORY_COLUMNS = {"id": "id", "current": "current", "created_at": "created",
                    "operation": "operation", "actor": "actor", "plan_id": "plan",
                    "approver": "approver", "added_files": "files added",
                    "removed_files": "files removed", "total_rows": "total rows"}


def snapshot_history_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The format's snapshot history (oldest first from the engine), newest first: what
    the format recorded per snapshot (issue 16 section 6), with unknown facts left blank."""
    df = pd.DataFrame([{label: r.get(key) for key, label in _HISTORY_COLUMNS.items()}
                       for r in rows], columns=list(_HISTORY_COLUMNS.values()))
    if df.empty:
        return df
    df["id"] = df["id"].astype(str)
    for col in ("plan", "approver", "actor"):
        df[col] = df[col].map(lambda v: "" if v is None else str(v))
    for col in ("files added", "files removed", "total rows"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype("Int64")
    return df.iloc[::-1].reset_index(drop=True)


def partition_order(zm: Any, column: str, order_by: str) -> np.ndarray:
    """Partition indexes in creation order or by the column's min (unknown bounds last)."""
    n = len(zm)
    if order_by == "min":
        cz = zm.column(column)
        key = np.where(cz.valid, cz.lo, cz.lo.max() if cz.ltype == "string" else np.inf)
        return np.argsort(key, kind="stable")
    seq = zm.created_seq if len(zm.created_seq) == n else np.arange(n)
    return np.argsort(seq, kind="stable")


def _bounds_column(ltype: str, values: np.ndarray, valid: np.ndarray) -> Any:
    """A zonemap bound column for display, decoded in bulk (no Python object per
    partition past :data:`BULK_ROWS`: the Partitions page at 1,000,000 partitions, issue
    15); None / missing where unknown."""
    valid = np.asarray(valid, dtype=bool)
    if len(values) <= BULK_ROWS or ltype in ("float", "decimal"):
        return [logical_types.decode_scalar(ltype, v) if ok else None
                for v, ok in zip(values, valid)] if len(values) <= BULK_ROWS else \
            np.where(valid, values, np.nan).astype(float)
    if ltype == "string":
        return pd.array(np.where(valid, values.astype(object), None), dtype="string")
    if ltype in ("date", "timestamp"):
        unit = "datetime64[D]" if ltype == "date" else "datetime64[us]"
        raw = np.where(valid, values, 0).astype(np.int64).astype(unit)
        return pd.Series(raw.astype("datetime64[us]")).where(valid)
    dtype = "boolean" if ltype == "bool" else "Int64"
    return pd.Series(pd.array(np.where(valid, values, 0).astype(np.int64), dtype="Int64")
                     ).astype(dtype).where(valid, pd.NA)


#: up to this many partitions the bounds are decoded one by one (dates as dates); past it
#: in bulk (dates as midnight timestamps, ints as nullable Int64)
BULK_ROWS = 20_000


def partition_frame(zm: Any, column: str, clus: Mapping[str, Any]) -> pd.DataFrame:
    """One row per partition: its file, size, range on ``column``, depth and overlaps
    (built column by column in bulk: ~1 s at 1,000,000 partitions, issue 15)."""
    cz = zm.column(column)
    paths = pd.Series(np.asarray(zm.paths, dtype=object), dtype="string[pyarrow]")
    return pd.DataFrame({
        "#": np.arange(len(zm)),
        "file": paths.str.replace(r"^.*/", "", regex=True).to_numpy(),
        "rows": zm.rows,
        "bytes": zm.bytes,
        f"min {column}": _bounds_column(cz.ltype, cz.lo, cz.valid),
        f"max {column}": _bounds_column(cz.ltype, cz.hi, cz.valid),
        "depth": np.asarray(clus["depths"], dtype=float),
        "overlaps": np.asarray(clus["overlaps"], dtype=float),
        "created": zm.created_seq if len(zm.created_seq) == len(zm) else np.arange(len(zm)),
    })


def filter_partitions(frame: pd.DataFrame, mask: Any, min_depth: float = 0.0) -> pd.DataFrame:
    """The rows of :func:`partition_frame` a predicate's ``mask`` keeps (None: all) and
    at least ``min_depth`` deep; the ``#`` column keeps each partition's table index.

    Example:
    >>> f = pd.DataFrame({"#": [0, 1, 2], "depth": [1.0, 5.0, 9.0]})
    >>> filter_partitions(f, [True, True, False], 2)["#"].tolist()
    [1]
    """
    keep = frame["depth"] >= min_depth
    if mask is not None:
        keep &= np.asarray(mask, dtype=bool)[frame["#"].to_numpy()]
    return frame[keep.to_numpy()]


def partition_zonemaps(details: Mapping[str, Any]) -> pd.DataFrame:
    """A partition's zonemap for every column (min, max, nulls, compressed bytes), from
    :func:`engine.api.partition_details`.

    Example:
    >>> partition_zonemaps({"columns": [{"column": "k", "min": "1", "max": "9", "nulls": 0,
    ...                                  "compressed_bytes": 40}]}).to_dict("records")
    [{'column': 'k', 'min': '1', 'max': '9', 'nulls': 0, 'compressed bytes': 40}]
    """
    return pd.DataFrame([{"column": c["column"], "min": c["min"], "max": c["max"],
                          "nulls": c["nulls"], "compressed bytes": c["compressed_bytes"]}
                         for c in details["columns"]])


# --------------------------------------------------------------------------- workload

def _col(df: pd.DataFrame, *names: str, default: float = 0.0) -> pd.Series:
    for name in names:
        if name in df.columns:
            return df[name].fillna(default)
    return pd.Series(default, index=df.index, dtype=float)


def pruning_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per scan fragment (the API's ``pruning`` with selectivity), predicated
    columns as one string; which snapshot and whether exact are the page's context."""
    out = []
    for r in rows:
        row = {k: v for k, v in r.items() if k not in ("exact", "snapshot")}
        row["predicated_columns"] = ", ".join(row.get("predicated_columns") or [])
        out.append(row)
    return pd.DataFrame(out)


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


def queries_table(per_query: pd.DataFrame) -> pd.DataFrame:
    """The workload's per-query table as shown: whole bytes, percentages like the other
    pages (not fractions), readable headers, in the order of ``per_query``.

    Example:
    >>> df = pd.DataFrame([{"query_id": "q1", "pruning_rate": 0.56, "bytes_scanned": 904097.4}])
    >>> queries_table(df).to_dict("records")
    [{'query': 'q1', 'pruned (%)': 56.0, 'bytes scanned': 904097}]
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
    return out.reset_index(drop=True)


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


def column_frequency(frags: Sequence[Any]) -> pd.Series:
    """How many queries filter on each column, most frequent first."""
    counts: dict[str, int] = {}
    for frag in frags:
        for col in frag.predicated_columns:
            counts[col] = counts.get(col, 0) + 1
    return pd.Series(counts, dtype=int).sort_values(ascending=False)


def workload_summary(per_query: pd.DataFrame, frags: Sequence[Any]) -> dict[str, Any]:
    """Totals of the workload: queries, mean pruning rate, bytes scanned and wasted, the
    boundary share of scanned partitions, and the predicated-column frequency."""
    scanned = _col(per_query, "scanned")
    boundary = _col(per_query, "boundary")
    return {
        "queries": int(len(per_query)),
        "pruning_rate": float(_col(per_query, "pruning_rate").mean()) if len(per_query) else 0.0,
        "bytes_scanned": float(_col(per_query, "bytes_scanned").sum()),
        "wasted_bytes": float(_col(per_query, "wasted_bytes", "bytes_wasted").sum()),
        "boundary_share": float(boundary.sum() / scanned.sum()) if scanned.sum() else 0.0,
        "column_frequency": column_frequency(frags).to_dict(),
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


def waste_per_column(frags: Sequence[Any], per_query: pd.DataFrame) -> pd.Series:
    """Wasted bytes summed per predicated column (a query's waste counts for each column)."""
    wasted = dict(zip(per_query["query_id"].astype(str), _col(per_query, "wasted_bytes", "bytes_wasted")))
    out: dict[str, float] = {}
    for frag in frags:
        w = float(wasted.get(str(frag.query_id), 0.0))
        for col in frag.predicated_columns:
            out[col] = out.get(col, 0.0) + w
    return pd.Series(out, dtype=float).sort_values(ascending=False)


def query_labels(frags: Sequence[Any], per_query: pd.DataFrame, limit: int | None = None,
                 hot_column: str | None = None) -> dict[str, str]:
    """Query id -> a label for the picker: queries filtering on ``hot_column`` (the
    workload's most frequent) first, each group most wasteful first (the picker lists the
    first few; every query has a label for when a click or a search picks it)."""
    waste = dict(zip(per_query["query_id"].astype(str), _col(per_query, "wasted_bytes", "bytes_wasted")))
    ranked = sorted(frags, key=lambda f: (hot_column not in f.predicated_columns,
                                          -float(waste.get(str(f.query_id), 0.0))))[:limit]
    out = {}
    for f in ranked:
        cols = ", ".join(f.predicated_columns) or "no filter"
        out[str(f.query_id)] = (f"{f.query_id} · {cols} · wastes "
                                f"{fmt_bytes(waste.get(str(f.query_id), 0.0))}")
    return out


def workload_views(frags: Sequence[Any], per_query: pd.DataFrame) -> dict[str, Any]:
    """Column frequency, waste per column, the query picker's labels and the timestamps."""
    freq = column_frequency(frags)
    hot = str(freq.index[0]) if len(freq) else None
    return {"freq": freq, "waste": waste_per_column(frags, per_query),
            "labels": query_labels(frags, per_query, hot_column=hot),
            "times": query_times(frags)}


# --------------------------------------------------------------------------- plans

def wair_params(form: Mapping[str, Any]) -> dict[str, Any]:
    """Form values as WAIR parameters (a cost limit of 0 means none; a k_max of None is
    derived by WAIR from the memory budget and the median partition, as without ``--k-max``).

    >>> wair_params({"window": 50, "cost_limit": 0.0, "k_max": None})
    {'window': 50}
    """
    out = dict(form)
    if not out.get("cost_limit"):
        out.pop("cost_limit", None)
    if out.get("k_max") is None:
        out.pop("k_max", None)
    return out


def k_max_help(derived: Mapping[str, Any]) -> str:
    """How the Recommendation form's default k_max is derived (:func:`engine.api.wair_k_max`).

    >>> k_max_help({"k_max": 64, "memory_budget_bytes": 2 * 1024**3,
    ...             "median_partition_bytes": 32 * 2**20})
    'Memory limit of one rewrite group. Derived unless changed: the memory budget (2.0 GiB) over the median partition (32.0 MiB) = 64 partitions, as `plan preview` without --k-max.'
    """
    return ("Memory limit of one rewrite group. Derived unless changed: the memory budget "
            f"({human_bytes(derived['memory_budget_bytes'])}) over the median partition "
            f"({human_bytes(derived['median_partition_bytes'])}) = {int(derived['k_max']):,} "
            "partitions, as `plan preview` without --k-max.")


def proposer_label(actor: str) -> str:
    """Who stores a plan from the dashboard: the OS user running it, marked as such."""
    return f"{actor} (dashboard)"


def cost_table(rec: Mapping[str, Any]) -> pd.DataFrame:
    """Reclustering cost against predicted saving, in bytes, CPU-seconds and money."""
    cost, saving = rec.get("estimated_cost") or {}, rec.get("predicted_saving") or {}
    return pd.DataFrame([
        {"": "reclustering cost (once)",
         "bytes": f"{fmt_bytes(cost.get('bytes_read'))} read + {fmt_bytes(cost.get('bytes_written'))} written",
         "CPU time": fmt_seconds(cost.get("cpu_seconds")), "money": fmt_money(cost.get("money"))},
        {"": f"predicted saving per window ({int(saving.get('window_queries') or 0)} queries)",
         "bytes": f"{fmt_bytes(saving.get('bytes'))} less read",
         "CPU time": fmt_seconds(saving.get("cpu_seconds")), "money": fmt_money(saving.get("money"))},
    ])


def groups_frame(rec: Mapping[str, Any]) -> pd.DataFrame:
    """One row per rewrite group: layout, key columns, size, saving and the reason."""
    rows = []
    for i, g in enumerate(rec.get("groups") or [], start=1):
        rows.append({"group": i, "layout": g["layout"], "key columns": ", ".join(g["columns"]),
                     "partitions": len(g["partitions"]),
                     "predicted saving per window": fmt_bytes(g.get("predicted_saving_bytes", 0.0)),
                     "reason": g.get("reason", "")})
    return pd.DataFrame(rows)


def signature_points(scatter: Mapping[str, Any], projection: Mapping[str, Any] | None) -> tuple | None:
    """The arguments of :func:`app.charts.signatures`: the API's 2-D projection of a plan's
    savings signatures with cluster labels, axis titles and hover texts (None: nothing)."""
    if projection is None:
        return None
    pts = np.asarray(projection["points"])
    cols = list(scatter.get("columns") or [])
    var = projection["explained_variance"]
    if var is None:
        axis_names = (f"saving share of {cols[0]} (unit-vector component)",
                      f"saving share of {cols[1]} (unit-vector component)")
    else:
        axis_names = (f"PC1 of the signatures ({var[0] * 100:.0f} % of variance)",
                      f"PC2 ({var[1] * 100:.0f} % of variance)")
    n = len(pts)
    hover = [f"{p.rsplit('/', 1)[-1]} · anchor {a or '-'} · saving {format_number(s)} CPU-s"
             for p, a, s in zip(scatter.get("paths", [""] * n), scatter.get("anchors", [""] * n),
                                scatter.get("saving_cpu_s", [0.0] * n))]
    return (pts, np.asarray(scatter.get("labels", [0] * n)), projection["anchors"],
            projection["anchor_names"], axis_names, hover)


def plan_summary(name: str, rec: Mapping[str, Any]) -> dict[str, Any]:
    """One policy's proposal in a few numbers, for the side-by-side comparison."""
    if rec.get("status") == "no-action":
        return {"policy": name, "decision": f"proposes nothing: {rec.get('reason')}"}
    cost, saving = rec.get("estimated_cost") or {}, rec.get("predicted_saving") or {}
    be = rec.get("break_even_queries")
    return {"policy": name, "partitions": int(rec.get("partition_count") or 0),
            "bytes_written": float(cost.get("bytes_written") or 0.0),
            "cost_cpu_s": float(cost.get("cpu_seconds") or 0.0),
            "saving_cpu_s": float(saving.get("cpu_seconds") or 0.0),
            "decision": _plural(len(rec.get("groups") or []), "group") + (
                f"; break-even after {be:,.0f} queries" if be is not None
                else "; no predicted break-even")}


def predicted_time_caption(plan: Mapping[str, Any]) -> str:
    """The plan's predicted rewrite time in a warm session and in a fresh one, and the price
    per cell it was priced with (the table's own, ``calibrate --rewrite-on``, or the
    calibration table's): what ``plan show`` prints, for the plan page (issue 11 section 2);
    "" for a plan priced before rounds 9-10 carried them.

    Example:
    >>> predicted_time_caption({"predicted_rewrite_seconds": {"warm": 2.3, "cold": 13.6,
    ...     "cold_start_s": 11.3}, "rewrite_price": {"source": "table", "cell_bytes": 6.49,
    ...     "label": "table lineitem's own price, measured 2026-11-27T06:20:00+00:00 (snapshot 2)"}})
    "Predicted rewrite time: 2.3 s in a warm session (this dashboard after its first run), 13.6 s in a fresh one (`plan run` from the CLI: +11.3 s cold start). Priced at 6.49 B per cell: table lineitem's own price, measured 2026-11-27T06:20:00+00:00 (snapshot 2)."
    >>> predicted_time_caption({"predicted_rewrite_seconds": {"warm": 2.0, "cold": None,
    ...     "cold_start_s": 0.0}, "rewrite_price": None})
    ''
    """
    parts = []
    predicted = plan.get("predicted_rewrite_seconds") or {}
    if predicted.get("cold"):
        parts.append(f"Predicted rewrite time: {fmt_seconds(predicted['warm'])} in a warm "
                     f"session (this dashboard after its first run), "
                     f"{fmt_seconds(predicted['cold'])} in a fresh one (`plan run` from the "
                     f"CLI: +{fmt_seconds(predicted['cold_start_s'])} cold start).")
    price = plan.get("rewrite_price") or {}
    if price.get("label"):
        cell = float(price.get("cell_bytes") or 0.0)
        head = f"Priced at {cell:.2f} B per cell" if cell > 0 else "Priced"
        parts.append(f"{head}: {price['label']}.")
    return " ".join(parts)


def cost_check_frame(check: Mapping[str, Any]) -> pd.DataFrame:
    """A run's ``cost_check`` as rows of predicted against measured.

    Example:
    >>> cost_check_frame({"predicted_seconds": 6.46, "measured_wall_seconds": 4.73,
    ...     "measured_cpu_seconds": 7.0, "predicted_money": 1e-06, "measured_money": 0.02,
    ...     "predicted_bytes_read": 3.5e6, "measured_bytes_read": 3670016, "error": 0.366}
    ...     )["measured"].tolist()
    ['4.7 s (7.0 s CPU)', '$0.02', '3.5 MB']
    """
    return pd.DataFrame([
        {"": "rewrite time" + (" (fresh session)" if check.get("compared_with") == "cold" else ""),
         "predicted": fmt_seconds(check.get("predicted_seconds")),
         "measured": f"{fmt_seconds(check.get('measured_wall_seconds'))} "
                     f"({fmt_seconds(check.get('measured_cpu_seconds'))} CPU)",
         "error": "–" if check.get("error") is None else f"{check['error'] * 100:+.0f} %"},
        {"": "money", "predicted": fmt_money(check.get("predicted_money")),
         "measured": fmt_money(check.get("measured_money")), "error": ""},
        {"": "bytes read", "predicted": fmt_bytes(check.get("predicted_bytes_read")),
         "measured": fmt_bytes(check.get("measured_bytes_read")), "error": ""},
    ])


def table_label(info: Mapping[str, Any]) -> str:
    """``lineitem · iceberg (workspace catalog)``, ``events · delta``, ``t · native``.

    Example:
    >>> table_label({"name": "lineitem", "format": "iceberg", "catalog": None})
    'lineitem · iceberg (workspace catalog)'
    """
    fmt = info.get("format") or "native"
    where = ""
    if fmt == "iceberg":
        where = f" ({info.get('catalog') or 'workspace'} catalog)"
    return f"{info['name']} · {fmt}{where}"


def history_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The reclustering history as shown: predicted beside measured, readable units.

    Example:
    >>> history_frame([{"plan": 1, "policy": "wair", "status": "succeeded", "finished_at":
    ...     "2026-01-01T10:00:00+00:00", "partitions_rewritten": 43, "bytes_written": 3357300,
    ...     "predicted_cost_cpu_seconds": 0.087, "predicted_cost_money": 1.2e-06,
    ...     "measured_seconds": 14.9, "predicted_saving_cpu_seconds": 0.158,
    ...     "realized_saving_cpu_seconds": 0.15, "new_snapshot": "2",
    ...     "later": {"status": "measured", "queries": 60, "saving_cpu_seconds": 0.2}}]
    ...     ).iloc[0].to_dict()
    ... # doctest: +NORMALIZE_WHITESPACE
    {'plan': 1, 'policy': 'wair', 'status': 'succeeded', 'finished': '2026-01-01 10:00:00',
     'new snapshot': '2', 'partitions': 43, 'written': '3.2 MB', 'predicted cost': '87 ms CPU',
     'measured time': '14.9 s', 'predicted cost ($)': '< $0.01',
     'predicted saving / window': '158 ms CPU',
     're-estimated on the decision window': '150 ms CPU',
     'realized (later queries)': '200 ms CPU over 60 queries'}

    ``realized_saving_cpu_seconds`` is the run's own replay of the window the plan was
    decided on (scope "re-estimated"); ``later`` is :func:`engine.api.realized_savings`,
    the queries imported after the run (issue 11, section 3).
    """
    out = []
    for r in rows:
        out.append({
            "plan": r["plan"], "policy": r["policy"], "status": r["status"],
            "finished": str(r.get("finished_at") or "")[:19].replace("T", " "),
            "new snapshot": r.get("new_snapshot") or "–",
            "partitions": r.get("partitions_rewritten"),
            "written": fmt_bytes(r.get("bytes_written")),
            "predicted cost": fmt_seconds(r.get("predicted_cost_cpu_seconds")) + " CPU",
            "measured time": fmt_seconds(r.get("measured_seconds")),
            "predicted cost ($)": fmt_money(r.get("predicted_cost_money")),
            "predicted saving / window": fmt_seconds(r.get("predicted_saving_cpu_seconds")) + " CPU",
            RE_ESTIMATED_LABEL: (fmt_seconds(r["realized_saving_cpu_seconds"]) + " CPU"
                                 if r.get("realized_saving_cpu_seconds") is not None else "–"),
            REALIZED_LABEL: later_saving_label(r.get("later")),
        })
    return pd.DataFrame(out)


#: the two scopes of a run's saving, as every page names them (issue 11, section 3)
RE_ESTIMATED_LABEL = "re-estimated on the decision window"
REALIZED_LABEL = "realized (later queries)"


def later_saving_label(later: Mapping[str, Any] | None) -> str:
    """One cell for :func:`engine.api.realized_savings`: the saving over the queries
    imported after the run, or why there is none yet.

    Example:
    >>> later_saving_label({"status": "waiting for later queries", "queries": 0})
    'waiting for later queries'
    >>> later_saving_label({"status": "measured", "queries": 1, "saving_cpu_seconds": 2.5})
    '2.5 s CPU over 1 query'
    """
    if not later or later.get("status") in (None, "not run"):
        return "–"
    if later.get("status") != "measured":
        return str(later["status"])
    n = int(later.get("queries") or 0)
    return (f"{fmt_seconds(later.get('saving_cpu_seconds'))} CPU over {n:,} "
            + ("query" if n == 1 else "queries"))


def trend_series(trend: pd.DataFrame, columns: Sequence[str]) -> dict[str, tuple[list, list]]:
    """Average depth per column across snapshots, for :func:`app.charts.lines`."""
    xs = [f"{s} · {op}" for s, op in zip(trend["snapshot"], trend["operation"])]
    return {c: (xs, trend[f"{c}.average_depth"].tolist()) for c in columns
            if f"{c}.average_depth" in trend}


def impact_frames(impact: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    """The predicted effect as two tables: per query (largest saving first) and per column.

    Example:
    >>> f = impact_frames({"queries": [{"query_id": "q1", "partitions_before": 10,
    ...     "partitions_after": 4, "bytes_before": 1000.0, "bytes_after": 400.0}],
    ...     "columns": [{"column": "a", "depth_before": 9.0, "depth_after": 2.0,
    ...                  "queries_filtering": 3}]})
    >>> f["queries"].iloc[0].to_dict()["bytes saved (%)"], f["columns"].iloc[0].to_dict()["effect"]
    (60.0, 'better')
    """
    q = pd.DataFrame(impact["queries"])
    if not q.empty:
        saved = q["bytes_before"] - q["bytes_after"]
        q = pd.DataFrame({
            "query": q["query_id"], "partitions before": q["partitions_before"],
            "partitions after": q["partitions_after"],
            "bytes before": q["bytes_before"].round().astype("int64"),
            "bytes after": q["bytes_after"].round().astype("int64"),
            "bytes saved (%)": np.where(q["bytes_before"] > 0,
                                        (saved / q["bytes_before"].where(q["bytes_before"] > 0, 1)
                                         * 100).round(1), 0.0),
        }).sort_values("bytes saved (%)", ascending=False, kind="stable")
    c = pd.DataFrame(impact["columns"])
    if not c.empty:
        change = c["depth_after"] - c["depth_before"]
        c = pd.DataFrame({
            "column": c["column"], "queries filtering it": c["queries_filtering"],
            "depth before": c["depth_before"].round(2), "depth after": c["depth_after"].round(2),
            "effect": np.where(change < -1e-9, "better", np.where(change > 1e-9, "worse", "same")),
        })
    return {"queries": q, "columns": c}


def plans_list(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Stored plans, newest first."""
    df = pd.DataFrame([dict(r) for r in rows])
    if not df.empty and "id" in df.columns:
        df = df.sort_values("id", ascending=False).reset_index(drop=True)
    return df


def plans_frame(plans: pd.DataFrame) -> pd.DataFrame:
    """The columns a human reads in a plan list."""
    rename = {"id": "plan", "status": "status", "policy": "policy", "groups": "groups",
              "partitions": "partitions", "estimated_cpu_seconds": "cost (CPU-s)",
              "predicted_saving_cpu_seconds": "saving per window (CPU-s)",
              "created_by": "proposed by", "created_at": "created (UTC)",
              "updated_at": "updated (UTC)"}
    cols = [c for c in rename if c in plans.columns]
    return plans[cols].rename(columns=rename)


def run_progress(progress: Mapping[str, Any]) -> tuple[float, str, str]:
    """(fraction done, message, status) of a plan's ``plan_progress``."""
    total = progress.get("groups_total") or 0
    frac = (progress.get("groups_done") or 0) / total if total else 0.0
    return min(1.0, float(frac)), str(progress.get("message") or ""), str(progress.get("status"))


def realized_frame(realized: Mapping[str, Any], label: str = "realized",
                   predicted_label: str = "predicted") -> pd.DataFrame:
    """Predicted against measured saving of a run (one of its two scopes, ``label``), in
    bytes and CPU time.

    Example:
    >>> realized_frame({"predicted_saving_bytes": 2048, "saving_bytes": 1024,
    ...     "predicted_saving_cpu_seconds": 2.0, "saving_cpu_seconds": 1.5},
    ...     REALIZED_LABEL).values.tolist()
    [['predicted', '2.0 KB', '2.0 s'], ['realized (later queries)', '1.0 KB', '1.5 s']]
    """
    return pd.DataFrame([
        {"": predicted_label, "bytes saved": fmt_bytes(realized.get("predicted_saving_bytes")),
         "CPU time saved": fmt_seconds(realized.get("predicted_saving_cpu_seconds"))},
        {"": label, "bytes saved": fmt_bytes(realized.get("saving_bytes")),
         "CPU time saved": fmt_seconds(realized.get("saving_cpu_seconds"))},
    ])


def log_check_frame(log: Mapping[str, Any]) -> pd.DataFrame:
    """The query log's measured bytes of later queries beside the zonemap estimate
    (``realized_savings(...)["log"]``); empty when no later query carries them.

    Example:
    >>> log_check_frame({"queries_with_bytes": 60, "measured_bytes": 3072.0,
    ...     "estimated_bytes": 2048.0, "measured_over_estimated": 1.5,
    ...     "queries_with_duration": 60, "measured_seconds": 2.4}).values.tolist()
    [['bytes scanned', 60, '3.0 KB', '2.0 KB', '150 %'], ['duration', 60, '2.4 s', '–', '']]
    """
    rows = []
    if log.get("queries_with_bytes"):
        ratio = log.get("measured_over_estimated")
        rows.append({"": "bytes scanned", "queries": int(log["queries_with_bytes"]),
                     "measured (log)": fmt_bytes(log.get("measured_bytes")),
                     "estimated (zonemaps)": fmt_bytes(log.get("estimated_bytes")),
                     "measured / estimated": f"{ratio * 100:.0f} %" if ratio is not None else "–"})
    if log.get("queries_with_duration"):
        rows.append({"": "duration", "queries": int(log["queries_with_duration"]),
                     "measured (log)": fmt_seconds(log.get("measured_seconds")),
                     "estimated (zonemaps)": "–", "measured / estimated": ""})
    return pd.DataFrame(rows)


def regressions_frame(regressions: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None
                      ) -> pd.DataFrame:
    """A plan's predicted losses per filtered column (``preview["regressions"]``, or its
    ``columns`` list): depth before and after, queries that would read more, bytes and
    CPU time lost. Empty when nothing gets worse.

    Example:
    >>> list(regressions_frame({"columns": [{"column": "o_orderdate", "queries": 3,
    ...     "bytes_lost": 3 * 1024 ** 2, "cpu_seconds_lost": 0.25, "depth_before": 2.0,
    ...     "depth_after": 36.14}]}).to_dict("records")[0].values())
    ['o_orderdate', 2.0, 36.14, 3, '3.0 MB', '250 ms']
    """
    cols = regressions.get("columns") if isinstance(regressions, Mapping) else regressions
    rows = [{"column": r["column"],
             "depth before": round(float(r["depth_before"]), 2) if r.get("depth_before") is not None else None,
             "depth after": round(float(r["depth_after"]), 2) if r.get("depth_after") is not None else None,
             "queries affected": int(r.get("queries") or 0),
             "bytes lost": fmt_bytes(r.get("bytes_lost")),
             "CPU time lost": fmt_seconds(r.get("cpu_seconds_lost"))}
            for r in cols or [] if int(r.get("queries") or 0) > 0]
    return pd.DataFrame(rows, columns=["column", "depth before", "depth after",
                                       "queries affected", "bytes lost", "CPU time lost"])


def refused_net_of_losses(rec: Mapping[str, Any]) -> bool:
    """Whether a no-action answer is WAIR refusing a plan whose saving, net of the losses
    it predicts for other queries, is not positive (or not above alpha x cost)."""
    return (rec.get("status") == "no-action"
            and str(rec.get("reason") or "").startswith("net of losses"))


def prediction_frame(runs: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """``prediction_history(...)["runs"]`` as shown: predicted and measured rewrite time
    with the relative error, newest first.

    Example:
    >>> list(prediction_frame([{"plan_id": 3, "policy": "wair", "ran_at": "2026-01-01T10:00:00",
    ...     "groups": 2, "partitions": 43, "bytes": 3.5e6, "predicted_seconds": 6.46,
    ...     "measured_seconds": 4.73, "measured_cpu_seconds": 7.0, "spark_jobs": 2,
    ...     "calibrated": True, "error": 0.366}]).to_dict("records")[0].values())
    [3, 'wair', '2026-01-01 10:00:00', 43, '3.3 MB', '6.5 s', '4.7 s', '+37 %', 'yes']
    """
    rows = [{"plan": r["plan_id"], "policy": r["policy"],
             "ran": str(r.get("ran_at") or "")[:19].replace("T", " "),
             "partitions": r.get("partitions"), "bytes read": fmt_bytes(r.get("bytes")),
             "predicted time": fmt_seconds(r.get("predicted_seconds")),
             "measured time": fmt_seconds(r.get("measured_seconds")),
             "error": "–" if r.get("error") is None else f"{float(r['error']) * 100:+.0f} %",
             "calibrated": ("?" if r.get("calibrated") is None  # priced before round 8
                            else "yes" if r["calibrated"] else "no")}
            for r in reversed(list(runs))]
    return pd.DataFrame(rows, columns=["plan", "policy", "ran", "partitions", "bytes read",
                                       "predicted time", "measured time", "error",
                                       "calibrated"])


def prediction_summary(summary: Mapping[str, Any]) -> str:
    """One sentence over ``prediction_history(...)["summary"]``.

    Example:
    >>> prediction_summary({"runs": 3, "with_error": 3, "median_abs_error": 0.2,
    ...     "mean_abs_error": 0.25, "within_tolerance": 2, "tolerance": 0.3})
    '3 runs: median error ±20 %, mean ±25 %; 2 of 3 within ±30 %.'
    """
    runs, n = int(summary.get("runs") or 0), int(summary.get("with_error") or 0)
    if n == 0:
        return f"{_plural(runs, 'run')}, none with a measured time to compare."
    tol = float(summary.get("tolerance") or 0.0) * 100
    return (f"{_plural(runs, 'run')}: median error ±{float(summary['median_abs_error']) * 100:.0f} %, "
            f"mean ±{float(summary['mean_abs_error']) * 100:.0f} %; "
            f"{int(summary.get('within_tolerance') or 0)} of {n} within ±{tol:.0f} %.")


def plan_key_columns(plan: Mapping[str, Any]) -> list[str]:
    """The plan's key columns, in the order its groups name them."""
    cols: list[str] = []
    for g in plan.get("groups") or []:
        for c in g.get("columns") or []:
            if c not in cols:
                cols.append(c)
    return cols


def depth_before_after(columns: Sequence[str], before: Sequence[Mapping[str, Any]],
                       after: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Average and max depth of ``columns`` in two ``analyze`` results (base, result)."""
    old = {m["column"]: m for m in before}
    new = {m["column"]: m for m in after}
    rows = []
    for c in columns:
        if c in old and c in new:
            rows.append({"column": c,
                         "average depth before": old[c]["average_depth"],
                         "average depth after": new[c]["average_depth"],
                         "max depth before": old[c].get("max_depth"),
                         "max depth after": new[c].get("max_depth"),
                         "verdict after": new[c].get("verdict")})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- simulator

def simulation_frames(result: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    """Per-batch rows, cumulative CPU-seconds split into query and reclustering cost (over the
    measured batches, as the totals), and one summary row per policy."""
    rows = []
    for name, res in (result.get("policies") or {}).items():
        for b in res.get("batches") or []:
            rows.append({"policy": res.get("label", name), "batch": int(b["index"]) + 1,
                         "period": b["period"], "measured": bool(b["measured"]),
                         "query": float(b["query_cpu_seconds"]),
                         "recluster": float(b["recluster_cpu_seconds"]),
                         "pruning_rate": float(b["pruning_rate"]),
                         "partitions_rewritten": int(b.get("partitions_rewritten") or 0)})
    per = pd.DataFrame(rows)
    cum = per[per["measured"]].copy() if not per.empty else per
    if not cum.empty:
        cum["query"] = cum.groupby("policy")["query"].cumsum()
        cum["recluster"] = cum.groupby("policy")["recluster"].cumsum()
        cum["total"] = cum["query"] + cum["recluster"]
    return {"per_batch": per, "cumulative": cum, "summary": _simulation_summary(result)}


def _simulation_summary(result: Mapping[str, Any]) -> pd.DataFrame:
    comp = result.get("comparison") or {}
    summary = []
    for name, res in (result.get("policies") or {}).items():
        c = comp.get(name, {})
        summary.append({
            "policy": res.get("label", name),
            "query CPU-s": res["query_cpu_seconds"], "reclustering CPU-s": res["recluster_cpu_seconds"],
            # part of the reclustering: a fresh Spark session's start (engine.sim.session)
            "of which cold start CPU-s": float(res.get("cold_start_seconds") or 0.0),
            "total CPU-s": res["cpu_seconds"], "money ($)": res["money"],
            "mean pruning rate (%)": 100 * float(res["pruning_rate"]),
            "partitions rewritten": res["partitions_rewritten"],
            "total cost vs NR (%)": (None if c.get("cpu_reduction_vs_nr") is None
                                     else -100 * float(c["cpu_reduction_vs_nr"])),
        })
    frame = pd.DataFrame(summary)
    if not frame.empty:
        frame = frame.sort_values("total CPU-s").reset_index(drop=True)
    return frame


# --------------------------------------------------------------------------- plans, more

def group_label(group: Mapping[str, Any]) -> str:
    """``sort l_shipdate``, ``hilbert l_shipdate+l_suppkey``, ``qdtree ...``."""
    return f"{group['layout']} {'+'.join(group['columns'])}".strip()


NOT_REWRITTEN = "not rewritten"


def group_assignment(zm: Any, groups: Sequence[Mapping[str, Any]], column: str,
                     limit: int = 5000) -> dict[str, Any]:
    """Which partitions go to which layout, for the hybrid-layout drawing: every partition's
    ``[lo, hi]`` on ``column`` (encoded), its group label (or ``not rewritten``), ordered by
    its min; past ``limit`` partitions an even sample of the unselected ones is kept (the
    selected ones are all drawn). Returns lo, hi, category, y, ltype and the label order."""
    cz = zm.column(column)
    label = np.full(len(zm.paths), NOT_REWRITTEN, dtype=object)
    where = {p: i for i, p in enumerate(zm.paths)}
    order_labels = []
    for g in groups:
        name = group_label(g)
        order_labels.append(name)
        idx = [where[p] for p in g["partitions"] if p in where]
        label[idx] = name
    keep = np.flatnonzero(cz.valid)
    chosen = keep[label[keep] != NOT_REWRITTEN]
    rest = keep[label[keep] == NOT_REWRITTEN]
    room = max(0, limit - len(chosen))
    if len(rest) > room:
        rest = rest[np.unique(np.linspace(0, len(rest) - 1, room).round().astype(np.int64))] \
            if room else rest[:0]
    idx = np.concatenate([chosen, rest])
    idx = idx[np.argsort(cz.lo[idx], kind="stable")]
    return {"lo": cz.lo[idx], "hi": cz.hi[idx], "category": label[idx], "y": np.arange(len(idx)),
            "ltype": cz.ltype, "labels": list(dict.fromkeys(order_labels)) + [NOT_REWRITTEN],
            "sampled": len(idx) < len(keep)}


def compare_frame(out: Mapping[str, Any]) -> pd.DataFrame:
    """:func:`engine.api.compare_plans` as a frame: one row per field, plan a, plan b, b - a;
    bytes and seconds in human units."""
    rows = []
    for row in out["rows"]:
        field = str(row["field"])
        fmt = (fmt_bytes if field.startswith("bytes") or "bytes" in field
               else fmt_seconds if "CPU-s" in field
               else fmt_money if "money" in field
               else (lambda v: f"{v:,.0f}" if isinstance(v, (int, float)) else ("–" if v is None else str(v))))
        diff = row.get("difference")
        rows.append({"": field, f"plan {out['a']}": fmt(row["a"]) if row["a"] is not None else "–",
                     f"plan {out['b']}": fmt(row["b"]) if row["b"] is not None else "–",
                     "b − a": ("–" if diff is None else
                               ("+" if diff > 0 else "−" if diff < 0 else "") + fmt(abs(diff)))})
    return pd.DataFrame(rows)


def wair_state_frame(state: Mapping[str, Any]) -> pd.DataFrame:
    """WAIR's latest window closes: end (queries), size before and after, verdict, the
    predicted and realized CPU-seconds that decided it."""
    rows = [{"after query": int(w.get("end_queries") or 0),
             "window before": int(w.get("window_before") or 0),
             "window after": int(w.get("window_after") or 0),
             "verdict": w.get("verdict", ""),
             "predicted": fmt_seconds(w.get("predicted_cpu_s")),
             "realized": fmt_seconds(w.get("realized_cpu_s")),
             "runs": int(w.get("feedbacks") or 0), "proposals": int(w.get("proposals") or 0)}
            for w in state.get("windows") or []]
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- designs

PAW_METHODS = {"paw": "PAW", "qdtree": "Qd-tree (greedy)", "kdtree": "k-d tree",
               "lb_b": "lower bound LB_b", "lb": "lower bound LBCost"}


def paw_costs_frame(design: Mapping[str, Any]) -> pd.DataFrame:
    """Rows read per query by PAW and its baselines, on the history and on the worst
    δ-similar future (seed 001, section 6)."""
    rows = [{"design": PAW_METHODS.get(name, name), "rows read per query (history)": round(c["history"]),
             "rows read per query (worst δ-similar future)": round(c["worst_future"])}
            for name, c in (design.get("costs") or {}).items()]
    return pd.DataFrame(rows)


def pto_candidates_frame(result: Mapping[str, Any], limit: int = 15) -> pd.DataFrame:
    """PTO's ranked candidates: the layout, predicted and (for the labelled ones) measured
    cost; the chosen one first."""
    rows = []
    for c in sorted(result.get("candidates") or [], key=lambda c: c.get("predicted", 0.0))[:limit]:
        rows.append({k: v for k, v in c.items() if not isinstance(v, (list, dict))})
    return pd.DataFrame(rows)


def busier_text(out: Mapping[str, Any]) -> str:
    """The busier-workload what-if in one paragraph: the factor, the plan WAIR would then
    propose (partitions, cost, saving per window) and how to store it. Numbers by
    :func:`engine.core.fmt.format_number` (1,000, never 1e+03).

    >>> busier_text({"factor": 1000.0, "alpha": 0.001, "plan": None,
    ...              "steps": [{"factor": 1.0}, {"factor": 12.5}, {"factor": 1000.0}]})
    'Even if each query of the window ran 1,000 times, WAIR proposes nothing (tried 1x, 12.5x, 1,000x).'
    """
    tried = ", ".join(f"{format_number(float(s['factor']))}x" for s in out.get("steps") or [])
    plan = out.get("plan")
    if plan is None:
        return (f"Even if each query of the window ran {format_number(float(out['factor']))} times, "
                f"WAIR proposes nothing (tried {tried}).")
    cost, saving = plan.get("estimated_cost") or {}, plan.get("predicted_saving") or {}
    what = (f"{int(plan.get('partition_count') or 0):,} partitions in "
            f"{len(plan.get('groups') or [])} group(s), costing {fmt_seconds(cost.get('cpu_seconds'))} "
            f"CPU and saving {fmt_seconds(saving.get('cpu_seconds'))} CPU per "
            f"{int(saving.get('window_queries') or 0)} queries each run once")
    if not out.get("steps"):
        return f"WAIR proposes a plan on the window as it is: {what}."
    return (f"**If each query of the window ran {format_number(float(out['factor']))} times**, WAIR "
            f"would propose {what} (it declined at {tried}). Equation 4 then weighs each saving "
            f"{format_number(float(out['factor']))} times: preview it on **Recommendation** with alpha "
            f"{format_number(float(out['alpha']))}, or `layout-advisor plan preview --busier`.")
