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
* Partitioned tables: a file's partition values live in its ``add`` action, not in the
  file. The snapshot gives each partition column the file's value as its min and max (null
  count: all rows or none), :meth:`DeltaFormat.partition_keys` lets planning split groups by
  partition, and the commit gives each new file the partition of the group it was written
  from (:func:`~engine.table.formats.partitioning.assign_by_rows`), after checking that the
  file's bounds lie inside that partition's replaced files' bounds.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import os
import time
import uuid
from typing import Any, Hashable, Mapping, Sequence
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import DeltaTable
from deltalake.exceptions import CommitFailedError, DeltaError
from deltalake.exceptions import TableNotFoundError as DeltaTableNotFound
from deltalake.transaction import AddAction, CommitProperties, RemoveAction

from engine.core import logical_types
from engine.core.errors import (CommitConflictError, DataFileError, SnapshotNotFoundError,
                                TableNotFoundError)
from engine.core.faults import crash_point
from engine.table import fs
from engine.table.footers import table_schema_from_arrow
from engine.table.formats import columnar
from engine.table.formats.base import (PublishedRewrite, SnapshotInfo, TableFormat,
                                       refuse_merge_on_read)
from engine.table.formats.partitioning import assign_by_rows, straddling
from engine.table.formats.recheck import check_added
from engine.table.model import Partition, Snapshot, TableSchema

#: Delta's default number of leading columns with statistics
DEFAULT_INDEXED_COLS = 32
#: how many of the newest log entries are searched for the version a rewrite committed
COMMIT_LOOKBACK = 100
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
        return value  # written as its exact digits by file_stats_json, never through a float
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
        """The version's files and statistics, Arrow to Arrow into the columnar manifest
        (:mod:`engine.table.formats.columnar`): no Python object per file and column."""
        schema = self.schema(table)
        actions = pa.table(table.get_add_actions(flatten=True))
        if actions.num_rows:
            actions = actions.take(pc.sort_indices(
                actions, [("modification_time", "ascending"), ("path", "ascending")]))
        names = set(actions.column_names)
        partitioned = set(table.metadata().partition_columns)
        rows = pc.fill_null(actions.column("num_records"), 0) if actions.num_rows else pa.array([], pa.int64())
        columns: dict[str, tuple[Any, Any, Any, Any]] = {}
        for name, _ in schema.columns:
            if name in partitioned and f"partition.{name}" in names:
                value = actions.column(f"partition.{name}")  # the file's min and max
                columns[name] = (value, value, pc.if_else(pc.is_null(value), rows, 0), None)
            elif f"min.{name}" in names:
                nulls = actions.column(f"null_count.{name}") if f"null_count.{name}" in names else None
                columns[name] = (actions.column(f"min.{name}"), actions.column(f"max.{name}"),
                                 nulls, None)
        paths = [self._abs(p) for p in actions.column("path").to_pylist()] if actions.num_rows else []
        sizes = actions.column("size_bytes") if actions.num_rows else []
        manifest_table = columnar.build(schema, paths, rows, sizes, columns)
        missing = [n for n, t in schema.columns
                   if t != "other" and f"min.{n}" not in names and n not in partitioned]
        manifest_table, from_footers = columnar.fill_from_footers(
            manifest_table, schema, missing, FOOTER_FALLBACK_MAX_FILES)
        version = table.version()
        info = self._info(self._history_entry(table, version), version)
        summary = dict(info.summary)
        summary.update({"format": "delta", "columns_without_stats": missing,
                        "columns_from_footers": from_footers})
        return columnar.snapshot(manifest_table, schema, id=str(version), parent=info.parent,
                                 created_at=info.created_at, operation=info.operation,
                                 table=self.name, summary=summary)

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

    def partition_keys(self, snapshot_id: str | None = None) -> dict[str, Hashable]:
        """The partition values of each file of a partitioned table (empty otherwise)."""
        sid = None if snapshot_id is None else str(snapshot_id).strip()
        if sid is not None and not sid.isdigit():
            raise SnapshotNotFoundError(f"table {self.name!r} has no version {snapshot_id!r}")
        table = self.table(None if sid is None else int(sid))
        return {path: key for path, (key, _, _) in self._live(table).items() if key}

    def merge_on_read(self, snapshot_id: str | None = None) -> dict[str, str]:
        """Files with a deletion vector (rows deleted without rewriting the file), read
        through delta-rs's own ``deletion_vectors()``: only tables with the
        ``deletionVectors`` reader feature can have them."""
        sid = None if snapshot_id is None else str(snapshot_id).strip()
        if sid is not None and not sid.isdigit():
            raise SnapshotNotFoundError(f"table {self.name!r} has no version {snapshot_id!r}")
        table = self.table(None if sid is None else int(sid))
        if "deletionVectors" not in (table.protocol().reader_features or ()):
            return {}
        vectors = pa.RecordBatchReader.from_stream(table.deletion_vectors()).read_all()
        out = {}
        for uri, keep in zip(vectors.column("filepath").to_pylist(),
                             vectors.column("selection_vector").to_pylist()):
            deleted = sum(1 for k in keep if not k)
            path = fs.local_path(unquote(uri)) if uri.startswith("file:") else unquote(uri)
            out[path] = f"has a deletion vector ({deleted} rows deleted)"
        return out

    def write_properties(self) -> Mapping[str, str]:
        return dict(self.table().metadata().configuration or {})

    def _live(self, table: DeltaTable) -> dict[str, tuple[tuple, int, str]]:
        """Live files by absolute path: (partition values in column order, rows, the path
        as the log spells it)."""
        columns = list(table.metadata().partition_columns)
        actions = pa.table(table.get_add_actions(flatten=True))
        values = [actions.column(f"partition.{c}").to_pylist() for c in columns]
        rows = actions.column("num_records").to_pylist()
        return {self._abs(path): (tuple(_naive_utc(v[i]) for v in values), int(rows[i] or 0), path)
                for i, path in enumerate(actions.column("path").to_pylist())}

    def commit_rewrite(self, base_snapshot_id: str, removed: Sequence[str],
                       added: Sequence[Partition], properties: Mapping[str, str]) -> Snapshot:
        return self.publish_rewrite(base_snapshot_id, removed, added, properties).verify()

    def publish_rewrite(self, base_snapshot_id: str, removed: Sequence[str],
                        added: Sequence[Partition],
                        properties: Mapping[str, str]) -> PublishedRewrite:
        """The log entry, returning once delta-rs has written it; its ``verify`` loads the
        new version (its statistics parsed back)."""
        table = self.table()
        columns = list(table.metadata().partition_columns)
        live_meta = self._live(table)
        live = {path: raw for path, (_, _, raw) in live_meta.items()}
        wanted = list(dict.fromkeys(removed))
        gone = [p for p in wanted if p not in live]
        if gone:
            raise CommitConflictError(
                f"table {self.name!r} changed: {len(gone)} of the plan's files are no longer "
                f"live (a concurrent writer deleted or rewrote them), e.g. {gone[0]}")
        self._check_no_rewrite_since(table, base_snapshot_id)
        refuse_merge_on_read(self.name, wanted, self.merge_on_read(),
                             "purge them first (Delta REORG TABLE ... APPLY (PURGE))")
        schema = self.schema(table)
        indexed = stats_columns(schema, table.metadata().configuration)
        keys = self._added_keys(columns, removed, added, live_meta)
        now_ms = int(time.time() * 1000)
        actions: list[AddAction | RemoveAction] = [
            RemoveAction(path=live[p], data_change=False, deletion_timestamp=now_ms,
                         partition_values=_partition_values(columns, live_meta[p][0]) or None)
            for p in wanted]
        actions += [AddAction(path=self._rel(p.path), size=p.bytes,
                              partition_values=_partition_values(columns, key),
                              modification_time=now_ms, data_change=False,
                              stats=file_stats_json(p, schema, [c for c in indexed if c not in columns]))
                    for p, key in zip(added, keys)]
        meta = {"la.operation": "rewrite", "la.base-snapshot": str(base_snapshot_id),
                "la.commit-id": uuid.uuid4().hex,
                "la.added-files": str(len(added)), "la.removed-files": str(len(wanted)),
                **{f"la.{k.replace('_', '-')}": str(v) for k, v in properties.items()
                   if v is not None}}
        crash_point("mid_commit")
        check_added(added)  # last, before the log write
        try:
            table.create_write_transaction(actions, mode="append", schema=table.schema(),
                                           commit_properties=CommitProperties(custom_metadata=meta))
        except CommitFailedError as exc:
            raise CommitConflictError(f"table {self.name!r}: the Delta commit failed: {exc}") from None
        version = self._version_of(meta["la.commit-id"])
        crash_point("published")
        return PublishedRewrite(version, lambda: self.snapshot(version))

    def _version_of(self, commit_id: str) -> str:
        """The version whose commit carries ``la.commit-id`` = ``commit_id`` (delta-rs does
        not say which version it wrote, and a concurrent writer may have committed since);
        the newest version when the log's recent entries do not hold it."""
        entries = self.table().history(limit=COMMIT_LOOKBACK)
        for entry in entries:
            if entry.get("la.commit-id") == commit_id:
                return str(entry["version"])
        return str(max(int(e["version"]) for e in entries))

    def restored_from(self, info: SnapshotInfo) -> str | None:
        """The version a RESTORE commit restored (its ``operationParameters.version``)."""
        if info.operation != "restore":
            return None
        params = info.summary.get("operationParameters") or {}
        if isinstance(params, str):
            try:
                params = json.loads(params)
            except ValueError:
                return None
        version = params.get("version") if isinstance(params, Mapping) else None
        return None if version is None else str(version).strip('"')

    def _added_keys(self, columns: Sequence[str], removed: Sequence[str],
                    added: Sequence[Partition], live: Mapping[str, tuple[tuple, int, str]],
                    ) -> list[tuple]:
        """Each new file's partition values (see :meth:`TableFormat.commit_rewrite`'s
        contract), checked against the bounds of the replaced files of that partition."""
        if not columns:
            return [()] * len(added)
        try:
            keys = assign_by_rows([live[p][1] for p in removed], [live[p][0] for p in removed],
                                  [p.rows for p in added])
        except ValueError as exc:
            raise DataFileError(f"table {self.name!r}: cannot place the new files in their "
                                f"partitions: {exc}") from None
        mixed = straddling([live[p][1] for p in removed], [live[p][0] for p in removed],
                           [(p.path, p.rows) for p in added])
        if mixed:
            raise DataFileError(
                f"{mixed}: its rewrite group was written from files of more than one partition "
                f"of table {self.name!r}; nothing was committed (plans must be split by "
                "partition: engine.table.formats.partitioning.prepare_groups)")
        by_path = {p.path: p for p in self.current_snapshot().partitions}
        for part, key in zip(added, keys):
            sources = [by_path[p] for p in removed if live[p][0] == key and p in by_path]
            outside = _outside(part, sources, columns)
            if outside:
                raise DataFileError(
                    f"{part.path}: its {outside} values fall outside partition "
                    f"{dict(zip(columns, key))} it was assigned to; nothing was committed "
                    "(the new files must come group by group in the order of the removed ones)")
        return keys

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


def _naive_utc(value: Any) -> Any:
    """Timestamps with a zone as naive UTC, like every other source of statistics."""
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return value


def _partition_values(columns: Sequence[str], key: Sequence[Any]) -> dict[str, str | None]:
    """Delta's string form of partition values (``partitionValues`` of an action).

    >>> _partition_values(["r", "d", "n"], ["eu", dt.date(2020, 1, 4), None])
    {'r': 'eu', 'd': '2020-01-04', 'n': None}
    >>> _partition_values(["t", "b"], [dt.datetime(2020, 1, 4, 5, 6, 7), True])
    {'t': '2020-01-04 05:06:07.000000', 'b': 'true'}
    """
    out: dict[str, str | None] = {}
    for name, value in zip(columns, key):
        if value is None:
            out[name] = None
        elif isinstance(value, bool):
            out[name] = "true" if value else "false"
        elif isinstance(value, dt.datetime):
            out[name] = value.strftime("%Y-%m-%d %H:%M:%S.%f")
        elif isinstance(value, dt.date):
            out[name] = value.isoformat()
        else:
            out[name] = str(value)
    return out


def _outside(part: Partition, sources: Sequence[Partition], skip: Sequence[str]) -> str | None:
    """The first column whose bounds in ``part`` exceed the union of ``sources``' bounds."""
    for name, st in part.columns.items():
        if name in skip or st.min is None or st.max is None:
            continue
        bounds = [(s.columns[name].min, s.columns[name].max) for s in sources
                  if name in s.columns and s.columns[name].min is not None
                  and s.columns[name].max is not None]
        if len(bounds) < len(sources) or not bounds:
            continue  # some source's bounds unknown: nothing to check against
        try:
            if st.min < min(b[0] for b in bounds) or st.max > max(b[1] for b in bounds):
                return name
        except TypeError:
            continue
    return None


def file_stats_json(p: Partition, schema: TableSchema, indexed: Sequence[str]) -> str:
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
            low, high = _stat_json(types[name], st.min), _stat_json(types[name], st.max)
            if _finite(low) and _finite(high):
                mins[name], maxs[name] = low, high
    # the log is strict JSON: a non-finite bound (±Infinity, or NaN, which the footer reader
    # turns into +inf) is left out, as Spark and delta-rs leave it; allow_nan=False refuses
    # anything else that is not JSON before it reaches the log
    exact: dict[str, str] = {}
    for bounds in (mins, maxs):
        for name, value in bounds.items():
            if isinstance(value, decimal.Decimal):
                token = f"la-decimal-{uuid.uuid4().hex}"
                exact[json.dumps(token)] = _decimal_json(value)
                bounds[name] = token
    text = json.dumps({"numRecords": p.rows, "minValues": mins, "maxValues": maxs,
                       "nullCount": nulls}, allow_nan=False)
    for token, digits in exact.items():
        text = text.replace(token, digits)
    return text


def _decimal_json(value: decimal.Decimal) -> str:
    """A decimal bound as a JSON number with all its digits, in positional notation: a
    float would round a decimal(38,18) bound (delta-rs then reads the statistic as unknown,
    or a wrong bound could prune a file holding a match).

    >>> _decimal_json(decimal.Decimal("12345678901234567890.123456789012345678"))
    '12345678901234567890.123456789012345678'
    >>> _decimal_json(decimal.Decimal("1E-18")), _decimal_json(decimal.Decimal("-5E+3"))
    ('0.000000000000000001', '-5000')
    """
    return format(value, "f")


def _finite(value: Any) -> bool:
    """False for a float (or decimal) bound that is ±inf or NaN; True for any other value."""
    try:
        return math.isfinite(value)
    except (TypeError, ValueError):
        return True


def is_delta_table(path: str) -> bool:
    """True when ``path`` holds a ``_delta_log`` folder (a local check; URIs are tried)."""
    if fs.is_uri(path):
        return True
    return os.path.isdir(os.path.join(fs.local_path(path), "_delta_log"))
