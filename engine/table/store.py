"""Tables as chains of immutable snapshots, published by an atomic pointer swap.

Layout of one table in the workspace (``<home>/tables/<name>/``)::
    table.json                      TableInfo (name, data location, managed, target size)
    metadata/.lock                  fcntl lock: one committer at a time, across processes
    metadata/current                {"id": "7", "header": "snap-00000007.json"}  (os.replace)
    metadata/snap-00000007.json     header: id, parent, time, operation, schema, summary
    metadata/snap-00000007.manifest.parquet   one row per partition, typed zonemaps
    metadata/snap-00000007.rowgroups.parquet  row-group stats of the partitions it added
    data/                           managed tables: all data files; registered tables: only
                                    files the advisor rewrote (the user's dataset is read-only)

Snapshot files are written once and never changed, so a reader holding an old
:class:`Snapshot` (or its id) is never disturbed by a commit; data files disappear only
through :meth:`TableStore.gc`, which keeps everything a retained snapshot references.
Snapshot ids are the decimal sequence numbers "1", "2", ...: each commit gets its parent's
number plus one, so ids are short enough to type (``table rollback lineitem --to 3``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import functools
import json
import os
import re
import secrets
import shutil
from collections import OrderedDict
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterator, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from engine.core.config import Settings
from engine.core.errors import (CommitConflictError, DataFileError, InvalidParameterError,
                                SnapshotNotFoundError, TableExistsError, TableNotFoundError)
from engine.core.faults import crash_point
from engine.table import footers, fs, leases, manifest, orphans, zonemap_cache
from engine.table.formats.base import TableFormat
from engine.table.formats.native import NativeFormat
from engine.table.model import Partition, Snapshot, TableSchema, ZoneMaps

TABLE_FILE = "table.json"
CURRENT_FILE = "current"
LOCK_FILE = ".lock"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
#: a snapshot's metadata files: snap-00000007.json, .manifest.parquet, .rowgroups.parquet
_SNAP_FILE = re.compile(r"^snap-(\d+)\.")
#: the name of a writer's folder from :meth:`TableStore.new_data_dir`: ``<tag>-<UTC stamp>-<hex>``
_RUN_DIR = re.compile(r"^[A-Za-z0-9_-]+-\d{8}T\d{6}-[0-9a-f]{8}$")
_SNAPSHOT_CACHE_SIZE = 16
# header path -> Snapshot (snapshot files are immutable, so caching them is safe)
_SNAPSHOT_CACHE: "OrderedDict[tuple[str, int, int], Snapshot]" = OrderedDict()


def _iceberg():  # noqa: ANN202 - the module
    """``engine.table.formats.iceberg``, imported on first use: it pulls pyiceberg and
    sqlalchemy (about 0.7 CPU-s and 60 MB at import, bench/README_planning.md), which a
    native table never needs, so ``import engine.api`` stays free of them."""
    from engine.table.formats import iceberg  # lazy: pyiceberg + sqlalchemy import cost

    return iceberg


def _delta():  # noqa: ANN202 - the module
    """``engine.table.formats.delta``, imported on first use: it pulls the deltalake
    bindings (a large native extension), which a native table never needs."""
    from engine.table.formats import delta  # lazy: deltalake import cost

    return delta


@dataclass(frozen=True)
class TableInfo:
    """Where a table lives and how big its micro-partitions should be."""

    name: str
    location: str  # data root (path or URI); for registered tables, the user's dataset
    metadata_dir: str
    managed: bool
    target_rows: int | None
    target_bytes: int | None
    created_at: str
    #: "native" (the snapshot chain below) | "iceberg" | "delta" (see engine.table.formats)
    format: str = "native"
    #: Iceberg: the pyiceberg catalog's name (None: the workspace's SQLite catalog)
    catalog: str | None = None
    #: Iceberg: NAMESPACE.TABLE in that catalog
    identifier: str | None = None

    @property
    def data_root(self) -> str:
        """Where the advisor may write data files: the location of a managed table, the
        workspace's ``data/`` folder of a registered one (never inside the user's dataset)."""
        if self.managed:
            return self.location
        return os.path.join(os.path.dirname(self.metadata_dir), "data")


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _iso(moment: dt.datetime) -> str:
    return moment.isoformat(timespec="microseconds")


def parse_time(text: str) -> dt.datetime:
    moment = dt.datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc)


def validate_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise InvalidParameterError(
            f"invalid table name {name!r}: use letters, digits, '_' or '-' (start with a letter or '_')")
    return name


def _read_json(path: str, what: str, hint: str) -> dict:
    """A metadata JSON object, or DataFileError naming the file, what it is and what to do
    (a damaged file is reported as such, never as a Python error)."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataFileError(f"{path}: the {what} is damaged ({exc}); {hint}") from None
    if not isinstance(data, dict):
        raise DataFileError(f"{path}: the {what} is damaged (not a JSON object); {hint}")
    return data


def _write_info(table_dir: str, info: TableInfo) -> None:
    """Write ``table.json`` (the table's identity: format, location, catalog) atomically."""
    _write_atomic(os.path.join(table_dir, TABLE_FILE), json.dumps(asdict(info), indent=1).encode())


def _write_atomic(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file, fsync, and os.replace."""
    tmp = f"{path}.tmp-{secrets.token_hex(4)}"
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def _fsync_dir(path: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _write_parquet_atomic(path: str, table: Any) -> None:
    tmp = f"{path}.tmp-{secrets.token_hex(4)}"
    pq.write_table(table, tmp, compression="zstd")
    with open(tmp, "rb+") as handle:
        os.fsync(handle.fileno())
    os.replace(tmp, path)


class TableStore:
    """Catalog of the workspace's tables and their snapshot chains."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.root = os.path.abspath(os.path.expanduser(str(settings.tables_dir)))

    # ------------------------------------------------------------------ catalog
    def table_dir(self, name: str) -> str:
        return os.path.join(self.root, validate_name(name))

    def managed_location(self, name: str) -> str:
        """Data root a new managed table gets: ``<home>/tables/<name>/data``."""
        return os.path.join(self.table_dir(name), "data")

    def list_tables(self) -> list[TableInfo]:
        if not os.path.isdir(self.root):
            return []
        out = []
        for entry in sorted(os.listdir(self.root)):
            if _NAME.match(entry) and self.exists(entry):
                out.append(self.info(entry))
        return out

    def exists(self, name: str) -> bool:
        tdir = self.table_dir(name)
        if not os.path.isfile(os.path.join(tdir, TABLE_FILE)):
            return False
        if os.path.isfile(os.path.join(tdir, "metadata", CURRENT_FILE)):
            return True
        with open(os.path.join(tdir, TABLE_FILE), encoding="utf-8") as handle:
            return json.load(handle).get("format", "native") != "native"

    # ------------------------------------------------------------------ formats
    def format(self, name: str) -> TableFormat:
        """The table's format: its snapshots, history and commits (engine.table.formats)."""
        return self._format_of(self.info(name))

    def _format_of(self, info: TableInfo) -> TableFormat:
        if info.format == "iceberg":
            catalog = _iceberg().open_catalog(str(self.settings.home), info.catalog)
            return _iceberg().IcebergFormat(info.name, str(info.identifier), catalog)
        if info.format == "delta":
            return _delta().DeltaFormat(info.name, info.location)
        return NativeFormat(self, info.name)

    def _foreign(self, name: str) -> TableFormat | None:
        """The format of a table stored in an open format; None for a native table."""
        info = self.info(name)
        return None if info.format == "native" else self._format_of(info)

    def register_format(self, name: str, fmt: str, location: str, *, catalog: str | None = None,
                        identifier: str | None = None, managed: bool = False,
                        target_rows: int | None = None) -> TableInfo:
        """Add a table kept in an open format (its metadata stays the format's: only
        ``table.json`` is written to the workspace)."""
        with self._new_table(name) as tdir:
            info = TableInfo(name=name, location=location, metadata_dir=os.path.join(tdir, "metadata"),
                             managed=managed, target_rows=target_rows, target_bytes=None,
                             created_at=_iso(utc_now()), format=fmt, catalog=catalog,
                             identifier=identifier)
            os.makedirs(tdir, exist_ok=True)
            _write_info(tdir, info)
            return info

    def register_delta(self, name: str, path: str) -> Snapshot:
        """Register the Delta table at ``path`` (partitioned or not; reads its log only,
        writes nothing there)."""
        validate_name(name)
        location = path if fs.is_uri(path) else fs.normalize(path)
        if not _delta().is_delta_table(location):
            raise DataFileError(f"--delta {path}: not a Delta table (no _delta_log folder)")
        _delta().open_table(name, location)  # TableNotFoundError naming the path
        self.register_format(name, "delta", location)
        return self.current_snapshot(name)

    @contextlib.contextmanager
    def _new_table(self, name: str) -> Iterator[str]:
        """The folder of table ``name``, about to be created, under the workspace lock (so
        two processes cannot both create it); a name in use is refused."""
        validate_name(name)
        os.makedirs(self.root, exist_ok=True)
        with self._lock(self.root):
            if self.exists(name):
                raise TableExistsError(f"table {name!r} already exists (drop it or pick another name)")
            yield self.table_dir(name)

    def info(self, name: str) -> TableInfo:
        path = os.path.join(self.table_dir(name), TABLE_FILE)
        if not self.exists(name):
            known = sorted(t for t in (os.listdir(self.root) if os.path.isdir(self.root) else [])
                           if _NAME.match(t) and self.exists(t))
            hint = f"; tables are: {', '.join(known)}" if known else "; no tables yet"
            raise TableNotFoundError(f"no table named {name!r} in {self.root}{hint}")
        data = _read_json(path, "table description", "restore it from a backup")
        try:
            info = TableInfo(**data)
        except TypeError as exc:
            raise DataFileError(f"{path}: the table description is damaged ({exc}); restore "
                                "it from a backup") from None
        _check_own_workspace(info, os.path.join(self.table_dir(name), "metadata"), path)
        return info

    def data_root(self, name: str) -> str:
        """Where writers put files for ``name`` (a table being created gets its managed root;
        a table in an open format, the format's data location)."""
        if not self.exists(name):
            return self.managed_location(name)
        foreign = self._foreign(name)
        return foreign.data_location() if foreign else self.info(name).data_root

    def new_data_dir(self, name: str, purpose: str) -> str:
        """A fresh, unique, existing directory under the table's data root.

        Nothing references it until a commit does, so a failed writer just deletes it; it
        is leased to this process (:mod:`engine.table.leases`), so gc leaves it alone while
        the writer lives, whatever the retention, and removes what a crashed writer left.
        """
        tag = re.sub(r"[^A-Za-z0-9_-]+", "-", purpose).strip("-") or "data"
        stamp = utc_now().strftime("%Y%m%dT%H%M%S")
        path = fs.join(self.data_root(name), f"{tag}-{stamp}-{secrets.token_hex(4)}")
        leases.take(self.table_dir(name), path)  # before the folder exists (see leases)
        fs.makedirs(path)
        return path

    # ------------------------------------------------------------------ locking
    @contextlib.contextmanager
    def _lock(self, directory: str) -> Iterator[None]:
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, LOCK_FILE), "a+") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    # ------------------------------------------------------------------ reading
    def _pointer(self, name: str) -> dict:
        info = self.info(name)
        path = os.path.join(info.metadata_dir, CURRENT_FILE)
        return _read_json(path, "current-snapshot pointer",
                          "restore it from a backup, or write {\"id\": \"N\"} naming the last "
                          "good snap-N.json")

    def current_id(self, name: str) -> str:
        """Id of the current snapshot (reads only the small pointer file)."""
        foreign = self._foreign(name)
        if foreign is not None:
            return foreign.current_id()
        pointer = self._pointer(name)
        if "id" not in pointer:
            raise DataFileError(f"table {name!r}: the current-snapshot pointer is damaged (no "
                                "id); restore metadata/current from a backup")
        return str(pointer["id"])

    def current_snapshot(self, name: str) -> Snapshot:
        foreign = self._foreign(name)
        if foreign is not None:
            return foreign.current_snapshot()
        return self.snapshot(name, self.current_id(name))

    def _header_path(self, info: TableInfo, snapshot_id: str) -> str:
        sid = str(snapshot_id).strip()
        if not sid.isdigit():
            raise SnapshotNotFoundError(f"table {info.name!r} has no snapshot {snapshot_id!r}")
        return os.path.join(info.metadata_dir, f"snap-{int(sid):08d}.json")

    def _header(self, info: TableInfo, snapshot_id: str) -> dict:
        path = self._header_path(info, snapshot_id)
        try:
            return _read_json(path, f"header of snapshot {snapshot_id}",
                              f"roll back to an earlier snapshot (`layout-advisor table rollback "
                              f"{info.name} --to ID`) or restore the file from a backup")
        except FileNotFoundError:
            raise SnapshotNotFoundError(
                f"table {info.name!r} has no snapshot {snapshot_id!r}; "
                f"see `layout-advisor table snapshots {info.name}`") from None

    def snapshot(self, name: str, snapshot_id: str) -> Snapshot:
        info = self.info(name)
        if info.format != "native":
            return self._format_of(info).snapshot(str(snapshot_id))
        path = self._header_path(info, snapshot_id)
        try:
            stat = os.stat(path)
            key = (path, stat.st_ino, stat.st_mtime_ns)
        except FileNotFoundError:
            self._header(info, snapshot_id)  # raises SnapshotNotFoundError
            raise
        cached = _SNAPSHOT_CACHE.get(key)
        if cached is not None:
            _SNAPSHOT_CACHE.move_to_end(key)
            return cached
        header = self._header(info, snapshot_id)
        snap = self._load(info, header)
        _SNAPSHOT_CACHE[key] = snap
        while len(_SNAPSHOT_CACHE) > _SNAPSHOT_CACHE_SIZE:
            _SNAPSHOT_CACHE.popitem(last=False)
        return snap

    def _load(self, info: TableInfo, header: dict) -> Snapshot:
        """The snapshot of ``header``: its zonemaps from the cache when a process stored
        them before (:mod:`engine.table.zonemap_cache`; the manifest is then read only if
        a partition's own statistics are asked for), else from the manifest, then cached."""
        path = os.path.join(info.metadata_dir, str(header.get("manifest")))
        try:
            schema = TableSchema.from_json(header["schema"])
            stat = os.stat(path)
        except FileNotFoundError:
            raise DataFileError(f"{path}: the manifest of snapshot {header.get('id')} is "
                                "missing; roll back to an earlier snapshot or restore it") from None
        except (KeyError, TypeError, ValueError) as exc:
            raise DataFileError(f"{path}: the snapshot is damaged ({type(exc).__name__}: {exc}); "
                                "roll back to an earlier snapshot or restore the file from a "
                                "backup") from None
        cached_at = zonemap_cache.cache_path(
            self.settings.home, info.name,
            (info.location, info.created_at, header.get("id"), path, stat.st_size, stat.st_ino,
             stat.st_mtime_ns))
        zonemaps = zonemap_cache.load(cached_at, schema)
        try:
            if zonemaps is not None:
                # a partial, not a lambda: the snapshot stays picklable
                return self._snapshot_from(
                    header, schema, functools.partial(TableStore._read_manifest, path, header),
                    zonemaps)
            snap = self._snapshot_from(header, schema, self._read_manifest(path, header))
        except (pa.ArrowException, KeyError, TypeError, ValueError) as exc:
            raise DataFileError(f"{path}: the snapshot is damaged ({type(exc).__name__}: {exc}); "
                                "roll back to an earlier snapshot or restore the file from a "
                                "backup") from None
        zonemap_cache.store(cached_at, schema, snap.zonemaps())
        return snap

    @staticmethod
    def _read_manifest(path: str, header: dict) -> Any:
        """The manifest's Arrow table (a missing or damaged file named in one line)."""
        try:
            return pq.read_table(path)
        except FileNotFoundError:
            raise DataFileError(f"{path}: the manifest of snapshot {header.get('id')} is "
                                "missing; roll back to an earlier snapshot or restore it") from None
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise DataFileError(f"{path}: the snapshot is damaged ({type(exc).__name__}: {exc}); "
                                "roll back to an earlier snapshot or restore the file from a "
                                "backup") from None

    @staticmethod
    def _snapshot_from(header: dict, schema: TableSchema, table: Any,
                       zonemaps: Any = None) -> Snapshot:
        """``table``: the manifest's Arrow table, or (with ``zonemaps``) a callable reading it."""
        if zonemaps is None:
            zonemaps = manifest.table_to_zonemaps(schema, table)
        snap = Snapshot(
            id=str(header["id"]), parent=header.get("parent"), created_at=header["created_at"],
            operation=header["operation"], table=header["table"], schema=schema,
            partitions=manifest.table_to_partitions(schema, table, zonemaps),
            summary=dict(header.get("summary") or {}))
        object.__setattr__(snap, "_zonemaps", zonemaps)
        return snap

    def _chain(self, name: str) -> list[dict]:
        """Headers from the current snapshot back to the first (newest first)."""
        info = self.info(name)
        out, sid = [], self.current_id(name)
        while sid is not None:
            header = self._header(info, sid)
            out.append(header)
            sid = header.get("parent")
        return out

    def history(self, name: str) -> list[dict]:
        """The published snapshots, oldest first (``partition_count`` for native tables;
        ``actor`` and ``summary`` as the format records them for the others)."""
        foreign = self._foreign(name)
        if foreign is not None:
            return [{"id": h.id, "parent": h.parent, "created_at": h.created_at,
                     "operation": h.operation, "actor": h.actor, "summary": dict(h.summary),
                     "partition_count": _int_or_none(h.summary.get("total-data-files"))}
                    for h in foreign.history()]
        return [{"id": str(h["id"]), "parent": h.get("parent"), "created_at": h["created_at"],
                 "operation": h["operation"], "partition_count": int(h["partition_count"])}
                for h in reversed(self._chain(name))]

    def headers(self, name: str) -> list[dict]:
        """A native table's published snapshot headers, oldest first (each read once): id,
        parent, time, operation, summary, ``partition_count``, ``total_rows`` ..."""
        return list(reversed(self._chain(name)))

    def snapshot_summary(self, name: str, snapshot_id: str) -> Mapping[str, Any]:
        """The summary a native snapshot's header records (plan id, policy, actor ...)."""
        return dict(self._header(self.info(name), snapshot_id).get("summary") or {})

    def next_seq(self, name: str) -> int:
        """The ``created_seq`` the next new partition should get (higher than all so far)."""
        info = self.info(name)
        if info.format != "native":
            return max((p.created_seq for p in self.current_snapshot(name).partitions),
                       default=-1) + 1
        return int(self._header(info, self.current_id(name))["next_seq"])

    def row_groups(self, name: str, snapshot_id: str | None = None,
                   paths: Sequence[str] | None = None) -> dict[str, list[dict]]:
        """Row-group statistics of a snapshot's partitions (optionally only ``paths``);
        none for open formats, whose metadata keeps file-level statistics only."""

        info = self.info(name)
        if info.format != "native":
            return {}
        sid = snapshot_id or self.current_id(name)
        header = self._header(info, sid)
        schema = TableSchema.from_json(header["schema"])
        man = pq.read_table(os.path.join(info.metadata_dir, header["manifest"]), columns=["path", "rg_file"])
        wanted = set(paths) if paths is not None else set(man.column("path").to_pylist())
        files = {f for p, f in zip(man.column("path").to_pylist(), man.column("rg_file").to_pylist())
                 if f and p in wanted}
        out: dict[str, list[dict]] = {}
        for f in sorted(files):
            table = pq.read_table(os.path.join(info.metadata_dir, f))
            out.update(manifest.row_groups_from_table(schema, table, wanted))
        return out

    def row_group_zonemaps(self, name: str, snapshot_id: str | None = None,
                           min_groups: int = 2) -> "ZoneMaps | None":
        """Row-group zonemaps (one entry per row group, :func:`manifest.row_groups_to_zonemaps`)
        of the snapshot's files holding at least ``min_groups`` row groups: what row-group
        pruning (``engine.scan.rowgroups``) reads. None for open formats (their metadata keeps
        file-level statistics only) and when no file has that many. Read column-wise from the
        snapshots' ``.rowgroups.parquet`` files: no Python object per row group."""
        info = self.info(name)
        if info.format != "native":
            return None
        header = self._header(info, snapshot_id or self.current_id(name))
        schema = TableSchema.from_json(header["schema"])
        man = pq.read_table(os.path.join(info.metadata_dir, header["manifest"]), columns=["path", "rg_file"])
        files = sorted(f for f in pc.unique(man.column("rg_file")).to_pylist() if f)
        if not files:
            return None
        # promote: row-group files written before the per-row-group sizes lack ``c<i>_bytes``
        table = pa.concat_tables([pq.read_table(os.path.join(info.metadata_dir, f)) for f in files],
                                 promote_options="default")
        counts = table.group_by("path").aggregate([("row_group", "count")])
        multi = counts.filter(pc.greater_equal(counts.column("row_group_count"), min_groups)).column("path")
        live = pc.filter(man.column("path"), pc.is_in(man.column("path"), value_set=multi))
        table = table.filter(pc.is_in(table.column("path"), value_set=live.combine_chunks()))
        return manifest.row_groups_to_zonemaps(schema, table) if table.num_rows else None

    # ------------------------------------------------------------------ writing
    def _publish(self, info: TableInfo, seq: int, parent: str | None, operation: str,
                 schema: TableSchema, partitions: Sequence[Partition], added: Sequence[Partition],
                 summary: Mapping | None, next_seq: int, manifest_file: str | None = None,
                 splice: tuple[Any, Any] | None = None) -> Snapshot:
        """Write the immutable files of snapshot ``seq``, then swap the pointer (caller locks).

        The manifest is made of ``partitions``, or with ``splice`` (the base manifest's
        Arrow table and a bool per row, True where removed) of the base's kept rows with
        ``added`` in the first removed slot (:func:`manifest.splice`), or with
        ``manifest_file`` an older one is shared (a rollback)."""

        mdir = info.metadata_dir
        stem = f"snap-{seq:08d}"
        rg_files: dict[str, str | None] = {}
        if added:
            groups = footers.row_groups_for(added, schema)
            if groups:
                rg_name = f"{stem}.rowgroups.parquet"
                _write_parquet_atomic(os.path.join(mdir, rg_name), manifest.row_groups_table(schema, groups))
                rg_files = {p.path: (rg_name if p.path in groups else None) for p in added}
            else:
                rg_files = {p.path: None for p in added}
        if manifest_file is None:
            table = (manifest.partitions_to_table(schema, partitions, rg_files) if splice is None
                     else manifest.splice(schema, *splice, added, rg_files))
            manifest_file = f"{stem}.manifest.parquet"
            _write_parquet_atomic(os.path.join(mdir, manifest_file), table)
        else:  # rollback: the older manifest is immutable and can be shared

            table = pq.read_table(os.path.join(mdir, manifest_file))
        crash_point("mid_commit")
        header = {
            "id": str(seq), "parent": parent, "created_at": _iso(utc_now()), "operation": operation,
            "table": info.name, "schema": schema.to_json(), "summary": dict(summary or {}),
            "manifest": manifest_file, "partition_count": table.num_rows,
            "total_rows": int(sum(table.column("rows").to_pylist())),
            "total_bytes": int(sum(table.column("bytes").to_pylist())), "next_seq": int(next_seq),
        }
        header_path = os.path.join(mdir, f"{stem}.json")
        _write_atomic(header_path, json.dumps(header, indent=1, default=str).encode())
        crash_point("before_pointer")
        pointer = {"id": str(seq), "header": f"{stem}.json"}
        _write_atomic(os.path.join(mdir, CURRENT_FILE), json.dumps(pointer).encode())
        _fsync_dir(mdir)
        return self._snapshot_from(header, schema, table)

    def create(self, name: str, *, schema: TableSchema, partitions: Sequence[Partition],
               operation: str, location: str | None = None, managed: bool = True,
               target_rows: int | None = None, target_bytes: int | None = None,
               summary: Mapping | None = None) -> Snapshot:
        """Create table ``name`` with its first snapshot (id "1"): used by ingest and register."""
        with self._new_table(name) as tdir:
            mdir = os.path.join(tdir, "metadata")
            os.makedirs(mdir, exist_ok=True)
            for stale in os.listdir(mdir):  # leftovers of an earlier failed create
                if stale.startswith("snap-") or stale == CURRENT_FILE:
                    os.remove(os.path.join(mdir, stale))
            info = TableInfo(
                name=name, location=fs.normalize(location) if location else self.managed_location(name),
                metadata_dir=mdir, managed=managed, target_rows=target_rows,
                target_bytes=target_bytes, created_at=_iso(utc_now()))
            _write_info(tdir, info)
            next_seq = max((p.created_seq for p in partitions), default=-1) + 1
            with self._lock(mdir):
                return self._publish(info, 1, None, operation, schema, partitions, partitions,
                                     summary, next_seq)

    def commit(self, name: str, base_snapshot_id: str, removed: Sequence[str],
               added: Sequence[Partition], operation: str,
               summary: Mapping | None = None) -> Snapshot:
        """Publish a snapshot that replaces ``removed`` paths of the base with ``added``.

        Added partitions take the slot of the first removed one (appended when nothing is
        removed), so the table's order changes as little as possible. They get fresh
        ``created_seq`` numbers above every earlier partition unless they already have them.
        An open-format table commits through its format (``commit_rewrite``).
        """
        info = self.info(name)
        if info.format != "native":
            return self._format_of(info).commit_rewrite(
                base_snapshot_id, removed, added, {"operation": operation, **dict(summary or {})})
        with self._lock(info.metadata_dir):
            current = self.current_id(name)
            if str(base_snapshot_id) != current:
                raise CommitConflictError(
                    f"table {name!r} changed: the change was based on snapshot {base_snapshot_id} "
                    f"but the current snapshot is {current}")
            base_header = self._header(info, current)
            schema = self.snapshot(name, current).schema  # a damaged base named in one line
            removed_set = {fs.normalize(p) if not fs.is_uri(p) else p for p in removed}
            if len(removed_set) != len(removed):
                raise CommitConflictError("the same partition is removed twice")
            # columnar over the base manifest, which the new one is taken from: a walk over
            # the base's Partition objects cost ~15 CPU-s at 1,000,000 partitions
            base_table = self._read_manifest(
                os.path.join(info.metadata_dir, str(base_header["manifest"])), base_header)
            paths = base_table.column("path")
            gone = pc.is_in(paths, value_set=pa.array(sorted(removed_set), pa.string()))
            gone = gone.to_numpy(zero_copy_only=False).astype(bool)
            if int(gone.sum()) != len(removed_set):
                found = set(paths.filter(pa.array(gone)).to_pylist())
                missing = [p for p in removed_set if p not in found]
                raise CommitConflictError(
                    f"table {name!r}: {len(missing)} removed partition(s) are not in snapshot "
                    f"{current}, e.g. {missing[0]}")
            added = list(added)
            _check_files(added)
            kept = pc.is_in(pa.array([p.path for p in added], pa.string()),
                            value_set=paths.filter(pa.array(~gone)).combine_chunks())
            seen: set[str] = set()
            for p, twice in zip(added, kept.to_pylist()):
                if twice or p.path in seen:
                    raise CommitConflictError(f"partition {p.path} would appear twice in the table")
                seen.add(p.path)
            next_seq = int(base_header["next_seq"])
            seqs = [p.created_seq for p in added]
            if added and (min(seqs) < next_seq or any(b <= a for a, b in zip(seqs, seqs[1:]))):
                added = [_with_seq(p, next_seq + i) for i, p in enumerate(added)]
            if added:
                next_seq = max(next_seq, max(p.created_seq for p in added) + 1)
            summary = dict(summary or {})
            summary.setdefault("removed", len(removed_set))
            summary.setdefault("added", len(added))
            return self._publish(info, int(current) + 1, current, operation, schema,
                                 (), added, summary, next_seq, splice=(base_table, gone))

    def rollback(self, name: str, to_snapshot_id: str, actor: str | None = None) -> Snapshot:
        """Publish a new snapshot (operation "rollback") equal to an older one; an
        open-format table rolls back through its format."""
        info = self.info(name)
        if info.format != "native":
            return self._format_of(info).rollback(str(to_snapshot_id), actor=actor)
        with self._lock(info.metadata_dir):
            current = self.current_id(name)
            chain_ids = [str(h["id"]) for h in self._chain(name)]
            target_id = str(to_snapshot_id).strip()
            if target_id not in chain_ids:
                raise SnapshotNotFoundError(
                    f"table {name!r} has no snapshot {to_snapshot_id!r}; "
                    f"see `layout-advisor table snapshots {name}`")
            target_header = self._header(info, target_id)
            target = self.snapshot(name, target_id)
            # the paths from the zonemap arrays: walking target.partitions made a Partition
            # per file and, on a zonemap-cache hit, read the manifest the publish below shares
            gone = [p for p in target.zonemaps().paths.tolist() if not fs.exists(p)]
            if gone:
                raise DataFileError(
                    f"snapshot {target_id} of {name!r} cannot be restored: {len(gone)} of its files "
                    f"were removed (by gc?), e.g. {gone[0]}")
            next_seq = int(self._header(info, current)["next_seq"])
            summary = {"rolled_back_to": target_id, "rolled_back_from": current}
            if actor:
                summary["actor"] = actor
            return self._publish(info, int(current) + 1, current, "rollback", target.schema,
                                 target.partitions, [], summary, next_seq,
                                 manifest_file=target_header["manifest"])

    # ------------------------------------------------------------------ cleanup
    def _paths_of(self, info: TableInfo, header: dict) -> set[str]:
        table = pq.read_table(os.path.join(info.metadata_dir, header["manifest"]), columns=["path"])
        return set(table.column("path").to_pylist())

    def gc(self, name: str, older_than: dt.timedelta, dry_run: bool = False) -> list[str]:
        """Delete files that no retained snapshot references; returns their paths.

        Retained: the current snapshot, and every snapshot that was still current at some
        moment within ``older_than`` (a reader may have started on it then). Only files
        under the table's data root are ever candidates, so a registered table's own
        dataset is never touched. Unreferenced files no snapshot ever named (a crashed
        writer's output) are deleted once they are older than ``older_than`` too, and
        never while a live writer holds the lease of their folder (:mod:`engine.table.leases`),
        whatever the retention. Metadata of snapshots that were never published (a crash
        between a snapshot's files and its pointer) goes too.
        """
        if older_than < dt.timedelta(0):
            raise InvalidParameterError("gc: the retention must not be negative")
        info = self.info(name)
        if info.format != "native":
            return self._gc_foreign(info, older_than, dry_run)
        with self._lock(info.metadata_dir):
            cutoff = utc_now() - older_than
            chain = self._chain(name)  # newest first
            referenced, formerly = self._referenced(info, chain, cutoff)
            root = info.data_root
            protected = [] if info.managed else [fs.normalize(info.location)]
            doomed = self._unpublished_metadata(info, str(chain[0]["id"]))
            files = fs.list_files(root, include_hidden=True) if fs.exists(root) else []
            live = self._live_leases(info.name, dry_run)  # after listing: see leases
            doomed += [p for p in files
                       if p not in referenced and not any(_under(p, q) for q in protected)
                       and (p in formerly or (fs.mtime(p) < cutoff.timestamp() and not any(
                           leases.covers(fs.normalize(q), p) for q in live)))]
            if not dry_run:
                _delete_all(doomed)
                if files and not fs.is_uri(root):
                    _remove_empty_dirs(root, cutoff.timestamp(), keep=live)
            return doomed

    def _referenced(self, info: TableInfo, chain: Sequence[dict],
                    cutoff: dt.datetime) -> tuple[set[str], set[str]]:
        """(files of retained snapshots, files only expired snapshots name). Retained: the
        current snapshot and every one still current at some moment after ``cutoff``; a
        registered table's first snapshot (the user's own files) never expires."""
        retained, expired = [chain[0]], []
        for newer, older in zip(chain, chain[1:]):
            (retained if parse_time(newer["created_at"]) >= cutoff else expired).append(older)
        referenced: set[str] = set()
        for header in retained:
            referenced |= self._paths_of(info, header)
        formerly: set[str] = set()
        for header in expired:
            formerly |= self._paths_of(info, header)
        formerly -= referenced
        if not info.managed:
            formerly -= self._paths_of(info, chain[-1])
        return referenced, formerly

    def _unpublished_metadata(self, info: TableInfo, current: str) -> list[str]:
        """Snapshot files numbered above the current snapshot: written by a commit that
        died before its pointer swap, never published (ids only grow, so nothing above the
        pointer was ever current; the caller holds the commit lock, so none is in flight)."""
        out = []
        for entry in sorted(os.listdir(info.metadata_dir)):
            m = _SNAP_FILE.match(entry)
            if (m and int(m.group(1)) > int(current)) or ".tmp-" in entry:
                out.append(os.path.join(info.metadata_dir, entry))
        return out

    def _live_leases(self, name: str, dry_run: bool) -> list[str]:
        """Folders leased by writers still alive; dead writers' lease files are removed
        (unless ``dry_run``): their output is an orphan from now on."""
        live = []
        for lease in leases.read_all(self.table_dir(name)):
            if lease.live():
                live.append(lease.folder)
            elif not dry_run:
                with contextlib.suppress(FileNotFoundError):
                    os.remove(lease.path)
        return live

    def _gc_foreign(self, info: TableInfo, older_than: dt.timedelta, dry_run: bool) -> list[str]:
        """gc of an Iceberg or Delta table: the format's own expiry (Iceberg
        ``expire_snapshots``; Delta ``VACUUM``, listed as a dry run and then deleted here,
        since VACUUM cannot skip leased folders), plus the orphans under the data location
        that no snapshot ever named (a crashed run's output), never in a live leased folder,
        and Iceberg metadata no version names (:mod:`engine.table.orphans`), and the hidden
        files a dead run left in its folder (:func:`_hidden_run_files`), with the same
        retention and lease rules."""
        fmt = self._format_of(info)
        root = fmt.data_location()
        files = fs.list_files(root) if fs.exists(root) else []
        live = [fs.normalize(q) for q in self._live_leases(info.name, dry_run)]
        ever = {fs.normalize(p.path) for h in fmt.history() for p in fmt.snapshot(h.id).partitions}

        def keep(path: str) -> bool:  # a live writer's file that no snapshot named yet
            norm = fs.normalize(path)
            return norm not in ever and any(leases.covers(q, norm) for q in live)

        expired = fmt.expire(older_than, dry_run=dry_run or info.format == "delta")
        doomed = [p for p in expired if not keep(p)]
        cutoff_s = (utc_now() - older_than).timestamp()
        named = ever | {fs.normalize(p) for p in doomed}
        stray = [p for p in files if fs.normalize(p) not in named and not keep(p)
                 and fs.mtime(p) < cutoff_s]
        if isinstance(fmt, _iceberg().IcebergFormat) and not live:  # no run of ours committing
            stray += orphans.metadata_orphans(fmt.table(), cutoff_s)
        hidden = _hidden_run_files(root, set(files), named, keep, cutoff_s)
        if not dry_run:
            _delete_all((doomed if info.format == "delta" else []) + stray + hidden)
            _remove_emptied_run_dirs(root, hidden, live)
        return sorted(doomed + stray + hidden)

    def drop(self, name: str) -> None:
        """Forget a table. Managed: its data goes too (a managed Iceberg table is dropped
        from the workspace catalog). Registered: the user's files and catalog entry stay."""
        info = self.info(name)
        with self._lock(self.root):
            tdir = self.table_dir(name)
            if info.managed and info.format == "iceberg":
                catalog = _iceberg().open_catalog(str(self.settings.home), info.catalog)
                with contextlib.suppress(Exception):  # already gone: nothing to drop
                    catalog.drop_table(str(info.identifier))
                fs.delete_dir(info.location)
            elif info.managed and not _under(info.location, tdir):
                fs.delete_dir(info.location)
            shutil.rmtree(tdir, ignore_errors=True)
        for key in [k for k in _SNAPSHOT_CACHE if _under(k[0], tdir)]:
            _SNAPSHOT_CACHE.pop(key, None)
        zonemap_cache.forget(self.settings.home, name)


def _check_own_workspace(info: TableInfo, here: str, path: str) -> None:
    """Refuse a table described by another workspace's ``table.json`` (a copied or moved
    workspace): its snapshots name the original's files by absolute path, so a commit or a
    gc here would change the original table (issue 10 section 3)."""
    recorded = info.metadata_dir
    same = os.path.realpath(recorded) == os.path.realpath(here) or (
        os.path.exists(recorded) and os.path.exists(here) and os.path.samefile(recorded, here))
    if not same:
        raise DataFileError(
            f"{path}: table {info.name!r} belongs to the workspace at "
            f"{os.path.dirname(os.path.dirname(os.path.dirname(recorded)))} (this workspace "
            "was copied or moved from there) and its snapshots name that workspace's files, so "
            "changing it here would change the original; use the original workspace, or "
            f"remove {os.path.dirname(path)} here and create or register the table again")


def _check_files(added: Sequence[Partition]) -> None:
    """Every file a commit adds exists with the size its footer was read at (checked under
    the commit lock, which gc takes too: a file deleted or replaced since the run verified
    it fails the commit instead of publishing a snapshot that names a missing file)."""
    for p in added:
        if not fs.exists(p.path):
            raise DataFileError(f"{p.path}: a file this commit adds is gone (deleted by gc "
                                "or by hand?); nothing was committed")
        if p.bytes and fs.size(p.path) != p.bytes:
            raise DataFileError(f"{p.path}: a file this commit adds is {fs.size(p.path)} bytes "
                                f"but was verified at {p.bytes}; nothing was committed")


def _delete_all(paths: Sequence[str]) -> None:
    """Delete files (one already gone is fine: another gc got there first)."""
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            fs.delete_file(path)


def _int_or_none(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _with_seq(p: Partition, seq: int) -> Partition:
    return Partition(p.path, p.rows, p.bytes, p.columns, seq)


def _under(path: str, root: str) -> bool:
    root = root.rstrip("/")
    return path == root or path.startswith(root + "/")


def _hidden_run_files(root: str, visible: set[str], named: set[str],
                      keep: Callable[[str], bool], cutoff_s: float) -> list[str]:
    """Hidden files (Spark's ``_SUCCESS`` and ``.crc`` checksums, ``_temporary`` attempts,
    an upload's ``.part``) inside writers' folders (:data:`_RUN_DIR`) under a foreign
    table's data location, older than ``cutoff_s``, that no snapshot names and no live
    writer's lease covers (``keep``). The orphan listing skips hidden names so that a Delta
    log or Iceberg metadata beside the data is never a candidate; inside a writer's folder
    nothing hidden belongs to the table."""
    if not fs.exists(root):
        return []
    base = fs.normalize(root).rstrip("/") + "/"
    out = []
    for path in fs.list_files(root, include_hidden=True):
        norm = fs.normalize(path)
        if path in visible or not norm.startswith(base):
            continue
        parts = norm[len(base):].split("/")
        if (len(parts) > 1 and _RUN_DIR.match(parts[0]) and norm not in named
                and not keep(path) and fs.mtime(path) < cutoff_s):
            out.append(path)
    return out


def _remove_emptied_run_dirs(root: str, removed: Sequence[str], live: Sequence[str]) -> None:
    """Remove the writers' folders (and their subfolders) that :func:`_hidden_run_files`'
    deletions left empty, never a leased one (local data locations only)."""
    if fs.is_uri(root):
        return
    base = fs.normalize(root).rstrip("/")
    folders = {os.path.join(base, fs.normalize(p)[len(base) + 1:].split("/")[0]) for p in removed}
    for folder in sorted(folders):
        if any(leases.covers(q, folder) for q in live):
            continue
        for dirpath, _dirs, _files in os.walk(folder, topdown=False):
            with contextlib.suppress(OSError):
                if not os.listdir(dirpath):
                    os.rmdir(dirpath)


def _remove_empty_dirs(root: str, cutoff_s: float, keep: Sequence[str] = ()) -> None:
    """Remove empty folders older than the cutoff, except leased ones (a writer may be
    about to fill a folder it just made)."""
    kept = [fs.normalize(k) for k in keep]
    for dirpath, _dirs, _files in os.walk(root, topdown=False):
        if dirpath == root or any(leases.covers(k, dirpath) for k in kept):
            continue
        with contextlib.suppress(OSError):
            if not os.listdir(dirpath) and os.path.getmtime(dirpath) < cutoff_s:
                os.rmdir(dirpath)
