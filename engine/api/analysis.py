"""Analysis: clustering metrics per column, EP-file metrics, pruning per query, the stored
per-snapshot summaries, their history, and the dashboard's paged read models.

Metadata only (zonemaps of a snapshot, the stored workload): no Spark, answers in about a
second, except ``pruning(..., exact=True)`` which makes one Spark pass over the data. The
computations are :mod:`engine.summaries` (analysis, the stored summaries, history) and
:mod:`engine.browse` (pages of partitions and queries).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from engine.api.results import ColumnClustering
from engine.browse import partitions, queries
from engine.browse.partitions import EP_FILES_SHOWN, PARTITION_SORT_KEYS, partition_page
from engine.browse.queries import QUERY_SORT_KEYS, find_queries, histogram_bins, query_page
from engine.summaries import analysis, history, store
from engine.summaries.analysis import signature_projection
from engine.summaries.store import PARTITION_ARRAYS, SUMMARY_VERSION
from engine.scan import units
from engine.scan.units import CountUnit
from engine.workspace import as_workspace, on_workspace

if TYPE_CHECKING:
    from engine.workspace import Workspace

__all__ = ["analyze", "analyze_with_arrays", "predicate_partitions", "ep_metrics", "pruning",
           "iter_pruning", "column_clustering", "pruning_scans", "span_shares", "fragment_scan",
           "ep_files_holding", "signature_projection",
           "SUMMARY_VERSION", "PARTITION_ARRAYS", "column_summaries", "column_partition_arrays",
           "stored_column_clustering", "pruning_summary", "warm_summaries",
           "clustering_trend", "reclustering_history", "snapshot_history",
           "PARTITION_SORT_KEYS", "EP_FILES_SHOWN", "partition_page", "ep_overview",
           "partition_details",
           "QUERY_SORT_KEYS", "query_page", "find_queries", "histogram_bins", "query_scan",
           "pruning_unit", "CountUnit"]

analyze_with_arrays = on_workspace(analysis.analyze_with_arrays)
predicate_partitions = on_workspace(analysis.predicate_partitions)
ep_metrics = on_workspace(analysis.ep_metrics)
pruning = on_workspace(analysis.pruning)
iter_pruning = on_workspace(analysis.iter_pruning)
pruning_scans = on_workspace(analysis.pruning_scans)
span_shares = on_workspace(analysis.span_shares)
fragment_scan = on_workspace(analysis.fragment_scan)
ep_files_holding = on_workspace(analysis.ep_files_holding)

column_summaries = on_workspace(store.column_summaries)
column_partition_arrays = on_workspace(store.column_partition_arrays)
pruning_summary = on_workspace(store.pruning_summary)
warm_summaries = on_workspace(store.warm_summaries)

clustering_trend = on_workspace(history.clustering_trend)
reclustering_history = on_workspace(history.reclustering_history)
snapshot_history = on_workspace(history.snapshot_history)

ep_overview = on_workspace(partitions.ep_overview)
partition_details = on_workspace(partitions.partition_details)
query_scan = on_workspace(queries.query_scan)


def pruning_unit(ws: "Workspace", table: str, snapshot_id: str | None = None,
                 row_groups: bool | None = None) -> CountUnit:
    """The unit :func:`pruning`'s figures count over a snapshot (the current one by
    default), at the level ``row_groups`` asks (default the ``prune_row_groups`` setting):
    files, charged by the row groups met where files hold several at row-group level;
    ``label()`` is the one line every view shows beside them (:mod:`engine.scan.units`)."""
    ws = as_workspace(ws)
    return units.pruning_unit(ws.tables, table,
                              lambda: analysis.snapshot_of(ws, table, snapshot_id), row_groups)


def analyze(ws: "Workspace", table: str, columns: Sequence[str] | str | None = None,
            snapshot_id: str | None = None, ep_file_partitions: int | None = None,
            max_segments: int = analysis.MAX_PROFILE_SEGMENTS,
            where: str | None = None) -> list[ColumnClustering]:
    """Each column's clustering metrics (:func:`engine.summaries.analysis.analyze`): all
    orderable columns by default; with ``ep_file_partitions`` also the EP-file summary,
    with ``where`` only the partitions a SQL predicate may touch."""
    rows = analysis.analyze(as_workspace(ws), table, columns, snapshot_id, ep_file_partitions,
                            max_segments, where)
    return [ColumnClustering.from_json(row) for row in rows]


def column_clustering(ws: "Workspace", table: str, column: str, snapshot_id: str | None = None,
                      max_segments: int = analysis.MAX_PROFILE_SEGMENTS,
                      partition_lists: bool = True) -> ColumnClustering:
    """One column's metrics with its per-partition arrays as lists
    (:func:`engine.summaries.analysis.column_clustering`)."""
    return ColumnClustering.from_json(analysis.column_clustering(
        as_workspace(ws), table, column, snapshot_id, max_segments, partition_lists))


def stored_column_clustering(ws: "Workspace", table: str, column: str,
                             snapshot_id: str | None = None) -> ColumnClustering:
    """One column's metrics from the stored summary, with ``span_share`` and its
    per-partition arrays as numpy (:func:`engine.summaries.store.stored_column_clustering`)."""
    return ColumnClustering.from_json(store.stored_column_clustering(
        as_workspace(ws), table, column, snapshot_id))
