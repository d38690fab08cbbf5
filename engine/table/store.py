"""The workspace's catalog of tables: one folder per table under ``<home>/tables/``.

Layout of one table (``<home>/tables/<name>/``)::
    table.json      TableInfo: name, format, data location, managed, target size
                    (:mod:`engine.table.info`)
    metadata/       a native table's snapshot chain (:mod:`engine.table.formats.native`);
                    an Iceberg or Delta table keeps its metadata in its own format
    leases/         folders writers are filling, protected from gc (:mod:`engine.table.leases`)
    data/           managed tables: all data files; registered tables: only files the
                    advisor rewrote (the user's dataset is read-only)

:class:`TableStore` lists, creates, registers and drops tables, and opens each in its
format (:meth:`TableStore.format`): ``native``, ``iceberg`` or ``delta``, peers behind
:class:`~engine.table.formats.base.TableFormat`. Its snapshot methods (current snapshot,
history, commit, rollback, gc ...) dispatch to that format, so callers can name a table
instead of holding a format.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import secrets
import shutil
from typing import Any, Iterator, Mapping, Sequence

from engine.core.config import Settings
from engine.core.errors import (DataFileError, InvalidParameterError, TableExistsError,
                                TableNotFoundError)
from engine.table import fs, leases, zonemap_cache
from engine.table.formats import gc
from engine.table.formats.base import TableFormat
from engine.table.formats.native import NativeFormat
from engine.table.formats.native_files import CURRENT_FILE, clear_snapshot_cache
from engine.table.info import TABLE_FILE, TableInfo, WriteTarget, read_info, write_info, write_target
from engine.table.metadata_io import iso, locked, utc_now
from engine.table.model import Partition, Snapshot, TableSchema, ZoneMaps

__all__ = ["TABLE_FILE", "TableInfo", "TableStore", "validate_name"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")


def _iceberg():  # noqa: ANN202 - the module
    """``engine.table.formats.iceberg``, imported on first use: it pulls pyiceberg and
    sqlalchemy (costly at import, bench/planning/README.md), which a native table never
    needs, so ``import engine.api`` stays free of them."""
    from engine.table.formats import iceberg  # lazy: pyiceberg + sqlalchemy import cost

    return iceberg


def _delta():  # noqa: ANN202 - the module
    """``engine.table.formats.delta``, imported on first use: it pulls the deltalake
    bindings (a large native extension), which a native table never needs."""
    from engine.table.formats import delta  # lazy: deltalake import cost

    return delta


def validate_name(name: str) -> str:
    """``name`` if it is a valid table name, else InvalidParameterError.

    >>> validate_name("lineitem")
    'lineitem'
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise InvalidParameterError(
            f"invalid table name {name!r}: use letters, digits, '_' or '-' (start with a letter or '_')")
    return name


class TableStore:
    """Catalog of the workspace's tables, each opened in its format."""

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

    def info(self, name: str) -> TableInfo:
        if not self.exists(name):
            known = sorted(t for t in (os.listdir(self.root) if os.path.isdir(self.root) else [])
                           if _NAME.match(t) and self.exists(t))
            hint = f"; tables are: {', '.join(known)}" if known else "; no tables yet"
            raise TableNotFoundError(f"no table named {name!r} in {self.root}{hint}")
        return read_info(self.table_dir(name))

    # ------------------------------------------------------------------ formats
    def format(self, name: str) -> TableFormat:
        """The table's format: its snapshots, history and commits (engine.table.formats)."""
        return self._open(self.info(name))

    def write_target(self, name: str) -> WriteTarget:
        """The table's own sizes for the files a rewrite writes
        (:func:`engine.table.info.write_target`); what the table does not set is left to
        the output model's input-granularity rule (:mod:`engine.layout.output`)."""
        info = self.info(name)
        return write_target(info, self._open(info).write_properties())

    def _open(self, info: TableInfo) -> TableFormat:
        if info.format == "iceberg":
            catalog = _iceberg().open_catalog(str(self.settings.home), info.catalog)
            return _iceberg().IcebergFormat(info.name, str(info.identifier), catalog)
        if info.format == "delta":
            return _delta().DeltaFormat(info.name, info.location)
        return NativeFormat(info, self.settings.home)

    def _native(self, name: str) -> NativeFormat:
        """The table's snapshot chain in the native format (its headers)."""
        return NativeFormat(self.info(name), self.settings.home)

    # ------------------------------------------------------------------ adding tables
    def register_format(self, name: str, fmt: str, location: str, *, catalog: str | None = None,
                        identifier: str | None = None, managed: bool = False,
                        target_rows: int | None = None) -> TableInfo:
        """Add a table kept in an open format (its metadata stays the format's: only
        ``table.json`` is written to the workspace)."""
        with self._new_table(name) as tdir:
            info = TableInfo(name=name, location=location, metadata_dir=os.path.join(tdir, "metadata"),
                             managed=managed, target_rows=target_rows, target_bytes=None,
                             created_at=iso(utc_now()), format=fmt, catalog=catalog,
                             identifier=identifier)
            os.makedirs(tdir, exist_ok=True)
            write_info(tdir, info)
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

    def create(self, name: str, *, schema: TableSchema, partitions: Sequence[Partition],
               operation: str, location: str | None = None, managed: bool = True,
               target_rows: int | None = None, target_bytes: int | None = None,
               summary: Mapping | None = None) -> Snapshot:
        """Create native table ``name`` with its first snapshot (id "1"): used by ingest
        and register."""
        with self._new_table(name) as tdir:
            mdir = os.path.join(tdir, "metadata")
            os.makedirs(mdir, exist_ok=True)
            for stale in os.listdir(mdir):  # leftovers of an earlier failed create
                if stale.startswith("snap-") or stale == CURRENT_FILE:
                    os.remove(os.path.join(mdir, stale))
            info = TableInfo(
                name=name, location=fs.normalize(location) if location else self.managed_location(name),
                metadata_dir=mdir, managed=managed, target_rows=target_rows,
                target_bytes=target_bytes, created_at=iso(utc_now()))
            write_info(tdir, info)
            return NativeFormat(info, self.settings.home).create(schema, partitions, operation,
                                                                 summary)

    @contextlib.contextmanager
    def _new_table(self, name: str) -> Iterator[str]:
        """The folder of table ``name``, about to be created, under the workspace lock (so
        two processes cannot both create it); a name in use is refused."""
        validate_name(name)
        os.makedirs(self.root, exist_ok=True)
        with locked(self.root):
            if self.exists(name):
                raise TableExistsError(f"table {name!r} already exists (drop it or pick another name)")
            yield self.table_dir(name)

    # ------------------------------------------------------------------ writers' folders
    def data_root(self, name: str) -> str:
        """Where writers put files for ``name`` (a table being created gets its managed root;
        a table in an open format, the format's data location)."""
        if not self.exists(name):
            return self.managed_location(name)
        return self.format(name).data_location()

    def new_data_dir(self, name: str, purpose: str) -> str:
        """A fresh, unique, existing directory under the table's data root.

        Nothing references it until a commit does, so a failed writer just deletes it; it
        is leased to this process (:mod:`engine.table.leases`), so gc leaves it alone while
        the writer lives, whatever the retention, and removes what a crashed writer left.
        Its name matches :data:`engine.table.formats.gc.RUN_DIR`.
        """
        tag = re.sub(r"[^A-Za-z0-9_-]+", "-", purpose).strip("-") or "data"
        stamp = utc_now().strftime("%Y%m%dT%H%M%S")
        path = fs.join(self.data_root(name), f"{tag}-{stamp}-{secrets.token_hex(4)}")
        leases.take(self.table_dir(name), path)  # before the folder exists (see leases)
        fs.makedirs(path)
        return path

    # ------------------------------------------------------------------ snapshots, by format
    def current_id(self, name: str) -> str:
        """Id of the current snapshot (the format reads only its pointer)."""
        return self.format(name).current_id()

    def current_snapshot(self, name: str) -> Snapshot:
        return self.format(name).current_snapshot()

    def snapshot(self, name: str, snapshot_id: str) -> Snapshot:
        fmt = self.format(name)
        # the native chain names the id as given in its errors; the others take a string
        return fmt.snapshot(snapshot_id if isinstance(fmt, NativeFormat) else str(snapshot_id))

    def history(self, name: str) -> list[dict]:
        """The published snapshots, oldest first (``partition_count`` for native tables;
        ``actor`` and ``summary`` as the format records them for the others)."""
        return self.format(name).history_records()

    def headers(self, name: str) -> list[dict]:
        """A native table's published snapshot headers, oldest first (each read once): id,
        parent, time, operation, summary, ``partition_count``, ``total_rows`` ..."""
        return self._native(name).headers()

    def snapshot_summary(self, name: str, snapshot_id: str) -> Mapping[str, Any]:
        """The summary a native snapshot's header records (plan id, policy, actor ...)."""
        return self._native(name).snapshot_summary(snapshot_id)

    def next_seq(self, name: str) -> int:
        """The ``created_seq`` the next new partition should get (higher than all so far)."""
        return self.format(name).next_seq()

    def row_groups(self, name: str, snapshot_id: str | None = None,
                   paths: Sequence[str] | None = None) -> dict[str, list[dict]]:
        """Row-group statistics of a snapshot's partitions (optionally only ``paths``);
        none for open formats, whose metadata keeps file-level statistics only."""
        return self.format(name).row_groups(snapshot_id, paths)

    def row_group_zonemaps(self, name: str, snapshot_id: str | None = None,
                           min_groups: int = 2) -> "ZoneMaps | None":
        """Row-group zonemaps of the snapshot's files holding at least ``min_groups`` row
        groups: what row-group pruning (``engine.scan.rowgroups``) reads. None for open
        formats (their metadata keeps file-level statistics only) and when no file has
        that many."""
        return self.format(name).row_group_zonemaps(snapshot_id, min_groups)

    def commit(self, name: str, base_snapshot_id: str, removed: Sequence[str],
               added: Sequence[Partition], operation: str,
               summary: Mapping | None = None) -> Snapshot:
        """Publish a snapshot that replaces ``removed`` paths of the base with ``added``
        (:meth:`TableFormat.commit`; an open-format table commits through ``commit_rewrite``)."""
        return self.format(name).commit(base_snapshot_id, removed, added, operation, summary)

    def rollback(self, name: str, to_snapshot_id: str, actor: str | None = None) -> Snapshot:
        """Make an older snapshot current again, through the table's format (the native
        chain publishes a new snapshot, operation "rollback", equal to the older one)."""
        fmt = self.format(name)
        target = to_snapshot_id if isinstance(fmt, NativeFormat) else str(to_snapshot_id)
        return fmt.rollback(target, actor=actor)

    # ------------------------------------------------------------------ cleanup
    def gc(self, name: str, older_than: dt.timedelta, dry_run: bool = False) -> list[str]:
        """Delete files that no retained snapshot references; returns their paths. A native
        table expires its own chain (:meth:`NativeFormat.expire`); an Iceberg or Delta
        table, the format's expiry plus orphans
        (:func:`engine.table.formats.gc.collect_foreign`).
        Never a live writer's files, whatever the retention (:mod:`engine.table.leases`)."""
        gc.check_retention(older_than)
        fmt = self.format(name)
        if isinstance(fmt, NativeFormat):
            return fmt.expire(older_than, dry_run=dry_run)
        return gc.collect_foreign(fmt, self.table_dir(name), older_than, dry_run)

    def drop(self, name: str) -> None:
        """Forget a table. Managed: its data goes too (a managed Iceberg table is dropped
        from the workspace catalog). Registered: the user's files and catalog entry stay."""
        info = self.info(name)
        with locked(self.root):
            tdir = self.table_dir(name)
            if info.managed and info.format == "iceberg":
                catalog = _iceberg().open_catalog(str(self.settings.home), info.catalog)
                with contextlib.suppress(Exception):  # already gone: nothing to drop
                    catalog.drop_table(str(info.identifier))
                fs.delete_dir(info.location)
            elif info.managed and not fs.is_under(info.location, tdir):
                fs.delete_dir(info.location)
            shutil.rmtree(tdir, ignore_errors=True)
        clear_snapshot_cache(tdir)
        zonemap_cache.forget(self.settings.home, name)
