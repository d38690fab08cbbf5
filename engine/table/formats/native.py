"""The workspace's own format: the snapshot chain of :mod:`engine.table.store`.

Immutable snapshot files next to the table, published by an atomic rename of a small
pointer (see the store's module docstring). This adapter gives that chain the
:class:`~engine.table.formats.base.TableFormat` interface; the chain's code stays in the
store, which is also the catalog of every table (a cycle the adapter avoids by receiving
the store instead of importing it).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Mapping, Sequence

from engine.table.formats.base import SnapshotInfo, TableFormat
from engine.table.model import Partition, Snapshot

if TYPE_CHECKING:  # the store imports this module: a named cycle, types only
    from engine.table.store import TableStore


class NativeFormat(TableFormat):
    """A native table: ``store``'s snapshot chain for table ``name``."""

    format_name = "native"

    def __init__(self, store: "TableStore", name: str) -> None:
        self.store = store
        self.name = name

    def current_id(self) -> str:
        return self.store.current_id(self.name)

    def current_snapshot(self) -> Snapshot:
        return self.store.current_snapshot(self.name)

    def snapshot(self, snapshot_id: str) -> Snapshot:
        return self.store.snapshot(self.name, snapshot_id)

    def history(self) -> list[SnapshotInfo]:
        """The chain's headers, oldest first. Each header also records the snapshot's file
        and row totals; they join the summary under the names Iceberg's summary gives them
        (``total-data-files``, ``total-records``: what ``api.snapshot_history`` reads as
        ``total_files`` and ``total_rows``). A header without a total leaves it out (blank
        in the history, never a guess)."""
        out = []
        for h in self.store.headers(self.name):
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

    def data_location(self) -> str:
        return self.store.data_root(self.name)

    def commit_rewrite(self, base_snapshot_id: str, removed: Sequence[str],
                       added: Sequence[Partition], properties: Mapping[str, str]) -> Snapshot:
        """The native commit demands that the base still be current (any concurrent commit,
        appends included, is a conflict): the chain has no per-file merge."""
        return self.store.commit(self.name, base_snapshot_id, removed=removed, added=added,
                                 operation="recluster", summary=dict(properties))

    def rollback(self, to_snapshot_id: str, actor: str | None = None) -> Snapshot:
        return self.store.rollback(self.name, to_snapshot_id, actor=actor)

    def expire(self, older_than: dt.timedelta, dry_run: bool = True) -> list[str]:
        return self.store.gc(self.name, older_than, dry_run=dry_run)
