"""The native format's files: snapshot headers, manifests, row-group files and the pointer.

Layout of one table's metadata (``<home>/tables/<name>/metadata/``)::
    .lock                      fcntl lock: one committer at a time, across processes
    current                    {"id": "7", "header": "snap-00000007.json"}  (os.replace)
    snap-00000007.json         header: id, parent, time, operation, schema, summary, totals
    snap-00000007.manifest.parquet   one row per partition, typed zonemaps
    snap-00000007.rowgroups.parquet  row-group stats of the partitions it added

Every file but the pointer is written once and never changed, so snapshots read from them
are cached in the process (:func:`load_snapshot`, keyed by the header file's identity) and
their zonemap arrays across processes (:mod:`engine.table.zonemap_cache`).
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections import OrderedDict
from typing import Any, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from engine.core.errors import DataFileError, SnapshotNotFoundError
from engine.core.faults import crash_point
from engine.table import footers, fs, manifest, zonemap_cache
from engine.table.info import TableInfo
from engine.table.metadata_io import (fsync_dir, iso, read_json, utc_now, write_atomic,
                                      write_parquet_atomic)
from engine.table.model import Partition, Snapshot, TableSchema, ZoneMaps

__all__ = ["CURRENT_FILE", "SNAP_FILE", "clear_snapshot_cache", "header_path", "load_snapshot",
           "manifest_paths", "publish", "read_header", "read_manifest", "read_pointer",
           "row_group_zonemaps", "row_groups", "snapshot_from", "unpublished_metadata"]

CURRENT_FILE = "current"
#: a snapshot's metadata files: snap-00000007.json, .manifest.parquet, .rowgroups.parquet
SNAP_FILE = re.compile(r"^snap-(\d+)\.")
_SNAPSHOT_CACHE_SIZE = 16
# (header path, inode, mtime) -> Snapshot (snapshot files are immutable, so caching is safe)
_SNAPSHOT_CACHE: "OrderedDict[tuple[str, int, int], Snapshot]" = OrderedDict()


def clear_snapshot_cache(under: str | None = None) -> None:
    """Forget the snapshots this process has read: all of them, or those of the tables
    whose metadata lies under the folder ``under`` (a dropped table)."""
    if under is None:
        _SNAPSHOT_CACHE.clear()
        return
    for key in [k for k in _SNAPSHOT_CACHE if fs.is_under(k[0], under)]:
        _SNAPSHOT_CACHE.pop(key, None)


def read_pointer(info: TableInfo) -> dict:
    """The current-snapshot pointer's JSON object."""
    path = os.path.join(info.metadata_dir, CURRENT_FILE)
    return read_json(path, "current-snapshot pointer",
                     "restore it from a backup, or write {\"id\": \"N\"} naming the last "
                     "good snap-N.json")


def header_path(info: TableInfo, snapshot_id: str) -> str:
    """The header file of snapshot ``snapshot_id`` (SnapshotNotFoundError for a non-number)."""
    sid = str(snapshot_id).strip()
    if not sid.isdigit():
        raise SnapshotNotFoundError(f"table {info.name!r} has no snapshot {snapshot_id!r}")
    return os.path.join(info.metadata_dir, f"snap-{int(sid):08d}.json")


def read_header(info: TableInfo, snapshot_id: str) -> dict:
    """The header of snapshot ``snapshot_id``: SnapshotNotFoundError when there is none,
    DataFileError when it is damaged."""
    path = header_path(info, snapshot_id)
    try:
        return read_json(path, f"header of snapshot {snapshot_id}",
                         f"roll back to an earlier snapshot (`layout-advisor table rollback "
                         f"{info.name} --to ID`) or restore the file from a backup")
    except FileNotFoundError:
        raise SnapshotNotFoundError(
            f"table {info.name!r} has no snapshot {snapshot_id!r}; "
            f"see `layout-advisor table snapshots {info.name}`") from None


def load_snapshot(info: TableInfo, home: Any, snapshot_id: str) -> Snapshot:
    """Snapshot ``snapshot_id`` of the table, from the process cache when read before."""
    path = header_path(info, snapshot_id)
    try:
        stat = os.stat(path)
        key = (path, stat.st_ino, stat.st_mtime_ns)
    except FileNotFoundError:
        read_header(info, snapshot_id)  # raises SnapshotNotFoundError
        raise
    cached = _SNAPSHOT_CACHE.get(key)
    if cached is not None:
        _SNAPSHOT_CACHE.move_to_end(key)
        return cached
    header = read_header(info, snapshot_id)
    snap = _load(info, home, header)
    _SNAPSHOT_CACHE[key] = snap
    while len(_SNAPSHOT_CACHE) > _SNAPSHOT_CACHE_SIZE:
        _SNAPSHOT_CACHE.popitem(last=False)
    return snap


def _load(info: TableInfo, home: Any, header: dict) -> Snapshot:
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
        home, info.name,
        (info.location, info.created_at, header.get("id"), path, stat.st_size, stat.st_ino,
         stat.st_mtime_ns))
    zonemaps = zonemap_cache.load(cached_at, schema)
    try:
        if zonemaps is not None:
            # a partial, not a lambda: the snapshot stays picklable
            return snapshot_from(header, schema, functools.partial(read_manifest, path, header),
                                 zonemaps)
        snap = snapshot_from(header, schema, read_manifest(path, header))
    except (pa.ArrowException, KeyError, TypeError, ValueError) as exc:
        raise DataFileError(f"{path}: the snapshot is damaged ({type(exc).__name__}: {exc}); "
                            "roll back to an earlier snapshot or restore the file from a "
                            "backup") from None
    zonemap_cache.store(cached_at, schema, snap.zonemaps())
    return snap


def read_manifest(path: str, header: dict) -> Any:
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


def snapshot_from(header: dict, schema: TableSchema, table: Any, zonemaps: Any = None) -> Snapshot:
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


def manifest_paths(info: TableInfo, header: dict) -> set[str]:
    """The data files the manifest of ``header`` names."""
    table = pq.read_table(os.path.join(info.metadata_dir, header["manifest"]), columns=["path"])
    return set(table.column("path").to_pylist())


def unpublished_metadata(info: TableInfo, current: str) -> list[str]:
    """Snapshot files numbered above the current snapshot: written by a commit that
    died before its pointer swap, never published (ids only grow, so nothing above the
    pointer was ever current; the caller holds the commit lock, so none is in flight),
    and temporary files a killed writer left."""
    out = []
    for entry in sorted(os.listdir(info.metadata_dir)):
        m = SNAP_FILE.match(entry)
        if (m and int(m.group(1)) > int(current)) or ".tmp-" in entry:
            out.append(os.path.join(info.metadata_dir, entry))
    return out


def publish(info: TableInfo, seq: int, parent: str | None, operation: str,
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
            write_parquet_atomic(os.path.join(mdir, rg_name), manifest.row_groups_table(schema, groups))
            rg_files = {p.path: (rg_name if p.path in groups else None) for p in added}
        else:
            rg_files = {p.path: None for p in added}
    if manifest_file is None:
        table = (manifest.partitions_to_table(schema, partitions, rg_files) if splice is None
                 else manifest.splice(schema, *splice, added, rg_files))
        manifest_file = f"{stem}.manifest.parquet"
        write_parquet_atomic(os.path.join(mdir, manifest_file), table)
    else:  # rollback: the older manifest is immutable and can be shared
        table = pq.read_table(os.path.join(mdir, manifest_file))
    crash_point("mid_commit")
    header = {
        "id": str(seq), "parent": parent, "created_at": iso(utc_now()), "operation": operation,
        "table": info.name, "schema": schema.to_json(), "summary": dict(summary or {}),
        "manifest": manifest_file, "partition_count": table.num_rows,
        "total_rows": int(sum(table.column("rows").to_pylist())),
        "total_bytes": int(sum(table.column("bytes").to_pylist())), "next_seq": int(next_seq),
    }
    write_atomic(os.path.join(mdir, f"{stem}.json"),
                 json.dumps(header, indent=1, default=str).encode())
    crash_point("before_pointer")
    pointer = {"id": str(seq), "header": f"{stem}.json"}
    write_atomic(os.path.join(mdir, CURRENT_FILE), json.dumps(pointer).encode())
    fsync_dir(mdir)
    crash_point("published")
    return snapshot_from(header, schema, table)


def row_groups(info: TableInfo, header: dict,
               paths: Sequence[str] | None = None) -> dict[str, list[dict]]:
    """Row-group statistics of the partitions of snapshot ``header`` (optionally only
    ``paths``), by path."""
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


def row_group_zonemaps(info: TableInfo, header: dict, min_groups: int = 2) -> ZoneMaps | None:
    """Row-group zonemaps (one entry per row group, :func:`manifest.row_groups_to_zonemaps`)
    of the files of snapshot ``header`` holding at least ``min_groups`` row groups; None
    when no file has that many. Read column-wise from the snapshots' ``.rowgroups.parquet``
    files: no Python object per row group."""
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
