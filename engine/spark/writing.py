"""The one shuffle, sort and write of a rewrite job.

Each row gets a shuffle target (its group's bucket, or its key range's), one hash shuffle
sends it to its task, the task sorts by (group, physical partition, key) and Spark's writer
cuts the files: ``partitionBy(group[, physical partition])`` (no file straddles two groups,
two ``partition_by`` values or two Qd-tree leaves) and ``maxRecordsPerFile`` (files of the
target size, exactly, without sampling for boundaries). When every group sorts on one
date or 32-bit integer column, (group, key) is one packed long that Spark radix-sorts
(:attr:`ExecutorOptions.group_write <engine.spark.options.ExecutorOptions>` "packed",
:func:`packed_key`).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence

from engine.spark.hashing import hash_targets, long_array
from engine.table import fs as table_fs
from engine.spark.jobspec import (
    FINE_SHIFT, GROUP_COLUMN, KEY_COLUMN, LEAVES, ORD_COLUMN, PART_COLUMN, PID_COLUMN,
    ROW_COLUMN, GroupSpec, q,
)
from engine.spark.options import DEFAULT_OPTIONS, ExecutorOptions

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

#: session settings while a rewrite runs: adaptive execution runs every shuffle stage and
#: broadcast as a job of its own (and may merge output files); a planned write adds a
#: sort by the partition columns that makes the optimizer drop ours (rows would leave in
#: no order); more than 32 input paths would be listed by an extra Spark job; no
#: ``_SUCCESS`` marker (the run verifies its files itself, and a marker left by a killed
#: run is a hidden file an open format's gc does not list)
JOB_CONF = {"spark.sql.adaptive.enabled": "false",
            "spark.sql.optimizer.plannedWrite.enabled": "false",
            "spark.sql.sources.parallelPartitionDiscovery.threshold": "1000000",
            "mapreduce.fileoutputcommitter.marksuccessfuljobs": "false"}


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


def range_index(key: "Column", cuts: Sequence[Any], values: Sequence[Any]) -> "Column":
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
    pid = range_index(key, cuts, targets[:len(cuts) + 1]).cast("long")
    return df.withColumn(PID_COLUMN, pid).repartition(n, F.col(PID_COLUMN)).drop(PID_COLUMN)


def pid_column(specs: Sequence[GroupSpec], n_buckets: int) -> "Column":
    """Each row's shuffle target: its group's bucket, or its slice's bucket by range."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    targets = hash_targets(n_buckets)
    g = F.col(GROUP_COLUMN)
    bucket = {s.index: targets[s.buckets[0]] for s in specs}
    by_group = long_array([bucket.get(i, 0) for i in range(max(bucket) + 1)])
    # an O(1) lookup whatever the groups, indexed from group 0; a row of an unknown file
    # (group -1) goes anywhere: the verification refuses the run
    pid = F.when(g >= 0, F.try_element_at(by_group, (g + 1).cast("int")))
    for s in specs:
        if s.cuts:
            key = F.col(q(s.cut_on))
            pid = F.when(g == s.index, range_index(key, s.cuts,
                                                    [targets[b] for b in s.buckets])) \
                .otherwise(pid)
    return pid.cast("long")


def part_column(specs: Sequence[GroupSpec]) -> "Column | None":
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
            pieces.append(F.coalesce(F.col(q(by)).cast("string"), F.lit("\u2205")))
        value = pieces[0] if len(pieces) == 1 else F.concat_ws("|", *pieces)
        cond = F.col(GROUP_COLUMN).isin(groups)
        expr = F.when(cond, value) if expr is None else expr.when(cond, value)
    return expr.otherwise(F.lit(""))


#: the precomputed sort keys' columns (:func:`with_sort_keys`)
SORT_KEY_PREFIX = "__la_sk"


def key_specs(specs: Sequence[GroupSpec]) -> dict[tuple[str, ...], list[int]]:
    """The groups of each distinct sort key spec (columns after group and partition)."""
    by_spec: dict[tuple[str, ...], list[int]] = {}
    for s in specs:
        if s.group.layout == "sort":
            key = tuple(s.group.columns)
        elif s.group.layout == "binpack":
            key = (ORD_COLUMN, ROW_COLUMN)
        elif s.group.layout in LEAVES:  # ties of a leaf's key (its rank bucket) in the
            key = (KEY_COLUMN, s.group.columns[0])  # first column's order
        else:  # a curve's key: ties share one grid cell; ONE long column lets Spark
            key = (KEY_COLUMN,)  # radix-sort
        by_spec.setdefault(key, []).append(s.index)
    return by_spec


def sort_columns(specs: Sequence[GroupSpec]) -> list["Column"]:
    """Sort expressions after (group, partition): per distinct key spec, its columns where
    the row's group uses that spec and null elsewhere, so each group sorts on its own key."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    by_spec = key_specs(specs)
    if len(by_spec) == 1:  # every group sorts alike: plain columns (no CASE per compare)
        return [F.col(q(c)) for c in next(iter(by_spec))]
    out = []
    for key, groups in by_spec.items():
        cond = F.col(GROUP_COLUMN).isin(groups)
        out.extend(F.when(cond, F.col(q(c))) for c in key)
    return out


def with_sort_keys(df: "DataFrame", specs: Sequence[GroupSpec]) -> tuple["DataFrame", list["Column"]]:
    """``df`` with the sort keys after (group, partition) as columns, and the columns to
    sort by.

    Position j's column is, for each row, the j-th key column of its group's spec; specs
    whose j-th columns differ in type get one column each (null on the other groups' rows,
    which never compare with them: the sort is by group first). The sort then compares
    plain fields instead of evaluating a ``CASE`` on both rows of every comparison.

    Example: groups sorted on ``l_shipdate`` and on ``l_commitdate`` (both dates) sort by
    ONE column, ``CASE WHEN g IN (odd groups) THEN l_shipdate ELSE l_commitdate END``.
    """
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    by_spec = key_specs(specs)
    if len(by_spec) == 1:
        return df, sort_columns(specs)
    types = {f.name: f.dataType for f in df.schema.fields}
    g = F.col(GROUP_COLUMN)
    columns: dict[str, "Column"] = {}
    for j in range(max(len(k) for k in by_spec)):
        slots: dict[Any, "Column"] = {}  # per Spark type: one CASE over the specs
        for key, groups in by_spec.items():
            if j >= len(key):
                continue
            kind = types[key[j]].simpleString()
            branch = (g.isin(groups), F.col(q(key[j])))
            slots[kind] = (F.when(*branch) if kind not in slots
                           else slots[kind].when(*branch))
        for n, expr in enumerate(slots.values()):
            columns[f"{SORT_KEY_PREFIX}{j}_{n}"] = expr
    return df.withColumns(columns), [F.col(c) for c in columns]


# A many-group write ("packed", :class:`engine.spark.options.ExecutorOptions`) keeps
# "partition_by"'s tasks but, when every group sorts on ONE column of a date or a 32-bit
# (or narrower) integer type, packs (group, key) into ONE long per row (:func:`packed_key`),
# so each task radix-sorts a single long (no comparison of two fields per pair of rows),
# and writes with one open file per group of the task
# (``spark.sql.maxConcurrentOutputFileWriters``, set to the most groups a task holds:
# Spark's writer would otherwise sort again by the group, since the order it requires is
# the group's, not the packed key's). Its open files hold at most the task's rows, so it
# is used only while every task reads at most :data:`PACKED_TASK_BYTES`; otherwise, and
# for other keys, "partition_by": several groups per task, sorted by (group, key) for
# Spark's ``partitionBy`` writer. The two are compared in ``bench/executor/README.md``.

#: the most input bytes one task of a "packed" write may read: its open files buffer at
#: most its rows, encoded, until the task ends; Parquet's own writer buffers up to a row
#: group (``parquet.block.size``, 128 MiB) per file, and compressed input bytes grow about
#: 2x when encoded uncompressed, so half that keeps a task within one row group's memory
PACKED_TASK_BYTES = 64 << 20
#: Parquet's row-count limit of a row group (parquet-mr 1.14+)
ROW_GROUP_ROWS_OPTION = "parquet.block.row.count.limit"
#: the Spark types whose values fit, with a null flag, in the packed key's low 33 bits
PACKED_TYPES = ("date", "int", "smallint", "tinyint")
#: the packed key's column (a long: group << 33 | key + 2^31 + 1, nulls 0)
PACKED_COLUMN = "__la_packed"
_PACKED_SHIFT = 33
#: one open file per group only while no task holds more groups than this (each open file
#: buffers its row group in memory; Parquet's memory manager would shrink the row groups
#: beyond it)
GROUP_CONCURRENT_MAX = 256
#: Spark's setting: how many files one write task may keep open (0: none, sort instead)
CONCURRENT_WRITERS = "spark.sql.maxConcurrentOutputFileWriters"


def groups_per_task(specs: Sequence[GroupSpec]) -> int:
    """The most groups whose rows one write task holds (after
    :func:`engine.spark.slicing.plan_slices`).

    Example (group 0 in buckets 0 and 1, group 1 in bucket 1, group 2 in bucket 0):
    >>> from types import SimpleNamespace as S
    >>> groups_per_task([S(index=0, buckets=[0, 1]), S(index=1, buckets=[1]),
    ...                  S(index=2, buckets=[0, 0])])
    2
    """
    held: dict[int, set[int]] = {}
    for s in specs:
        for b in s.buckets:
            held.setdefault(b, set()).add(s.index)
    return max((len(g) for g in held.values()), default=0)


def concurrent_writers(specs: Sequence[GroupSpec], types: Mapping[str, str] | None = None,
                       options: ExecutorOptions = DEFAULT_OPTIONS) -> int:
    """Files one task keeps open in the "packed" write (``options.group_write``), 0 when
    this write sorts by (group, key) instead. ``types``: the Spark type (``simpleString``)
    of each column, which decides whether the keys pack."""
    if options.group_write != "packed" or len(specs) < 2 or part_column(specs) is not None:
        return 0
    if not (packs(specs, types or {}) and max_task_bytes(specs) <= PACKED_TASK_BYTES):
        return 0
    n = groups_per_task(specs)
    return n if n <= GROUP_CONCURRENT_MAX else 0


def packs(specs: Sequence[GroupSpec], types: Mapping[str, str]) -> bool:
    """Does every group sort on ONE column of a :data:`PACKED_TYPES` type (so that (group,
    key) fits one long: :func:`packed_key`)?

    Example:
    >>> from types import SimpleNamespace as S
    >>> g = lambda layout, *cols: S(index=0, group=S(layout=layout, columns=cols))
    >>> packs([g("sort", "d"), g("sort", "i")], {"d": "date", "i": "int"})
    True
    >>> packs([g("sort", "d"), g("sort", "b")], {"d": "date", "b": "bigint"})
    False
    >>> packs([g("sort", "d", "i")], {"d": "date", "i": "int"}), packs([g("hilbert", "d")], {})
    (False, False)
    """
    return all(s.group.layout == "sort" and len(s.group.columns) == 1
               and types.get(s.group.columns[0]) in PACKED_TYPES and 0 <= s.index < 1 << 29
               for s in specs)


def max_task_bytes(specs: Sequence[GroupSpec]) -> float:
    """The most input bytes one task reads (after :func:`engine.spark.slicing.plan_slices`:
    a group's bytes shared evenly by its slices).

    Example (group 0 in buckets 0 and 1, group 1 in bucket 1):
    >>> from types import SimpleNamespace as S
    >>> max_task_bytes([S(bytes_in=100, buckets=[0, 1]), S(bytes_in=30, buckets=[1])])
    80.0
    """
    load: dict[int, float] = {}
    for s in specs:
        for b in s.buckets:
            load[b] = load.get(b, 0.0) + s.bytes_in / len(s.buckets)
    return max(load.values(), default=0.0)


def packed_key(specs: Sequence[GroupSpec], types: Mapping[str, str]) -> "Column":
    """Each row's (group, key) as ONE long that sorts as the pair does: ``group << 33``
    plus the key as an unsigned 32-bit offset + 1 (a date as its days since 1970), 0 for a
    null key (nulls first, as Spark sorts ascending). Only for :func:`packs` plans.

    Example: group 3, key -5 (days) -> 3 * 2^33 + (2^31 - 5 + 1); group 3, null -> 3 * 2^33:
    every key of group 3 sorts before any of group 4 (4 * 2^33 > 3 * 2^33 + 2^32)."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    def low(column: str) -> "Column":
        c = F.col(q(column))
        value = F.unix_date(c) if types[column] == "date" else c
        return F.when(c.isNull(), F.lit(0)).otherwise(
            value.cast("long") + F.lit((1 << 31) + 1))

    columns = list(dict.fromkeys(s.group.columns[0] for s in specs))
    g = F.col(GROUP_COLUMN)
    if len(columns) == 1:
        expr = low(columns[0])
    else:  # each group's key column by an O(1) lookup (one literal array, as pid_column)
        slot_of = [0] * (max(s.index for s in specs) + 1)
        for s in specs:
            slot_of[s.index] = columns.index(s.group.columns[0])
        slot = F.when(g >= 0, F.try_element_at(long_array(slot_of), (g + 1).cast("int")))
        expr = None
        for k, column in enumerate(columns):
            branch = (slot == F.lit(k), low(column))
            expr = F.when(*branch) if expr is None else expr.when(*branch)
    return F.shiftleft(g.cast("long"), _PACKED_SHIFT) + expr


def write(df: "DataFrame", specs: Sequence[GroupSpec], n_buckets: int, out_dir: str,
           max_rows: int, row_group_rows: int | None, data_cols: Sequence[str],
           options: ExecutorOptions = DEFAULT_OPTIONS) -> None:
    """The one shuffle, sort and write (Spark's writer cuts files per group, partition
    and ``max_rows``; a many-group write as ``options.group_write`` says). With
    ``row_group_rows`` Parquet's writer closes a row group at that many rows
    (``parquet.block.row.count.limit``), the row count the output model priced;
    ``parquet.block.size`` (128 MiB of uncompressed bytes in memory) stays the memory
    bound, so only row groups wider than that come out smaller."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    part = part_column(specs)
    if part is not None:
        df = df.withColumn(PART_COLUMN, part)
    # the columns' types decide whether a many-group write packs its keys (a one-group
    # write never does: no call into the JVM for its schema)
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields} \
        if len(specs) > 1 else {}
    open_files = concurrent_writers(specs, types, options)  # 0: sorted by (group, key)
    df = df.withColumn(PID_COLUMN, pid_column(specs, n_buckets))
    shuffled = df.repartition(n_buckets, F.col(PID_COLUMN))
    if len(specs) == 1 and part is None:
        # one group, no physical partition: no partitionBy (its required sort by the group,
        # a constant, would come first and leave Spark's sort a useless prefix and no radix
        # sort); the files go straight into the group's directory, as partitionBy names it
        ordered = shuffled.sortWithinPartitions(*sort_columns(specs))
        out, partition_cols = ordered.select(*[F.col(q(c)) for c in data_cols]), []
        target = f"{out_dir.rstrip('/')}/{GROUP_COLUMN}={specs[0].index}"
    else:
        partition_cols = [GROUP_COLUMN] + ([PART_COLUMN] if part is not None else [])
        if open_files:  # one long: (group, key) packed
            shuffled = shuffled.withColumn(PACKED_COLUMN, packed_key(specs, types))
            keys = [F.col(PACKED_COLUMN)]
        else:
            shuffled, keys = with_sort_keys(shuffled, specs)
        first = [] if open_files else [F.col(c) for c in partition_cols]
        ordered = shuffled.sortWithinPartitions(*first, *keys)
        out = ordered.select(*[F.col(q(c)) for c in data_cols], *partition_cols)
        target = out_dir
    # append: a plan whose groups ask for different file sizes writes once per size into
    # the same fresh directory (overwrite would delete the previous write's files)
    writer = out.write.mode("append").partitionBy(*partition_cols) \
        .option("maxRecordsPerFile", int(max_rows))
    if row_group_rows:
        writer = writer.option(ROW_GROUP_ROWS_OPTION, int(row_group_rows))
    if codec := input_codec(specs):
        writer = writer.option("compression", codec)
    with session_conf(df.sparkSession, {CONCURRENT_WRITERS: str(open_files)}):
        writer.parquet(target)


#: the Parquet footer's codec names (``ColumnChunkMetaData.compression``) -> Spark's
#: ``compression`` option; pyarrow's writer takes the same names but "lz4_raw" ("lz4")
INPUT_CODECS = {"SNAPPY": "snappy", "GZIP": "gzip", "ZSTD": "zstd", "UNCOMPRESSED": "none",
                "LZ4_RAW": "lz4_raw"}


def input_codec(specs: Sequence[GroupSpec]) -> str | None:
    """The codec of the first input file of ``specs`` (its first column chunk, read from the
    footer), in Spark's name: a rewrite writes its files in the codec of the files it
    replaces, the bytes the plan was priced on (an Iceberg table written by pyiceberg in
    ZSTD grows by a third when rewritten in Spark's default Snappy, and its queries read
    more than before). None when no input file can be read or its codec is not one Spark
    and pyarrow both write (then the session's codec)."""
    import pyarrow.parquet as pq  # only when a rewrite runs

    for spec in specs:
        for part in spec.partitions[:1]:
            try:
                fs, inner = table_fs.filesystem(part.path)
                meta = pq.ParquetFile(inner, filesystem=fs).metadata
            except (OSError, ValueError):
                return None
            if not meta.num_row_groups or not meta.num_columns:
                continue
            return INPUT_CODECS.get(str(meta.row_group(0).column(0).compression).upper())
    return None


def drop_checksums(files: Sequence[str]) -> None:
    """Remove the ``.NAME.crc`` that Hadoop's local file system writes beside each file.

    Nothing reads them (the run verifies rows and checksums itself; pyarrow, DuckDB and the
    formats ignore them), and a killed run's would outlive its files: they are hidden files,
    which an open format's gc does not list. None on object stores.
    """
    for path in files:
        if table_fs.is_uri(path) and not path.startswith("file:"):
            continue
        local = table_fs.local_path(path)
        head, name = local.rsplit("/", 1)
        with contextlib.suppress(FileNotFoundError):
            table_fs.delete_file(f"{head}/.{name}.crc")


def drop_row_filter(df: "DataFrame", data_cols: Sequence[str]) -> "Column":
    """Test fault ``drop-row`` (:mod:`engine.core.faults`): a filter losing the row(s) equal to one input row (found by
    a Spark job of its own, on ``df`` before it is observed)."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    row_hash = F.xxhash64(*[F.col(q(c)) for c in data_cols])
    victim = df.select(row_hash.alias("h")).limit(1).collect()[0]["h"]
    return row_hash != F.lit(victim)


def swap_rows_group(df: "DataFrame", data_cols: Sequence[str]) -> "Column":
    """Test fault ``swap-rows`` (:mod:`engine.core.faults`): the group column with one row
    of the job's first group sent to the second group's files and one of the second to the
    first's (found by Spark jobs of their own, on ``df`` before it is observed). Rows per
    group and the plan's checksum stay the same; only the tagged checksum of
    :mod:`engine.spark.verification` can tell."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    g = F.col(GROUP_COLUMN)
    row_hash = F.xxhash64(*[F.col(q(c)) for c in data_cols])
    a, b = [r[0] for r in df.select(g).distinct().orderBy(g).limit(2).collect()]
    va, vb = [df.where(g == x).select(row_hash.alias("h")).limit(1).collect()[0]["h"]
              for x in (a, b)]
    return (F.when((g == a) & (row_hash == F.lit(va)), F.lit(b))
            .when((g == b) & (row_hash == F.lit(vb)), F.lit(a)).otherwise(g))
