"""Delta tables through deltalake (delta-rs): partitions from the log, commits as actions.

* Partitions and statistics: ``DeltaTable.get_add_actions(flatten=True)`` (path, size,
  num_records, ``min.<col>``, ``max.<col>``, ``null_count.<col>``, the statistics the
  writers put into the log). Columns outside ``delta.dataSkippingNumIndexedCols`` (default
  32) / ``delta.dataSkippingStatsColumns`` have none: their bounds are unknown and they are
  listed in the snapshot summary under ``columns_without_stats`` and read from the Parquet
  footers instead (up to FOOTER_FALLBACK_MAX_FILES files: ``columns_from_footers``). The log keeps no
  per-column sizes, so a scan's bytes are the whole file's.
* History: ``history()`` (version, operation, metrics, user); ids are the versions.
* :meth:`DeltaFormat.commit_rewrite`: ``create_write_transaction`` with one ``AddAction``
  per new file and one ``RemoveAction`` per replaced file, all ``data_change=False`` (a
  rearrangement: streaming readers see no new data), the plan named in the commit's
  ``custom_metadata``. Files the log no longer holds are a :class:`CommitConflictError`;
  delta-rs's conflict checker settles races with concurrent writers (appends pass).
  Another advisor rewrite or a restore after the plan's base version is a conflict (two
  plans on one table: at most one commits).
* Rollback: ``restore()``; expiry: ``vacuum()`` with the retention given.
* Partitioned Delta tables are refused at registration: their data files do not hold the
  partition columns, so a rewrite that reads the files alone would lose them.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import time
from typing import Any, Mapping, Sequence
from urllib.parse import unquote

import pyarrow as pa
from deltalake import DeltaTable
from deltalake.exceptions import CommitFailedError, DeltaError
from deltalake.exceptions import TableNotFoundError as DeltaTableNotFound
from deltalake.transaction import AddAction, CommitProperties, RemoveAction

from engine.core import logical_types
from engine.core.errors import (CommitConflictError, DataFileError, SnapshotNotFoundError,
                                TableNotFoundError)
from engine.core.faults import crash_point
from engine.table import fs
from engine.table.footers import fill_missing_bounds, table_schema_from_arrow
from engine.table.formats.base import SnapshotInfo, TableFormat
from engine.table.model import ColumnStats, Partition, Snapshot, TableSchema

#: Delta's default number of leading columns with statistics
DEFAULT_INDEXED_COLS = 32
#: read Parquet footers for columns without statistics in the log up to this many files
FOOTER_FALLBACK_MAX_FILES = 10_000


def open_table(name: str, location: str, version: int | None = None) -> DeltaTable:
    try:
        return DeltaTable(location, version=version)
    except DeltaTableNotFound:
        raise TableNotFoundError(f"table {name!r}: no Delta table at {location}") from None
    except DeltaError as exc:
        if version is not None:
            raise SnapshotNotFoundError(f"table {name!r} has no version {version}: {exc}") from None
        raise


def stats_columns(schema: TableSchema, configuration: Mapping[str, str]) -> list[str]:
    """The columns Delta keeps statistics for (the table's data-skipping settings).

    >>> s = TableSchema((("a", "int"), ("b", "date"), ("c", "string")))
    >>> stats_columns(s, {"delta.dataSkippingNumIndexedCols": "2"})
    ['a', 'b']
    >>> stats_columns(s, {"delta.dataSkippingStatsColumns": "c, a"})
    ['a', 'c']
    """
    listed = configuration.get("delta.dataSkippingStatsColumns")
    if listed:
        wanted = {c.strip() for c in listed.split(",")}
        return [c for c in schema.names if c in wanted]
    n = int(configuration.get("delta.dataSkippingNumIndexedCols", DEFAULT_INDEXED_COLS))
    return list(schema.names) if n < 0 else list(schema.names[:n])


def _stat_json(ltype: str, value: Any) -> Any:
    """A statistic as Delta's JSON stats spell it (timestamps in UTC with a Z)."""
    if value is None:
        return None
    if ltype == "timestamp" and isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return value.isoformat(timespec="milliseconds") + "Z"
    if isinstance(value, decimal.Decimal):
        return float(value)
    return logical_types.to_json_value(ltype, value)


class DeltaFormat(TableFormat):
    """The Delta table at ``location``, seen as the engine's snapshots."""

    format_name = "delta"

    def __init__(self, name: str, location: str) -> None:
        self.name = name
        self.location = location.rstrip("/")

    def table(self, version: int | None = None) -> DeltaTable:
        return open_table(self.name, self.location, version)

    def _abs(self, path: str) -> str:
        """A log path (relative to the table, URL-encoded) as a readable absolute path."""
        path = unquote(path)
        if "://" in path or path.startswith("/"):
            return path
        return fs.join(self.location, path)

    def _rel(self, path: str) -> str:
        root = self.location + "/"
        local = fs.local_path(path)
        for prefix in (root, fs.local_path(root)):
            if local.startswith(prefix) or path.startswith(prefix):
                return (path if path.startswith(prefix) else local)[len(prefix):]
        return path

    def current_id(self) -> str:
        return str(self.table().version())

    def current_snapshot(self) -> Snapshot:
        return self._load(self.table())

    def snapshot(self, snapshot_id: str) -> Snapshot:
        sid = str(snapshot_id).strip()
        if not sid.isdigit():
            raise SnapshotNotFoundError(f"table {self.name!r} has no version {snapshot_id!r}")
        return self._load(self.table(int(sid)))

    def schema(self, table: DeltaTable) -> TableSchema:
        return table_schema_from_arrow(pa.schema(table.schema().to_arrow()))

    def _load(self, table: DeltaTable) -> Snapshot:
        schema = self.schema(table)
        actions = pa.table(table.get_add_actions(flatten=True))
        names = set(actions.column_names)
        rows = actions.to_pylist()
        rows.sort(key=lambda r: (r["modification_time"], r["path"]))
        partitions = []
        for i, row in enumerate(rows):
            cols = {}
            for name, ltype in schema.columns:
                lo, hi = row.get(f"min.{name}"), row.get(f"max.{name}")
                if isinstance(lo, dt.datetime) and lo.tzinfo is not None:
                    lo = lo.astimezone(dt.timezone.utc).replace(tzinfo=None)
                if isinstance(hi, dt.datetime) and hi.tzinfo is not None:
                    hi = hi.astimezone(dt.timezone.utc).replace(tzinfo=None)
                nulls = row.get(f"null_count.{name}")
                cols[name] = ColumnStats(lo, hi, int(nulls) if nulls is not None else None, 0)
            partitions.append(Partition(path=self._abs(row["path"]), rows=int(row["num_records"] or 0),
                                        bytes=int(row["size_bytes"]), columns=cols, created_seq=i))
        missing = [n for n, t in schema.columns if t != "other" and f"min.{n}" not in names]
        partitions, from_footers = fill_missing_bounds(partitions, schema, missing,
                                                       FOOTER_FALLBACK_MAX_FILES)
        version = table.version()
        info = self._info(self._history_entry(table, version), version)
        summary = dict(info.summary)
        summary.update({"format": "delta", "columns_without_stats": missing,
                        "columns_from_footers": from_footers})
        return Snapshot(id=str(version), parent=info.parent, created_at=info.created_at,
                        operation=info.operation, table=self.name, schema=schema,
                        partitions=tuple(partitions), summary=summary)

    @staticmethod
    def _history_entry(table: DeltaTable, version: int) -> Mapping[str, Any]:
        for entry in DeltaTable(table.table_uri).history():
            if int(entry.get("version", -1)) == version:
                return entry
        return {"version": version, "operation": "unknown", "timestamp": 0}

    @staticmethod
    def _info(entry: Mapping[str, Any], version: int) -> SnapshotInfo:
        moment = dt.datetime.fromtimestamp(int(entry.get("timestamp") or 0) / 1000, tz=dt.timezone.utc)
        summary = {k: v for k, v in entry.items() if k not in ("version", "timestamp", "operation")}
        actor = entry.get("la.approver") or entry.get("userName")
        return SnapshotInfo(id=str(version), parent=str(version - 1) if version > 0 else None,
                            created_at=moment.isoformat(timespec="microseconds"),
                            operation=str(entry.get("operation", "unknown")).lower(),
                            actor=actor, summary=summary)

    def history(self) -> list[SnapshotInfo]:
        entries = self.table().history()
        return sorted((self._info(e, int(e["version"])) for e in entries), key=lambda i: int(i.id))

    def data_location(self) -> str:
        return self.location

    def commit_rewrite(self, base_snapshot_id: str, removed: Sequence[str],
                       added: Sequence[Partition], properties: Mapping[str, str]) -> Snapshot:
        table = self.table()
        if table.metadata().partition_columns:
            raise DataFileError(f"table {self.name!r}: partitioned Delta tables are not rewritten")
        live = {self._abs(p): p for p in pa.table(table.get_add_actions(flatten=True))
                .column("path").to_pylist()}
        wanted = list(dict.fromkeys(removed))
        gone = [p for p in wanted if p not in live]
        if gone:
            raise CommitConflictError(
                f"table {self.name!r} changed: {len(gone)} of the plan's files are no longer "
                f"live (a concurrent writer deleted or rewrote them), e.g. {gone[0]}")
        self._check_no_rewrite_since(table, base_snapshot_id)
        schema = self.schema(table)
        indexed = stats_columns(schema, table.metadata().configuration)
        now_ms = int(time.time() * 1000)
        actions: list[AddAction | RemoveAction] = [
            RemoveAction(path=live[p], data_change=False, deletion_timestamp=now_ms)
            for p in wanted]
        actions += [AddAction(path=self._rel(p.path), size=p.bytes, partition_values={},
                              modification_time=now_ms, data_change=False,
                              stats=_stats(p, schema, indexed)) for p in added]
        meta = {"la.operation": "rewrite", "la.base-snapshot": str(base_snapshot_id),
                **{f"la.{k.replace('_', '-')}": str(v) for k, v in properties.items()
                   if v is not None}}
        crash_point("mid_commit")
        try:
            table.create_write_transaction(actions, mode="append", schema=table.schema(),
                                           commit_properties=CommitProperties(custom_metadata=meta))
        except CommitFailedError as exc:
            raise CommitConflictError(f"table {self.name!r}: the Delta commit failed: {exc}") from None
        return self.current_snapshot()

    def _check_no_rewrite_since(self, table: DeltaTable, base_snapshot_id: str) -> None:
        """Two plans on one table: at most one commits (another advisor rewrite or a
        restore after the plan's base version is a conflict; other writers' are not)."""
        base = int(base_snapshot_id)
        for entry in table.history():
            if int(entry.get("version", -1)) <= base:
                continue
            if entry.get("la.operation") == "rewrite" or str(entry.get("operation")).upper() == "RESTORE":
                by = (f"plan {entry['la.plan-id']}" if entry.get("la.plan-id")
                      else str(entry.get("operation")))
                raise CommitConflictError(
                    f"table {self.name!r}: version {entry['version']} ({by}) changed it after "
                    f"version {base} this plan was based on; create a new plan")

    def rollback(self, to_snapshot_id: str, actor: str | None = None) -> Snapshot:
        sid = str(to_snapshot_id).strip()
        target = self.snapshot(sid)
        gone = [p.path for p in target.partitions if not fs.exists(p.path)]
        if gone:
            raise DataFileError(
                f"version {sid} of {self.name!r} cannot be restored: {len(gone)} of its files "
                f"were removed (by vacuum?), e.g. {gone[0]}")
        meta = {"la.operation": "rollback", **({"la.approver": actor} if actor else {})}
        self.table().restore(int(sid), commit_properties=CommitProperties(custom_metadata=meta))
        return self.current_snapshot()

    def expire(self, older_than: dt.timedelta, dry_run: bool = True) -> list[str]:
        hours = max(0, int(older_than.total_seconds() // 3600))
        files = self.table().vacuum(retention_hours=hours, dry_run=dry_run,
                                    enforce_retention_duration=False)
        return sorted(self._abs(f) for f in files)


def _stats(p: Partition, schema: TableSchema, indexed: Sequence[str]) -> str:
    """Delta's JSON file statistics from the new file's footer statistics."""
    types = dict(schema.columns)
    mins, maxs, nulls = {}, {}, {}
    for name in indexed:
        st = p.columns.get(name)
        if st is None:
            continue
        if st.null_count is not None:
            nulls[name] = int(st.null_count)
        if st.min is not None and st.max is not None and types[name] != "other":
            mins[name] = _stat_json(types[name], st.min)
            maxs[name] = _stat_json(types[name], st.max)
    return json.dumps({"numRecords": p.rows, "minValues": mins, "maxValues": maxs,
                       "nullCount": nulls})


def is_delta_table(path: str) -> bool:
    """True when ``path`` holds a ``_delta_log`` folder (a local check; URIs are tried)."""
    if fs.is_uri(path):
        return True
    return os.path.isdir(os.path.join(fs.local_path(path), "_delta_log"))
