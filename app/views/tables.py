"""A table's snapshots and partitions as frames: the snapshot history, the
depth trend across snapshots, one row per partition (built in bulk for a million
partitions) and a partition's zonemaps.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from engine.core import logical_types


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
    the format recorded per snapshot, with unknown facts left blank."""
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


def trend_series(trend: pd.DataFrame, columns: Sequence[str]) -> dict[str, tuple[list, list]]:
    """Average depth per column across snapshots, for :func:`app.charts.lines`."""
    xs = [f"{s} · {op}" for s, op in zip(trend["snapshot"], trend["operation"])]
    return {c: (xs, trend[f"{c}.average_depth"].tolist()) for c in columns
            if f"{c}.average_depth" in trend}


def partition_order(zm: Any, column: str, order_by: str) -> np.ndarray:
    """Partition indexes in creation order or by the column's min (unknown bounds last)."""
    n = len(zm)
    if order_by == "min":
        cz = zm.column(column)
        key = np.where(cz.valid, cz.lo, cz.lo.max() if cz.ltype == "string" else np.inf)
        return np.argsort(key, kind="stable")
    seq = zm.created_seq if len(zm.created_seq) == n else np.arange(n)
    return np.argsort(seq, kind="stable")


#: up to this many partitions the bounds are decoded one by one (dates as dates); past it
#: in bulk (dates as midnight timestamps, ints as nullable Int64)
BULK_ROWS = 20_000


def _bounds_column(ltype: str, values: np.ndarray, valid: np.ndarray) -> Any:
    """A zonemap bound column for display, decoded in bulk (no Python object per
    partition past :data:`BULK_ROWS`, so the Partitions page answers at 1,000,000
    partitions); None / missing where unknown."""
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


def partition_frame(zm: Any, column: str, clus: Mapping[str, Any]) -> pd.DataFrame:
    """One row per partition: its file, size, range on ``column``, depth and overlaps
    (built column by column in bulk, for a million partitions)."""
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
