"""The workspace's own format: a chain of immutable snapshots, published by a pointer swap.

A peer of :mod:`~engine.table.formats.iceberg` and :mod:`~engine.table.formats.delta`
behind :class:`~engine.table.formats.base.TableFormat`. Each snapshot is a header, a
manifest (one row per partition, typed zonemaps) and the row-group statistics of the files
it added (:mod:`engine.table.formats.native_files`); the ``current`` pointer names the live
one and is replaced atomically under the table's commit lock. Files are written once and
never changed, so a reader holding an old :class:`~engine.table.model.Snapshot` (or its
id) is never disturbed by a commit; data files disappear only through
:meth:`NativeFormat.expire`, which keeps everything a retained snapshot references
(:mod:`engine.table.formats.gc`).
Snapshot ids are the decimal sequence numbers "1", "2", ...: each commit gets its
parent's number plus one, so ids are short enough to type (``table rollback lineitem --to 3``).
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from engine.core.errors import CommitConflictError, DataFileError, SnapshotNotFoundError
from engine.table import fs, leases
from engine.table.formats import gc, native_files
from engine.table.formats.base import SnapshotInfo, TableFormat
from engine.table.info import TableInfo
from engine.table.metadata_io import locked, parse_time, utc_now
from engine.table.model import Partition, Snapshot, TableSchema, ZoneMaps

__all__ = ["NativeFormat", "check_files"]


class NativeFormat(TableFormat):
    """The snapshot chain of the native table ``info``; ``home`` is the workspace's home
    (its zonemap cache, :mod:`engine.table.zonemap_cache`)."""

    format_name = "native"

    def __init__(self, info: TableInfo, home: Any) -> None:
        self.info = info
        self.home = home

    @property
    def name(self) -> str:
        return self.info.name

    # ------------------------------------------------------------------ reading
    def current_id(self) -> str:
        """Id of the current snapshot (reads only the small pointer file)."""
        pointer = native_files.read_pointer(self.info)
        if "id" not in pointer:
            raise DataFileError(f"table {self.name!r}: the current-snapshot pointer is damaged (no "
                                "id); restore metadata/current from a backup")
        return str(pointer["id"])

    def current_snapshot(self) -> Snapshot:
        return self.snapshot(self.current_id())

    def snapshot(self, snapshot_id: str) -> Snapshot:
        return native_files.load_snapshot(self.info, self.home, snapshot_id)

    def header(self, snapshot_id: str) -> dict:
        """The header snapshot ``snapshot_id`` was published with: id, parent, time,
        operation, schema, summary, manifest, totals, ``next_seq``."""
        return native_files.read_header(self.info, snapshot_id)

    def _chain(self) -> list[dict]:
        """Headers from the current snapshot back to the first (newest first)."""
        out, sid = [], self.current_id()
        while sid is not None:
            header = self.header(sid)
            out.append(header)
            sid = header.get("parent")
        return out

    def headers(self) -> list[dict]:
        """The published snapshot headers, oldest first (each read once): id, parent,
        time, operation, summary, ``partition_count``, ``total_rows`` ..."""
        return list(reversed(self._chain()))

    def history(self) -> list[SnapshotInfo]:
        """The chain's headers, oldest first. Each header also records the snapshot's file
        and row totals; they join the summary under the names Iceberg's summary gives them
        (``total-data-files``, ``total-records``: what ``api.snapshot_history`` reads as
        ``total_files`` and ``total_rows``). A header without a total leaves it out (blank
        in the history, never a guess)."""
        out = []
        for h in self.headers():
            summary = dict(h.get("summary") or {})
            totals = {"total-data-files": h.get("partition_count"),
                      "total-records": h.get("total_rows")}
            summary.update({k: v for k, v in totals.items()
                            if v is not None and k not in summary})
            out.append(SnapshotInfo(id=str(h["id"]), parent=h.get("parent"),
                                    created_at=h["created_at"],
                                    operation=h["operation"], actor=summary.get("actor"),
                                    summary=summary))
        return out

    def history_records(self) -> list[dict[str, Any]]:
        """The published snapshots, oldest first: id, parent, created_at, operation and
        ``partition_count``."""
        return [{"id": str(h["id"]), "parent": h.get("parent"), "created_at": h["created_at"],
                 "operation": h["operation"], "partition_count": int(h["partition_count"])}
                for h in self.headers()]

    def snapshot_summary(self, snapshot_id: str) -> Mapping[str, Any]:
        """The summary a snapshot's header records (plan id, policy, actor ...)."""
        return dict(self.header(snapshot_id).get("summary") or {})

    def next_seq(self) -> int:
        return int(self.header(self.current_id())["next_seq"])

    def data_location(self) -> str:
        return self.info.data_root

    def row_groups(self, snapshot_id: str | None = None,
                   paths: Sequence[str] | None = None) -> dict[str, list[dict]]:
        header = self.header(snapshot_id or self.current_id())
        return native_files.row_groups(self.info, header, paths)

    def row_group_zonemaps(self, snapshot_id: str | None = None,
                           min_groups: int = 2) -> ZoneMaps | None:
        header = self.header(snapshot_id or self.current_id())
        return native_files.row_group_zonemaps(self.info, header, min_groups)

    # ------------------------------------------------------------------ writing
    def create(self, schema: TableSchema, partitions: Sequence[Partition], operation: str,
               summary: Mapping | None = None) -> Snapshot:
        """Publish the first snapshot (id "1") of a table whose ``table.json`` the catalog
        has just written (:meth:`engine.table.store.TableStore.create`)."""
        next_seq = max((p.created_seq for p in partitions), default=-1) + 1
        with locked(self.info.metadata_dir):
            return native_files.publish(self.info, 1, None, operation, schema, partitions,
                                        partitions, summary, next_seq)

    def commit(self, base_snapshot_id: str, removed: Sequence[str], added: Sequence[Partition],
               operation: str, summary: Mapping | None = None) -> Snapshot:
        """Publish a snapshot that replaces ``removed`` paths of the base with ``added``.

        The base must still be current (any concurrent commit, appends included, is a
        conflict). Added partitions take the slot of the first removed one (appended when
        nothing is removed), so the table's order changes as little as possible. They get
        fresh ``created_seq`` numbers above every earlier partition unless they already
        have them.
        """
        info, name = self.info, self.name
        with locked(info.metadata_dir):
            current = self.current_id()
            if str(base_snapshot_id) != current:
                raise CommitConflictError(
                    f"table {name!r} changed: the change was based on snapshot {base_snapshot_id} "
                    f"but the current snapshot is {current}")
            base_header = self.header(current)
            schema = self.snapshot(current).schema  # a damaged base named in one line
            removed_set = {fs.normalize(p) if not fs.is_uri(p) else p for p in removed}
            if len(removed_set) != len(removed):
                raise CommitConflictError("the same partition is removed twice")
            # columnar over the base manifest, which the new one is taken from: a walk over
            # the base's Partition objects is linear in Python objects (bench/planning/README.md)
            base_table = native_files.read_manifest(
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
            check_files(added)
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
            return native_files.publish(info, int(current) + 1, current, operation, schema,
                                        (), added, summary, next_seq, splice=(base_table, gone))

    def commit_rewrite(self, base_snapshot_id: str, removed: Sequence[str],
                       added: Sequence[Partition], properties: Mapping[str, str]) -> Snapshot:
        """A :meth:`commit` of operation "recluster": the chain has no per-file merge."""
        return self.commit(base_snapshot_id, removed=removed, added=added,
                           operation="recluster", summary=dict(properties))

    def rollback(self, to_snapshot_id: str, actor: str | None = None) -> Snapshot:
        """Publish a new snapshot (operation "rollback") equal to an older one of the chain,
        sharing its manifest; refused when gc removed any of its files."""
        info, name = self.info, self.name
        with locked(info.metadata_dir):
            current = self.current_id()
            chain_ids = [str(h["id"]) for h in self._chain()]
            target_id = str(to_snapshot_id).strip()
            if target_id not in chain_ids:
                raise SnapshotNotFoundError(
                    f"table {name!r} has no snapshot {to_snapshot_id!r}; "
                    f"see `layout-advisor table snapshots {name}`")
            target_header = self.header(target_id)
            target = self.snapshot(target_id)
            # the paths from the zonemap arrays: walking target.partitions made a Partition
            # per file and, on a zonemap-cache hit, read the manifest the publish below shares
            gone = [p for p in target.zonemaps().paths.tolist() if not fs.exists(p)]
            if gone:
                raise DataFileError(
                    f"snapshot {target_id} of {name!r} cannot be restored: {len(gone)} of its files "
                    f"were removed (by gc?), e.g. {gone[0]}")
            next_seq = int(self.header(current)["next_seq"])
            summary = {"rolled_back_to": target_id, "rolled_back_from": current}
            if actor:
                summary["actor"] = actor
            return native_files.publish(info, int(current) + 1, current, "rollback",
                                        target.schema, target.partitions, [], summary, next_seq,
                                        manifest_file=target_header["manifest"])

    def restored_from(self, info: SnapshotInfo) -> str | None:
        """The snapshot a "rollback" snapshot equals (its summary's ``rolled_back_to``)."""
        if info.operation != "rollback":
            return None
        target = info.summary.get("rolled_back_to")
        return None if target is None else str(target)

    # ------------------------------------------------------------------ cleanup
    def expire(self, older_than: dt.timedelta, dry_run: bool = True) -> list[str]:
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
        gc.check_retention(older_than)
        info = self.info
        with locked(info.metadata_dir):
            cutoff = utc_now() - older_than
            chain = self._chain()  # newest first
            referenced, formerly = self._referenced(chain, cutoff)
            root = info.data_root
            protected = [] if info.managed else [fs.normalize(info.location)]
            doomed = native_files.unpublished_metadata(info, str(chain[0]["id"]))
            found = fs.list_files(root, include_hidden=True) if fs.exists(root) else []
            live = gc.live_leases(info.table_dir, dry_run)  # after listing: see leases
            doomed += [p for p in found
                       if p not in referenced and not any(fs.is_under(p, q) for q in protected)
                       and (p in formerly or (fs.mtime(p) < cutoff.timestamp() and not any(
                           leases.covers(fs.normalize(q), p) for q in live)))]
            if not dry_run:
                gc.delete_all(doomed)
                if found and not fs.is_uri(root):
                    gc.remove_empty_dirs(root, cutoff.timestamp(), keep=live)
            return doomed

    def _referenced(self, chain: Sequence[dict], cutoff: dt.datetime) -> tuple[set[str], set[str]]:
        """(files of retained snapshots, files only expired snapshots name). Retained: the
        current snapshot and every one still current at some moment after ``cutoff``; a
        registered table's first snapshot (the user's own files) never expires."""
        retained, expired = [chain[0]], []
        for newer, older in zip(chain, chain[1:]):
            (retained if parse_time(newer["created_at"]) >= cutoff else expired).append(older)
        referenced: set[str] = set()
        for header in retained:
            referenced |= native_files.manifest_paths(self.info, header)
        formerly: set[str] = set()
        for header in expired:
            formerly |= native_files.manifest_paths(self.info, header)
        formerly -= referenced
        if not self.info.managed:
            formerly -= native_files.manifest_paths(self.info, chain[-1])
        return referenced, formerly


def check_files(added: Sequence[Partition]) -> None:
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


def _with_seq(p: Partition, seq: int) -> Partition:
    return Partition(p.path, p.rows, p.bytes, p.columns, seq)
