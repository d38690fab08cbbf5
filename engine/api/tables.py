"""Tables façade: create, register, inspect, roll back and clean up tables.

Everything returned here is JSON-friendly (dates as ISO strings, decimals as strings),
except :func:`load_snapshot` (the engine's :class:`Snapshot`) and the ``*_table`` commands
that publish one. Spark is started only by the commands that read data.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING, Any, Callable

from engine.core import logical_types
from engine.core.config import Settings
from engine.api.summaries import warm_after_change
from engine.core.errors import InvalidParameterError
from engine.plans.gate import require, undo_rolled_back
from engine.plans.plan import PlanBook
from engine.plans.identity import Identity
from engine.plans.store import ControlStore
from engine.spark import ingest
from engine.table.manifest import ManifestPartitions
from engine.table.model import Snapshot
from engine.table.store import TableStore

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "create_table", "register_table", "append_table", "list_tables", "show_table",
    "table_snapshots", "rollback_table", "gc_table", "drop_table", "load_snapshot",
    "table_info", "parse_duration", "DEMO_TARGET_ROWS", "MIN_RETENTION", "register_iceberg",
    "register_delta", "adopt_iceberg", "table_files",
]

DEMO_TARGET_ROWS = ingest.DEMO_TARGET_ROWS
#: shortest gc retention without ``force_retention`` (Delta VACUUM's default)
MIN_RETENTION = dt.timedelta(days=7)
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


def create_table(settings: Settings, name: str, source: str, order_by: str | None = None,
                 target_rows: int | None = None, target_mb: float | None = None,
                 spark: "SparkSession | None" = None,
                 progress: Callable[[str], None] | None = None, format: str = "native") -> Snapshot:
    """Ingest CSV/Parquet into a managed table of equal-size micro-partitions (Spark);
    ``format`` "iceberg" makes it table ``default.NAME`` of the workspace's Iceberg catalog."""
    return ingest.create_table(settings, name, source, order_by=order_by, target_rows=target_rows,
                               target_mb=target_mb, spark=spark, progress=progress, format=format)


def register_table(settings: Settings, name: str, path: str, spark: "SparkSession | None" = None,
                   progress: Callable[[str], None] | None = None) -> Snapshot:
    """Adopt an existing Parquet dataset in place (reads footers only, writes nothing there)."""
    return ingest.register_table(settings, name, path, spark=spark, progress=progress)


def register_iceberg(settings: Settings, name: str, identifier: str,
                     catalog: str | None = None) -> Snapshot:
    """Register Iceberg table NAMESPACE.TABLE of a pyiceberg catalog (the workspace's SQLite
    catalog when ``catalog`` is None); rewrites are committed to it in place."""
    return ingest.register_iceberg(settings, name, identifier, catalog)


def register_delta(settings: Settings, name: str, path: str) -> Snapshot:
    """Register the Delta table at ``path`` (partitioned tables included: plans are split
    by partition and new files carry their partition values); rewrites are committed to
    its log in place."""
    return TableStore(settings).register_delta(name, path)


def adopt_iceberg(settings: Settings, name: str, path: str) -> Snapshot:
    """Turn a plain Parquet folder into an Iceberg table of the workspace catalog without
    copying a byte (pyiceberg ``add_files``), registered as ``name``."""
    return ingest.adopt_iceberg(settings, name, path)


def table_files(settings: Settings, name: str, snapshot_id: str | None = None) -> list[str]:
    """The live data files of a snapshot (what a plain Parquet reader should read), in
    snapshot order, from its zonemap arrays: on a zonemap-cache hit walking
    ``Snapshot.partitions`` read the manifest and made a ``Partition`` per file (5.0
    CPU-s at 1,000,000 files, bench/bench_snapshot_walks.py)."""
    return load_snapshot(settings, name, snapshot_id).zonemaps().paths.tolist()


def append_table(settings: Settings, name: str, source: Any, order_by: str | None = None,
                 spark: "SparkSession | None" = None,
                 progress: Callable[[str], None] | None = None) -> Snapshot:
    """Ingest another batch (path or DataFrame) as new micro-partitions."""
    return ingest.append_batch(settings, name, source, order_by=order_by, spark=spark, progress=progress)


def load_snapshot(settings: Settings, name: str, snapshot_id: str | None = None) -> Snapshot:
    """The current snapshot of ``name`` (or the given one)."""
    store = TableStore(settings)
    return store.current_snapshot(name) if snapshot_id is None else store.snapshot(name, str(snapshot_id))


def table_info(settings: Settings, name: str) -> dict:
    """Where the table lives and its current size, JSON-friendly; ``partitioned`` (the
    format partitions it: plans are split by partition) and ``merge_on_read`` (files with
    delete files or deletion vectors, never rewritten: ``{path: reason}``) and
    ``spec_misfits`` (files of an older partition spec that fit no current partition, left
    out of plans: ``{path: reason}``)."""
    store = TableStore(settings)
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


def list_tables(settings: Settings) -> list[dict]:
    """One summary per table: name, location, managed, snapshot, partitions, rows, bytes."""
    store = TableStore(settings)
    out = []
    for info in store.list_tables():
        snap = store.current_snapshot(info.name)
        out.append({"name": info.name, "location": info.location, "managed": info.managed,
                    "format": info.format, "catalog": info.catalog, "snapshot": snap.id, "partitions": snap.partition_count,
                    "rows": snap.total_rows, "bytes": snap.total_bytes,
                    "created_at": info.created_at})
    return out


def show_table(settings: Settings, name: str, snapshot_id: str | None = None) -> dict:
    """``{"name", "snapshot", "partitions": [{"path", "rows", "bytes", "columns":
    {COL: {"min", "max", "nulls"}}}]}`` in snapshot order; unknown bounds are null."""
    snap = load_snapshot(settings, name, snapshot_id)
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
    info = TableStore(settings).info(name)
    return {"name": name, "snapshot": snap.id, "format": info.format,
            "location": info.location, "catalog": info.catalog, "partitions": parts}


def _shown_from_manifest(snap: Snapshot) -> list[dict]:
    """:func:`show_table`'s partitions of a native snapshot, column by column from its
    manifest and zonemap arrays: the walk over ``Partition`` objects made one
    ``ColumnStats`` per partition and column (59.5 CPU-s at 1,000,000 x 6,
    bench/bench_snapshot_walks.py)."""
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


def table_snapshots(settings: Settings, name: str) -> list[dict]:
    """``[{"id", "parent", "created_at", "operation", "partition_count"}]``, oldest first."""
    return TableStore(settings).history(name)


def rollback_table(settings: Settings, name: str, to_snapshot: str,
                   actor: "Identity | None" = None) -> Snapshot:
    """Publish a new snapshot equal to ``to_snapshot`` (nothing is deleted), as a signed-in
    admin (:func:`engine.plans.gate.require`: the CLI and the dashboard share the rule);
    audited. A wrong table or snapshot is reported before the identity."""
    store = TableStore(settings)
    store.snapshot(name, str(to_snapshot))
    control = ControlStore(settings)
    who = require(settings, actor, "rollback", control)
    snap = store.rollback(name, str(to_snapshot), actor=who)
    control.record(who, "rollback", f"table {name}: snapshot {snap.parent} -> {snap.id} "
                                    f"(equal to {to_snapshot})")
    undo_rolled_back(PlanBook(settings, control), name, str(to_snapshot), snap.id, who)
    warm_after_change(settings, name)
    return snap


def gc_table(settings: Settings, name: str, older_than: str | dt.timedelta = "7d",
             dry_run: bool = True, actor: "Identity | None" = None,
             force_retention: bool = False) -> list[str]:
    """The data files no retained snapshot references: listed (``dry_run``, the default,
    needs no sign-in) or deleted by a signed-in admin, audited.

    A retention below :data:`MIN_RETENTION` (7 days, as Delta's VACUUM) is refused unless
    ``force_retention``: a shorter one can delete the files of a run still committing or of
    a snapshot someone may want to roll back to.
    """
    keep = parse_duration(older_than)
    if keep < MIN_RETENTION and not force_retention:
        raise InvalidParameterError(
            f"--older-than {older_than} is below the minimum retention of "
            f"{MIN_RETENTION.days} days; add --force-retention to go below it")
    store = TableStore(settings)
    if dry_run:
        return store.gc(name, keep, dry_run=True)
    control = ControlStore(settings)
    who = require(settings, actor, "gc", control)
    deleted = store.gc(name, keep, dry_run=False)
    control.record(who, "gc", f"table {name}: deleted {len(deleted)} file(s) not referenced "
                              f"by snapshots of the last {keep}")
    return deleted


def drop_table(settings: Settings, name: str, actor: "Identity | None" = None) -> None:
    """Forget a table, as a signed-in admin (audited); a managed table's data goes too, a
    registered table's files stay."""
    store = TableStore(settings)
    store.info(name)  # an unknown table is reported before the identity
    control = ControlStore(settings)
    who = require(settings, actor, "drop", control)
    store.drop(name)
    control.record(who, "drop", f"table {name}")
