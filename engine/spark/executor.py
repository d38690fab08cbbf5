"""Run a plan on Spark: read, order, cut to target size, write, verify, commit one snapshot.

For each group of the plan, exactly its partitions are read (``spark.read.parquet``), a
sort key is computed, the rows are range-partitioned into files of the table's target size
and sorted within each file, and the files are written to a fresh directory under the
table location. The group's row count and an order-independent checksum (the sum over
rows of two 64/32-bit hashes of all columns) are compared between the input and what was
written. Only when every group is verified is ONE snapshot committed, based on the plan's
base snapshot, replacing exactly the plan's partitions with the new files and their
zonemaps. Any failure commits nothing and deletes what was written.

Orderings:

* ``sort``: Spark's native ``repartitionByRange`` + ``sortWithinPartitions`` on the key
  columns (lexicographic; no Python on the executors).
* ``hilbert``, ``zorder``, ``qdtree``: an :mod:`engine.layout` ordering is fitted on a
  small sample collected to the driver; its JSON is shipped in the closure of a scalar
  Arrow UDF that computes the key from the key columns only (``mapInArrow`` on older
  pysparks), so executors need nothing but the package.

Nothing assumes the driver and the executors share a disk except through the table
location (files are listed and removed through Hadoop's FileSystem), so the same code
runs on a standalone cluster.

Test hooks (environment variable ``LA_EXECUTOR_FAULT``; not a setting, never set it in
production): ``before-commit`` exits the process after writing and verifying, just before
the commit; ``drop-row`` loses one row on the way to the writer (verification must catch
it); ``fail-group:N`` raises after group N (0-based) is written.
"""

from __future__ import annotations

import math
import os
import time
import warnings
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np
import pyarrow as pa

from engine.core import logical_types
from engine.core.errors import ExecutionError, PlanError, StalePlanError
from engine.layout.base import ordering_from_json
from engine.layout.groups import ordering_for_group
from engine.spark import footers_parallel
from engine.spark.session import get_spark
from engine.table.store import TableStore

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from engine.core.config import Settings
    from engine.plans.plan import Plan
    from engine.policy.base import PlanGroup
    from engine.table.model import Partition, TableSchema

FAULT_ENV = "LA_EXECUTOR_FAULT"
KEY_COLUMN = "__la_key"
PID_COLUMN = "__la_pid"
SAMPLE_ROWS = 100_000
SAMPLE_SEED = 20240917
#: bits of the first column's rank in a Qd-tree fine key (QdTree.fine_keys)
FINE_SHIFT = 17
#: keep a group's input in Spark's cache while it is written (off: one pass reads it; see bench)
CACHE_INPUT = False

ProgressFn = Callable[[Mapping[str, Any]], None]


@dataclass
class GroupResult:
    """What one group's rewrite did."""

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
    phases: dict[str, float] = field(default_factory=dict)  # seconds per step
    fit: dict[str, Any] = field(default_factory=dict)  # the fitted ordering (sample, leaves)


def _fault() -> str:
    return os.environ.get(FAULT_ENV, "").strip()


# -- filesystem through Hadoop (works for file:, hdfs:, s3a: alike) ----------------------
def _hadoop_fs(spark: "SparkSession", path: str) -> tuple[Any, Any]:
    jvm = spark.sparkContext._jvm
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    return hpath.getFileSystem(conf), hpath


def list_data_files(spark: "SparkSession", directory: str) -> list[str]:
    """Parquet files Spark wrote into ``directory``, spelled like ``directory``."""
    fs, hpath = _hadoop_fs(spark, directory)
    if not fs.exists(hpath):
        return []
    names = sorted(str(st.getPath().getName()) for st in fs.listStatus(hpath) if st.isFile())
    base = directory.rstrip("/")
    return [f"{base}/{n}" for n in names
            if n.endswith(".parquet") and not n.startswith(("_", "."))]


def remove_dir(spark: "SparkSession", directory: str) -> None:
    """Delete a directory this run wrote (never one a snapshot references)."""
    fs, hpath = _hadoop_fs(spark, directory)
    if fs.exists(hpath):
        fs.delete(hpath, True)


# -- checksums ---------------------------------------------------------------------------
def _checksum_exprs(columns: Sequence[str]) -> list[Any]:
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    cols = [F.col(f"`{c}`") for c in columns]
    return [F.count(F.lit(1)).alias("n"),
            F.sum(F.xxhash64(*cols).cast("decimal(20,0)")).alias("h")]


def _format_checksum(row: Mapping[str, Any]) -> tuple[int, str]:
    return int(row["n"] or 0), str(row["h"] or 0)


def content_checksum(df: "DataFrame") -> tuple[int, str]:
    """(row count, order-independent checksum) of a DataFrame.

    The checksum is the sum over all rows of xxhash64 of all columns, summed as a decimal
    so nothing overflows: the same multiset of rows gives the same value whatever the
    order or the file split, and a lost, duplicated or altered row changes it.
    """
    return _format_checksum(df.agg(*_checksum_exprs(df.columns)).collect()[0].asDict())


# -- orderings ---------------------------------------------------------------------------
def _sample(df: "DataFrame", columns: Sequence[str], total_rows: int) -> Any:
    """A pyarrow Table of at most ~SAMPLE_ROWS rows of ``columns`` (only they are read)."""
    fraction = 1.0 if total_rows <= SAMPLE_ROWS else SAMPLE_ROWS / total_rows
    sample_df = df.select(*[f"`{c}`" for c in columns])
    if fraction < 1.0:
        sample_df = sample_df.sample(False, fraction, seed=SAMPLE_SEED)
    return sample_df.toArrow()


def _fit_ordering(df: "DataFrame", group: "PlanGroup", schema: "TableSchema",
                  total_rows: int, rows_per_file: float) -> tuple[dict[str, Any], str, Any,
                                                                  dict[str, Any]]:
    """Fit the group's ordering (:func:`engine.layout.groups.ordering_for_group`) on a
    driver-side sample.

    Returns (to_json, key dtype, the sample's keys, what was fitted): the keys give the
    range boundaries. A Qd-tree's ``min_leaf_rows`` defaults to one output file; its key is
    the fine key (leaf, rank of the first column), so a leaf larger than a file can be cut
    along the first column.
    """
    cols = list(group.columns)
    types = {c: schema.type_of(c) for c in cols}
    table = _sample(df, cols, total_rows)
    data = {c: logical_types.encode_arrow(types[c], table.column(c))[0] for c in cols}
    ordering = ordering_for_group(group, types, data, group_rows=total_rows,
                                  default_leaf_rows=max(1, round(rows_per_file)))
    fit: dict[str, Any] = {"sample_rows": table.num_rows}
    if group.layout == "qdtree":
        fit["min_leaf_rows"] = ordering.min_leaf_rows
        keys = np.asarray(ordering.fine_keys(data))
        fit["leaves"] = int(ordering.n_leaves_)
    else:
        keys = np.asarray(ordering.keys(data))
    dtype = "long" if np.issubdtype(keys.dtype, np.integer) else "double"
    return ordering.to_json(), dtype, keys, fit


def leaf_cuts(sample_keys: Any, n_leaves: int, group_rows: int, rows_per_file: float,
              ) -> list[int]:
    """Range cuts over Qd-tree fine keys (``leaf << 17 | rank``): a cut at the start of
    every leaf, so no file straddles two leaves, and inside a leaf of (estimated) ``r``
    rows ``floor(r / rows_per_file)`` files (at least one) at the sample's quantiles, like
    the simulator cuts each leaf on its own.

    Example (two leaves of 6 and 2 sampled rows, 8 rows in the group, 3 rows per file):
    >>> leaf_cuts([0, 1, 2, 3, 4, 5, 131072, 131073], 2, 8, 3.0)
    [3, 131072]
    """
    keys = np.sort(np.asarray(sample_keys, dtype=np.int64))
    leaf = keys >> np.int64(FINE_SHIFT)
    scale = group_rows / max(1, len(keys))
    cuts: list[int] = []
    for i in range(n_leaves):
        start = i << FINE_SHIFT
        if i > 0:
            cuts.append(start)
        inside = keys[leaf == i]
        files = max(1, int(math.floor(len(inside) * scale / max(rows_per_file, 1.0))))
        cuts.extend(int(c) for c in boundaries(inside.tolist(), files) if c > start)
    return cuts


# -- range partitioning with driver-side boundaries --------------------------------------
_TARGETS: dict[int, list[int]] = {}
MAX_CASE_PARTITIONS = 512


def hash_targets(spark: "SparkSession", n: int) -> list[int]:
    """Integers ``v_i`` with ``pmod(hash(v_i), n) == i``: ``repartition(n, col)`` (Spark's
    hash partitioning, Murmur3 seed 42) then sends the rows whose column is ``v_i`` to
    partition ``i`` exactly. Found once per n with a tiny job and cached."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    if n in _TARGETS:
        return _TARGETS[n]
    span = 64 * n
    while True:
        rows = (spark.range(0, span)
                .select(F.pmod(F.hash(F.col("id")), F.lit(n)).alias("p"), F.col("id"))
                .groupBy("p").agg(F.min("id").alias("v")).collect())
        found = {int(r["p"]): int(r["v"]) for r in rows}
        if len(found) == n:
            _TARGETS[n] = [found[i] for i in range(n)]
            return _TARGETS[n]
        span *= 4  # pragma: no cover - 64 candidates per bucket practically always suffice


def boundaries(sorted_values: Sequence[Any], n: int) -> list[Any]:
    """n-1 cut points at the sample's quantiles, duplicates dropped (ties stay together).

    Example:
    >>> boundaries([1, 2, 3, 4, 5, 6, 7, 8], 4)
    [3, 5, 7]
    """
    m = len(sorted_values)
    if n <= 1 or m == 0:
        return []
    cuts = [sorted_values[min(m - 1, (i * m) // n)] for i in range(1, n)]
    out: list[Any] = []
    for c in cuts:
        if not out or c > out[-1]:
            out.append(c)
    return out


def range_partition(spark: "SparkSession", df: "DataFrame", key: Any, cuts: Sequence[Any],
                    n: int) -> "DataFrame":
    """Rows with ``key`` in the i-th range between ``cuts`` go to partition i (nulls to the
    first), in one shuffle and without Spark's sampling pass over all columns."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    targets = hash_targets(spark, n)
    pid = F.when(key.isNull(), F.lit(targets[0]))
    for i, cut in enumerate(cuts):
        pid = pid.when(key < F.lit(cut), F.lit(targets[i]))
    pid = pid.otherwise(F.lit(targets[len(cuts)])).cast("long")
    return df.withColumn(PID_COLUMN, pid).repartition(n, F.col(PID_COLUMN)).drop(PID_COLUMN)


def _with_key(df: "DataFrame", ordering_json: Mapping[str, Any], dtype: str,
              types: Mapping[str, str], fine: bool = False) -> "DataFrame":
    """Append the ordering's key column, computed on the executors.

    A scalar Arrow UDF (pyspark >= 4.1) sends only the key columns to the Python workers;
    older pysparks fall back to a ``mapInArrow`` over whole rows. Either way the fitted
    ordering travels as JSON in the closure and is rebuilt once per task. ``fine``: the
    Qd-tree's :meth:`~engine.layout.qdtree.QdTree.fine_keys` instead of its leaf ids.
    """
    from pyspark.sql import functions as F  # pyspark: costly import, deferred
    from pyspark.sql.types import DoubleType, LongType, StructField, StructType

    key_type = LongType() if dtype == "long" else DoubleType()
    spec = dict(ordering_json)
    ltypes = dict(types)
    cols = list(ltypes)
    holder: dict[str, Any] = {}

    def keys_of(arrays: Sequence[Any]) -> Any:  # executed in the Python workers
        if "ordering" not in holder:
            holder["ordering"] = ordering_from_json(spec)
        data = {c: logical_types.encode_arrow(ltypes[c], a)[0] for c, a in zip(cols, arrays)}
        ordering = holder["ordering"]
        keys = np.asarray(ordering.fine_keys(data) if fine else ordering.keys(data))
        return keys.astype(np.int64 if dtype == "long" else np.float64, copy=False)

    if hasattr(F, "arrow_udf"):
        def compute(*arrays):
            return pa.array(keys_of(arrays))

        from pyspark.sql.functions import ArrowUDFType  # pyspark: costly import, deferred

        with warnings.catch_warnings():  # "prefer type hints": *arrays cannot carry them
            warnings.simplefilter("ignore", UserWarning)
            udf = F.arrow_udf(compute, key_type, ArrowUDFType.SCALAR)
        return df.withColumn(KEY_COLUMN, udf(*[F.col(f"`{c}`") for c in cols]))

    out_schema = StructType(list(df.schema.fields) + [StructField(KEY_COLUMN, key_type, False)])

    def add_key(batches):  # pragma: no cover - pyspark < 4.1 only
        for batch in batches:
            arrays = [batch.column(batch.schema.get_field_index(c)) for c in cols]
            yield pa.RecordBatch.from_arrays(
                list(batch.columns) + [pa.array(keys_of(arrays))],
                names=list(batch.schema.names) + [KEY_COLUMN])

    return df.mapInArrow(add_key, out_schema)


def _output_count(rows: int, bytes_in: int, target_rows: int | None,
                  target_bytes: int | None, inputs: int) -> int:
    """Files to write: the table's target size decides (inputs when it has none)."""
    if target_rows and target_rows > 0:
        return max(1, math.ceil(rows / target_rows))
    if target_bytes and target_bytes > 0:
        return max(1, math.ceil(bytes_in / target_bytes))
    return max(1, inputs)


def rewrite_group(spark: "SparkSession", schema: "TableSchema",
                  partitions: Sequence["Partition"], group: "PlanGroup", out_dir: str,
                  target_rows: int | None, target_bytes: int | None, index: int = 0,
                  fault: str = "", cache: bool = CACHE_INPUT) -> GroupResult:
    """Rewrite one group's files into ``out_dir`` and verify them; raises ExecutionError."""
    from pyspark import StorageLevel  # pyspark: costly import, deferred
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    started = time.perf_counter()
    paths = [p.path for p in partitions]
    rows_meta = sum(p.rows for p in partitions)
    bytes_in = sum(p.bytes for p in partitions)
    for c in group.columns:
        schema.type_of(c)  # ColumnNotFoundError names the column
    df = spark.read.parquet(*paths)
    df = df.select(*[f"`{c}`" for c in schema.names if c in df.columns])
    if cache:
        df = df.persist(StorageLevel.MEMORY_AND_DISK)
    phases: dict[str, float] = {}
    fit: dict[str, Any] = {}
    mark = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal mark
        now = time.perf_counter()
        phases[name] = round(now - mark, 3)
        mark = now

    try:
        # The input's checksum is observed on the rows flowing from the scan into the
        # shuffle, during the write itself (Spark's observed metrics count each row once,
        # also with the range partitioner's sampling pass): no extra pass over the input.
        observation = Observation(f"la_input_{index}") if rows_meta > 0 else None
        source = df.observe(observation, *_checksum_exprs(df.columns)) if observation else df
        n_out = _output_count(rows_meta, bytes_in, target_rows, target_bytes, len(paths))
        key_cols = [F.col(f"`{c}`") for c in group.columns]
        if group.layout == "sort" and (len(key_cols) > 1 or n_out > MAX_CASE_PARTITIONS):
            # lexicographic over several columns: Spark's own range partitioner
            to_write = source.repartitionByRange(n_out, *key_cols).sortWithinPartitions(*key_cols)
        elif group.layout == "sort":
            column = group.columns[0]
            sample = _sample(df, [column], rows_meta).column(column).drop_null()
            cuts = boundaries(sorted(v for v in sample.to_pylist() if v == v), n_out)  # no NaN
            lap("sample")
            to_write = range_partition(spark, source, key_cols[0], cuts, n_out) \
                .sortWithinPartitions(*key_cols)
        else:
            rows_per_file = rows_meta / n_out if rows_meta else 1.0
            ordering_json, dtype, sample_keys, fit = _fit_ordering(df, group, schema, rows_meta,
                                                                   rows_per_file)
            lap("fit")
            keyed = _with_key(source, ordering_json, dtype,
                              {c: schema.type_of(c) for c in group.columns},
                              fine=group.layout == "qdtree")
            key = F.col(KEY_COLUMN)
            if group.layout == "qdtree":
                cuts = leaf_cuts(sample_keys, fit["leaves"], rows_meta, rows_per_file)
            else:
                cuts = boundaries(np.sort(sample_keys[~np.isnan(sample_keys)]
                                          if sample_keys.dtype.kind == "f" else sample_keys)
                                  .tolist(), n_out)
            if len(cuts) + 1 > MAX_CASE_PARTITIONS:
                ranged = keyed.repartitionByRange(max(n_out, fit.get("leaves", 1)), key)
            else:
                ranged = range_partition(spark, keyed, key, cuts, len(cuts) + 1)
            # ties of the key (a Qd-tree leaf's rank bucket) in the first column's order
            to_write = ranged.sortWithinPartitions(key, key_cols[0]).drop(KEY_COLUMN)
        if fault == "drop-row":  # test hook: lose the row(s) equal to one input row
            row_hash = F.xxhash64(*[F.col(f"`{c}`") for c in df.columns])
            victim = df.select(row_hash.alias("h")).limit(1).collect()[0]["h"]
            to_write = to_write.where(row_hash != F.lit(victim))
        to_write.write.mode("overwrite").parquet(out_dir)
        lap("order_write")
        rows_in, checksum_in = (_format_checksum(observation.get) if observation
                                else content_checksum(df))
    finally:
        if cache:
            df.unpersist()
    if rows_in != rows_meta:
        raise ExecutionError(
            f"group {index}: the input files hold {rows_in} rows but the snapshot "
            f"says {rows_meta}; the table's metadata does not match its files")
    files = list_data_files(spark, out_dir)
    if rows_in and not files:
        raise ExecutionError(f"group {index}: Spark wrote no data files into {out_dir}")
    rows_out, checksum_out = (content_checksum(spark.read.parquet(*files)) if files
                              else (0, "0"))
    lap("checksum_out")
    if rows_out != rows_in or checksum_out != checksum_in:
        raise ExecutionError(
            f"group {index}: verification failed: input {rows_in} rows (checksum "
            f"{checksum_in}), written {rows_out} rows (checksum {checksum_out}); "
            "nothing was committed")
    return GroupResult(index=index, layout=group.layout, columns=list(group.columns),
                       inputs=len(paths), outputs=len(files), rows=rows_in, bytes_in=bytes_in,
                       bytes_out=0, checksum=checksum_in,
                       seconds=round(time.perf_counter() - started, 3), files=files,
                       phases=phases, fit=fit)


def _validate_groups(plan: "Plan", by_path: Mapping[str, "Partition"]) -> None:
    seen: set[str] = set()
    for i, group in enumerate(plan.groups):
        if not group.partitions:
            raise PlanError(f"plan {plan.id}: group {i} has no partitions")
        for path in group.partitions:
            if path not in by_path:
                raise StalePlanError(f"plan {plan.id}: partition {path} is not in base "
                                     f"snapshot {plan.base_snapshot}")
            if path in seen:
                raise PlanError(f"plan {plan.id}: partition {path} is in two groups")
            seen.add(path)


def execute_plan(settings: "Settings", plan: "Plan", spark: "SparkSession | None" = None,
                 progress: ProgressFn | None = None) -> dict[str, Any]:
    """Rewrite the plan's groups and commit one snapshot; returns the run's result.

    The caller (``engine.plans.service.run_plan``) owns the plan's state transitions; this
    function owns the files: it writes, verifies, commits, and on any failure removes what
    it wrote before re-raising.
    """
    spark = spark or get_spark(settings)
    fault = _fault()
    store = TableStore(settings)
    info = store.info(plan.table)
    current = store.current_snapshot(plan.table)
    if current.id != plan.base_snapshot:
        raise StalePlanError(f"plan {plan.id} is based on snapshot {plan.base_snapshot} but "
                             f"table {plan.table} is at {current.id}; create a new plan")
    base = current
    by_path = {p.path: p for p in base.partitions}
    _validate_groups(plan, by_path)
    next_seq = store.next_seq(plan.table)
    total = len(plan.groups)
    written: list[str] = []
    results: list[GroupResult] = []
    added: list["Partition"] = []
    committed = False
    started = time.perf_counter()
    rows_done = bytes_done = 0

    def report(done: int, message: str) -> None:
        if progress is not None:
            progress({"groups_done": done, "groups_total": total, "rows": rows_done,
                      "bytes": bytes_done, "message": message})

    try:
        report(0, f"rewriting {len(plan.partitions)} partitions in {total} groups")
        for i, group in enumerate(plan.groups):
            out_dir = store.new_data_dir(plan.table, f"plan{plan.id}-g{i}")
            written.append(out_dir)
            result = rewrite_group(spark, base.schema, [by_path[p] for p in group.partitions],
                                   group, out_dir, info.target_rows, info.target_bytes, i, fault)
            _, parts = footers_parallel.read_partitions(spark, result.files, schema=base.schema,
                                                        first_seq=next_seq)
            next_seq += len(parts)
            result.bytes_out = sum(p.bytes for p in parts)
            result.files = [p.path for p in parts]
            results.append(result)
            added.extend(parts)
            rows_done += result.rows
            bytes_done += result.bytes_in
            report(i + 1, f"group {i + 1}/{total}: {result.inputs} -> {result.outputs} files, "
                          f"{result.rows} rows, {group.layout} on {', '.join(group.columns)}")
            if fault == f"fail-group:{i}":
                raise ExecutionError(f"injected failure after group {i} ({FAULT_ENV})")
        if fault == "before-commit":
            os._exit(97)  # simulate a crash between write and commit (test hook)
        removed = list(plan.partitions)
        # through the table's format (native chain, Iceberg transaction, Delta log); new
        # files were written under its data location (store.new_data_dir)
        snapshot = store.format(plan.table).commit_rewrite(
            plan.base_snapshot, removed, added,
            {"plan_id": plan.id, "policy": plan.policy, "groups": total,
             "approver": getattr(plan, "approved_by", None), "created_by": plan.created_by,
             "removed": len(removed), "added": len(added), "rows": rows_done})
        committed = True
    finally:
        if not committed:
            for directory in written:
                try:
                    remove_dir(spark, directory)
                except Exception:  # pragma: no cover - best effort; GC finds the rest
                    pass
    try:  # the commit is done: a failing progress sink must not turn it into a failure
        report(total, f"committed snapshot {snapshot.id}")
    except Exception:  # noqa: BLE001  # pragma: no cover
        pass
    return {
        "snapshot_id": snapshot.id,
        "base_snapshot": plan.base_snapshot,
        "groups": [asdict(r) for r in results],
        "partitions_removed": len(plan.partitions),
        "partitions_added": len(added),
        "rows": rows_done,
        "bytes_read": bytes_done,
        "bytes_written": sum(r.bytes_out for r in results),
        "seconds": round(time.perf_counter() - started, 3),
    }
