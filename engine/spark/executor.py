"""Run a plan on Spark: every group in ONE write job, verified from one aggregate, one commit.

WAIR section 5.1 rewrites the selected micro-partitions and swaps them in atomically; the
price of that rewrite (section 4.2's ``t_r``) is what the policy trades against savings, so
the executor must not pay a fixed cost per group. A plan runs as at most two Spark jobs
(three when a group's ordering must be fitted on a sample: Hilbert, Z-order, Qd-tree):

1. (only for fitted orderings) one sampling job over the key columns of all such groups;
2. the write: every input file is read once; each row gets its group (a broadcast join on
   the file path), its order key and a *bucket*; one hash shuffle sends each bucket to its
   task; each task sorts by (group, physical partition, key) and Spark's writer cuts the
   files: ``partitionBy(group[, physical partition])`` (no file straddles two groups, two
   ``partition_by`` values or two Qd-tree leaves) and ``maxRecordsPerFile`` (files of the
   target size, exactly, without sampling for boundaries);
3. the verification: one aggregate over the inputs and the written files, grouped by
   (side, group), compares row counts and order-independent checksums per group.

Only when every group is verified is ONE snapshot committed (:func:`_commit`), replacing
exactly the plan's partitions. Any failure commits nothing and deletes what was written.
``partial_progress_groups`` = N > 0 processes the groups in batches of N, each batch
written, verified and committed on its own (Iceberg's ``partial-progress.enabled``): a
failure keeps the batches already committed.

A big group is split across tasks into key ranges whose cut points come from the
zonemaps (a mixture of uniform distributions over each input file's [min, max], for a
``sort`` group's first column), from the fitting sample (for a fitted key) or from the
input files themselves (``binpack``); a wrong estimate only makes one smaller file per
range, never a wrong order. Layouts: ``sort`` (lexicographic on the key columns),
``hilbert`` / ``zorder`` / ``qdtree`` (an :mod:`engine.layout` ordering fitted by
:func:`engine.layout.groups.ordering_for_group`, its key computed by one Arrow UDF for all
groups), ``binpack`` (no reordering: rows keep their input order, files packed to size).

Nothing assumes the driver and the executors share a disk except through the table
location (files are listed and removed through Hadoop's FileSystem).

Test hooks (environment variable ``LA_EXECUTOR_FAULT``; not a setting, never set it in
production): ``before-commit`` exits the process after writing and verifying, just before
the commit; ``drop-row`` loses one row on the way to the writer (verification must catch
it); ``fail-group:N`` raises after group N (0-based) is verified.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import threading
import time
import uuid
import warnings
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

import numpy as np
import pyarrow as pa

from engine.core import logical_types
from engine.core.errors import ExecutionError, PlanError, StalePlanError
from engine.core.faults import crash_point
from engine.layout.base import ordering_from_json
from engine.layout.groups import ordering_for_group
from engine.spark import footers_parallel
from engine.spark.session import get_spark
from engine.table import fs as table_fs
from engine.table.store import TableStore

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

    from engine.core.config import Settings
    from engine.plans.plan import Plan
    from engine.policy.base import PlanGroup
    from engine.table.model import Partition, Snapshot, TableSchema

FAULT_ENV = "LA_EXECUTOR_FAULT"
KEY_COLUMN = "__la_key"
PID_COLUMN = "__la_pid"
GROUP_COLUMN = "__la_g"
PART_COLUMN = "__la_part"
ORD_COLUMN = "__la_ord"
PATH_COLUMN = "__la_path"
SIDE_COLUMN = "__la_side"
SAMPLE_ROWS = 100_000
SAMPLE_SEED = 20240917
#: bits of the first column's rank in a Qd-tree fine key (QdTree.fine_keys)
FINE_SHIFT = 17
#: layouts whose key is an engine.layout ordering fitted on a sample
FITTED = ("hilbert", "zorder", "qdtree", "paw")
#: layouts whose rows belong to tree leaves: a file never holds two leaves (fine keys
#: ``leaf << FINE_SHIFT | rank``, as QdTree.fine_keys and PawOrdering.fine_keys)
LEAVES = ("qdtree", "paw")
#: at most this many write tasks per core (more tasks: smaller sorts, more partial files)
TASKS_PER_CORE = 2

ProgressFn = Callable[[Mapping[str, Any]], None]


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
class _Spec:
    """Driver-side plan of one group inside the job."""

    index: int
    group: "PlanGroup"
    partitions: list["Partition"]
    rows: int
    bytes_in: int
    ordering_json: dict[str, Any] | None = None
    key_dtype: str = "long"
    sample_keys: Any = None
    fit: dict[str, Any] = field(default_factory=dict)
    cuts: list[Any] = field(default_factory=list)  # range cuts between the group's slices
    cut_on: str = ""  # column the cuts compare (a key column, KEY_COLUMN or ORD_COLUMN)
    buckets: list[int] = field(default_factory=list)  # one per slice


def _fault() -> str:
    return os.environ.get(FAULT_ENV, "").strip()


def _q(column: str) -> str:
    return f"`{column}`"


# -- filesystem through Hadoop (works for file:, hdfs:, s3a: alike) ----------------------
def _hadoop_fs(spark: "SparkSession", path: str) -> tuple[Any, Any]:
    jvm = spark.sparkContext._jvm
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    return hpath.getFileSystem(conf), hpath


#: scheme and authority of a URI (``file:``, ``file://``, ``s3a://bucket``): stripped so
#: the driver's and Spark's spellings of one file compare equal
_URI_HEAD = r"^[A-Za-z][A-Za-z0-9+.-]*:(//[^/]*)?"


def qualified(spark: "SparkSession", path: str) -> str:
    """``path`` as Spark's ``_metadata.file_path`` spells it once :data:`_URI_HEAD` is
    stripped from both: the qualified, URL-encoded path."""
    fs, hpath = _hadoop_fs(spark, path)
    return str(fs.makeQualified(hpath).toUri().getRawPath())


def list_data_files(spark: "SparkSession", directory: str) -> list[str]:
    """Parquet files under ``directory`` (recursively), spelled like ``directory``."""
    fs, hpath = _hadoop_fs(spark, directory)
    if not fs.exists(hpath):
        return []
    root = str(fs.makeQualified(hpath).toUri().getPath()).rstrip("/")
    base = directory.rstrip("/")
    found = []
    it = fs.listFiles(hpath, True)
    while it.hasNext():
        p = it.next().getPath()
        name = str(p.getName())
        if not name.endswith(".parquet") or name.startswith(("_", ".")):
            continue
        rel = str(p.toUri().getPath())[len(root):]
        found.append(base + rel)
    return sorted(found)


def remove_dir(spark: "SparkSession", directory: str) -> None:
    """Delete a directory this run wrote (never one a snapshot references)."""
    fs, hpath = _hadoop_fs(spark, directory)
    if fs.exists(hpath):
        fs.delete(hpath, True)


# -- checksums ---------------------------------------------------------------------------
def _checksum_exprs(columns: Sequence[str]) -> list[Any]:
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    cols = [F.col(_q(c)) for c in columns]
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


# -- Spark's hash partitioner, reproduced on the driver ----------------------------------
def _mix_k1(k1: int) -> int:
    k1 = (k1 * 0xCC9E2D51) & 0xFFFFFFFF
    k1 = ((k1 << 15) | (k1 >> 17)) & 0xFFFFFFFF
    return (k1 * 0x1B873593) & 0xFFFFFFFF


def _mix_h1(h1: int, k1: int) -> int:
    h1 ^= k1
    h1 = ((h1 << 13) | (h1 >> 19)) & 0xFFFFFFFF
    return (h1 * 5 + 0xE6546B64) & 0xFFFFFFFF


def spark_hash_long(value: int, seed: int = 42) -> int:
    """Spark's ``hash(bigint)`` (Murmur3_x86_32.hashLong, seed 42) as a signed int.

    Example:
    >>> spark_hash_long(0), spark_hash_long(1)
    (-1670924195, -1712319331)
    """
    v = value & 0xFFFFFFFFFFFFFFFF
    h1 = _mix_h1(seed & 0xFFFFFFFF, _mix_k1(v & 0xFFFFFFFF))
    h1 = _mix_h1(h1, _mix_k1(v >> 32))
    h1 ^= 8
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & 0xFFFFFFFF
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & 0xFFFFFFFF
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 >= 1 << 31 else h1


_TARGETS: dict[int, list[int]] = {}


def hash_targets(n: int) -> list[int]:
    """Integers ``v_i`` with ``pmod(hash(v_i), n) == i``: ``repartition(n, col)`` (Spark's
    hash partitioning) then sends the rows whose column is ``v_i`` to partition ``i``.
    Computed on the driver (no Spark job), cached per n.

    Example:
    >>> [spark_hash_long(v) % 3 for v in hash_targets(3)]
    [0, 1, 2]
    """
    if n not in _TARGETS:
        found: dict[int, int] = {}
        v = 0
        while len(found) < n:
            found.setdefault(spark_hash_long(v) % n, v)
            v += 1
        _TARGETS[n] = [found[i] for i in range(n)]
    return _TARGETS[n]


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


def _range_index(key: "Column", cuts: Sequence[Any], values: Sequence[Any]) -> "Column":
    """``values[i]`` for rows whose ``key`` lies in the i-th range between ``cuts`` (nulls
    in the first)."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    expr = F.when(key.isNull(), F.lit(values[0]))
    for i, cut in enumerate(cuts):
        expr = expr.when(key < F.lit(cut), F.lit(values[i]))
    return expr.otherwise(F.lit(values[len(cuts)]))


def range_partition(spark: "SparkSession", df: "DataFrame", key: Any, cuts: Sequence[Any],
                    n: int) -> "DataFrame":
    """Rows with ``key`` in the i-th range between ``cuts`` go to partition i (nulls to the
    first), in one shuffle and without Spark's sampling pass over all columns."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    targets = hash_targets(n)
    pid = _range_index(key, cuts, targets[:len(cuts) + 1]).cast("long")
    return df.withColumn(PID_COLUMN, pid).repartition(n, F.col(PID_COLUMN)).drop(PID_COLUMN)


# -- cut points without a sampling pass --------------------------------------------------
def mixture_quantiles(lows: Sequence[float], highs: Sequence[float], weights: Sequence[float],
                      fractions: Sequence[float]) -> list[float]:
    """Cut points at the given CDF ``fractions`` of a mixture of uniform distributions (one
    per file: its zonemap's [min, max], weighted by its rows).

    The CDF is piecewise linear between the files' bounds, so its inverse is exact there.

    Example (two files, [0, 10] and [10, 30], 100 rows each):
    >>> mixture_quantiles([0, 10], [10, 30], [100, 100], [0.25, 0.5, 0.75])
    [5.0, 10.0, 20.0]
    """
    lo = np.asarray(lows, dtype=float)
    hi = np.asarray(highs, dtype=float)
    w = np.asarray(weights, dtype=float)
    ok = np.isfinite(lo) & np.isfinite(hi) & (w > 0)
    lo, hi, w = lo[ok], hi[ok], w[ok]
    if not len(fractions) or w.sum() <= 0:
        return []
    xs = np.unique(np.concatenate([lo, hi]))
    width = np.maximum(hi - lo, 0.0)
    point = width == 0
    frac = np.where(point[None, :], (xs[:, None] >= lo[None, :]).astype(float),
                    np.clip((xs[:, None] - lo[None, :]) / np.where(point, 1.0, width)[None, :],
                            0.0, 1.0))
    cdf = (frac * w[None, :]).sum(axis=1) / w.sum()
    targets = np.asarray(fractions, dtype=float)
    keep = np.concatenate([[True], np.diff(cdf) > 0])  # np.interp needs increasing xp
    cuts = np.interp(targets, cdf[keep], xs[keep])
    return boundaries(sorted(float(c) for c in cuts), len(cuts) + 1) if len(cuts) else []


def _zonemap_cuts(spec: _Spec, column: str, ltype: str, fractions: Sequence[float]) -> list[Any]:
    """Cut points of a sort group's first column from its files' zonemaps (no Spark job);
    [] where the zonemaps cannot say (strings, unknown bounds)."""
    if not len(fractions) or logical_types.is_string(ltype) or ltype == "bool":
        return []
    lows, highs, weights = [], [], []
    for p in spec.partitions:
        st = p.columns.get(column)
        if st is None or st.min is None or st.max is None:
            return []
        lows.append(logical_types.encode_scalar(ltype, st.min))
        highs.append(logical_types.encode_scalar(ltype, st.max))
        weights.append(p.rows)
    raw = mixture_quantiles(lows, highs, weights, fractions)
    decoded = [logical_types.decode_scalar(ltype, c) for c in raw]
    out: list[Any] = []
    for c in decoded:  # decoding rounds dates and ints: drop repeats
        if c is not None and (not out or c > out[-1]):
            out.append(c)
    return out


# -- fitted orderings (Hilbert, Z-order, Qd-tree) ----------------------------------------
def _sample_fitted(df: "DataFrame", specs: Sequence[_Spec], schema: "TableSchema") -> Any:
    """ONE job: a sample of ~SAMPLE_ROWS rows per fitted group, only its key columns."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    fitted = [s for s in specs if s.group.layout in FITTED]
    cols = sorted({c for s in fitted for c in s.group.columns}, key=schema.names.index)
    g = F.col(GROUP_COLUMN)
    wanted = {s.index: min(1.0, SAMPLE_ROWS / max(1, s.rows)) for s in fitted}
    fraction = F.try_element_at(F.array(*[F.lit(wanted.get(i, 0.0))
                                          for i in range(max(wanted) + 1)]), (g + 1).cast("int"))
    picked = df.select(g, *[F.col(_q(c)) for c in cols]).where(F.rand(SAMPLE_SEED) < fraction)
    return picked.toArrow()


def _fit_group(spec: _Spec, sample: Any, schema: "TableSchema", rows_per_file: float) -> None:
    """Fit the group's ordering (:func:`ordering_for_group`) on its rows of the sample.

    A Qd-tree's ``min_leaf_rows`` defaults to one output file; its key is the fine key
    (leaf, rank of the first column), so a leaf larger than a file can be cut along the
    first column.
    """
    import pyarrow.compute as pc  # beside pyarrow: only when a fitted group runs

    group = spec.group
    cols = list(group.columns)
    types = {c: schema.type_of(c) for c in cols}
    mine = sample.filter(pc.equal(sample.column(GROUP_COLUMN), spec.index))
    data = {c: logical_types.encode_arrow(types[c], mine.column(c))[0] for c in cols}
    ordering = ordering_for_group(group, types, data, group_rows=spec.rows,
                                  default_leaf_rows=max(1, round(rows_per_file)))
    spec.fit = {"sample_rows": mine.num_rows}
    if group.layout in LEAVES:
        if group.layout == "qdtree":
            spec.fit["min_leaf_rows"] = ordering.min_leaf_rows
        spec.fit["leaves"] = int(ordering.n_leaves_)
        keys = np.asarray(ordering.fine_keys(data))
    else:
        keys = np.asarray(ordering.keys(data))
    spec.key_dtype = "long" if np.issubdtype(keys.dtype, np.integer) else "double"
    spec.ordering_json = ordering.to_json()
    spec.sample_keys = keys


def _with_key(df: "DataFrame", specs: Sequence[_Spec], schema: "TableSchema",
              dtype: str) -> "DataFrame":
    """Append the fitted groups' key column, computed on the executors by ONE scalar Arrow
    UDF that receives the group id and the key columns and dispatches per group (each
    group's ordering travels as JSON in the closure and is rebuilt once per worker).
    Rows of other groups get 0: they are ordered by their own columns."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred
    from pyspark.sql.functions import ArrowUDFType  # pyspark: costly import, deferred
    from pyspark.sql.types import DoubleType, LongType

    fitted = [s for s in specs if s.group.layout in FITTED]
    cols = sorted({c for s in fitted for c in s.group.columns}, key=schema.names.index)
    ltypes = {c: schema.type_of(c) for c in cols}
    plans = {s.index: (s.ordering_json, list(s.group.columns), s.group.layout in LEAVES)
             for s in fitted}
    np_type = np.int64 if dtype == "long" else np.float64
    holder: dict[int, Any] = {}

    def compute(groups, *arrays):  # executed in the Python workers
        g = np.asarray(groups.to_numpy(zero_copy_only=False))
        out = np.zeros(len(g), dtype=np_type)
        by_name = dict(zip(cols, arrays))
        for gid in np.unique(g):
            if int(gid) not in plans:
                continue
            spec_json, names, fine = plans[int(gid)]
            if gid not in holder:
                holder[gid] = ordering_from_json(spec_json)
            idx = np.flatnonzero(g == gid)
            take = pa.array(idx)
            data = {c: logical_types.encode_arrow(ltypes[c], by_name[c].take(take))[0]
                    for c in names}
            ordering = holder[gid]
            keys = ordering.fine_keys(data) if fine else ordering.keys(data)
            out[idx] = np.asarray(keys).astype(np_type, copy=False)
        return pa.array(out)

    key_type = LongType() if dtype == "long" else DoubleType()
    with warnings.catch_warnings():  # "prefer type hints": *arrays cannot carry them
        warnings.simplefilter("ignore", UserWarning)
        udf = F.arrow_udf(compute, key_type, ArrowUDFType.SCALAR)
    return df.withColumn(KEY_COLUMN, udf(F.col(GROUP_COLUMN), *[F.col(_q(c)) for c in cols]))


# -- the physical design of the output ----------------------------------------------------
def rows_per_file(rows: int, nbytes: int, target_rows: int | None, target_bytes: int | None,
                  params: Mapping[str, Any] | None = None) -> int:
    """Rows in one output file: the group's ``target_file_bytes``, else the table's target
    rows, else its target bytes (bytes turned into rows at the inputs' mean row width).

    Example:
    >>> rows_per_file(1000, 100_000, 250, None), rows_per_file(1000, 100_000, None, 20_000)
    (250, 200)
    >>> rows_per_file(1000, 100_000, 250, None, {"target_file_bytes": 50_000})
    500
    """
    width = nbytes / rows if rows else 1.0
    wanted = (params or {}).get("target_file_bytes")
    if wanted:
        return max(1, int(round(float(wanted) / width)))
    if target_rows and target_rows > 0:
        return int(target_rows)
    if target_bytes and target_bytes > 0:
        return max(1, int(round(target_bytes / width)))
    return max(1, rows)


#: a group is split across tasks only into slices of at least this many output files (each
#: slice may end in one partial file, as the cuts are estimates)
MIN_FILES_PER_SLICE = 4


def slice_fractions(rows: int, max_rows: int, share: float) -> list[float]:
    """Where to cut a group of ``rows`` into slices of about ``share`` rows: at whole
    output files (multiples of ``max_rows``), each slice at least MIN_FILES_PER_SLICE files.

    Example (10 files of 100 rows, 2 tasks' worth of rows each 500):
    >>> slice_fractions(1000, 100, 500.0)
    [0.5]
    >>> slice_fractions(600, 100, 150.0)  # 6 files: too few to split
    []
    """
    files = math.ceil(rows / max(1, max_rows))
    k = max(1, min(int(rows // max(share, 1.0)), files // MIN_FILES_PER_SLICE))
    return [round(j * files / k) * max_rows / rows for j in range(1, k)]


def _plan_slices(specs: Sequence[_Spec], schema: "TableSchema", n_tasks: int,
                 max_rows: int) -> int:
    """Split big groups into key ranges and pack all slices into at most ``n_tasks``
    buckets (largest first into the least loaded); returns the number of buckets."""
    total = sum(s.rows for s in specs)
    share = total / max(1, n_tasks)
    sizes: list[tuple[float, _Spec, int]] = []
    for s in specs:
        fractions = slice_fractions(s.rows, max_rows, share)
        if fractions and s.group.layout == "sort":
            first = s.group.columns[0]
            s.cuts, s.cut_on = _zonemap_cuts(s, first, schema.type_of(first), fractions), first
        elif fractions and s.group.layout == "binpack":
            s.cuts = [int(len(s.partitions) * f) for f in fractions]
            s.cuts, s.cut_on = sorted(set(c for c in s.cuts if c > 0)), ORD_COLUMN
        elif fractions and s.group.layout in FITTED and s.sample_keys is not None:
            keys = np.sort(s.sample_keys[~np.isnan(s.sample_keys)]
                           if s.sample_keys.dtype.kind == "f" else s.sample_keys)
            picked = [keys[min(len(keys) - 1, int(f * len(keys)))].item() for f in fractions]
            s.cuts, s.cut_on = sorted(set(picked)), KEY_COLUMN
        n = len(s.cuts) + 1
        sizes.extend((s.rows / n, s, j) for j in range(n))
        s.buckets = [0] * n
    n_buckets = min(len(sizes), max(1, n_tasks))
    load = [0.0] * n_buckets
    for rows, s, j in sorted(sizes, key=lambda t: -t[0]):
        b = int(np.argmin(load))
        load[b] += rows
        s.buckets[j] = b
    return n_buckets


def _pid_column(specs: Sequence[_Spec], n_buckets: int) -> "Column":
    """Each row's shuffle target: its group's bucket, or its slice's bucket by range."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    targets = hash_targets(n_buckets)
    g = F.col(GROUP_COLUMN)
    bucket = {s.index: targets[s.buckets[0]] for s in specs}
    by_group = [F.lit(bucket.get(i, 0)) for i in range(max(bucket) + 1)]
    # an O(1) lookup whatever the groups, indexed from group 0: rows of groups outside this
    # write (filtered out, but constant-folded first in their union branch) must not fail
    pid = F.try_element_at(F.array(*by_group), (g + 1).cast("int"))
    for s in specs:
        if s.cuts:
            key = F.col(_q(s.cut_on))
            pid = F.when(g == s.index, _range_index(key, s.cuts,
                                                    [targets[b] for b in s.buckets])) \
                .otherwise(pid)
    return pid.cast("long")


def _part_column(specs: Sequence[_Spec]) -> "Column | None":
    """The physical partition a file must not straddle inside its group: the group's
    ``partition_by`` column's value and/or a Qd-tree leaf; None when no group has one."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    kinds: dict[tuple[str | None, bool], list[int]] = {}
    for s in specs:
        by = (s.group.layout_params or {}).get("partition_by")
        leaf = s.group.layout in LEAVES
        if by or leaf:
            kinds.setdefault((by, leaf), []).append(s.index)
    if not kinds:
        return None
    expr = None
    for (by, leaf), groups in kinds.items():
        pieces = []
        if leaf:
            pieces.append(F.shiftright(F.col(KEY_COLUMN).cast("long"), FINE_SHIFT).cast("string"))
        if by:
            pieces.append(F.coalesce(F.col(_q(by)).cast("string"), F.lit("\u2205")))
        value = pieces[0] if len(pieces) == 1 else F.concat_ws("|", *pieces)
        cond = F.col(GROUP_COLUMN).isin(groups)
        expr = F.when(cond, value) if expr is None else expr.when(cond, value)
    return expr.otherwise(F.lit(""))


def _sort_columns(specs: Sequence[_Spec]) -> list["Column"]:
    """Sort expressions after (group, partition): per distinct key spec, its columns where
    the row's group uses that spec and null elsewhere, so each group sorts on its own key."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    by_spec: dict[tuple[str, ...], list[int]] = {}
    for s in specs:
        if s.group.layout == "sort":
            key = tuple(s.group.columns)
        elif s.group.layout == "binpack":
            key = (ORD_COLUMN, "__la_row")
        else:  # ties of a fitted key (a Qd-tree leaf's rank bucket) in the first column's order
            key = (KEY_COLUMN, s.group.columns[0])
        by_spec.setdefault(key, []).append(s.index)
    out = []
    for key, groups in by_spec.items():
        cond = F.col(GROUP_COLUMN).isin(groups)
        out.extend(F.when(cond, F.col(_q(c))) for c in key)
    return out


# -- the run's measured cost: Spark's own task metrics ---------------------------------
class JobMetrics:
    """Wall time, executor CPU time, bytes read and written and the jobs of a job group.

    Spark's status store keeps each stage's task metrics (also with the UI disabled); the
    jobs are found through the job group this object sets on the calling thread.
    """

    def __init__(self, spark: "SparkSession", label: str) -> None:
        self.spark, self.group = spark, f"la-{label}-{uuid.uuid4().hex[:8]}"
        self.started = time.perf_counter()
        spark.sparkContext.setJobGroup(self.group, label, interruptOnCancel=False)

    def close(self) -> dict[str, Any]:
        sc = self.spark.sparkContext
        sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
        wall = time.perf_counter() - self.started
        tracker, store = sc.statusTracker(), sc._jsc.sc().statusStore()
        jobs = sorted(tracker.getJobIdsForGroup(self.group))
        cpu_ns = read = written = rows_out = 0
        for job in jobs:
            info = tracker.getJobInfo(job)
            for sid in (info.stageIds if info else []):
                try:
                    st = store.lastStageAttempt(int(sid))
                except Exception:  # noqa: BLE001 - a skipped stage has no attempt
                    continue
                cpu_ns += int(st.executorCpuTime())
                read += int(st.inputBytes())
                written += int(st.outputBytes())
                rows_out += int(st.outputRecords())
        return {"wall_seconds": round(wall, 3), "executor_cpu_seconds": round(cpu_ns / 1e9, 3),
                "bytes_read": read, "bytes_written": written, "rows_written": rows_out,
                "spark_jobs": len(jobs)}


class _WriteWatcher:
    """Polls Spark while the write runs: tasks done and rows written so far."""

    def __init__(self, spark: "SparkSession", report: Callable[[int, int, int], None]) -> None:
        self.spark, self.report = spark, report
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="la-write-watch", daemon=True)

    def __enter__(self) -> "_WriteWatcher":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        sc = self.spark.sparkContext
        while not self._stop.wait(1.0):
            try:
                store = sc._jsc.sc().statusStore()
                done = total = rows = 0
                for sid in sc.statusTracker().getActiveStageIds():
                    st = store.lastStageAttempt(int(sid))
                    done += int(st.numCompleteTasks())
                    total += int(st.numTasks())
                    rows += int(st.outputRecords())
                if total:
                    self.report(done, total, rows)
            except Exception:  # noqa: BLE001 - progress is best effort, never a failure
                pass


# -- the job ---------------------------------------------------------------------------
#: session settings while a rewrite runs: adaptive execution runs every shuffle stage and
#: broadcast as a job of its own (and may merge output files); a planned write adds a
#: sort by the partition columns that makes the optimizer drop ours (rows would leave in
#: no order); more than 32 input paths would be listed by an extra Spark job
JOB_CONF = {"spark.sql.adaptive.enabled": "false",
            "spark.sql.optimizer.plannedWrite.enabled": "false",
            "spark.sql.sources.parallelPartitionDiscovery.threshold": "1000000"}


@contextlib.contextmanager
def session_conf(spark: "SparkSession", conf: Mapping[str, str]) -> Iterator[None]:
    """Set runtime SQL settings for the duration of a rewrite, then restore them."""
    old = {k: spark.conf.get(k, None) for k in conf}
    for k, v in conf.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)


def input_schema(path: str) -> Any:
    """The Spark schema of a Parquet file, from its footer read on the driver: Spark's own
    inference would run a job of its own for every read."""
    import pyarrow.parquet as pq  # beside pyarrow: only when a plan runs
    from pyspark.sql.pandas.types import from_arrow_schema  # pyspark: costly, deferred

    fs, inner = table_fs.filesystem(path)
    return from_arrow_schema(pq.read_schema(inner, filesystem=fs), prefer_timestamp_ntz=True)


def _read_inputs(spark: "SparkSession", schema: "TableSchema", specs: Sequence[_Spec],
                 spark_schema: Any) -> "DataFrame":
    """Every input file read once, each row tagged with its group (and, for ``binpack``,
    its file's position in the group and its row's position in the file).

    One scan per group, unioned: a join on the file path would broadcast the tags in a
    Spark job of its own, a map lookup costs a comparison per file and row.
    """
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    names = [c for c in schema.names if c in spark_schema.fieldNames()]
    parts = []
    for s in specs:
        raw = spark.read.schema(spark_schema).parquet(*[p.path for p in s.partitions])
        extra = [F.lit(s.index).alias(GROUP_COLUMN)]
        if s.group.layout == "binpack":
            mine = F.array(*[F.lit(qualified(spark, p.path)) for p in s.partitions])
            path = F.regexp_replace(F.col("_metadata.file_path"), _URI_HEAD, "")
            extra += [F.array_position(mine, path).cast("int").alias(ORD_COLUMN),
                      F.col("_metadata.row_index").alias("__la_row")]
        elif any(t.group.layout == "binpack" for t in specs):
            extra += [F.lit(0).alias(ORD_COLUMN), F.lit(0).cast("long").alias("__la_row")]
        parts.append(raw.select(*[F.col(_q(c)) for c in names], *extra))
    df = parts[0]
    for more in parts[1:]:
        df = df.union(more)
    return df


def _write(df: "DataFrame", specs: Sequence[_Spec], n_buckets: int, out_dir: str,
           max_rows: int, row_group_bytes: int | None, fault: str, data_cols: Sequence[str],
           ) -> None:
    """The one shuffle, sort and write (Spark's writer cuts files per group, partition
    and ``max_rows``)."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    part = _part_column(specs)
    if part is not None:
        df = df.withColumn(PART_COLUMN, part)
    df = df.withColumn(PID_COLUMN, _pid_column(specs, n_buckets))
    if fault == "drop-row":  # test hook: lose the row(s) equal to one input row
        row_hash = F.xxhash64(*[F.col(_q(c)) for c in data_cols])
        victim = df.select(row_hash.alias("h")).limit(1).collect()[0]["h"]
        df = df.where(row_hash != F.lit(victim))
    partition_cols = [GROUP_COLUMN] + ([PART_COLUMN] if part is not None else [])
    ordered = (df.repartition(n_buckets, F.col(PID_COLUMN))
               .sortWithinPartitions(*[F.col(c) for c in partition_cols], *_sort_columns(specs)))
    out = ordered.select(*[F.col(_q(c)) for c in data_cols], *partition_cols)
    # append: a plan whose groups ask for different file sizes writes once per size into
    # the same fresh directory (overwrite would delete the previous write's files)
    writer = out.write.mode("append").partitionBy(*partition_cols) \
        .option("maxRecordsPerFile", int(max_rows))
    if row_group_bytes:
        writer = writer.option("parquet.block.size", int(row_group_bytes))
    writer.parquet(out_dir)


_GROUP_DIR = re.compile(rf"{GROUP_COLUMN}=(\d+)")
#: a group's files after :func:`flatten`: ``<out_dir>/g<group>-<n>-<Spark's name>``
_GROUP_FILE = re.compile(r"/g(\d+)-\d+-[^/]*$")


def flatten(spark: "SparkSession", out_dir: str) -> list[str]:
    """Move the files Spark's ``partitionBy`` wrote into ``__la_g=i/[__la_part=v/]`` out
    of those directories, as ``g<i>-<n>-<name>``, and remove the directories.

    Hive-style directory names would make DuckDB, pyarrow datasets and Spark itself add
    the helper columns to the table when they read the files. A rename is a metadata
    operation on local disks and HDFS (a copy on object stores).
    """
    fs, _ = _hadoop_fs(spark, out_dir)
    jvm = spark.sparkContext._jvm
    moved = []
    for n, path in enumerate(list_data_files(spark, out_dir)):
        m = _GROUP_DIR.search(path)
        if not m:
            moved.append(path)
            continue
        target = f"{out_dir.rstrip('/')}/g{m.group(1)}-{n:05d}-{path.rsplit('/', 1)[1]}"
        if not fs.rename(jvm.org.apache.hadoop.fs.Path(path), jvm.org.apache.hadoop.fs.Path(target)):
            raise ExecutionError(f"could not move {path} to {target}")
        moved.append(target)
    for st in fs.listStatus(jvm.org.apache.hadoop.fs.Path(out_dir)):
        if st.isDirectory() and str(st.getPath().getName()).startswith(GROUP_COLUMN):
            fs.delete(st.getPath(), True)
    return sorted(moved)


def _verify(spark: "SparkSession", inputs: "DataFrame", files: Sequence[str],
            data_cols: Sequence[str], schema_df: "DataFrame") -> dict[int, dict[str, Any]]:
    """ONE aggregate over the inputs and the written files: rows and checksum per
    (side, group). Returns {group: {"in": (rows, checksum), "out": (rows, checksum)}}."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    cols = [F.col(_q(c)) for c in data_cols]
    left = inputs.select(*cols, F.col(GROUP_COLUMN), F.lit(0).alias(SIDE_COLUMN))
    parts = [left]
    if files:
        written = (spark.read.schema(schema_df.schema).parquet(*files)
                   .select(*cols, F.regexp_extract(F.col("_metadata.file_path"),
                                                   _GROUP_FILE.pattern, 1)
                           .cast("int").alias(GROUP_COLUMN),
                           F.lit(1).alias(SIDE_COLUMN)))
        parts.append(written)
    both = parts[0] if len(parts) == 1 else parts[0].unionByName(parts[1])
    rows = both.groupBy(SIDE_COLUMN, GROUP_COLUMN).agg(*_checksum_exprs(data_cols)).collect()
    out: dict[int, dict[str, Any]] = {}
    for r in rows:
        side = "in" if int(r[SIDE_COLUMN]) == 0 else "out"
        out.setdefault(int(r[GROUP_COLUMN]), {})[side] = _format_checksum(r.asDict())
    return out


@dataclass
class RewriteResult:
    """What one write job did: per group, its files and checks; the job's measured cost."""

    groups: list[GroupResult]
    measured: dict[str, Any]
    phases: dict[str, float]


def _specs(schema: "TableSchema", groups: Sequence[tuple["PlanGroup", Sequence["Partition"]]],
           first_index: int = 0) -> list[_Spec]:
    out = []
    for i, (group, parts) in enumerate(groups):
        for c in group.columns:
            schema.type_of(c)  # ColumnNotFoundError names the column
        by = (group.layout_params or {}).get("partition_by")
        if by:
            schema.type_of(by)
        out.append(_Spec(first_index + i, group, list(parts), sum(p.rows for p in parts),
                         sum(p.bytes for p in parts)))
    return out


def rewrite(spark: "SparkSession", schema: "TableSchema",
            groups: Sequence[tuple["PlanGroup", Sequence["Partition"]]], out_dir: str,
            target_rows: int | None, target_bytes: int | None, fault: str = "",
            progress: Callable[[int, int, int], None] | None = None, first_index: int = 0,
            ) -> RewriteResult:
    """Rewrite ``groups`` (each a plan group and its input partitions) into ``out_dir``
    in one write job per file-size setting (one for almost every plan), verify every
    group from one aggregate; raises ExecutionError when any group does not match.

    ``progress(tasks_done, tasks_total, rows_written)`` is called while the write runs.
    """
    started = time.perf_counter()
    phases: dict[str, float] = {}
    specs = _specs(schema, groups, first_index)
    with session_conf(spark, JOB_CONF):
        return _rewrite(spark, schema, specs, out_dir, target_rows, target_bytes, fault,
                        progress, started, phases)


def _rewrite(spark: "SparkSession", schema: "TableSchema", specs: list[_Spec], out_dir: str,
             target_rows: int | None, target_bytes: int | None, fault: str,
             progress: Callable[[int, int, int], None] | None, started: float,
             phases: dict[str, float]) -> RewriteResult:
    """:func:`rewrite`'s body, under :data:`JOB_CONF`."""
    mark = started

    def lap(name: str) -> None:
        nonlocal mark
        now = time.perf_counter()
        phases[name] = round(now - mark, 3)
        mark = now

    metrics = JobMetrics(spark, f"rewrite-{specs[0].index}")
    try:
        spark_schema = input_schema(specs[0].partitions[0].path)
        df = _read_inputs(spark, schema, specs, spark_schema)
        data_cols = [c for c in schema.names if c in df.columns]
        total_rows = sum(s.rows for s in specs)
        total_bytes = sum(s.bytes_in for s in specs)
        settings_of = {}
        for s in specs:
            params = s.group.layout_params or {}
            settings_of[s.index] = (rows_per_file(s.rows, s.bytes_in, target_rows, target_bytes,
                                                  params), params.get("row_group_bytes"))
        if any(s.group.layout in FITTED for s in specs):
            sample = _sample_fitted(df, specs, schema)
            for s in specs:
                if s.group.layout in FITTED:
                    _fit_group(s, sample, schema, settings_of[s.index][0])
            lap("fit")
            dtype = "double" if any(s.key_dtype == "double" for s in specs
                                    if s.group.layout in FITTED) else "long"
            df = _with_key(df, specs, schema, dtype)
        cores = max(1, spark.sparkContext.defaultParallelism)
        for (max_rows, rg_bytes) in sorted(set(settings_of.values()), key=str):
            batch = [s for s in specs if settings_of[s.index] == (max_rows, rg_bytes)]
            rows_batch = sum(s.rows for s in batch)
            n_tasks = max(1, min(math.ceil(rows_batch / max_rows), TASKS_PER_CORE * cores))
            n_buckets = _plan_slices(batch, schema, n_tasks, max_rows)
            subset = df if len(batch) == len(specs) else df.where(
                df[GROUP_COLUMN].isin([s.index for s in batch]))
            with _WriteWatcher(spark, progress or (lambda *_: None)):
                _write(subset, batch, n_buckets, out_dir, max_rows, rg_bytes, fault, data_cols)
        lap("order_write")
        files = flatten(spark, out_dir)
        crash_point("after_write")
        if total_rows and not files:
            raise ExecutionError(f"Spark wrote no data files into {out_dir}")
        checks = _verify(spark, _read_inputs(spark, schema, specs, spark_schema), files, data_cols,
                         df.select(*[_q(c) for c in data_cols]))
        lap("verify")
    finally:
        measured = metrics.close()
    measured["bytes_read_inputs"] = total_bytes
    files_of: dict[int, list[str]] = {}
    for f in files:
        m = _GROUP_FILE.search(f)
        if m:
            files_of.setdefault(int(m.group(1)), []).append(f)
    results = []
    for s in specs:
        got = checks.get(s.index, {})
        rows_in, sum_in = got.get("in", (0, "0"))
        rows_out, sum_out = got.get("out", (0, "0"))
        if rows_in != s.rows:
            raise ExecutionError(
                f"group {s.index}: the input files hold {rows_in} rows but the snapshot "
                f"says {s.rows}; the table's metadata does not match its files")
        if rows_out != rows_in or sum_out != sum_in:
            raise ExecutionError(
                f"group {s.index}: verification failed: input {rows_in} rows (checksum "
                f"{sum_in}), written {rows_out} rows (checksum {sum_out}); "
                "nothing was committed")
        mine = files_of.get(s.index, [])
        results.append(GroupResult(
            index=s.index, layout=s.group.layout, columns=list(s.group.columns),
            inputs=len(s.partitions), outputs=len(mine), rows=rows_in, bytes_in=s.bytes_in,
            bytes_out=0, checksum=sum_in, seconds=round(time.perf_counter() - started, 3),
            files=mine, phases=dict(phases), fit=s.fit))
    measured["wall_seconds"] = round(time.perf_counter() - started, 3)
    return RewriteResult(results, measured, phases)


# -- the plan --------------------------------------------------------------------------
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


def _commit(store: TableStore, table: str, base_snapshot: str, removed: Sequence[str],
            added: Sequence["Partition"], summary: Mapping[str, Any]) -> "Snapshot":
    """Publish ONE snapshot replacing ``removed`` with ``added`` (the only commit call),
    through the table's own format: the native chain, one Iceberg transaction, or one Delta
    log entry; the new files were written under its data location (``store.new_data_dir``)."""
    return store.format(table).commit_rewrite(base_snapshot, list(removed), list(added),
                                              dict(summary))


def _batches(n: int, size: int) -> list[range]:
    """Group indices per commit: all at once, or ``size`` at a time (partial progress).

    Example:
    >>> [list(b) for b in _batches(5, 2)], [list(b) for b in _batches(3, 0)]
    ([[0, 1], [2, 3], [4]], [[0, 1, 2]])
    """
    step = n if size <= 0 else size
    return [range(i, min(n, i + step)) for i in range(0, n, max(1, step))]


def execute_plan(settings: "Settings", plan: "Plan", spark: "SparkSession | None" = None,
                 progress: ProgressFn | None = None,
                 approvers: Sequence[str] = ()) -> dict[str, Any]:
    """Rewrite the plan's groups in one job and commit one snapshot; returns the result.

    The caller (``engine.plans.service.run_plan``) owns the plan's state transitions; this
    function owns the files: it writes, verifies, commits, and on any failure removes what
    it wrote (and has not committed) before re-raising. With
    ``settings.partial_progress_groups`` = N > 0 the groups are committed N at a time.
    """
    spark = spark or get_spark(settings)
    fault = _fault()
    store = TableStore(settings)
    info = store.info(plan.table)
    current = store.current_snapshot(plan.table)
    if current.id != plan.base_snapshot:
        raise StalePlanError(f"plan {plan.id} is based on snapshot {plan.base_snapshot} but "
                             f"table {plan.table} is at {current.id}; create a new plan")
    by_path = {p.path: p for p in current.partitions}
    _validate_groups(plan, by_path)
    total = len(plan.groups)
    state = {"done": 0, "rows": 0, "bytes": 0}
    started = time.perf_counter()

    def report(message: str) -> None:
        if progress is not None:
            progress({"groups_done": state["done"], "groups_total": total,
                      "rows": state["rows"], "bytes": state["bytes"], "message": message})

    def on_write(done: int, tasks: int, rows: int) -> None:
        report(f"writing: {done}/{tasks} tasks, {rows:,} rows written")

    results: list[GroupResult] = []
    snapshots: list[str] = []
    measured: list[dict[str, Any]] = []
    base_id = plan.base_snapshot
    report(f"rewriting {len(plan.partitions)} partitions in {total} groups")
    for batch in _batches(total, int(getattr(settings, "partial_progress_groups", 0) or 0)):
        out_dir = store.new_data_dir(plan.table, f"plan{plan.id}-b{batch.start}")
        committed = False
        try:
            pairs = [(plan.groups[i], [by_path[p] for p in plan.groups[i].partitions])
                     for i in batch]
            run = rewrite(spark, current.schema, pairs, out_dir, info.target_rows,
                          info.target_bytes, fault, on_write, first_index=batch.start)
            added = _footers(spark, store, plan.table, current.schema, run.groups)
            for r, group in zip(run.groups, (plan.groups[i] for i in batch)):
                state["done"] += 1
                state["rows"] += r.rows
                state["bytes"] += r.bytes_in
                report(f"group {r.index + 1}/{total}: {r.inputs} -> {r.outputs} files, "
                       f"{r.rows} rows, {group.layout} on {', '.join(group.columns)}")
                if fault == f"fail-group:{r.index}":
                    raise ExecutionError(f"injected failure after group {r.index} ({FAULT_ENV})")
            crash_point("after_verify")
            if fault == "before-commit":
                os._exit(97)  # simulate a crash between write and commit (test hook)
            removed = [p for i in batch for p in plan.groups[i].partitions]
            snapshot = _commit(store, plan.table, base_id, removed, added, {
                "plan_id": plan.id, "policy": plan.policy, "groups": len(batch),
                "approver": ", ".join(approvers) or None, "created_by": plan.created_by,
                "removed": len(removed), "added": len(added),
                "rows": sum(r.rows for r in run.groups)})
            committed = True
            crash_point("after_commit")
        finally:
            if not committed:
                try:
                    remove_dir(spark, out_dir)
                except Exception:  # pragma: no cover - best effort; GC finds the rest
                    pass
        base_id = snapshot.id
        snapshots.append(snapshot.id)
        results.extend(run.groups)
        measured.append(run.measured)
    try:  # the commit is done: a failing progress sink must not turn it into a failure
        report(f"committed snapshot {snapshots[-1]}")
    except Exception:  # noqa: BLE001  # pragma: no cover
        pass
    return _result(plan, snapshots, results, measured, time.perf_counter() - started)


def _footers(spark: "SparkSession", store: TableStore, table: str, schema: "TableSchema",
             groups: Sequence[GroupResult]) -> list["Partition"]:
    """The new files' zonemaps (from their footers), in group order; fills bytes_out."""
    next_seq = store.next_seq(table)
    added: list["Partition"] = []
    for r in groups:
        _, parts = footers_parallel.read_partitions(spark, r.files, schema=schema,
                                                    first_seq=next_seq)
        next_seq += len(parts)
        r.bytes_out = sum(p.bytes for p in parts)
        r.files = [p.path for p in parts]
        added.extend(parts)
    return added


def _result(plan: "Plan", snapshots: Sequence[str], results: Sequence[GroupResult],
            measured: Sequence[Mapping[str, Any]], seconds: float) -> dict[str, Any]:
    """The run's result as stored with the plan (additive JSON: older keys kept)."""
    total = {k: sum(m.get(k, 0) for m in measured)
             for k in ("executor_cpu_seconds", "bytes_read", "bytes_written", "spark_jobs")}
    total["executor_cpu_seconds"] = round(total["executor_cpu_seconds"], 3)
    total["wall_seconds"] = round(seconds, 3)
    return {
        "snapshot_id": snapshots[-1],
        "snapshots": list(snapshots),
        "base_snapshot": plan.base_snapshot,
        "groups": [asdict(r) for r in results],
        "partitions_removed": len(plan.partitions),
        "partitions_added": sum(r.outputs for r in results),
        "rows": sum(r.rows for r in results),
        "bytes_read": sum(r.bytes_in for r in results),
        "bytes_written": sum(r.bytes_out for r in results),
        "seconds": round(seconds, 3),
        "measured": total,
    }
