"""JSON-friendly descriptions of the catalog's tables: the list, one table's location and
size, its partitions with their decoded bounds, its snapshot history, durations for
retention flags.

Dates are ISO strings and decimals strings (:func:`engine.core.logical_types.to_json_value`);
every function reads the catalog it is given and writes nothing.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING

from engine.core import logical_types
from engine.core.errors import InvalidParameterError
from engine.table.manifest import ManifestPartitions

if TYPE_CHECKING:
    from engine.table.model import Snapshot
    from engine.table.store import TableStore

__all__ = ["parse_duration", "load_snapshot", "table_files", "table_info", "list_tables",
           "show_table", "table_snapshots"]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$", re.IGNORECASE)
_UNITS = {"s": 1, "": 86400, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(text: str | dt.timedelta) -> dt.timedelta:
    """'7d', '12h', '30m', '45s', '2w' (a bare number means days) -> timedelta.

    Example:
    >>> parse_duration("12h")
    datetime.timedelta(seconds=43200)
    """
    if isinstance(text, dt.timedelta):
        return text
    m = _DURATION.match(str(text))
    if not m:
        raise InvalidParameterError(f"invalid duration {text!r}: use e.g. 7d, 12h, 30m or 45s")
    try:
        return dt.timedelta(seconds=float(m.group(1)) * _UNITS[m.group(2).lower()])
    except OverflowError:
        raise InvalidParameterError(f"duration {text!r} is too long (at most 999999999 days)") from None


def table_files(store: "TableStore", name: str, snapshot_id: str | None = None) -> list[str]:
    """The live data files of a snapshot (what a plain Parquet reader should read), in
    snapshot order, from its zonemap arrays: on a zonemap-cache hit walking
    ``Snapshot.partitions`` read the manifest and made a ``Partition`` per file (5.0
    CPU-s at 1,000,000 files, bench/planning/bench_snapshot_walks.py)."""
    return load_snapshot(store, name, snapshot_id).zonemaps().paths.tolist()


def load_snapshot(store: "TableStore", name: str, snapshot_id: str | None = None) -> "Snapshot":
    """The current snapshot of ``name`` (or the given one)."""
    return store.current_snapshot(name) if snapshot_id is None else store.snapshot(name, str(snapshot_id))


def table_info(store: "TableStore", name: str) -> dict:
    """Where the table lives and its current size, JSON-friendly; ``partitioned`` (the
    format partitions it: plans are split by partition) and ``merge_on_read`` (files with
    delete files or deletion vectors, never rewritten: ``{path: reason}``) and
    ``spec_misfits`` (files of an older partition spec that fit no current partition, left
    out of plans: ``{path: reason}``)."""
    info = store.info(name)
    snap = store.current_snapshot(name)
    fmt = store.format(name)
    return {"name": info.name, "location": info.location, "managed": info.managed,
            "format": info.format, "catalog": info.catalog, "identifier": info.identifier,
            "partitioned": bool(fmt.partition_keys(snap.id)),
            "merge_on_read": dict(fmt.merge_on_read(snap.id)),
            "spec_misfits": dict(fmt.spec_misfits(snap.id)),
            "columns_without_stats": list(snap.summary.get("columns_without_stats") or []),
            "columns_from_footers": list(snap.summary.get("columns_from_footers") or []),
            "metadata_dir": info.metadata_dir, "target_rows": info.target_rows,
            "target_bytes": info.target_bytes, "created_at": info.created_at,
            "snapshot": snap.id, "operation": snap.operation, "partitions": snap.partition_count,
            "rows": snap.total_rows, "bytes": snap.total_bytes,
            "columns": [{"name": n, "type": t} for n, t in snap.schema.columns]}


def list_tables(store: "TableStore") -> list[dict]:
    """One summary per table: name, location, managed, snapshot, partitions, rows, bytes."""
    out = []
    for info in store.list_tables():
        snap = store.current_snapshot(info.name)
        out.append({"name": info.name, "location": info.location, "managed": info.managed,
                    "format": info.format, "catalog": info.catalog, "snapshot": snap.id, "partitions": snap.partition_count,
                    "rows": snap.total_rows, "bytes": snap.total_bytes,
                    "created_at": info.created_at})
    return out


def show_table(store: "TableStore", name: str, snapshot_id: str | None = None) -> dict:
    """``{"name", "snapshot", "partitions": [{"path", "rows", "bytes", "columns":
    {COL: {"min", "max", "nulls"}}}]}`` in snapshot order; unknown bounds are null."""
    snap = load_snapshot(store, name, snapshot_id)
    types = dict(snap.schema.columns)
    if isinstance(snap.partitions, ManifestPartitions):
        parts = _shown_from_manifest(snap)
    else:  # an open format's own partition objects
        parts = []
        for p in snap.partitions:
            cols = {}
            for col, stats in p.columns.items():
                ltype = types.get(col, "other")
                cols[col] = {"min": logical_types.to_json_value(ltype, stats.min),
                             "max": logical_types.to_json_value(ltype, stats.max),
                             "nulls": stats.null_count}
            parts.append({"path": p.path, "rows": p.rows, "bytes": p.bytes, "columns": cols})
    info = store.info(name)
    return {"name": name, "snapshot": snap.id, "format": info.format,
            "location": info.location, "catalog": info.catalog, "partitions": parts}


def _shown_from_manifest(snap: "Snapshot") -> list[dict]:
    """:func:`show_table`'s partitions of a native snapshot, column by column from its
    manifest and zonemap arrays: the walk over ``Partition`` objects would make one
    ``ColumnStats`` per partition and column, a minute at 1,000,000 x 6
    (bench/planning/README.md)."""
    zm = snap.zonemaps()
    shown = []
    for col, ltype in snap.schema.columns:
        mins, maxs, nulls = snap.partitions.column_lists(col)
        shown.append((col, [logical_types.to_json_value(ltype, v) for v in mins],
                       [logical_types.to_json_value(ltype, v) for v in maxs], nulls))
    return [{"path": str(path), "rows": rows, "bytes": size,
             "columns": {col: {"min": lo[i], "max": hi[i], "nulls": nn[i]} for col, lo, hi, nn in shown}}
            for i, (path, rows, size) in enumerate(zip(zm.paths.tolist(), zm.rows.tolist(),
                                                        zm.bytes.tolist()))]


def table_snapshots(store: "TableStore", name: str) -> list[dict]:
    """``[{"id", "parent", "created_at", "operation", "partition_count"}]``, oldest first."""
    return store.history(name)
