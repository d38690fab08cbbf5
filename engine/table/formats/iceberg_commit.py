"""The Iceberg rewrite commit without re-reading what the advisor already read.

A rewrite's commit is one pyiceberg overwrite (delete the plan's DataFiles, append the new
ones). Measured at 100 files on a table with 100 snapshots and 100 manifests
(bench/formats/README.md), pyiceberg 0.12 spends most of that commit on work whose inputs
the advisor holds already:

* ``Transaction.table_metadata`` re-applies the staged updates and deep-copies the whole
  table metadata on every read (about 20 reads per overwrite, 46 ms each at 100 snapshots):
  :class:`MemoTransaction` computes it once per (metadata, staged updates) pair; pyiceberg's
  metadata models are frozen, so one copy serves every read.
* the overwrite reads every manifest of the parent snapshot twice (``_existing_manifests``
  and ``_deleted_entries``), although loading the snapshot read them all a moment ago:
  :class:`CachedOverwrite` takes the entries from :data:`ENTRIES`, the manifests the
  snapshot's loading read (a manifest file is immutable, so its path is its identity), and
  reads only the ones it does not hold.

Both subclass pyiceberg 0.12 classes (the dependency is pinned ``<0.13``);
:class:`CachedOverwrite` keeps ``_OverwriteFiles``'s semantics line for line (manifests
without deleted entries kept, manifests entirely deleted dropped, the others rewritten
with their remaining entries as EXISTING; a required delete that is not live fails with
pyiceberg's ``ValidationException``), minus the partition-evaluator shortcut that only
saved reads.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from typing import Any, Sequence

from pyiceberg.io import FileIO
from pyiceberg.manifest import (DataFileContent, ManifestEntry, ManifestEntryStatus,
                                ManifestFile)
from pyiceberg.table import Transaction
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.snapshots import Operation
from pyiceberg.table.update.snapshot import _OverwriteFiles

#: manifest path -> its live entries; at most ENTRY_LIMIT entries are held
ENTRIES: "OrderedDict[str, list[ManifestEntry]]" = OrderedDict()
ENTRY_LIMIT = 2_000_000
_held = [0]


def remember_entries(manifest: ManifestFile, entries: Sequence[ManifestEntry]) -> None:
    """Keep ``manifest``'s live entries (as ``fetch_manifest_entry(discard_deleted=True)``
    returned them) for the next commit."""
    path = manifest.manifest_path
    if path in ENTRIES:
        ENTRIES.move_to_end(path)
        return
    ENTRIES[path] = list(entries)
    _held[0] += len(entries)
    while _held[0] > ENTRY_LIMIT and len(ENTRIES) > 1:
        _, dropped = ENTRIES.popitem(last=False)
        _held[0] -= len(dropped)


def live_entries(manifest: ManifestFile, io: FileIO) -> list[ManifestEntry]:
    """``manifest``'s live entries, from :data:`ENTRIES` or read (and then remembered)."""
    hit = ENTRIES.get(manifest.manifest_path)
    if hit is not None:
        return hit
    entries = manifest.fetch_manifest_entry(io=io, discard_deleted=True)
    remember_entries(manifest, entries)
    return entries


class MemoTransaction(Transaction):
    """pyiceberg's transaction, its table metadata computed once per staged-update set."""

    @property
    def table_metadata(self) -> TableMetadata:
        memo = self.__dict__.get("_la_memo")
        if memo is None or memo[0] is not self._table.metadata or memo[1] is not self._updates:
            memo = (self._table.metadata, self._updates, super().table_metadata)
            self.__dict__["_la_memo"] = memo
        return memo[2]


class CachedOverwrite(_OverwriteFiles):
    """pyiceberg's overwrite, reading the parent snapshot's manifests from :data:`ENTRIES`."""

    def _parent_manifests(self) -> list[ManifestFile]:
        if self._parent_snapshot_id is None:
            return []
        parent = self._transaction.table_metadata.snapshot_by_id(self._parent_snapshot_id)
        return parent.manifests(io=self._io) if parent is not None else []

    def _existing_manifests(self) -> list[ManifestFile]:
        kept: list[ManifestFile] = []
        for manifest in self._parent_manifests():
            entries = live_entries(manifest, self._io)
            remaining = [e for e in entries if e.data_file not in self._deleted_data_files]
            if len(remaining) == len(entries):
                kept.append(manifest)
            elif remaining:
                with self.new_manifest_writer(self.spec(manifest.partition_spec_id)) as writer:
                    for e in remaining:
                        writer.add_entry(ManifestEntry.from_args(
                            status=ManifestEntryStatus.EXISTING, snapshot_id=e.snapshot_id,
                            sequence_number=e.sequence_number,
                            file_sequence_number=e.file_sequence_number, data_file=e.data_file))
                kept.append(writer.to_manifest_file())
        return kept

    def _deleted_entries(self) -> list[ManifestEntry]:
        deleted = [
            ManifestEntry.from_args(status=ManifestEntryStatus.DELETED, snapshot_id=self._snapshot_id,
                                    sequence_number=e.sequence_number,
                                    file_sequence_number=e.file_sequence_number,
                                    data_file=e.data_file)
            for e in itertools.chain.from_iterable(
                live_entries(m, self._io) for m in self._parent_manifests())
            if e.data_file.content == DataFileContent.DATA and e.data_file in self._deleted_data_files]
        self._validate_required_deletes(deleted)
        return deleted


def overwrite(tx: Transaction, io: FileIO, properties: dict[str, Any]) -> CachedOverwrite:
    """The rewrite's snapshot producer on ``tx`` (an overwrite of the main branch)."""
    has_head = tx.table_metadata.current_snapshot() is not None
    return CachedOverwrite(operation=Operation.OVERWRITE if has_head else Operation.APPEND,
                           transaction=tx, io=io, snapshot_properties=properties)
