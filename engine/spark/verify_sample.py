"""Verify a plan before approval: rewrite a sample of its groups exactly as the run would,
into a scratch folder that is never committed, and measure the decision window on the
sample's files before and after.

Oracle's automatic clustering does RECOMMEND, VERIFY, APPLY; this is the VERIFY step. The
sample is written by the executor's own job (:func:`engine.spark.rewrite.rewrite`, the
table's write target, the output model's shape), so its files are the files the run would
write. Two measurements, each on the sample's input files and on its written files:

* file statistics: the written files' real footers (min/max per file, and per row group
  with ``prune_row_groups``), scored by the scan analysis like the plan's prediction;
* DuckDB: every distinct query of the window run once over the files (its own file and
  row-group skipping), bytes read and seconds from its profile, counted as often as the
  window repeats it; past :data:`DUCK_DISTINCT_LIMIT` distinct queries, the most frequent
  ones, scaled up by the share of the window they cover (``duck_coverage``).

The scratch folder is removed afterwards; a crash leaves it under the table's data
location, named as a run's folder, where ``table gc`` finds it
(:data:`engine.table.formats.gc.RUN_DIR`).
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Sequence

from engine.scan.pruning import analyze_workload
from engine.scan.rowgroups import RowGroupMaps, footer_row_groups
from engine.spark.duck_runner import DuckRunner
from engine.spark.rewrite import rewrite
from engine.table import fs
from engine.table.footers import read_partitions
from engine.table.model import ZoneMaps

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from engine.plans.plan import Plan
    from engine.table.store import TableStore
    from engine.workload.model import ScanFragment

__all__ = ["DUCK_DISTINCT_LIMIT", "SampleMeasure", "distinct_fragments", "duck_window",
           "measure_sample", "replayed_scans"]

#: distinct scans of the window DuckDB replays at most, the most frequent first: each one
#: reads every sample file's footer, so a window of a thousand ad hoc queries would cost
#: minutes; the file-statistics measure (the verified saving) always covers every query
DUCK_DISTINCT_LIMIT = 48


@dataclass(frozen=True)
class SampleMeasure:
    """The window measured on a sample of a plan's groups, before and after (bytes are
    summed over the window's queries, seconds are DuckDB's)."""

    groups: tuple[int, ...]
    input_files: int
    output_files: int
    input_bytes: int
    rows: int
    queries: int
    stats_bytes_before: float
    stats_bytes_after: float
    duck_bytes_before: float
    duck_bytes_after: float
    duck_seconds_before: float
    duck_seconds_after: float
    duck_coverage: float = 1.0  # share of the window's queries DuckDB replayed (duck_window)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "groups": list(self.groups)}


def _stats_bytes(parts: Sequence[Any], schema: Any, fragments: Sequence["ScanFragment"],
                 row_groups: bool) -> float:
    """The fragments' bytes over ``parts`` by their footers' statistics, charged by row
    group when ``row_groups`` (``settings.prune_row_groups``), as the plan was priced."""
    zm = ZoneMaps.from_partitions(schema, list(parts))
    groups = RowGroupMaps.of(zm, footer_row_groups(list(parts), schema)) if row_groups else None
    return float(sum(s.bytes_scanned for s in analyze_workload(zm, list(fragments), groups)))


def distinct_fragments(fragments: Sequence["ScanFragment"]) -> list[tuple["ScanFragment", int]]:
    """``(fragment, times)`` per distinct scan of ``fragments`` (same projected columns and
    ranges: a dashboard panel's refreshes), in first-seen order."""
    seen: dict[tuple[Any, ...], list[Any]] = {}
    for frag in fragments:
        key = (frag.columns, repr(frag.boxes))
        if key in seen:
            seen[key][1] += 1
        else:
            seen[key] = [frag, 1]
    return [(frag, times) for frag, times in seen.values()]


def replayed_scans(fragments: Sequence["ScanFragment"], limit: int = DUCK_DISTINCT_LIMIT
                   ) -> tuple[list[tuple["ScanFragment", int]], float]:
    """The distinct scans DuckDB replays (the ``limit`` most frequent, ties in first-seen
    order) and the share of ``fragments`` they stand for (1.0 when every distinct scan is
    replayed). A dashboard table's window is mostly a few panels repeated, so a few dozen
    scans cover most of its queries."""
    scans = distinct_fragments(fragments)
    if len(scans) <= limit:
        return scans, 1.0
    picked = sorted(scans, key=lambda s: -s[1])[:limit]  # sorted() is stable
    return picked, sum(n for _, n in picked) / max(1, len(fragments))


def duck_window(paths: Sequence[str], fragments: Sequence["ScanFragment"],
                limit: int = DUCK_DISTINCT_LIMIT) -> tuple[float, float]:
    """(bytes read, seconds) of ``fragments`` run by DuckDB over ``paths``: each distinct
    scan (:func:`distinct_fragments`) run once and counted as often as it occurs, so a
    window of thousands of dashboard refreshes costs one query per panel. Past ``limit``
    distinct scans only the most frequent are run (:func:`replayed_scans`) and their totals
    are scaled up by the share of the window they cover."""
    workdir = tempfile.mkdtemp(prefix="la-verify-duck-")
    try:
        duck = DuckRunner(workdir)
        nbytes = secs = 0.0
        scans, coverage = replayed_scans(fragments, limit)
        for frag, times in scans:
            _, s, b, _ = duck.count(paths, frag, list(frag.columns))
            nbytes, secs = nbytes + b * times, secs + s * times
        duck.con.close()
        return nbytes / coverage, secs / coverage
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def measure_sample(store: "TableStore", plan: "Plan", indices: Sequence[int],
                   fragments: Sequence["ScanFragment"], spark: "SparkSession",
                   row_groups: bool = False) -> SampleMeasure:
    """Rewrite the groups ``indices`` of ``plan`` into a scratch folder as the run would,
    measure ``fragments`` on their inputs and outputs, remove the folder."""
    snapshot = store.snapshot(plan.table, plan.base_snapshot)
    by_path = {p.path: p for p in snapshot.partitions}
    pairs = [(plan.groups[i], [by_path[p] for p in plan.groups[i].partitions]) for i in indices]
    inputs = [p for _, parts in pairs for p in parts]
    scratch = store.new_data_dir(plan.table, f"verify{plan.id}")
    info = store.info(plan.table)
    try:
        run = rewrite(spark, snapshot.schema, pairs, scratch, info.target_rows, info.target_bytes,
                      target=store.write_target(plan.table))
        written = [f for g in run.groups for f in g.files]
        _, outputs = read_partitions(written, schema=snapshot.schema)
        frags = [f for f in fragments if f.predicated_columns]
        duck_before = duck_window([p.path for p in inputs], frags)
        duck_after = duck_window(written, frags)
        return SampleMeasure(
            groups=tuple(int(i) for i in indices), input_files=len(inputs),
            output_files=len(written), input_bytes=int(sum(p.bytes for p in inputs)),
            rows=int(sum(p.rows for p in inputs)), queries=len(frags),
            stats_bytes_before=_stats_bytes(inputs, snapshot.schema, frags, row_groups),
            stats_bytes_after=_stats_bytes(outputs, snapshot.schema, frags, row_groups),
            duck_bytes_before=duck_before[0], duck_bytes_after=duck_after[0],
            duck_seconds_before=duck_before[1], duck_seconds_after=duck_after[1],
            duck_coverage=replayed_scans(frags)[1])
    finally:
        fs.delete_dir(scratch)
