"""One rewrite job: every group of a plan (or of a partial-progress batch) read once,
ordered, written once and verified from one aggregate (WAIR section
5.1 rewrites the selected micro-partitions, and the price of that rewrite, section 4.2's
``t_r``, must not carry a fixed cost per group).

The job is at most two Spark jobs (three when a group's ordering must be fitted on a
sample: Hilbert, Z-order, Qd-tree, PAW):

1. (only for fitted orderings) one sampling job over the key columns of all such groups
   (:mod:`engine.spark.fitting`);
2. the write: ONE scan of every input file, each row's group from its file's path
   (:mod:`engine.spark.reading`), its order key and its task (:mod:`engine.spark.slicing`),
   one shuffle, a sort per task, Spark's writer cuts the files (:mod:`engine.spark.writing`);
3. the verification: the inputs' row count and hash sums observed while they stream into
   the write (a constant number of sums whatever the groups), compared with one aggregate
   over the written files, grouped by group (:mod:`engine.spark.verification`).
"""

from __future__ import annotations

import math
import time
from functools import partial
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

from engine.core.errors import ExecutionError
from engine.core.faults import crash_point, crash_when, injected
from engine.layout.output import OutputShape, WriteTarget, output_shape, str_row_groups
from engine.spark import (
    arrow_types, arrow_write, fitting, slicing, str_rowgroups, verification, writing,
)
from engine.spark.hadoop_files import data_files, flatten, group_of_file
from engine.spark.jobspec import FITTED, GROUP_COLUMN, GroupSpec
from engine.spark.options import DEFAULT_OPTIONS, ExecutorOptions
from engine.spark.progress import JobMetrics, WriteWatcher
from engine.spark.reading import footer_row_group_rows, read_inputs, spark_schema_of
from engine.table import fs as table_fs

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

    from engine.policy.base import PlanGroup
    from engine.table.model import Partition, TableSchema

#: at most this many write tasks per core (more tasks: smaller sorts, more partial files)
TASKS_PER_CORE = 2
TaskProgress = Callable[[int, int, int], None]


@dataclass
class GroupResult:
    """What one group's rewrite did (the job's time is shared by all groups)."""

    index: int
    layout: str
    columns: list[str]
    inputs: int
    outputs: int
    rows: int
    bytes_in: int
    bytes_out: int
    checksum: str
    seconds: float
    files: list[str] = field(default_factory=list)
    phases: dict[str, float] = field(default_factory=dict)  # seconds per step (whole job)
    fit: dict[str, Any] = field(default_factory=dict)  # the fitted ordering (sample, leaves)


@dataclass
class RewriteResult:
    """What one write job did: per group, its files and checks; the job's measured cost."""

    groups: list[GroupResult]
    measured: dict[str, Any]
    phases: dict[str, float]


class _Laps:
    """Seconds per step of the job, for the result's ``phases``."""

    def __init__(self) -> None:
        self.started = self.mark = time.perf_counter()
        self.phases: dict[str, float] = {}

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.phases[name] = round(now - self.mark, 3)
        self.mark = now

    def total(self) -> float:
        return round(time.perf_counter() - self.started, 3)


def group_specs(schema: "TableSchema", groups: Sequence[tuple["PlanGroup", Sequence["Partition"]]],
                first_index: int = 0) -> list[GroupSpec]:
    """The driver-side plan of each group; a column the table lacks is named."""
    out = []
    for i, (group, parts) in enumerate(groups):
        for c in group.columns:
            schema.type_of(c)  # ColumnNotFoundError names the column
        by = (group.layout_params or {}).get("partition_by")
        if by:
            schema.type_of(by)
        out.append(GroupSpec(first_index + i, group, list(parts), sum(p.rows for p in parts),
                             sum(p.bytes for p in parts)))
    return out


def rewrite(spark: "SparkSession", schema: "TableSchema",
            groups: Sequence[tuple["PlanGroup", Sequence["Partition"]]], out_dir: str,
            target_rows: int | None, target_bytes: int | None,
            progress: TaskProgress | None = None, first_index: int = 0,
            options: ExecutorOptions = DEFAULT_OPTIONS,
            target: WriteTarget | None = None) -> RewriteResult:
    """Rewrite ``groups`` (each a plan group and its input partitions) into ``out_dir``
    in one write job per file-size setting (one for almost every plan), verify every
    group from one aggregate; raises ExecutionError when any group does not match.

    ``progress(tasks_done, tasks_total, rows_written)`` is called while the write runs;
    ``options``: how keys are computed, groups written and files verified. Each group is
    written in the shape :func:`engine.layout.output.output_shape` gives under ``target``
    (the table's own sizes, :meth:`engine.table.store.TableStore.write_target`; default:
    ``target_rows`` / ``target_bytes``), the shape the plan was priced at.
    """
    if target is None:
        target = WriteTarget(file_rows=target_rows or None,
                             file_bytes=None if target_rows else (target_bytes or None))
    laps = _Laps()
    specs = group_specs(schema, groups, first_index)
    first = specs[0].partitions[0].path
    arrow = arrow_types.read_schema(first)
    arrow_types.refuse_unsupported(arrow, first)  # before anything is written
    with writing.session_conf(spark, writing.JOB_CONF):
        metrics = JobMetrics(spark, f"rewrite-{specs[0].index}")
        by_arrow: list[arrow_write.Written] = []
        try:
            files, checks = _write_and_verify(spark, schema, arrow, specs, out_dir,
                                              target, progress, laps, options, by_arrow)
        finally:
            measured = metrics.close()
    if by_arrow:  # pyarrow wrote: Spark's output metrics do not see it, nor its CPU
        measured["bytes_written"] += sum(w.bytes for w in by_arrow)
        measured["rows_written"] += sum(w.rows for w in by_arrow)
        measured["python_cpu_seconds"] = round(sum(w.cpu for w in by_arrow), 3)
        measured["executor_cpu_seconds"] = round(
            measured["executor_cpu_seconds"] + measured["python_cpu_seconds"], 3)
    measured["bytes_read_inputs"] = sum(s.bytes_in for s in specs)
    measured["wall_seconds"] = laps.total()
    return RewriteResult(_results(specs, files, checks, laps), measured, laps.phases)


def _write_and_verify(spark: "SparkSession", schema: "TableSchema", arrow: "pa.Schema",
                      specs: list[GroupSpec], out_dir: str, target: WriteTarget,
                      progress: TaskProgress | None, laps: _Laps,
                      options: ExecutorOptions = DEFAULT_OPTIONS,
                      by_arrow: list[arrow_write.Written] | None = None,
                      ) -> tuple[list[str], verification.Checks]:
    """The job's Spark work; returns the written files (flattened, with the inputs' exact
    Arrow schema ``arrow``) and their checks; the files pyarrow wrote are added to
    ``by_arrow``."""
    spark_schema = spark_schema_of(arrow)
    df = read_inputs(spark, schema, specs, spark_schema)
    data_cols = [c for c in schema.names if c in df.columns]
    settings_of = _file_settings(specs, target)
    if any(s.group.layout in FITTED for s in specs):
        df = _fit(df, specs, schema, settings_of, options)
        laps.lap("fit")
    crash_point("after_read")
    cores = max(1, spark.sparkContext.defaultParallelism)
    tag = verification.tagged(specs)
    seen = verification.Sums()
    wrote = partial(_wrote_any, out_dir)  # the mid_write crash point's condition
    for max_rows, rg_rows in sorted(set(settings_of.values()), key=str):
        batch = [s for s in specs if settings_of[s.index] == (max_rows, rg_rows)]
        n_tasks = max(1, min(math.ceil(sum(s.rows for s in batch) / max_rows),
                             TASKS_PER_CORE * cores))
        n_buckets = slicing.plan_slices(batch, schema, n_tasks, max_rows)
        subset = df if len(batch) == len(specs) else df.where(
            df[GROUP_COLUMN].isin([s.index for s in batch]))
        keep = writing.drop_row_filter(subset, data_cols) if injected("drop-row") else None
        swap = writing.swap_rows_group(subset, data_cols) if injected("swap-rows") else None
        subset, observation = verification.observe_inputs(subset, data_cols, tag)
        if keep is not None:
            subset = subset.where(keep)
        if swap is not None:
            subset = subset.withColumn(GROUP_COLUMN, swap)
        by_pyarrow = (options.writer == "arrow" or (options.writer == "auto" and len(batch) > 1)
                      ) and arrow_write.eligible(batch, subset)
        with WriteWatcher(spark, progress or (lambda *_: None), rows_at_task_end=by_pyarrow), \
                crash_when("mid_write", wrote):
            if by_pyarrow:
                done = arrow_write.write(subset, batch, n_buckets, out_dir, max_rows,
                                         rg_rows, data_cols, arrow)
                if by_arrow is not None:
                    by_arrow.extend(done)
            else:
                writing.write(subset, batch, n_buckets, out_dir, max_rows, rg_rows,
                              data_cols, options)
        seen = seen + verification.observed(observation)
    laps.lap("order_write")
    # verified in Spark's __la_g=i/ folders (the group read from the folder: one plan for
    # every run, verification.scan_group_folders), then moved out of them as committed
    written = data_files(spark, out_dir)
    crash_point("after_write")
    if sum(s.rows for s in specs) and not written:
        raise ExecutionError(f"Spark wrote no data files into {out_dir}")
    if arrow_types.restore_files(spark, written, arrow):  # verified below, as committed
        laps.lap("restore_types")
    if str_rowgroups.write_str_row_groups(spark, written, specs):  # PAW n_mbr: verified too
        laps.lap("str_row_groups")

    def read_again() -> "DataFrame":
        return read_inputs(spark, schema, specs, spark_schema)

    checks = verification.verify(spark, specs, seen, written, data_cols, spark_schema,
                                 read_again, out_dir, options.verify_from_folder)
    laps.lap("verify")
    files = flatten(spark, out_dir)
    writing.drop_checksums(files)
    return files, checks


def _wrote_any(out_dir: str) -> bool:
    """Has the write job written any file yet (Spark's ``_temporary`` attempts included)?"""
    return bool(table_fs.list_files(out_dir, include_hidden=True))


def shapes(specs: Sequence[GroupSpec], target: WriteTarget) -> dict[int, OutputShape]:
    """Per group: the shape it is written in (:func:`engine.layout.output.output_shape`),
    the inputs' row-group size read from a few of their footers."""
    return {s.index: output_shape([p.rows for p in s.partitions], s.bytes_in, target,
                                  s.group.layout_params, s.group.layout,
                                  footer_row_group_rows([p.path for p in s.partitions]))
            for s in specs}


def _file_settings(specs: Sequence[GroupSpec], target: WriteTarget) -> dict[int, tuple[int, Any]]:
    """Per group: (rows per output file, rows per row group or None); one write per
    distinct pair. PAW's ``n_mbr`` row groups are cut after the write
    (:mod:`engine.spark.str_rowgroups`), and one row group per file needs no limit."""
    out = {}
    by_index = shapes(specs, target)
    for s in specs:
        shape = by_index[s.index]
        several = (shape.row_group_rows < shape.rows_per_file
                   and str_row_groups(s.group.layout, s.group.layout_params) is None)
        out[s.index] = (shape.rows_per_file, shape.row_group_rows if several else None)
    return out


def _fit(df: "DataFrame", specs: Sequence[GroupSpec], schema: "TableSchema",
         settings_of: dict[int, tuple[int, Any]],
         options: ExecutorOptions = DEFAULT_OPTIONS) -> "DataFrame":
    """Fit every fitted group's ordering on one sample; add the key column."""
    sample = fitting.sample_fitted(df, specs, schema)
    fitted = [s for s in specs if s.group.layout in FITTED]
    for s in fitted:
        fitting.fit_group(s, sample, schema, settings_of[s.index][0])
    dtype = "double" if any(s.key_dtype == "double" for s in fitted) else "long"
    return fitting.with_key(df, specs, schema, dtype, options=options)


def _results(specs: Sequence[GroupSpec], files: Sequence[str], checks: verification.Checks,
             laps: _Laps) -> list[GroupResult]:
    files_of: dict[int, list[str]] = {}
    for f in files:
        g = group_of_file(f)
        if g is not None:
            files_of.setdefault(g, []).append(f)
    seconds = laps.total()
    return [GroupResult(index=s.index, layout=s.group.layout, columns=list(s.group.columns),
                        inputs=len(s.partitions), outputs=len(files_of.get(s.index, [])),
                        rows=s.rows, bytes_in=s.bytes_in, bytes_out=0,
                        checksum=checks[s.index]["in"][1], seconds=seconds,
                        files=files_of.get(s.index, []), phases=dict(laps.phases), fit=s.fit)
            for s in specs]
