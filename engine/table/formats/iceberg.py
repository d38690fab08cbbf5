"""Iceberg tables through pyiceberg: partitions from the manifests, commits as transactions.

* Catalogs are pyiceberg's own: a named catalog is loaded with
  :func:`pyiceberg.catalog.load_catalog` (``~/.pyiceberg.yaml`` or ``PYICEBERG_CATALOG__<NAME>__*``
  variables: REST, Hive, Glue, SQL ... by configuration alone). No name means the
  workspace's embedded catalog, a :class:`~pyiceberg.catalog.sql.SqlCatalog` on SQLite at
  ``<home>/iceberg/catalog.db`` with its warehouse at ``<home>/iceberg/warehouse``.
* Partitions (data files) and their per-column statistics come from the snapshot's
  manifests (the same entries ``table.inspect.files()`` reads): ``lower_bounds`` /
  ``upper_bounds`` decoded by the column's Iceberg type (:func:`pyiceberg.conversions.from_bytes`:
  dates, timestamps with and without zone, decimals, strings; decoded per column in bulk,
  :func:`engine.table.formats.columnar.decode_bounds`; float NaN counted or written into a
  bound made safe for pruning, :func:`~engine.table.formats.columnar.nan_safe_bounds`;
  binary and fixed columns are not orderable here and keep no bounds), ``null_value_counts``,
  ``column_sizes`` (compressed bytes). A column whose bounds the table does not keep
  (metrics mode ``none`` / ``counts``) is listed in the snapshot summary under
  ``columns_without_stats``; its bounds are read from the Parquet footers instead (tables of
  up to FOOTER_FALLBACK_MAX_FILES files; ``columns_from_footers``), else left unknown.
* :meth:`IcebergFormat.commit_rewrite` is one pyiceberg transaction: an overwrite snapshot
  that deletes the plan's DataFiles and appends the new ones. Their entries are built from
  the footer statistics the executor already read (:mod:`engine.table.formats.iceberg_files`:
  the table's metrics modes, pyiceberg's truncation and partition rule; a file spanning
  two partition values is refused), and the overwrite reads no manifest the snapshot's
  loading already read (:mod:`engine.table.formats.iceberg_commit`). pyiceberg 0.12 has
  no ``replace`` operation (it raises
  "Operation not implemented"), so the snapshot's operation is ``overwrite`` and the summary
  says ``la.operation=rewrite``. Optimistic concurrency: when another writer committed in
  between, the transaction is rebuilt on the new head as long as every removed file is
  still live (concurrent appends survive); otherwise :class:`CommitConflictError`. Another
  advisor rewrite committed since the plan's base is a conflict too (two plans on one
  table: at most one commits). After the commit the new snapshot's total row count is read
  back through a pyiceberg scan plan (manifests only) and compared with its parent's; a
  mismatch is a :class:`DataFileError` naming both counts and the rollback command.
"""

from __future__ import annotations

import datetime as dt
import os
from collections import OrderedDict
from typing import Any, Hashable, Mapping, Sequence

import numpy as np
import pyarrow as pa
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import CommitFailedException, NoSuchTableError, ValidationException
from pyiceberg.io.pyarrow import parquet_file_to_data_file
from pyiceberg.manifest import DataFile, ManifestContent
from pyiceberg.table import Table
from pyiceberg.types import (BooleanType, DateType, DecimalType, DoubleType, FloatType,
                             IntegerType, LongType, StringType, TimestampType,
                             TimestamptzType)

from engine.core.errors import (CommitConflictError, ConfigError, DataFileError,
                                SnapshotNotFoundError, TableNotFoundError)
from engine.core.faults import crash_point
from engine.table import fs, orphans
from engine.table.formats import columnar, iceberg_commit, iceberg_deletes, iceberg_files
from engine.table.formats.recheck import check_added
from engine.table.formats.base import (PublishedRewrite, SnapshotInfo, TableFormat,
                                       refuse_merge_on_read)
from engine.table.model import Partition, Snapshot, TableSchema

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
# (table uuid, snapshot id) -> (live DataFiles by path, {path: (position, equality) delete
# files attached}): reused by the commit
_LIVE: "OrderedDict[tuple[str, int], tuple[dict[str, DataFile], dict[str, tuple[int, int]]]]" \
    = OrderedDict()
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
        """One pass over the snapshot's manifests; the bounds decoded column by column in
        bulk into the columnar manifest (:mod:`engine.table.formats.columnar`)."""
        schema = self.schema(tbl)
        fields = [(f.field_id, f.name, f.field_type) for f in tbl.schema().fields]
        files: list[tuple[int, DataFile]] = []  # (created_seq, entry)
        delete_files = 0
        summary: dict[str, Any] = {}
        info = None
        if snapshot_id is not None:
            snap = tbl.metadata.snapshot_by_id(snapshot_id)
            info = self._info(snap)
            summary = dict(info.summary)
            live, data_entries, delete_entries = self._entries(tbl, snap)
            delete_files = len(delete_entries)
            positions: dict[int, int] = {}
            for entry in data_entries:
                seq = int(entry.sequence_number or 0)
                pos = positions.get(seq, 0)
                positions[seq] = pos + 1
                files.append(((seq << SEQ_SHIFT) | pos, entry.data_file))
            with_deletes = iceberg_deletes.attached(data_entries, delete_entries,
                                                    tbl.metadata.specs())
            summary["files_with_deletes"] = len(with_deletes)
            _remember(_LIVE, (str(tbl.metadata.table_uuid), snapshot_id), (live, with_deletes))
        files.sort(key=lambda t: t[0])
        entries = [f for _, f in files]
        columns = {name: _column_arrays(entries, fid, ftype) for fid, name, ftype in fields}
        data = columnar.build(schema, [f.file_path for f in entries],
                              [f.record_count for f in entries],
                              [f.file_size_in_bytes for f in entries], columns,
                              seqs=[seq for seq, _ in files])
        bounded = {fid for f in entries for fid in (f.lower_bounds or ())}
        missing = [n for fid, n, t in fields
                   if logical_type(t) != "other" and entries and fid not in bounded]
        data, from_footers = columnar.fill_from_footers(data, schema, missing,
                                                        FOOTER_FALLBACK_MAX_FILES)
        summary.update({"format": "iceberg", "delete_files": delete_files,
                        "columns_without_stats": missing, "columns_from_footers": from_footers})
        return columnar.snapshot(data, schema,
                                 id=str(snapshot_id) if snapshot_id is not None else "0",
                                 parent=info.parent if info else None,
                                 created_at=info.created_at if info else "",
                                 operation=info.operation if info else "create", table=self.name,
                                 summary=summary)

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

    def _snap(self, tbl: Table, snapshot_id: str | None) -> Any:
        """The snapshot by id (the current one for None); None for an empty table."""
        if snapshot_id is None:
            return tbl.current_snapshot()
        return tbl.metadata.snapshot_by_id(self._snapshot_id(tbl, snapshot_id) or 0)

    def partition_keys(self, snapshot_id: str | None = None) -> dict[str, Hashable]:
        """(current spec id, partition tuple) of each data file, when the table's current
        spec partitions it: the partition the rewrite's new files get (the commit builds
        them under the current spec, as Iceberg's ``rewrite_data_files`` does). A file of
        an older spec is keyed by the current-spec value its statistics show
        (:func:`iceberg_files.current_partition`), so it is grouped with the current
        files of that value; a file whose rows span values is in :meth:`spec_misfits`."""
        return self._spec_keys(snapshot_id)[0]

    def spec_misfits(self, snapshot_id: str | None = None) -> dict[str, str]:
        """Files of an older partition spec whose rows span more than one partition of the
        current spec (or whose statistics cannot tell): a rewrite would write a file
        across partitions, which the commit refuses; planning leaves them out, saying so."""
        return self._spec_keys(snapshot_id)[1]

    def _spec_keys(self, snapshot_id: str | None) -> tuple[dict[str, Hashable], dict[str, str]]:
        tbl = self.table()
        snap = self._snap(tbl, snapshot_id)
        spec = tbl.metadata.spec()
        if snap is None or not spec.fields:
            return {}, {}
        loaded = self._load(tbl, snap.snapshot_id)
        live, _ = self._live_files(tbl, snap.snapshot_id)
        current = tbl.metadata.default_spec_id
        keys: dict[str, Hashable] = {}
        old = {path: f.spec_id for path, f in live.items() if f.spec_id != current}
        for path, f in live.items():
            if f.spec_id == current:
                keys[path] = (current, tuple(f.partition[i] for i in range(len(f.partition))))
        misfits: dict[str, str] = {}
        if not old:
            return keys, misfits
        plan = iceberg_files.statistics_plan(tbl.metadata)
        paths = loaded.zonemaps().paths
        fields = ", ".join(f"{f.name}={f.transform}" for f in spec.fields)
        for i in np.flatnonzero(np.isin(paths, list(old))):
            part = loaded.partitions[int(i)]
            try:
                record = iceberg_files.current_partition(part, tbl.metadata, plan)
            except ValueError as exc:
                misfits[part.path] = (
                    f"was written under partition spec {old[part.path]} and fits no single "
                    f"partition of the current spec ({fields}): {str(exc).split('. ')[0]}")
                continue
            keys[part.path] = (current, tuple(record[k] for k in range(len(record))))
        return keys, misfits

    def write_properties(self) -> Mapping[str, str]:
        return dict(self.table().properties)

    def data_location(self) -> str:
        tbl = self.table()
        return tbl.properties.get("write.data.path") or f"{tbl.location().rstrip('/')}/data"

    # ------------------------------------------------------------------ writing
    def commit_rewrite(self, base_snapshot_id: str, removed: Sequence[str],
                       added: Sequence[Partition], properties: Mapping[str, str]) -> Snapshot:
        return self.publish_rewrite(base_snapshot_id, removed, added, properties).verify()

    def publish_rewrite(self, base_snapshot_id: str, removed: Sequence[str],
                        added: Sequence[Partition],
                        properties: Mapping[str, str]) -> PublishedRewrite:
        """The transaction, returning once the catalog has taken the new metadata; its
        ``verify`` reads the row count back (:meth:`_verify_total_rows`) and loads the
        snapshot."""
        props = {"la.operation": "rewrite", "la.base-snapshot": str(base_snapshot_id),
                 **{f"la.{k.replace('_', '-')}": str(v) for k, v in properties.items()
                    if v is not None}}
        wanted = list(dict.fromkeys(removed))
        if len(wanted) != len(removed):
            raise CommitConflictError("the same partition is removed twice")
        new_files: list[DataFile] | None = None
        for attempt in range(COMMIT_ATTEMPTS):
            tbl = self.table()
            live, attached = self._live_files(tbl)
            refuse_merge_on_read(
                self.name, wanted, {p: iceberg_deletes.reason(attached[p]) for p in attached},
                "compact the deletes first (Iceberg rewrite_position_deletes)")
            self._check_no_rewrite_since(tbl, base_snapshot_id)
            gone = [p for p in wanted if p not in live]
            if gone:
                raise CommitConflictError(
                    f"table {self.name!r} changed: {len(gone)} of the plan's files are no longer "
                    f"live (a concurrent writer deleted or rewrote them), e.g. {gone[0]}")
            if new_files is None:
                new_files = self._data_files(tbl, added)
            check_added(added)  # last, before the catalog write
            try:
                with iceberg_commit.MemoTransaction(tbl) as tx:
                    if NAME_MAPPING not in tbl.properties:
                        tx.set_properties({NAME_MAPPING: tbl.schema().name_mapping.model_dump_json()})
                    with iceberg_commit.overwrite(tx, tbl.io, props) as rewrite:
                        for path in wanted:
                            rewrite.delete_data_file(live[path])
                        for data_file in new_files:
                            rewrite.append_data_file(data_file)
                    crash_point("mid_commit")
            except (CommitFailedException, ValidationException):
                if attempt == COMMIT_ATTEMPTS - 1:
                    raise CommitConflictError(
                        f"table {self.name!r} kept changing during the commit; nothing was "
                        "committed") from None
                continue
            head = tbl.current_snapshot()  # the commit updated ``tbl`` in place
            crash_point("published")
            before = sum(f.record_count for f in live.values())
            return PublishedRewrite(str(head.snapshot_id),
                                    lambda: self._verified(tbl, head.snapshot_id, before))
        raise AssertionError("unreachable")  # pragma: no cover

    def _verified(self, tbl: Table, snapshot_id: int, before: int) -> Snapshot:
        """The committed snapshot, after :meth:`_verify_total_rows`."""
        self._verify_total_rows(snapshot_id, before)
        return self._load(tbl, snapshot_id)

    def _verify_total_rows(self, snapshot_id: int, before: int) -> None:
        """The committed snapshot's total row count, read back through pyiceberg, equals its
        parent's: a rewrite never adds or loses a row.

        Cheap on purpose: the table is reloaded from the catalog (what any other reader
        sees) and ``scan(snapshot_id).plan_files()`` sums the planned data files'
        ``record_count``: manifests only, no data file is opened, so the check costs a
        fraction of the commit, not of the rewrite (the rows' count and checksum were
        verified on the data before the commit). No delete file is subtracted: a rewrite
        never touches a file with deletes attached (``refuse_merge_on_read``), so both
        snapshots carry the same deletes. ``before`` is the parent's live files' record
        counts, the manifests the commit was built on. The snapshot summary's
        ``total-records`` (pyiceberg keeps it incrementally) is cross-checked too.
        A mismatch is raised, not repaired: the commit has happened, and rolling back
        silently would hide it; ``table rollback`` restores the previous snapshot.
        """
        tbl = self.table()
        after = sum(task.file.record_count for task in tbl.scan(snapshot_id=snapshot_id).plan_files())
        snap = tbl.metadata.snapshot_by_id(snapshot_id)
        summary = snap.summary.additional_properties if snap and snap.summary else {}
        recorded = summary.get("total-records")
        if after != before or (recorded is not None and int(recorded) != after):
            parent = snap.parent_snapshot_id if snap else "PREVIOUS"
            raise DataFileError(
                f"table {self.name!r}: snapshot {snapshot_id} was committed, but a pyiceberg "
                f"scan plans {after} rows (summary total-records: {recorded or 'absent'}) where "
                f"the previous snapshot {parent} had {before}; `layout-advisor table rollback "
                f"{self.name} --to {parent} --as ADMIN` restores the previous snapshot")

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
    def _entries(tbl: Table, snap: Any) -> tuple[dict[str, DataFile], list, list]:
        """A snapshot's live data files by path, its data entries and its delete entries
        (one pass over its manifests, remembered for the commit)."""
        live: dict[str, DataFile] = {}
        data: list = []
        deletes: list = []
        for manifest in snap.manifests(tbl.io):
            entries = iceberg_commit.live_entries(manifest, tbl.io)
            if manifest.content == ManifestContent.DELETES:
                deletes.extend(entries)
                continue
            data.extend(entries)
            live.update((e.data_file.file_path, e.data_file) for e in entries)
        return live, data, deletes

    def _live_files(self, tbl: Table, snapshot_id: int | None = None,
                    ) -> tuple[dict[str, DataFile], dict[str, tuple[int, int]]]:
        """A snapshot's (the current one's) live data files by path and the delete files
        attached to them (from the cache the snapshot's loading filled, else the
        manifests)."""
        snap = (tbl.current_snapshot() if snapshot_id is None
                else tbl.metadata.snapshot_by_id(snapshot_id))
        if snap is None:
            return {}, {}
        cached = _LIVE.get((str(tbl.metadata.table_uuid), snap.snapshot_id))
        if cached is not None:
            return cached
        live, data, deletes = self._entries(tbl, snap)
        return live, iceberg_deletes.attached(data, deletes, tbl.metadata.specs())

    def merge_on_read(self, snapshot_id: str | None = None) -> dict[str, str]:
        """Data files with delete files attached, and why they are not rewritten."""
        tbl = self.table()
        snap = self._snap(tbl, snapshot_id)
        if snap is None:
            return {}
        _, attached = self._live_files(tbl, snap.snapshot_id)
        return {path: iceberg_deletes.reason(counts) for path, counts in attached.items()}

    def _data_files(self, tbl: Table, added: Sequence[Partition]) -> list[DataFile]:
        """The new files' entries, from the footer statistics the executor already read
        (:mod:`engine.table.formats.iceberg_files`), re-reading a footer only where those
        cannot reproduce pyiceberg's entry."""
        plan = iceberg_files.statistics_plan(tbl.metadata)
        schema = self.schema(tbl)
        ltypes = dict(schema.columns)
        offsets = iceberg_files.split_offsets(added, schema)
        out = []
        for part in added:
            path = file_uri(part.path)
            try:
                if iceberg_files.can_build(part, tbl.metadata, plan, ltypes):
                    out.append(iceberg_files.data_file(path, part, tbl.metadata, plan,
                                                       offsets.get(part.path)))
                else:
                    out.append(parquet_file_to_data_file(tbl.io, tbl.metadata, path))
            except ValueError as exc:  # e.g. a file spanning two partition values
                raise DataFileError(
                    f"{path}: cannot be added to iceberg table {self.name!r}: {exc}") from None
        return out

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
        current one stays) and delete the files only they referenced: data files, then
        manifests, then manifest lists (Iceberg's ``ExpireSnapshots`` with file cleanup).

        pyiceberg 0.12 expires the snapshots from the metadata but deletes no file
        (``MaintenanceTable.expire_snapshots`` has no cleanup), so the files referenced by
        the expired snapshots and by no retained one are deleted here, after the metadata
        commit. Files a running job is writing (its data, its manifests) are referenced by
        no snapshot yet and are never listed. Returns data files first, then metadata files.
        """
        tbl = self.table()
        cutoff_ms = int((dt.datetime.now(dt.timezone.utc) - older_than).timestamp() * 1000)
        current = tbl.current_snapshot()
        current_id = current.snapshot_id if current is not None else None
        snaps = list(tbl.metadata.snapshots)
        doomed_ids = [s.snapshot_id for s in snaps
                      if s.timestamp_ms < cutoff_ms and s.snapshot_id != current_id]
        if not doomed_ids:
            return []
        kept = [s for s in snaps if s.snapshot_id not in set(doomed_ids)]
        gone = [s for s in snaps if s.snapshot_id in set(doomed_ids)]
        data = sorted(_files_of(tbl, gone) - _files_of(tbl, kept))
        metadata = sorted(_manifests_of(tbl, gone) - _manifests_of(tbl, kept))
        metadata += sorted(s.manifest_list for s in gone)
        if not dry_run:
            tbl.maintenance.expire_snapshots().by_ids(doomed_ids).commit()
            for path in data + metadata:
                try:
                    fs.delete_file(path)
                except FileNotFoundError:
                    pass
        return data + metadata

    def metadata_orphans(self, cutoff_s: float) -> list[str]:
        """Files under the table's metadata folder that no version names, older than
        ``cutoff_s`` (:func:`engine.table.orphans.metadata_orphans`)."""
        return orphans.metadata_orphans(self.table(), cutoff_s)


def _remember(cache: "OrderedDict[Any, Any]", key: Any, value: Any) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > _CACHE_SIZE:
        cache.popitem(last=False)


def _files_of(tbl: Table, snapshots: Sequence[Any]) -> set[str]:
    """The data files the ``snapshots`` hold live."""
    out: set[str] = set()
    for snap in snapshots:
        for manifest in snap.manifests(tbl.io):
            out.update(e.data_file.file_path for e in iceberg_commit.live_entries(manifest, tbl.io))
    return out


def _manifests_of(tbl: Table, snapshots: Sequence[Any]) -> set[str]:
    """The manifest files the ``snapshots``' manifest lists name."""
    return {m.manifest_path for snap in snapshots for m in snap.manifests(tbl.io)}


def _bound_kind(iceberg_type: Any) -> tuple[str, int]:
    """How :func:`columnar.decode_bounds` reads a type's bounds (and a decimal's scale)."""
    ltype = logical_type(iceberg_type)
    if ltype == "decimal":
        return "decimal", int(iceberg_type.scale)
    if isinstance(iceberg_type, IntegerType):
        return "int32", 0
    if isinstance(iceberg_type, FloatType):
        return "float32", 0
    return {"int": "int64", "float": "float64", "bool": "bool", "date": "date",
            "timestamp": "timestamp", "string": "string"}.get(ltype, "other"), 0


def _column_arrays(entries: Sequence[DataFile], fid: int, iceberg_type: Any) -> tuple:
    """(min, max, null count, compressed bytes) of field ``fid`` over ``entries``, as
    Arrow arrays in the manifest's types (bounds decoded by Iceberg type, in bulk)."""
    kind, scale = _bound_kind(iceberg_type)
    lower = [(f.lower_bounds or {}).get(fid) for f in entries]
    upper = [(f.upper_bounds or {}).get(fid) for f in entries]
    nulls = [(f.null_value_counts or {}).get(fid) for f in entries]
    sizes = [int((f.column_sizes or {}).get(fid) or 0) for f in entries]
    lo, hi = columnar.decode_bounds(kind, lower, scale), columnar.decode_bounds(kind, upper, scale)
    if kind.startswith("float"):  # NaN is kept out of the bounds and counted apart
        lo, hi = columnar.nan_safe_bounds(lo, hi, [(f.nan_value_counts or {}).get(fid)
                                                   for f in entries])
    return lo, hi, pa.array(nulls, pa.int64()), pa.array(sizes, pa.int64())


def create_table(catalog: Catalog, identifier: str, schema: pa.Schema,
                 location: str | None = None) -> Table:
    """Create an Iceberg table (and its namespace) from an Arrow schema."""
    namespace = identifier.rsplit(".", 1)[0]
    catalog.create_namespace_if_not_exists(namespace)
    return catalog.create_table(identifier, schema=schema, location=location)
