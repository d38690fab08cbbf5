"""The one table interface the engine uses, whatever format stores the table.

Metrics, pruning, planning, the executor, the simulator's real replay and the dashboard
call only this (through :meth:`engine.table.store.TableStore.format`, the catalog that
opens a table in its format); they must not know which format they are on.

Three peer implementations: ``native`` (the workspace's snapshot chain,
:mod:`engine.table.formats.native`), ``iceberg`` (pyiceberg; the embedded default is a SQL catalog on SQLite in the workspace),
``delta`` (deltalake / delta-rs). Each reads partitions and per-column statistics from the
format's own metadata (Iceberg manifests, the Delta log's file statistics), Parquet footers
only where the metadata lacks a column's statistics.

Snapshot ids are strings: the native format's "1", "2", ...; Iceberg's snapshot ids; Delta
versions.
"""

from __future__ import annotations

import datetime as dt
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import (Any, Callable, ClassVar, Hashable, Mapping, Protocol, Sequence,
                    runtime_checkable)

from engine.core.errors import DataFileError
from engine.table.model import Partition, Snapshot, ZoneMaps


@dataclass(frozen=True)
class SnapshotInfo:
    """One entry of a table's history, as the format records it."""

    id: str
    parent: str | None
    created_at: str  # ISO-8601 UTC
    operation: str  # the format's word: create, append, replace/rewrite, overwrite, restore ...
    actor: str | None = None
    summary: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PublishedRewrite:
    """A rewrite the format has committed: its catalog update, log entry or pointer rename
    has returned, so the snapshot ``snapshot_id`` names the new files and nothing may delete
    them any more. ``verify()`` is the check after the commit (the row count read back, the
    new snapshot loaded) and returns the new :class:`Snapshot`; when it raises, the commit
    stands ("committed, verification failed"): the failure is reported, never cleaned up."""

    snapshot_id: str
    verify: Callable[[], Snapshot]


@runtime_checkable
class RewriteGroup(Protocol):
    """What the format layer reads of a plan group when it fits a plan to a table
    (:func:`engine.table.formats.partitioning.prepare_groups`): the files it rewrites, why,
    and its predicted saving (shared out when the group is split). The groups are frozen
    dataclasses (split with :func:`dataclasses.replace`). :class:`engine.policy.base.PlanGroup`
    satisfies it; the policy layer sits above this one, so the fields are named here
    rather than the class imported."""

    @property
    def partitions(self) -> tuple[str, ...]: ...

    @property
    def reason(self) -> str: ...

    @property
    def predicted_saving_bytes(self) -> float: ...


def refuse_merge_on_read(table: str, removed: Sequence[str], reasons: Mapping[str, str],
                         remedy: str) -> None:
    """Raise the one-line refusal when any of ``removed`` has merge-on-read deletes
    (``reasons``: :meth:`TableFormat.merge_on_read`); ``remedy`` names the format's own
    compaction."""
    refused = [p for p in removed if p in reasons]
    if refused:
        raise DataFileError(
            f"table {table!r}: {len(refused)} of the plan's files have merge-on-read deletes, "
            f"e.g. {refused[0]} {reasons[refused[0]]}; the advisor does not rewrite them (that "
            f"would bring deleted rows back): {remedy} and plan again")


class TableFormat(ABC):
    """A table's partitions, history and atomic commits, through its own format.

    ``commit_rewrite`` is the only write the reclustering executor needs: it atomically
    replaces exactly ``removed`` files with ``added`` ones (same rows, new order). It raises
    :class:`engine.core.errors.CommitConflictError` when any removed file is no longer live
    (a concurrent writer deleted or rewrote it); files appended concurrently by others
    survive. A crash at any point leaves the table at its previous snapshot.
    """

    #: "native" | "iceberg" | "delta"
    format_name: ClassVar[str]

    @abstractmethod
    def current_snapshot(self) -> Snapshot:
        """The live snapshot: partitions with rows, bytes and per-column statistics."""

    def current_id(self) -> str:
        """Id of the live snapshot. Staleness checks (plans, the dashboard) ask this often:
        formats override it to read only their pointer (native ``current`` file, Iceberg
        metadata, Delta version) instead of every partition."""
        return self.current_snapshot().id

    @abstractmethod
    def snapshot(self, snapshot_id: str) -> Snapshot:
        """An older snapshot by id (SnapshotNotFoundError if the format no longer has it)."""

    @abstractmethod
    def history(self) -> list[SnapshotInfo]:
        """Every snapshot the format still knows, oldest first."""

    @abstractmethod
    def data_location(self) -> str:
        """Where new data files of a rewrite go (a folder path or URI)."""

    def write_properties(self) -> Mapping[str, str]:
        """The table's own write settings the output model reads (Iceberg table
        properties, Delta configuration); empty when the format keeps none."""
        return {}

    def partition_keys(self, snapshot_id: str | None = None) -> Mapping[str, Hashable]:
        """The partition value of each data file of a snapshot (the current one by
        default), for tables the format partitions: equal keys, same partition (for a
        format with partition evolution: the partition under the current spec, the one
        the rewrite's new files get). Empty for
        unpartitioned tables (the default). Plans are split by it at planning time
        (:func:`engine.table.formats.partitioning.split_groups`)."""
        return {}

    def spec_misfits(self, snapshot_id: str | None = None) -> Mapping[str, str]:
        """Data files of a snapshot (the current one by default) written under an older
        partition spec whose rows a rewrite cannot put into one partition of the current
        spec, with the reason a plan shows. Planning leaves them out; files of an older spec
        that do fit are keyed by their current-spec value (:meth:`partition_keys`). Empty
        by default (formats without partition evolution)."""
        return {}

    def merge_on_read(self, snapshot_id: str | None = None) -> Mapping[str, str]:
        """Data files of a snapshot (the current one by default) whose rows are partly
        deleted by merge-on-read deletes (Iceberg delete files, Delta deletion vectors),
        with the reason a plan shows ("has 3 position delete files"). The advisor does not
        rewrite them (their Parquet rows include deleted ones): planning leaves them out,
        the commit refuses them. Empty by default (the native format has none)."""
        return {}

    @abstractmethod
    def commit_rewrite(self, base_snapshot_id: str, removed: Sequence[str],
                       added: Sequence[Partition], properties: Mapping[str, str]) -> Snapshot:
        """Replace ``removed`` with ``added`` in one atomic commit on top of the current
        snapshot; ``properties`` (plan id, policy, approver) go into the snapshot summary.

        Contract for partitioned tables (what the executor does): no
        group mixes partition values, and ``added`` lists the new files group by group in
        the order the groups' files appear in ``removed``, each group's rows conserved; a
        format whose files do not carry their partition (Delta) derives each new file's
        partition from that order (:func:`~engine.table.formats.partitioning.assign_by_rows`)."""

    def publish_rewrite(self, base_snapshot_id: str, removed: Sequence[str],
                        added: Sequence[Partition],
                        properties: Mapping[str, str]) -> PublishedRewrite:
        """:meth:`commit_rewrite` split at its atomic write: everything up to and including
        the catalog/log/pointer write, returning as soon as that write has returned; the
        checks that follow it are the result's ``verify``. The executor marks a batch
        committed between the two (with SIGINT and SIGTERM deferred across the call:
        :func:`engine.core.signals.deferred_signals`), so a failure or an interrupt after
        the write can never make it delete files the new snapshot names. By default the
        whole :meth:`commit_rewrite` (a format whose commit has nothing after its write)."""
        snap = self.commit_rewrite(base_snapshot_id, removed, added, properties)
        return PublishedRewrite(snap.id, lambda: snap)

    def restored_from(self, info: SnapshotInfo) -> str | None:
        """The older snapshot whose content ``info`` restored (a rollback that publishes a
        new snapshot: the native chain's "rollback", Delta's RESTORE), None for any other
        commit. Iceberg's rollback moves the branch to the older snapshot and publishes
        nothing, so it needs no such step."""
        return None

    def lineage(self) -> list[str]:
        """The ids of the snapshots whose commits the current snapshot's content holds,
        newest first: the parent chain from the current snapshot, following a restoring
        commit (:meth:`restored_from`) to the snapshot it restored instead of its parent.

        This, not the ids' order, tells whether a commit still shows in the data: Iceberg
        snapshot ids are random numbers; a rollback and a roll forward move the current
        snapshot along the commit graph."""
        known = {h.id: h for h in self.history()}
        out: list[str] = []
        seen: set[str] = set()
        sid: str | None = str(self.current_id())
        while sid is not None and sid not in seen:
            seen.add(sid)
            out.append(sid)
            info = known.get(sid)
            if info is None:
                break
            sid = self.restored_from(info) or (None if info.parent is None else str(info.parent))
        return out

    def commit(self, base_snapshot_id: str, removed: Sequence[str], added: Sequence[Partition],
               operation: str, summary: Mapping | None = None) -> Snapshot:
        """Publish a snapshot of operation ``operation`` (recluster, append ...) replacing
        ``removed`` with ``added``: the catalog's commit
        (:meth:`engine.table.store.TableStore.commit`). By default a :meth:`commit_rewrite`
        whose properties are ``operation`` and ``summary``."""
        return self.commit_rewrite(base_snapshot_id, removed, added,
                                   {"operation": operation, **dict(summary or {})})

    def next_seq(self) -> int:
        """The ``created_seq`` the next new partition should get (higher than all so far):
        by default one above the current snapshot's highest."""
        return max((p.created_seq for p in self.current_snapshot().partitions), default=-1) + 1

    def history_records(self) -> list[dict[str, Any]]:
        """:meth:`history` as the records ``table snapshots`` prints (oldest first): id,
        parent, created_at, operation, actor, summary and ``partition_count`` (the summary's
        ``total-data-files``, None when the format does not record it)."""
        return [{"id": h.id, "parent": h.parent, "created_at": h.created_at,
                 "operation": h.operation, "actor": h.actor, "summary": dict(h.summary),
                 "partition_count": _int_or_none(h.summary.get("total-data-files"))}
                for h in self.history()]

    def row_groups(self, snapshot_id: str | None = None,
                   paths: Sequence[str] | None = None) -> dict[str, list[dict]]:
        """Row-group statistics of a snapshot's partitions (optionally only ``paths``), by
        path. Empty by default: the metadata of the open formats keeps file-level
        statistics only."""
        return {}

    def row_group_zonemaps(self, snapshot_id: str | None = None,
                           min_groups: int = 2) -> ZoneMaps | None:
        """Row-group zonemaps of the snapshot's files holding at least ``min_groups`` row
        groups (what ``engine.scan.rowgroups`` prunes with); None by default (file-level
        statistics only) and when no file has that many."""
        return None

    def metadata_orphans(self, cutoff_s: float) -> list[str]:
        """Metadata files of the format that no version of the table names, older than
        ``cutoff_s`` (seconds since the epoch): what gc may delete besides data files
        (:func:`engine.table.formats.gc.collect_foreign`). None by default."""
        return []

    @abstractmethod
    def rollback(self, to_snapshot_id: str, actor: str | None = None) -> Snapshot:
        """Make an older snapshot current again, through the format's own mechanism."""

    @abstractmethod
    def expire(self, older_than: dt.timedelta, dry_run: bool = True) -> list[str]:
        """Files no retained snapshot references, deleted unless ``dry_run``; never the
        output of a run that has not committed yet."""


def _int_or_none(value: Any) -> int | None:
    """``value`` as an int, None when it is none (a total the format did not record).

    >>> _int_or_none("12"), _int_or_none(None), _int_or_none("n/a")
    (12, None, None)
    """
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
