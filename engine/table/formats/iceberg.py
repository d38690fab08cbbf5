"""Iceberg tables through pyiceberg: partitions from the manifests, commits as transactions.

* Catalogs are pyiceberg's own: a named catalog is loaded with
  :func:`pyiceberg.catalog.load_catalog` (``~/.pyiceberg.yaml`` or ``PYICEBERG_CATALOG__<NAME>__*``
  variables: REST, Hive, Glue, SQL ... by configuration alone). No name means the
  workspace's embedded catalog, a :class:`~pyiceberg.catalog.sql.SqlCatalog` on SQLite at
  ``<home>/iceberg/catalog.db`` with its warehouse at ``<home>/iceberg/warehouse``.
* Partitions (data files) and their per-column statistics come from the snapshot's
  manifests (the same entries ``table.inspect.files()`` reads): ``lower_bounds`` /
  ``upper_bounds`` decoded by the column's Iceberg type (:func:`pyiceberg.conversions.from_bytes`:
  dates, timestamps with and without zone, decimals, strings), ``null_value_counts``,
  ``column_sizes`` (compressed bytes). A column whose bounds the table does not keep
  (metrics mode ``none`` / ``counts``) is listed in the snapshot summary under
  ``columns_without_stats``; its bounds are read from the Parquet footers instead (tables of
  up to FOOTER_FALLBACK_MAX_FILES files; ``columns_from_footers``), else left unknown.
* :meth:`IcebergFormat.commit_rewrite` is one pyiceberg transaction: an overwrite snapshot
  that deletes the plan's DataFiles and appends the new ones, whose metrics pyiceberg reads
  from their Parquet footers (:func:`pyiceberg.io.pyarrow.parquet_file_to_data_file`, the
  reader ``add_files`` uses; it also derives each file's partition tuple and refuses a file
  that mixes partition values). pyiceberg 0.12 has no ``replace`` operation (it raises
  "Operation not implemented"), so the snapshot's operation is ``overwrite`` and the summary
  says ``la.operation=rewrite``. Optimistic concurrency: when another writer committed in
  between, the transaction is rebuilt on the new head as long as every removed file is
  still live (concurrent appends survive); otherwise :class:`CommitConflictError`. Another
  advisor rewrite committed since the plan's base is a conflict too (two plans on one
  table: at most one commits).
"""

from __future__ import annotations

import datetime as dt
import decimal
import os
from collections import OrderedDict
from typing import Any, Mapping, Sequence

import pyarrow as pa
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.conversions import from_bytes
from pyiceberg.exceptions import CommitFailedException, NoSuchTableError, ValidationException
from pyiceberg.io.pyarrow import parquet_file_to_data_file
from pyiceberg.manifest import DataFile, ManifestContent
from pyiceberg.table import Table
from pyiceberg.types import (BooleanType, DateType, DecimalType, DoubleType, FloatType,
                             IntegerType, LongType, PrimitiveType, StringType, TimestampType,
                             TimestamptzType)

from engine.core.errors import (CommitConflictError, ConfigError, DataFileError,
                                SnapshotNotFoundError, TableNotFoundError)
from engine.core.faults import crash_point
from engine.table import footers, fs
from engine.table.formats.base import SnapshotInfo, TableFormat
from engine.table.model import ColumnStats, Partition, Snapshot, TableSchema

#: the embedded catalog's name (``--catalog`` left out)
WORKSPACE_CATALOG = "workspace"
#: Iceberg needs a name mapping to read files without field ids (Spark writes none)
NAME_MAPPING = "schema.name-mapping.default"
#: created_seq = data sequence number << SEQ_SHIFT | position among that commit's files
SEQ_SHIFT = 20
COMMIT_ATTEMPTS = 5
#: read Parquet footers for columns without bounds in the metadata up to this many files
FOOTER_FALLBACK_MAX_FILES = 10_000
_CACHE_SIZE = 8
# (table uuid, snapshot id, schema id) -> Snapshot: a snapshot's files never change
_SNAPSHOTS: "OrderedDict[tuple[str, int, int], Snapshot]" = OrderedDict()
# (table uuid, snapshot id) -> (live DataFiles by path, delete files): reused by the commit
_LIVE: "OrderedDict[tuple[str, int], tuple[dict[str, DataFile], int]]" = OrderedDict()
_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH_TS = dt.datetime(1970, 1, 1)
_LTYPES: tuple[tuple[type, str], ...] = (
    (BooleanType, "bool"), (IntegerType, "int"), (LongType, "int"), (FloatType, "float"),
    (DoubleType, "float"), (DecimalType, "decimal"), (DateType, "date"),
    (TimestampType, "timestamp"), (TimestamptzType, "timestamp"), (StringType, "string"))


def file_uri(path: str) -> str:
    """Iceberg metadata names files by URI: ``file://`` + absolute path for local files.

    >>> file_uri("/data/x.parquet"), file_uri("s3a://b/x.parquet"), file_uri("file:///d/y")
    ('file:///data/x.parquet', 's3a://b/x.parquet', 'file:///d/y')
    """
    return path if fs.is_uri(path) else f"file://{fs.normalize(path)}"


def workspace_catalog(home: str) -> SqlCatalog:
    """The embedded SQL catalog on SQLite inside the workspace (created on first use)."""
    root = os.path.join(os.path.abspath(os.path.expanduser(home)), "iceberg")
    os.makedirs(os.path.join(root, "warehouse"), exist_ok=True)
    return SqlCatalog(WORKSPACE_CATALOG, uri=f"sqlite:///{root}/catalog.db",
                      warehouse=f"file://{root}/warehouse")


def open_catalog(home: str, name: str | None) -> Catalog:
    """The workspace's catalog, or pyiceberg's configured catalog ``name``."""
    if not name or name == WORKSPACE_CATALOG:
        return workspace_catalog(home)
    try:
        return load_catalog(name)
    except Exception as exc:  # pyiceberg raises ValueError/KeyError/... for a bad config
        raise ConfigError(
            f"iceberg catalog {name!r} cannot be loaded ({exc}); configure it the pyiceberg "
            f"way: ~/.pyiceberg.yaml or PYICEBERG_CATALOG__{name.upper()}__URI=...") from None


def logical_type(iceberg_type: Any) -> str:
    """The engine's logical type of an Iceberg primitive type ('other' for the rest).

    >>> logical_type(TimestamptzType()), logical_type(DecimalType(10, 2))
    ('timestamp', 'decimal')
    """
    for cls, ltype in _LTYPES:
        if isinstance(iceberg_type, cls):
            return ltype
    return "other"


def decode_bound(iceberg_type: PrimitiveType, raw: bytes | None) -> Any:
    """A manifest bound in the engine's value domain: dates as ``date``, timestamps (with or
    without zone) as naive UTC ``datetime``, decimals as ``Decimal``, strings as ``str``.

    >>> decode_bound(DateType(), (18262).to_bytes(4, "little"))
    datetime.date(2020, 1, 1)
    >>> decode_bound(TimestamptzType(), (1_577_854_800_000_000).to_bytes(8, "little"))
    datetime.datetime(2020, 1, 1, 5, 0)
    >>> decode_bound(DecimalType(10, 2), (150).to_bytes(2, "big"))
    Decimal('1.50')
    """
    if raw is None or logical_type(iceberg_type) == "other":
        return None
    value = from_bytes(iceberg_type, raw)
    if isinstance(iceberg_type, DateType):
        return _EPOCH_DATE + dt.timedelta(days=int(value))
    if isinstance(iceberg_type, (TimestampType, TimestamptzType)):
        return _EPOCH_TS + dt.timedelta(microseconds=int(value))
    if isinstance(iceberg_type, DecimalType):
        return value if isinstance(value, decimal.Decimal) else decimal.Decimal(str(value))
    if isinstance(iceberg_type, StringType) and isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value


class IcebergFormat(TableFormat):
    """One Iceberg table of a pyiceberg catalog, seen as the engine's snapshots."""

    format_name = "iceberg"

    def __init__(self, name: str, identifier: str, catalog: Catalog) -> None:
        self.name = name
        self.identifier = identifier
        self.catalog = catalog

    # ------------------------------------------------------------------ reading
    def table(self) -> Table:
        try:
            return self.catalog.load_table(self.identifier)
        except NoSuchTableError:
            raise TableNotFoundError(
                f"table {self.name!r}: the iceberg catalog {self.catalog.name!r} has no table "
                f"{self.identifier!r}") from None

    def current_id(self) -> str:
        snap = self.table().current_snapshot()
        return str(snap.snapshot_id) if snap else "0"

    def current_snapshot(self) -> Snapshot:
        tbl = self.table()
        snap = tbl.current_snapshot()
        return self._load(tbl, snap.snapshot_id if snap else None)

    def snapshot(self, snapshot_id: str) -> Snapshot:
        tbl = self.table()
        return self._load(tbl, self._snapshot_id(tbl, snapshot_id))

    def _snapshot_id(self, tbl: Table, snapshot_id: str) -> int | None:
        sid = str(snapshot_id).strip()
        if sid == "0" and tbl.current_snapshot() is None:
            return None
        if not sid.lstrip("-").isdigit() or tbl.metadata.snapshot_by_id(int(sid)) is None:
            raise SnapshotNotFoundError(
                f"table {self.name!r} has no snapshot {snapshot_id!r}; "
                f"see `layout-advisor table snapshots {self.name}`")
        return int(sid)

    def schema(self, tbl: Table) -> TableSchema:
        return TableSchema(tuple((f.name, logical_type(f.field_type))
                                 for f in tbl.schema().fields))

    def _load(self, tbl: Table, snapshot_id: int | None) -> Snapshot:
        """The snapshot's partitions, read from its manifests once per process."""
        key = (str(tbl.metadata.table_uuid), snapshot_id if snapshot_id is not None else -1,
               tbl.metadata.current_schema_id)
        cached = _SNAPSHOTS.get(key)
        if cached is not None and cached.table == self.name:
            _SNAPSHOTS.move_to_end(key)
            return cached
        snap = self._read(tbl, snapshot_id)
        _remember(_SNAPSHOTS, key, snap)
        return snap

    def _read(self, tbl: Table, snapshot_id: int | None) -> Snapshot:
        schema = self.schema(tbl)
        fields = [(f.field_id, f.name, f.field_type) for f in tbl.schema().fields]
        partitions: list[Partition] = []
        delete_files = 0
        bounded: set[int] = set()  # field ids some file has bounds for
        summary: dict[str, Any] = {}
        info = None
        if snapshot_id is not None:
            snap = tbl.metadata.snapshot_by_id(snapshot_id)
            info = self._info(snap)
            summary = dict(info.summary)
            positions: dict[int, int] = {}
            live: dict[str, DataFile] = {}
            for manifest in snap.manifests(tbl.io):
                entries = manifest.fetch_manifest_entry(tbl.io, discard_deleted=True)
                if manifest.content == ManifestContent.DELETES:
                    delete_files += len(entries)
                    continue
                for entry in entries:
                    live[entry.data_file.file_path] = entry.data_file
                    seq = int(entry.sequence_number or 0)
                    pos = positions.get(seq, 0)
                    positions[seq] = pos + 1
                    partitions.append(_partition(entry.data_file, fields, (seq << SEQ_SHIFT) | pos))
                    bounded.update(entry.data_file.lower_bounds or ())
            _remember(_LIVE, (str(tbl.metadata.table_uuid), snapshot_id), (live, delete_files))
        partitions.sort(key=lambda p: p.created_seq)
        missing = [n for fid, n, t in fields
                   if logical_type(t) != "other" and partitions and fid not in bounded]
        partitions, from_footers = footers.fill_missing_bounds(partitions, schema, missing,
                                                               FOOTER_FALLBACK_MAX_FILES)
        summary.update({"format": "iceberg", "delete_files": delete_files,
                        "columns_without_stats": missing, "columns_from_footers": from_footers})
        return Snapshot(id=str(snapshot_id) if snapshot_id is not None else "0",
                        parent=info.parent if info else None,
                        created_at=info.created_at if info else "",
                        operation=info.operation if info else "create", table=self.name,
                        schema=schema, partitions=tuple(partitions), summary=summary)

    @staticmethod
    def _info(snap: Any) -> SnapshotInfo:
        props = dict(snap.summary.additional_properties) if snap.summary else {}
        op = snap.summary.operation.value if snap.summary else "unknown"
        moment = dt.datetime.fromtimestamp(snap.timestamp_ms / 1000, tz=dt.timezone.utc)
        return SnapshotInfo(id=str(snap.snapshot_id),
                            parent=str(snap.parent_snapshot_id) if snap.parent_snapshot_id else None,
                            created_at=moment.isoformat(timespec="microseconds"), operation=op,
                            actor=props.get("la.approver") or props.get("la.actor"), summary=props)

    def history(self) -> list[SnapshotInfo]:
        tbl = self.table()
        return [self._info(s) for s in sorted(tbl.metadata.snapshots, key=lambda s: s.timestamp_ms)]

    def data_location(self) -> str:
        tbl = self.table()
        return tbl.properties.get("write.data.path") or f"{tbl.location().rstrip('/')}/data"

    # ------------------------------------------------------------------ writing
    def commit_rewrite(self, base_snapshot_id: str, removed: Sequence[str],
                       added: Sequence[Partition], properties: Mapping[str, str]) -> Snapshot:
        props = {"la.operation": "rewrite", "la.base-snapshot": str(base_snapshot_id),
                 **{f"la.{k.replace('_', '-')}": str(v) for k, v in properties.items()
                    if v is not None}}
        wanted = list(dict.fromkeys(removed))
        if len(wanted) != len(removed):
            raise CommitConflictError("the same partition is removed twice")
        new_files: list[DataFile] | None = None
        for attempt in range(COMMIT_ATTEMPTS):
            tbl = self.table()
            live, deletes = self._live_files(tbl)
            if deletes:
                raise CommitConflictError(
                    f"table {self.name!r} has {deletes} delete file(s) (merge-on-read): the "
                    "advisor does not rewrite such tables; compact the deletes first")
            self._check_no_rewrite_since(tbl, base_snapshot_id)
            gone = [p for p in wanted if p not in live]
            if gone:
                raise CommitConflictError(
                    f"table {self.name!r} changed: {len(gone)} of the plan's files are no longer "
                    f"live (a concurrent writer deleted or rewrote them), e.g. {gone[0]}")
            if new_files is None:
                new_files = [self._data_file(tbl, file_uri(p.path)) for p in added]
            try:
                with tbl.transaction() as tx:
                    if NAME_MAPPING not in tbl.properties:
                        tx.set_properties({NAME_MAPPING: tbl.schema().name_mapping.model_dump_json()})
                    with tx.update_snapshot(snapshot_properties=props).overwrite() as rewrite:
                        for path in wanted:
                            rewrite.delete_data_file(live[path])
                        for data_file in new_files:
                            rewrite.append_data_file(data_file)
                    crash_point("mid_commit")
                return self.current_snapshot()
            except (CommitFailedException, ValidationException):
                if attempt == COMMIT_ATTEMPTS - 1:
                    raise CommitConflictError(
                        f"table {self.name!r} kept changing during the commit; nothing was "
                        "committed") from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _check_no_rewrite_since(self, tbl: Table, base_snapshot_id: str) -> None:
        """Two plans on one table: at most one commits. Walking back from the current
        snapshot to the plan's base, another advisor rewrite (or a base that is no longer
        an ancestor: a rollback) is a conflict; other writers' commits are not."""
        snap = tbl.current_snapshot()
        while snap is not None and str(snap.snapshot_id) != str(base_snapshot_id):
            props = snap.summary.additional_properties if snap.summary else {}
            if props.get("la.operation") == "rewrite":
                raise CommitConflictError(
                    f"table {self.name!r}: plan {props.get('la.plan-id', '?')} rewrote it after "
                    f"snapshot {base_snapshot_id} this plan was based on; create a new plan")
            parent = snap.parent_snapshot_id
            snap = tbl.metadata.snapshot_by_id(parent) if parent is not None else None
        if snap is None:
            raise CommitConflictError(
                f"table {self.name!r}: snapshot {base_snapshot_id} this plan was based on is no "
                "longer an ancestor of the current one (rolled back?); create a new plan")

    @staticmethod
    def _live_files(tbl: Table) -> tuple[dict[str, DataFile], int]:
        """The current snapshot's live data files by path and its number of delete files
        (from the cache the snapshot's loading filled, else from the manifests)."""
        snap = tbl.current_snapshot()
        live: dict[str, DataFile] = {}
        deletes = 0
        if snap is None:
            return live, 0
        cached = _LIVE.get((str(tbl.metadata.table_uuid), snap.snapshot_id))
        if cached is not None:
            return cached
        for manifest in snap.manifests(tbl.io):
            entries = manifest.fetch_manifest_entry(tbl.io, discard_deleted=True)
            if manifest.content == ManifestContent.DELETES:
                deletes += len(entries)
            else:
                live.update((e.data_file.file_path, e.data_file) for e in entries)
        return live, deletes

    def _data_file(self, tbl: Table, path: str) -> DataFile:
        try:
            return parquet_file_to_data_file(tbl.io, tbl.metadata, path)
        except ValueError as exc:  # e.g. a file spanning two partition values
            raise DataFileError(f"{path}: cannot be added to iceberg table {self.name!r}: {exc}") \
                from None

    def rollback(self, to_snapshot_id: str, actor: str | None = None) -> Snapshot:
        tbl = self.table()
        sid = self._snapshot_id(tbl, to_snapshot_id)
        live_then = self.snapshot(str(sid)).partitions
        gone = [p.path for p in live_then if not fs.exists(p.path)]
        if gone:
            raise DataFileError(
                f"snapshot {sid} of {self.name!r} cannot be restored: {len(gone)} of its files "
                f"were removed (by expiry?), e.g. {gone[0]}")
        tbl.manage_snapshots().set_current_snapshot(snapshot_id=sid).commit()
        return self.current_snapshot()

    def expire(self, older_than: dt.timedelta, dry_run: bool = True) -> list[str]:
        """Expire snapshots older than the retention (Iceberg's ``expire_snapshots``; the
        current one and branch heads stay) and delete the data files only they referenced.

        pyiceberg 0.12 expires metadata but deletes no file, so the difference of the data
        files referenced before and after is deleted here; files a running job is writing
        are referenced by no snapshot and never listed.
        """
        tbl = self.table()
        cutoff = dt.datetime.now(dt.timezone.utc) - older_than
        cutoff_ms = int(cutoff.timestamp() * 1000)
        current = tbl.current_snapshot()
        current_id = current.snapshot_id if current is not None else None
        doomed_ids = [s.snapshot_id for s in tbl.metadata.snapshots
                      if s.timestamp_ms < cutoff_ms and s.snapshot_id != current_id]
        keep_ids = {s.snapshot_id for s in tbl.metadata.snapshots} - set(doomed_ids)
        before = _files_of(tbl, [s.snapshot_id for s in tbl.metadata.snapshots])
        after = _files_of(tbl, sorted(keep_ids))
        doomed = sorted(before - after)
        if not dry_run and doomed_ids:
            tbl.maintenance.expire_snapshots().by_ids(doomed_ids).commit()
            for path in doomed:
                try:
                    fs.delete_file(path)
                except FileNotFoundError:
                    pass
        return doomed


def _remember(cache: "OrderedDict[Any, Any]", key: Any, value: Any) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > _CACHE_SIZE:
        cache.popitem(last=False)


def _files_of(tbl: Table, snapshot_ids: Sequence[int]) -> set[str]:
    out: set[str] = set()
    for sid in snapshot_ids:
        snap = tbl.metadata.snapshot_by_id(sid)
        if snap is None:
            continue
        for manifest in snap.manifests(tbl.io):
            out.update(e.data_file.file_path
                       for e in manifest.fetch_manifest_entry(tbl.io, discard_deleted=True))
    return out


def _partition(data_file: DataFile, fields: Sequence[tuple[int, str, Any]], seq: int) -> Partition:
    lower = data_file.lower_bounds or {}
    upper = data_file.upper_bounds or {}
    nulls = data_file.null_value_counts or {}
    sizes = data_file.column_sizes or {}
    columns = {name: ColumnStats(decode_bound(ftype, lower.get(fid)),
                                 decode_bound(ftype, upper.get(fid)),
                                 int(nulls[fid]) if fid in nulls else None,
                                 int(sizes.get(fid, 0) or 0))
               for fid, name, ftype in fields}
    return Partition(path=data_file.file_path, rows=int(data_file.record_count),
                     bytes=int(data_file.file_size_in_bytes), columns=columns, created_seq=seq)


def create_table(catalog: Catalog, identifier: str, schema: pa.Schema,
                 location: str | None = None) -> Table:
    """Create an Iceberg table (and its namespace) from an Arrow schema."""
    namespace = identifier.rsplit(".", 1)[0]
    catalog.create_namespace_if_not_exists(namespace)
    return catalog.create_table(identifier, schema=schema, location=location)
