"""Clustering metrics per column, EP-file metrics, pruning per query.

Metadata only (zonemaps of a snapshot, the stored workload): no Spark, answers in about a
second, except ``pruning(..., exact=True)`` which makes one Spark pass over the data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Sequence

import numpy as np

from engine.core.errors import AdvisorError, InvalidParameterError, WorkloadParseError
from engine.layout.signatures import projection_2d, savings_signatures
from engine.metrics import profile as _profile
from engine.metrics.ep import ep_files, ep_groups, ep_metrics_json
from engine.metrics.overlap import column_clustering as _column_clustering
from engine.scan import rowgroups
from engine.scan.counts import one_range_summaries
from engine.scan.pruning import FragmentScan, analyze_fragment, analyze_workload, fragment_summary
from engine.spark.exact import exact_scans
from engine.spark.session import get_spark
from engine.workload.sql.extract import extract_fragments

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from engine.workspace import Workspace
    from engine.table.model import Snapshot, ZoneMaps
    from engine.workload.model import ScanFragment

__all__ = ["snapshot_of", "one_query_scan", "pruning_summaries", "analyze",
           "analyze_with_arrays", "predicate_partitions", "ep_metrics", "pruning",
           "iter_pruning", "column_clustering", "pruning_scans", "span_shares",
           "fragment_scan", "ep_files_holding", "signature_projection"]

#: longest depth profile returned as JSON (coarsened beyond, keeping each bucket's peak)
MAX_PROFILE_SEGMENTS = 2000


def snapshot_of(ws: "Workspace", table: str, snapshot_id: str | None) -> "Snapshot":
    store = ws.tables
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


def predicate_partitions(ws: "Workspace", table: str, where: str,
                         snapshot_id: str | None = None) -> np.ndarray:
    """Boolean mask over a snapshot's partitions (table order): those a SQL predicate may
    touch. See :func:`_predicate_mask`."""
    return _predicate_mask(snapshot_of(ws, table, snapshot_id), where)


def _predicate_mask(snap: "Snapshot", where: str) -> np.ndarray:
    """Which partitions of ``snap`` a SQL predicate may touch (its zonemaps do not rule it
    out): the partitions Snowflake's ``SYSTEM$CLUSTERING_DEPTH(table, cols, predicate)``
    measures. The predicate is read like a query's WHERE clause (same parser, same
    conservative pruning); one that constrains no column of the table is refused."""
    sql = f'SELECT * FROM "{snap.table}" WHERE {where}'
    try:
        fragments = extract_fragments(sql, snap.table, snap.schema, "where")
    except WorkloadParseError as exc:
        raise InvalidParameterError(f"--where {where!r} is not a SQL predicate: {exc}") from None
    if not fragments or not fragments[0].predicated_columns:
        raise InvalidParameterError(
            f"--where {where!r} constrains no column of table {snap.table!r}; columns are: "
            f"{', '.join(snap.schema.names)}")
    return analyze_fragment(snap.zonemaps(), fragments[0]).scanned


def analyze(ws: "Workspace", table: str, columns: Sequence[str] | str | None = None,
            snapshot_id: str | None = None, ep_file_partitions: int | None = None,
            max_segments: int = MAX_PROFILE_SEGMENTS, where: str | None = None) -> list[dict[str, Any]]:
    """One object per column: the Snowflake-style fields (``total_partition_count``,
    ``total_constant_partition_count``, ``average_overlaps``, ``average_depth``,
    ``partition_depth_histogram``), ``depth_profile`` as ``[[start, end, depth], ...]``,
    ``deepest_ranges``, ``unknown_partition_count``, a traffic-light ``verdict`` with its
    ``reason``; with ``ep_file_partitions`` also an ``ep`` summary (patent metrics).

    With ``where`` (a SQL predicate) the metrics cover only the partitions it may touch
    (:func:`predicate_partitions`), and each object says so in ``where`` and
    ``where_partition_count``; ``total_partition_count`` is then that subset's size."""
    return [data for data, _ in _analyzed(ws, table, columns, snapshot_id,
                                          ep_file_partitions, max_segments, where)]


def analyze_with_arrays(ws: "Workspace", table: str,
                        snapshot_id: str | None = None) -> list[tuple[dict[str, Any], Any]]:
    """:func:`analyze` of every orderable column, each object beside its
    :class:`engine.metrics.overlap.ColumnClustering` (the per-partition ``depths``,
    ``overlaps`` and ``constant`` arrays): one sweep per column serves both, for the
    stored summaries (:mod:`engine.summaries.store`)."""
    return _analyzed(ws, table, None, snapshot_id, None, MAX_PROFILE_SEGMENTS, None)


def _analyzed(ws: "Workspace", table: str, columns: Sequence[str] | str | None,
              snapshot_id: str | None, ep_file_partitions: int | None, max_segments: int,
              where: str | None) -> list[tuple[dict[str, Any], Any]]:
    snap = snapshot_of(ws, table, snapshot_id)
    zm: "ZoneMaps" = snap.zonemaps()
    if where:
        zm = zm.subset(_predicate_mask(snap, where))
    out = []
    for column in _columns(snap, columns):
        clustering = _column_clustering(zm, column)
        data = clustering.to_json(max_segments=max_segments)
        data["snapshot"] = snap.id
        if where:
            data["where"] = where
            data["where_partition_count"] = len(zm)
        if ep_file_partitions:
            ep = ep_metrics_json(ep_files(zm, column, int(ep_file_partitions)), max_subranges=0)
            data["ep"] = {k: ep[k] for k in ("ep_file_partitions", "ep_file_count",
                                             "average_local_depth", "average_ep_overlap",
                                             "average_ep_depth", "subrange_count",
                                             "deepest_subrange")}
        out.append((data, clustering))
    return out


def ep_metrics(ws: "Workspace", table: str, column: str,
               ep_file_partitions: int | None = None, snapshot_id: str | None = None,
               max_subranges: int = MAX_PROFILE_SEGMENTS) -> dict[str, Any]:
    """The patent's EP-file metrics of one column: per EP file (partition count, region,
    average local depth, EP-level overlap and depth), the sub-ranges with their total
    average depth, and the deepest sub-range with the EP files covering it."""
    snap = snapshot_of(ws, table, snapshot_id)
    col = snap.schema.resolve(column)
    n = int(ep_file_partitions or ws.settings.ep_file_partitions)
    data = ep_metrics_json(ep_files(snap.zonemaps(), col, n), max_subranges=max_subranges)
    data["snapshot"] = snap.id
    return data


def column_clustering(ws: "Workspace", table: str, column: str,
                      snapshot_id: str | None = None,
                      max_segments: int = MAX_PROFILE_SEGMENTS,
                      partition_lists: bool = True) -> dict[str, Any]:
    """Everything the dashboard draws for one column: the summary of :func:`analyze` plus
    per-partition arrays in snapshot order (``paths``, ``rows``, ``bytes``, decoded ``min``
    and ``max``, ``overlaps``, ``depths``, ``constant``; -1 / None where unknown).
    ``partition_lists=False`` leaves out ``paths`` to ``max`` (one Python object per
    partition, costly at a million partitions), for callers that read them
    from the zonemaps, as the dashboard does."""
    snap = snapshot_of(ws, table, snapshot_id)
    col = snap.schema.resolve(column)
    zm = snap.zonemaps()
    c = _column_clustering(zm, col)
    data = c.to_json(max_segments=max_segments, per_partition=True)
    czm = zm.column(col)
    valid = np.asarray(czm.valid, dtype=bool)
    data["snapshot"] = snap.id
    if not partition_lists:
        data["constant"] = c.constant.tolist()
        return data
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


def pruning_scans(ws: "Workspace", table: str, exact: bool = False,
                  snapshot_id: str | None = None, spark: "SparkSession | None" = None,
                  row_groups: bool | None = None):
    """(snapshot, fragments, FragmentScans) of the table's stored workload. ``row_groups``
    (default ``settings.prune_row_groups``) charges files of several row groups only the
    row groups each query meets (:mod:`engine.scan.rowgroups`; with ``exact`` too, whose
    utilization stays the true share of each file's matching rows)."""
    snap = snapshot_of(ws, table, snapshot_id)
    fragments = list(ws.workloads.fragments(snap.table or table))
    use = ws.settings.prune_row_groups if row_groups is None else row_groups
    groups = rowgroups.for_snapshot(ws.tables, snap.table or table, snap) if use else None
    if exact and fragments:
        if spark is None:
            spark = get_spark(ws.settings)
        scans = exact_scans(spark, snap, fragments, row_groups=groups)
    else:
        scans = analyze_workload(snap.zonemaps(), fragments, row_groups=groups)
    return snap, fragments, scans


def iter_pruning(ws: "Workspace", table: str, exact: bool = False,
                 snapshot_id: str | None = None, per_partition: bool = False,
                 spark: "SparkSession | None" = None, selectivity: bool = False,
                 row_groups: bool | None = None) -> Iterator[dict[str, Any]]:
    """:func:`pruning`, one object at a time: each query is pruned (sparsely) when its
    object is asked for and nothing is kept after, so a workload of 100,000 queries over
    1,000,000 partitions streams in O(partitions) memory."""
    snap, fragments, scans = pruning_scans(ws, table, exact, snapshot_id, spark, row_groups)
    rows_per_part = snap.zonemaps().rows.astype(np.float64)
    total_rows = float(rows_per_part.sum()) or 1.0
    for frag, scan in zip(fragments, scans):
        data = {**fragment_summary(scan), "ts": frag.ts, "exact": bool(exact),
                "snapshot": snap.id}
        if selectivity:
            data["selectivity"] = float((scan.util * rows_per_part[scan.index]).sum() / total_rows)
        if per_partition:
            data["per_partition"] = {
                "scanned": scan.scanned.tolist(),
                "fully_covered": scan.fully_covered.tolist(),
                "utilization": [round(float(u), 6) for u in scan.utilization],
                "read_bytes": scan.read_bytes.tolist(),
            }
            if scan.charged is not None:  # row-group level: what each partition costs
                charged = np.zeros(scan.n)
                charged[scan.index] = scan.charged
                data["per_partition"]["bytes_charged"] = charged.tolist()
        yield data


def pruning(ws: "Workspace", table: str, exact: bool = False,
            snapshot_id: str | None = None, per_partition: bool = False,
            spark: "SparkSession | None" = None, selectivity: bool = False,
            row_groups: bool | None = None) -> list[dict[str, Any]]:
    """One object per scan fragment of the stored workload: ``query_id``, ``ts``,
    ``scanned``, ``pruned``, ``fully_covered``, ``boundary`` (partition counts),
    ``pruning_rate``, ``bytes_scanned`` (projection-aware), ``wasted_bytes`` and
    ``average_utilization``; estimated from zonemaps, or from true matching-row counts
    with ``exact`` (one Spark pass). ``per_partition`` adds arrays in snapshot order
    (at row-group level also ``bytes_charged``: the bytes of the row groups met, 0 where
    pruned; ``read_bytes`` stays each whole file's projection-aware bytes);
    ``selectivity`` adds the estimated share of the table's rows each query matches
    (utilization times rows, over all rows: the dashboard's selectivity histogram).
    ``row_groups`` (default ``settings.prune_row_groups``) charges only the row groups met
    in files of several and adds ``row_groups_read`` / ``row_groups``.
    :func:`iter_pruning` yields the same objects one by one."""
    return list(iter_pruning(ws, table, exact, snapshot_id, per_partition, spark,
                             selectivity, row_groups))


def pruning_summaries(ws: "Workspace", table: str,
                      snapshot_id: str | None = None) -> list[dict[str, Any]]:
    """:func:`pruning` with ``selectivity``, computed for the dashboard's stored summary
    without materialising the scanned partitions of one-range queries
    (:func:`engine.scan.counts.one_range_summaries`: O(log n) per query; counts and bytes
    bit-identical, utilization sums to ~1e-12 relative); the other queries go through the
    sparse evaluator as in :func:`pruning`. Same objects, same order."""
    snap = snapshot_of(ws, table, snapshot_id)
    fragments = list(ws.workloads.fragments(snap.table or table))
    zonemaps = snap.zonemaps()
    groups = rowgroups.if_enabled(ws.tables, snap.table or table, snap)
    # the one-range fast path is file-level: with row groups every query takes the evaluator
    fast = (one_range_summaries(zonemaps, fragments, selectivity=True) if groups is None
            else [None] * len(fragments))
    rest = [i for i, row in enumerate(fast) if row is None]
    rows_per_part = zonemaps.rows.astype(np.float64)
    total_rows = float(rows_per_part.sum()) or 1.0
    for i, scan in zip(rest, analyze_workload(zonemaps, [fragments[i] for i in rest], groups)):
        row = fragment_summary(scan)
        row["selectivity"] = float((scan.util * rows_per_part[scan.index]).sum() / total_rows)
        fast[i] = row
    out = []
    for frag, row in zip(fragments, fast):
        sel = row.pop("selectivity")
        out.append({**row, "ts": frag.ts, "exact": False, "snapshot": snap.id, "selectivity": sel})
    return out


def span_shares(ws: "Workspace", table: str,
                snapshot_id: str | None = None) -> dict[str, float | None]:
    """Per column, the mean width of a partition's ``[min, max]`` as a share of the column's
    whole range: near 1 every partition spans everything (no layout helps a filter), near
    0 partitions are narrow. None for strings and for columns without a known bound."""
    return _profile.span_shares(snapshot_of(ws, table, snapshot_id).zonemaps())


def fragment_scan(ws: "Workspace", table: str, query_id: str,
                  snapshot_id: str | None = None) -> FragmentScan:
    """Per-partition outcome (pruned, scanned, fully covered, utilization) of one query of
    the stored workload over a snapshot's zonemaps; with ``settings.prune_row_groups``
    charged by row groups as :func:`pruning` charges it (:func:`one_query_scan`)."""
    snap = snapshot_of(ws, table, snapshot_id)
    frags = ws.workloads.fragments(snap.table or table)
    frag = next((f for f in frags if f.query_id == query_id), None)
    if frag is None:
        raise AdvisorError(f"query {query_id!r} is not in the workload of {table!r}")
    return one_query_scan(ws, table, snap, frag)


def one_query_scan(ws: "Workspace", table: str, snap: "Snapshot",
                   fragment: "ScanFragment") -> FragmentScan:
    """One query over ``snap`` at the level the workload's views use: file level, or with
    ``settings.prune_row_groups`` the files of several row groups charged only the row
    groups the query meets (:func:`engine.scan.rowgroups.refine`; a file none of whose row
    groups can match is pruned), so the one-query view agrees with :func:`pruning`'s row."""
    zm = snap.zonemaps()
    groups = rowgroups.if_enabled(ws.tables, snap.table or table, snap)
    return rowgroups.refine(analyze_fragment(zm, fragment), groups, fragment, zm.rows)


def ep_files_holding(ws: "Workspace", table: str, paths: Iterable[str],
                     ep_file_partitions: int, snapshot_id: str | None = None) -> set[int]:
    """Indexes of the EP files (``ep_file_partitions`` partitions each, in creation order;
    patent US 12386863) that hold any of ``paths``, e.g. the partitions of a DD-EP plan."""
    wanted = set(paths)
    zm = snapshot_of(ws, table, snapshot_id).zonemaps()
    groups = ep_groups(zm, int(ep_file_partitions))
    return {int(g) for p, g in zip(zm.paths, groups) if p in wanted}


def signature_projection(scatter: Mapping[str, Any]) -> dict[str, Any] | None:
    """WAIR's savings signatures (section 4.4) and the anchors of its groups in 2-D.

    ``scatter`` is the ``details.scatter`` evidence of a plan (``signatures``, ``columns``,
    ``anchors``). With two columns the unit vectors are drawn as they are
    (``explained_variance`` None); with more they are projected on their first two
    principal axes (:func:`engine.layout.signatures.projection_2d`). None when there is
    nothing to project (one column, or no scatter).

    Example:
    >>> out = signature_projection({"signatures": [[1.0, 0.0], [0.0, 1.0]],
    ...                             "columns": ["a", "b"], "anchors": ["a", "b"]})
    >>> out["points"].tolist(), out["anchor_names"], out["explained_variance"]
    ([[1.0, 0.0], [0.0, 1.0]], ['a', 'b'], None)
    """
    sig = np.asarray(scatter.get("signatures") or [], dtype=float)
    cols = list(scatter.get("columns") or [])
    if sig.ndim != 2 or len(sig) == 0 or sig.shape[1] < 2:
        return None
    names = sorted({a for a in scatter.get("anchors", []) if a and a != "diffuse"})
    anchors = []
    for name in names:
        v = np.array([1.0 if c in name.split("+") else 0.0 for c in cols])
        anchors.append(v / np.linalg.norm(v) if v.any() else v)
    if sig.shape[1] == 2:  # two columns: the unit vectors themselves, no projection needed
        return {"points": sig, "anchors": np.asarray(anchors) if anchors else None,
                "anchor_names": names, "explained_variance": None}
    points, project = projection_2d(sig)
    unit = savings_signatures(sig)  # what projection_2d projects
    centered = unit - unit.mean(axis=0)
    total = max(float((centered ** 2).sum()), 1e-12)
    variance = tuple(float((points[:, k] ** 2).sum() / total) for k in range(2))
    return {"points": points, "anchors": project(np.asarray(anchors)) if anchors else None,
            "anchor_names": names, "explained_variance": variance}
