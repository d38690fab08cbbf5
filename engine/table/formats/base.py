"""The one table interface the engine uses, whatever format stores the table.

Agreed interface for the lakehouse issue (16), used by the executor (cost issue 11), the
trust issue (10: gc guards, integrity checks) and the planners (15: zonemaps at scale).
Metrics, pruning, planning, the executor, the simulator's real replay and the dashboard
call only this; they must not know which format they are on.

Three implementations: ``native`` (the workspace's snapshot chain, :mod:`engine.table.store`),
``iceberg`` (pyiceberg; the embedded default is a SQL catalog on SQLite in the workspace),
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
from typing import Any, ClassVar, Hashable, Mapping, Protocol, Sequence, runtime_checkable

from engine.core.errors import DataFileError
from engine.table.model import Partition, Snapshot


@dataclass(frozen=True)
class SnapshotInfo:
    """One entry of a table's history, as the format records it."""

    id: str
    parent: str | None
    created_at: str  # ISO-8601 UTC
    operation: str  # the format's word: create, append, replace/rewrite, overwrite, restore ...
    actor: str | None = None
    summary: Mapping[str, Any] = field(default_factory=dict)


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

        Contract for partitioned tables (added in round 3, what the executor does): no
        group mixes partition values, and ``added`` lists the new files group by group in
        the order the groups' files appear in ``removed``, each group's rows conserved; a
        format whose files do not carry their partition (Delta) derives each new file's
        partition from that order (:func:`~engine.table.formats.partitioning.assign_by_rows`)."""

    @abstractmethod
    def rollback(self, to_snapshot_id: str, actor: str | None = None) -> Snapshot:
        """Make an older snapshot current again, through the format's own mechanism."""

    @abstractmethod
    def expire(self, older_than: dt.timedelta, dry_run: bool = True) -> list[str]:
        """Files no retained snapshot references, deleted unless ``dry_run``; never the
        output of a run that has not committed yet."""
