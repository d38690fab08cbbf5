"""Analysis façade: clustering metrics per column, EP-file metrics, pruning per query.

Metadata only (zonemaps of a snapshot, the stored workload): no Spark, answers in about a
second, except ``pruning(..., exact=True)`` which makes one Spark pass over the data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from engine.core.errors import InvalidParameterError
from engine.metrics import profile as _profile
from engine.metrics.ep import ep_files, ep_metrics_json
from engine.metrics.overlap import column_clustering as _column_clustering

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from engine.core.config import Settings
    from engine.table.model import Snapshot

__all__ = ["analyze", "ep_metrics", "pruning", "column_clustering", "pruning_scans"]

#: longest depth profile returned as JSON (coarsened beyond, keeping each bucket's peak)
MAX_PROFILE_SEGMENTS = 2000


def _snapshot(settings: "Settings", table: str, snapshot_id: str | None) -> "Snapshot":
    from engine.table.store import TableStore

    store = TableStore(settings)
    if snapshot_id is None:
        return store.current_snapshot(table)
    return store.snapshot(table, str(snapshot_id))


def _columns(snapshot: "Snapshot", columns: Sequence[str] | str | None) -> list[str]:
    """Resolve user-given column names (case-insensitive); default: all orderable columns."""
    if columns is None:
        return snapshot.schema.orderable()
    if isinstance(columns, str):
        columns = [c.strip() for c in columns.split(",") if c.strip()]
    if not columns:
        raise InvalidParameterError("no column given (use --columns a,b)")
    return [snapshot.schema.resolve(c) for c in columns]


def analyze(settings: "Settings", table: str, columns: Sequence[str] | str | None = None,
            snapshot_id: str | None = None, ep_file_partitions: int | None = None,
            max_segments: int = MAX_PROFILE_SEGMENTS) -> list[dict[str, Any]]:
    """One object per column: the Snowflake-style fields (``total_partition_count``,
    ``total_constant_partition_count``, ``average_overlaps``, ``average_depth``,
    ``partition_depth_histogram``), ``depth_profile`` as ``[[start, end, depth], ...]``,
    ``deepest_ranges``, ``unknown_partition_count``, a traffic-light ``verdict`` with its
    ``reason``; with ``ep_file_partitions`` also an ``ep`` summary (patent metrics)."""
    snap = _snapshot(settings, table, snapshot_id)
    zm = snap.zonemaps()
    out = []
    for column in _columns(snap, columns):
        data = _column_clustering(zm, column).to_json(max_segments=max_segments)
        data["snapshot"] = snap.id
        if ep_file_partitions:
            ep = ep_metrics_json(ep_files(zm, column, int(ep_file_partitions)), max_subranges=0)
            data["ep"] = {k: ep[k] for k in ("ep_file_partitions", "ep_file_count",
                                             "average_local_depth", "average_ep_overlap",
                                             "average_ep_depth", "subrange_count",
                                             "deepest_subrange")}
        out.append(data)
    return out


def ep_metrics(settings: "Settings", table: str, column: str,
               ep_file_partitions: int | None = None, snapshot_id: str | None = None,
               max_subranges: int = MAX_PROFILE_SEGMENTS) -> dict[str, Any]:
    """The patent's EP-file metrics of one column: per EP file (partition count, region,
    average local depth, EP-level overlap and depth), the sub-ranges with their total
    average depth, and the deepest sub-range with the EP files covering it."""
    snap = _snapshot(settings, table, snapshot_id)
    col = snap.schema.resolve(column)
    n = int(ep_file_partitions or settings.ep_file_partitions)
    data = ep_metrics_json(ep_files(snap.zonemaps(), col, n), max_subranges=max_subranges)
    data["snapshot"] = snap.id
    return data


def column_clustering(settings: "Settings", table: str, column: str,
                      snapshot_id: str | None = None,
                      max_segments: int = MAX_PROFILE_SEGMENTS) -> dict[str, Any]:
    """Everything the dashboard draws for one column: the summary of :func:`analyze` plus
    per-partition arrays in snapshot order (``paths``, ``rows``, ``bytes``, decoded ``min``
    and ``max``, ``overlaps``, ``depths``, ``constant``; -1 / None where unknown)."""
    snap = _snapshot(settings, table, snapshot_id)
    col = snap.schema.resolve(column)
    zm = snap.zonemaps()
    c = _column_clustering(zm, col)
    data = c.to_json(max_segments=max_segments, per_partition=True)
    czm = zm.column(col)
    valid = np.asarray(czm.valid, dtype=bool)
    data.update({
        "snapshot": snap.id,
        "paths": [str(p) for p in zm.paths],
        "rows": zm.rows.tolist(),
        "bytes": zm.bytes.tolist(),
        "created_seq": zm.created_seq.tolist(),
        "min": [_profile.decode_value(c.ltype, v) if ok else None for v, ok in zip(czm.lo, valid)],
        "max": [_profile.decode_value(c.ltype, v) if ok else None for v, ok in zip(czm.hi, valid)],
        "constant": c.constant.tolist(),
    })
    return data


def pruning_scans(settings: "Settings", table: str, exact: bool = False,
                  snapshot_id: str | None = None, spark: "SparkSession | None" = None):
    """(snapshot, fragments, FragmentScans) of the table's stored workload."""
    from engine.scan.pruning import analyze_workload
    from engine.workload.store import WorkloadStore

    snap = _snapshot(settings, table, snapshot_id)
    fragments = list(WorkloadStore(settings).fragments(snap.table or table))
    if exact and fragments:
        from engine.spark.exact import exact_scans

        if spark is None:
            from engine.spark.session import get_spark

            spark = get_spark(settings)
        scans = exact_scans(spark, snap, fragments)
    else:
        scans = analyze_workload(snap.zonemaps(), fragments)
    return snap, fragments, scans


def pruning(settings: "Settings", table: str, exact: bool = False,
            snapshot_id: str | None = None, per_partition: bool = False,
            spark: "SparkSession | None" = None) -> list[dict[str, Any]]:
    """One object per scan fragment of the stored workload: ``query_id``, ``ts``,
    ``scanned``, ``pruned``, ``fully_covered``, ``boundary`` (partition counts),
    ``pruning_rate``, ``bytes_scanned`` (projection-aware), ``wasted_bytes`` and
    ``average_utilization``; estimated from zonemaps, or from true matching-row counts
    with ``exact`` (one Spark pass). ``per_partition`` adds arrays in snapshot order."""
    from engine.scan.pruning import fragment_summary

    snap, fragments, scans = pruning_scans(settings, table, exact, snapshot_id, spark)
    out = []
    for frag, scan in zip(fragments, scans):
        data = {**fragment_summary(scan), "ts": frag.ts, "exact": bool(exact),
                "snapshot": snap.id}
        if per_partition:
            data["per_partition"] = {
                "scanned": scan.scanned.tolist(),
                "fully_covered": scan.fully_covered.tolist(),
                "utilization": [round(float(u), 6) for u in scan.utilization],
                "read_bytes": scan.read_bytes.tolist(),
            }
        out.append(data)
    return out
