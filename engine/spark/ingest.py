"""Ingest CSV or Parquet into micro-partitions with Spark, and register datasets in place.

Micro-partitions are cut exactly: every file holds ``target_rows`` rows, except the last.
Spark has no stable row number, so one is built:

* natural (ingestion) order: rows are numbered by file path, split offset and position in
  the split (``_metadata.file_path``/``file_block_start`` and, within a split, the
  consecutive ``monotonically_increasing_id``); one small aggregation gives each split its
  offset, no sort of the data is needed;
* ``order_by``: rows are sorted (ties in natural order), the sorted frame is persisted, and
  each row's rank is its task's offset plus its position in the task.

Then ``bucket = rank // target_rows``; the frame is partitioned into tasks holding
consecutive buckets, sorted by rank within each task and written with
``maxRecordsPerFile = target_rows``. Every task holds whole buckets in order, so the writer's
file cuts fall exactly on bucket boundaries. The bucket count is known, so the task of a
bucket is computed (``bucket * tasks // buckets``) rather than sampled: ``repartitionByRange``
would scan the whole input once more to sample its bounds (see :func:`_task_keys`).
The written files are checked (count and rows per file) before anything is published.

Files are written into a fresh directory under the table's location; only then is a
snapshot published. A failure publishes nothing and removes the directory.
"""

from __future__ import annotations

import math
import os
import re
import shutil
from typing import TYPE_CHECKING, Callable, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from engine.core.config import Settings
from engine.core.errors import (AdvisorError, ColumnNotFoundError, CommitConflictError, DataFileError,
                                ExecutionError, InvalidParameterError, TableExistsError)
from engine.spark import footers_parallel
from engine.spark.jobspec import q
from engine.spark.session import get_spark
from engine.table import footers, fs
from engine.table.model import Snapshot, TableSchema
from engine.table.publish import check_counts, publish_iceberg
from engine.table.store import TableStore, validate_name

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

DEMO_TARGET_ROWS = 2000  # the demo table: ~200k lineitem rows -> ~100 micro-partitions
CSV_SUFFIXES = (".csv", ".csv.gz", ".csv.bz2", ".tsv", ".txt")
PARQUET_SUFFIXES = (".parquet", ".parq", ".pq")
SIZE_SAMPLE_ROWS = 20_000
_MIB = 1024 * 1024
_HELPERS = ("_la_file", "_la_block", "_la_mid", "_la_pid", "_la_pos", "_la_rn", "_la_key")
_PART_FILE = re.compile(r"part-(\d+).*?-c(\d+)")

Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


# ---------------------------------------------------------------------- sources
def source_files(source: str) -> tuple[str, list[str]]:
    """("csv" | "parquet", files) for a file, folder (recursive) or glob; checked on the driver.

    Raises DataFileError for a missing path, no data files, empty files, or a Parquet file
    whose footer cannot be read (named), so bad input fails before Spark starts.
    """
    files = fs.expand(source)
    if not files:
        what = "no files match" if fs.has_glob(source) else "no such file or directory"
        raise DataFileError(f"{source}: {what}")
    lower = [f.lower() for f in files]
    csv = [f for f, l in zip(files, lower) if l.endswith(CSV_SUFFIXES)]
    parquet = [f for f, l in zip(files, lower) if l.endswith(PARQUET_SUFFIXES)]
    if csv and parquet:
        raise DataFileError(f"{source}: mixes CSV and Parquet files; ingest them separately")
    if csv:
        kind, files = "csv", csv
    elif parquet:
        kind, files = "parquet", parquet
    else:  # no telling suffix: Parquet files start with the magic bytes PAR1
        kind = "parquet" if _has_parquet_magic(files[0]) else "csv"
    empty = [f for f in files if fs.size(f) == 0]
    if empty:
        raise DataFileError(f"{empty[0]}: empty file (0 bytes)")
    if kind == "parquet" and len(files) <= footers_parallel.PARALLEL_THRESHOLD:
        for f in files:
            footers.read_arrow_schema(f)  # raises DataFileError naming a corrupt file
    return kind, files


def _has_parquet_magic(path: str) -> bool:
    filesystem, inner = fs.filesystem(path)
    try:
        with filesystem.open_input_file(inner) as handle:
            return handle.read(4) == b"PAR1"
    except OSError:
        return False


def _spark_error(source: str, exc: Exception) -> DataFileError:
    text = str(exc).strip()
    first = next((line for line in text.splitlines() if line.strip()), type(exc).__name__)
    return DataFileError(f"{source}: Spark cannot read it ({first.strip()[:300]})")


def read_source(spark: "SparkSession", source: str, kind: str, files: Sequence[str]) -> "DataFrame":
    """A DataFrame over the files, with their natural position (file, split, row) attached."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    try:
        if kind == "csv":
            df = (spark.read.option("header", True).option("inferSchema", True)
                  .option("mode", "FAILFAST").csv(list(files)))
        else:
            df = spark.read.parquet(*files)
        if not df.columns:
            raise DataFileError(f"{source}: no columns (empty file?)")
        return df.select("*", F.col("_metadata.file_path").alias("_la_file"),
                         F.col("_metadata.file_block_start").alias("_la_block"))
    except AdvisorError:
        raise
    except Exception as exc:  # noqa: BLE001 - Spark's analysis errors on bad input
        raise _spark_error(source, exc) from None


def _resolve_column(columns: Sequence[str], wanted: str) -> str:
    for c in columns:
        if c == wanted:
            return c
    for c in columns:
        if c.lower() == wanted.lower():
            return c
    visible = [c for c in columns if not c.startswith("_la_")]
    raise ColumnNotFoundError(f"unknown column {wanted!r}; columns are: {', '.join(visible)}")


# ---------------------------------------------------------------------- sizing
def estimate_rows_for_mb(df: "DataFrame", target_mb: float, total_rows: int) -> int:
    """Rows per file for ``target_mb`` MiB of Parquet, from a sample written with pyarrow."""
    if target_mb <= 0:
        raise InvalidParameterError("--target-mb must be positive")
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    cols = [c for c in df.columns if not c.startswith("_la_")]
    n = min(total_rows, SIZE_SAMPLE_ROWS)
    fraction = min(1.0, 2.0 * n / max(total_rows, 1))
    sample = df.select(*[F.col(q(c)) for c in cols]).sample(fraction=fraction, seed=17).limit(n).toArrow()
    if sample.num_rows == 0:
        sample = df.select(*[F.col(q(c)) for c in cols]).limit(n).toArrow()
    sink = pa.BufferOutputStream()
    pq.write_table(sample, sink, compression="snappy")
    per_row = max(sink.getvalue().size / max(sample.num_rows, 1), 1e-3)
    return max(1, int(target_mb * _MIB / per_row))


def resolve_target_rows(settings: Settings, target_rows: int | None, target_mb: float | None,
                        df: "DataFrame | None" = None, total_rows: int = 0) -> int:
    if target_rows is not None and target_mb is not None:
        raise InvalidParameterError("give either a target in rows or in MB, not both")
    if target_rows is not None:
        if int(target_rows) <= 0:
            raise InvalidParameterError(f"target rows must be positive, got {target_rows}")
        return int(target_rows)
    if target_mb is not None:
        if float(target_mb) <= 0:
            raise InvalidParameterError(f"target MB must be positive, got {target_mb}")
        assert df is not None
        return estimate_rows_for_mb(df, float(target_mb), total_rows)
    if settings.target_rows > 0:
        return settings.target_rows
    assert df is not None
    return estimate_rows_for_mb(df, settings.target_mb, total_rows)


# ---------------------------------------------------------------------- writing
def _part_key(path: str) -> tuple[int, int, str]:
    m = _PART_FILE.search(os.path.basename(path))
    return (int(m.group(1)), int(m.group(2)), path) if m else (1 << 30, 0, path)


def _ranked_natural(spark: "SparkSession", df: "DataFrame", label: str) -> tuple["DataFrame", int, Callable[[], None]]:
    """Global row numbers in natural order without sorting the data.

    One small aggregation gives, per input split (file, block start), its first
    ``monotonically_increasing_id`` and its row count; splits are ordered by path and
    offset on the driver, and each row's rank is its split's offset plus its position in
    the split. The scan is deterministic, so the ids agree between this job and the write.
    """
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    framed = df.withColumn("_la_mid", F.monotonically_increasing_id())
    try:
        splits = (framed.groupBy("_la_file", "_la_block")
                  .agg(F.min("_la_mid").alias("lo"), F.count(F.lit(1)).alias("n")).collect())
    except Exception as exc:  # noqa: BLE001 - malformed input surfaces when Spark reads rows
        raise _spark_error(label, exc) from None
    splits = sorted(splits, key=lambda r: (fs.natural_key(r["_la_file"]), r["_la_block"]))
    rows, acc = [], 0
    for r in splits:
        rows.append((r["_la_file"], int(r["_la_block"]), acc - int(r["lo"])))
        acc += int(r["n"])
    if acc == 0:
        return framed, 0, lambda: None
    offsets = spark.createDataFrame(rows, "_la_file string, _la_block long, _la_shift long")
    ranked = (framed.join(F.broadcast(offsets), ["_la_file", "_la_block"])
              .withColumn("_la_rn", F.col("_la_mid") + F.col("_la_shift")))
    return ranked, acc, lambda: None


def _ranked_sorted(spark: "SparkSession", df: "DataFrame", order_by: str | None,
                   label: str) -> tuple["DataFrame", int, Callable[[], None]]:
    """Global row numbers after a sort on ``order_by`` (ties keep their natural order)."""
    from pyspark import StorageLevel  # pyspark: costly import, deferred
    from pyspark.sql import functions as F

    data_cols = [c for c in df.columns if c not in _HELPERS]
    keys = [F.col(q(_resolve_column(data_cols, order_by))).asc_nulls_first()] if order_by else []
    framed = df.withColumn("_la_mid", F.monotonically_increasing_id())
    keys += [F.col(c) for c in ("_la_file", "_la_block") if c in df.columns] + [F.col("_la_mid")]
    ordered = (framed.orderBy(*keys)
               .withColumn("_la_pid", F.spark_partition_id())
               .withColumn("_la_pos", F.monotonically_increasing_id())
               .persist(StorageLevel.MEMORY_AND_DISK))
    try:
        counts = {r["_la_pid"]: r["count"] for r in ordered.groupBy("_la_pid").count().collect()}
    except Exception as exc:  # noqa: BLE001
        ordered.unpersist()
        raise _spark_error(label, exc) from None
    offsets, acc = {}, 0
    for pid in sorted(counts):
        offsets[pid] = acc
        acc += counts[pid]
    if acc == 0:
        return ordered, 0, ordered.unpersist
    offset_map = F.create_map(*[x for pid in sorted(offsets)
                                for x in (F.lit(pid), F.lit(offsets[pid]).cast("long"))])
    rank = (F.element_at(offset_map, F.col("_la_pid"))
            + F.col("_la_pos") - F.shiftleft(F.col("_la_pid").cast("long"), 33))
    return ordered.withColumn("_la_rn", rank), acc, ordered.unpersist


def _task_keys(spark: "SparkSession", tasks: int) -> list[int]:
    """``keys[t]``: a long whose Spark hash partition among ``tasks`` is ``t``.

    ``repartition(tasks, col)`` sends a row to ``pmod(hash(col), tasks)`` (Murmur3, seed
    42, the same function as ``F.hash``); keying each row by ``keys[task]`` therefore puts
    it into exactly the task computed for it, with no sampling pass over the data. The
    keys are found with Spark's own hash over a small range, so they cannot drift from
    the partitioner; a task without a key raises ExecutionError.
    """
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    found: dict[int, int] = {}
    for row in (spark.range(0, 64 * tasks)
                .select("id", F.expr(f"pmod(hash(id), {int(tasks)})").alias("t"))
                .groupBy("t").agg(F.min("id").alias("id")).collect()):
        found[int(row["t"])] = int(row["id"])
    if len(found) != tasks:
        raise ExecutionError(f"no hash key found for {tasks - len(found)} of {tasks} write tasks")
    return [found[t] for t in range(tasks)]


def write_micro_partitions(spark: "SparkSession", df: "DataFrame", out_dir: str,
                           target_rows: "int | Callable[[int], int]", order_by: str | None = None,
                           progress: Progress = _quiet, label: str = "the source") -> tuple[list[str], int, int]:
    """Write ``df`` as files of exactly ``target_rows`` rows (last one smaller), in order.

    ``df`` may carry ``_la_file``/``_la_block`` (natural position from :func:`read_source`);
    ``target_rows`` may be a function of the row count (sizing by MB). Returns (the written
    files in row order, rows, rows per file); raises ExecutionError if the cut is not exact.
    """
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    data_cols = [c for c in df.columns if c not in _HELPERS]
    progress("numbering the rows in " + (f"{order_by} order" if order_by else "ingestion order"))
    if order_by is None and "_la_file" in df.columns:
        ranked, n, release = _ranked_natural(spark, df, label)
    else:
        ranked, n, release = _ranked_sorted(spark, df, order_by, label)
    try:
        if n == 0:
            raise DataFileError(f"{label}: no rows")
        rows = int(target_rows(n) if callable(target_rows) else target_rows)
        buckets = math.ceil(n / rows)
        tasks = min(buckets, max(spark.sparkContext.defaultParallelism * 4, 64))
        progress(f"writing {n:,} rows as {buckets:,} micro-partitions of {rows:,} rows")
        keys = F.array(*[F.lit(k).cast("long") for k in _task_keys(spark, tasks)])
        bucket = F.floor(F.col("_la_rn") / F.lit(rows)).cast("long")
        task = F.floor(bucket * F.lit(tasks) / F.lit(buckets)).cast("int")
        # only the data and the rank cross the shuffle (not the source's path per row)
        out = (ranked.select(*[F.col(q(c)) for c in data_cols], "_la_rn", F.element_at(keys, task + 1).alias("_la_key"))
               .repartition(tasks, "_la_key")
               .sortWithinPartitions("_la_rn")
               .select(*[F.col(q(c)) for c in data_cols]))
        spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
        # committer v2: task commits move files into out_dir once (v1 moves all of them
        # again at job commit); out_dir is fresh, checked below and removed on failure
        (out.write.mode("append").option("maxRecordsPerFile", rows)
         .option("mapreduce.fileoutputcommitter.algorithm.version", "2").parquet(out_dir))
    finally:
        release()
    for junk in fs.list_files(out_dir, include_hidden=True):
        if os.path.basename(junk).startswith(("_", ".")):
            fs.delete_file(junk)
    files = sorted((f for f in fs.list_files(out_dir) if f.endswith(".parquet")), key=_part_key)
    if len(files) != buckets:
        raise ExecutionError(f"expected {buckets} files in {out_dir}, Spark wrote {len(files)}")
    return files, n, rows


def _cleanup(store: TableStore, name: str, out_dir: str | None) -> None:
    if out_dir:
        fs.delete_dir(out_dir)
    tdir = store.table_dir(name)
    if not store.exists(name) and os.path.isdir(tdir):
        shutil.rmtree(tdir, ignore_errors=True)


FORMATS = ("native", "iceberg")
#: the namespace of tables the advisor creates in the workspace's Iceberg catalog
WORKSPACE_NAMESPACE = "default"


def create_table(store: TableStore, name: str, source: str, order_by: str | None = None,
                 target_rows: int | None = None, target_mb: float | None = None,
                 spark: "SparkSession | None" = None, progress: Progress | None = None,
                 format: str = "native") -> Snapshot:
    """Ingest ``source`` (CSV with header, or Parquet file/folder/glob) into managed table ``name``.

    Rows keep their natural order (or ``order_by``), cut into files of exactly
    ``target_rows`` rows (``target_mb`` is turned into rows from a sample). Publishes
    snapshot "1" (operation "create"); on failure nothing is published. ``format``
    "iceberg": the files are written under a new table ``default.NAME`` of the
    workspace's Iceberg catalog and appended to it in one commit (see :func:`_create_iceberg`).
    ``store``: the home's table catalog (its settings start Spark and size the files).
    """
    progress = progress or _quiet
    settings = store.settings
    validate_name(name)
    if format not in FORMATS:
        raise InvalidParameterError(f"unknown table format {format!r}: use one of {', '.join(FORMATS)}")
    if format == "iceberg":
        return _create_iceberg(store, name, source, order_by, target_rows, target_mb,
                               spark, progress)
    if store.exists(name):
        raise TableExistsError(f"table {name!r} already exists (drop it or pick another name)")
    if target_rows is not None and target_mb is not None:
        raise InvalidParameterError("give either --target-rows or --target-mb, not both")
    if target_rows is not None and int(target_rows) <= 0:
        raise InvalidParameterError(f"target rows must be positive, got {target_rows}")
    kind, files = source_files(source)
    if order_by and kind == "parquet":
        _resolve_column(footers.read_schema(files[0]).names, order_by)
    progress(f"reading {len(files)} {kind.upper()} file(s) from {source}")
    if spark is None:
        progress("starting Spark")
        spark = get_spark(settings)
    out_dir = None
    try:
        df = read_source(spark, source, kind, files)
        if order_by:
            order_by = _resolve_column([c for c in df.columns if not c.startswith("_la_")], order_by)
        out_dir = store.new_data_dir(name, "create")
        written, total, rows = write_micro_partitions(
            spark, df, out_dir, lambda n: resolve_target_rows(settings, target_rows, target_mb, df, n),
            order_by, progress, source)
        progress(f"reading the footers of {len(written)} files")
        schema, parts = footers_parallel.read_partitions(spark, written)
        check_counts(parts, rows, total)
        snap = store.create(
            name, schema=schema, partitions=parts, operation="create",
            location=store.managed_location(name), managed=True, target_rows=rows,
            target_bytes=int(target_mb * _MIB) if target_mb else None,
            summary={"source": source, "format": kind, "order_by": order_by, "rows": total,
                     "target_rows": rows})
        progress(f"table {name}: snapshot {snap.id}, {snap.partition_count} micro-partitions, {total:,} rows")
        return snap
    except BaseException:
        _cleanup(store, name, out_dir)
        raise


def _create_iceberg(store: TableStore, name: str, source: str, order_by: str | None,
                    target_rows: int | None, target_mb: float | None,
                    spark: "SparkSession | None", progress: Progress) -> Snapshot:
    """Managed Iceberg table ``default.NAME`` of the workspace catalog: Spark writes the
    micro-partitions under the table's future location, then one append commit adds them
    with the metrics pyiceberg reads from their footers. On failure the catalog entry, the
    files and the workspace entry are removed."""
    from engine.table.formats import iceberg  # lazy: pyiceberg + sqlalchemy, ~0.7 CPU-s at import

    settings = store.settings
    if store.exists(name):
        raise TableExistsError(f"table {name!r} already exists (drop it or pick another name)")
    catalog = iceberg.workspace_catalog(str(settings.home))
    identifier = f"{WORKSPACE_NAMESPACE}.{name}"
    if catalog.table_exists(identifier):
        raise TableExistsError(f"the workspace's iceberg catalog already has {identifier}")
    kind, files = source_files(source)
    progress(f"reading {len(files)} {kind.upper()} file(s) from {source}")
    if spark is None:
        progress("starting Spark")
        spark = get_spark(settings)
    warehouse = os.path.join(str(settings.home), "iceberg", "warehouse")
    location = iceberg.file_uri(os.path.join(warehouse, WORKSPACE_NAMESPACE, name))
    out_dir = f"{location}/data/create"
    try:
        df = read_source(spark, source, kind, files)
        if order_by:
            order_by = _resolve_column([c for c in df.columns if not c.startswith("_la_")], order_by)
        written, total, rows = write_micro_partitions(
            spark, df, out_dir, lambda n: resolve_target_rows(settings, target_rows, target_mb, df, n),
            order_by, progress, source)
        snap = publish_iceberg(store, catalog, name, identifier, location, written, rows, total,
                               source, progress)
        progress(f"table {name}: iceberg {identifier}, snapshot {snap.id}, "
                 f"{snap.partition_count} micro-partitions, {total:,} rows")
        return snap
    except BaseException:
        fs.delete_dir(location)
        shutil.rmtree(store.table_dir(name), ignore_errors=True)
        raise


def register_iceberg(store: TableStore, name: str, identifier: str,
                     catalog: str | None = None) -> Snapshot:
    """Register an existing Iceberg table (reads its metadata only; writes nothing there)."""
    from engine.table.formats import iceberg  # lazy: pyiceberg + sqlalchemy, ~0.7 CPU-s at import

    validate_name(name)
    if not isinstance(identifier, str) or "." not in identifier.strip(".") :
        raise InvalidParameterError(f"--iceberg {identifier!r}: give NAMESPACE.TABLE")
    cat = iceberg.open_catalog(str(store.settings.home), catalog)
    fmt = iceberg.IcebergFormat(name, identifier, cat)
    location = fmt.table().location()
    store.register_format(name, "iceberg", location, catalog=catalog, identifier=identifier)
    return store.current_snapshot(name)


def adopt_iceberg(store: TableStore, name: str, path: str) -> Snapshot:
    """Make the Parquet files under ``path`` an Iceberg table ``default.NAME`` of the
    workspace catalog without copying (pyiceberg ``add_files``), and register it.

    The table's location is the folder itself, so the rewrites land next to the files."""
    from engine.table.formats import iceberg  # lazy: pyiceberg + sqlalchemy, ~0.7 CPU-s at import

    validate_name(name)
    if store.exists(name):
        raise TableExistsError(f"table {name!r} already exists (drop it or pick another name)")
    files = [f for f in fs.expand(path) if f.lower().endswith(PARQUET_SUFFIXES)]
    if not files:
        raise DataFileError(f"{path}: no Parquet files to adopt")
    catalog = iceberg.workspace_catalog(str(store.settings.home))
    identifier = f"{WORKSPACE_NAMESPACE}.{name}"
    root = _dataset_root(path)
    location = root if fs.is_uri(root) else f"file://{root}"
    tbl = iceberg.create_table(catalog, identifier, footers.read_arrow_schema(files[0]),
                               location=location)
    try:
        tbl.add_files([iceberg.file_uri(f) for f in files],
                      snapshot_properties={"la.operation": "adopt", "la.source": path})
        store.register_format(name, "iceberg", location, identifier=identifier)
    except BaseException:
        catalog.drop_table(identifier)
        raise
    return store.current_snapshot(name)


def append_batch(store: TableStore, name: str, source_or_dataframe: "str | DataFrame",
                 order_by: str | None = None, spark: "SparkSession | None" = None,
                 progress: Progress | None = None, target_rows: int | None = None) -> Snapshot:
    """Ingest more rows into ``name`` as new micro-partitions (operation "append").

    The batch must have every column of the table (extra columns are dropped). New
    partitions get ``created_seq`` numbers after all existing ones, so they are the newest.
    """
    progress = progress or _quiet
    settings = store.settings
    info = store.info(name)
    base = store.current_snapshot(name)
    if spark is None:
        spark = get_spark(settings)
    if isinstance(source_or_dataframe, str):
        label = source_or_dataframe
        kind, files = source_files(label)
        df = read_source(spark, label, kind, files)
    else:
        label, df = "the batch", source_or_dataframe
    cols = [c for c in df.columns if not c.startswith("_la_")]
    picked = []
    missing = []
    for wanted in base.schema.names:
        try:
            picked.append(_resolve_column(cols, wanted))
        except ColumnNotFoundError:
            missing.append(wanted)
    if missing:
        raise DataFileError(f"{label}: lacks column(s) {', '.join(missing)} of table {name!r}")
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    df = df.select(*[F.col(q(c)).alias(w) for c, w in zip(picked, base.schema.names)],
                   *[c for c in ("_la_file", "_la_block") if c in df.columns])
    rows = int(target_rows or info.target_rows or settings.target_rows)
    out_dir = store.new_data_dir(name, "append")
    try:
        written, total, rows = write_micro_partitions(spark, df, out_dir, rows, order_by, progress, label)
        _, parts = footers_parallel.read_partitions(spark, written, schema=base.schema,
                                                    first_seq=store.next_seq(name))
        check_counts(parts, rows, total)
        for _attempt in range(5):  # appends remove nothing: rebase on a concurrent commit
            try:
                return store.commit(name, store.current_id(name), [], parts, "append",
                                    {"source": label, "rows": total})
            except CommitConflictError:
                continue
        raise CommitConflictError(f"table {name!r} kept changing; the append was not published")
    except BaseException:
        fs.delete_dir(out_dir)
        raise


def register_table(store: TableStore, name: str, path: str, spark: "SparkSession | None" = None,
                   progress: Progress | None = None) -> Snapshot:
    """Adopt an existing Parquet dataset in place (a file, folder tree or glob); read-only.

    Only footers are read. Partitions are listed in natural path order, which becomes
    their creation order. Metadata goes to the workspace, never into the dataset.
    """
    progress = progress or _quiet
    settings = store.settings
    validate_name(name)
    if store.exists(name):
        raise TableExistsError(f"table {name!r} already exists (drop it or pick another name)")
    files = fs.expand(path)
    if not files:
        what = "no files match" if fs.has_glob(path) else "no such file or directory"
        raise DataFileError(f"{path}: {what}")
    parquet = [f for f in files if f.lower().endswith(PARQUET_SUFFIXES)] or files
    progress(f"reading the footers of {len(parquet)} file(s) under {path}")
    if spark is None and len(parquet) > footers_parallel.PARALLEL_THRESHOLD \
            and not settings.spark_master.startswith("local"):
        spark = get_spark(settings)
    result = footers_parallel.read_footers(spark, parquet)
    schema = _union_schema(result.schema, parquet, result)
    if schema != result.schema:
        result = footers_parallel.read_footers(spark, parquet, schema=schema)
    snap = store.create(name, schema=schema, partitions=result.partitions, operation="register",
                        location=_dataset_root(path), managed=False,
                        summary={"source": path, "files": len(parquet),
                                 "rows": sum(p.rows for p in result.partitions)})
    progress(f"table {name}: snapshot {snap.id}, {snap.partition_count} files registered")
    return snap


def _union_schema(first: TableSchema, files: Sequence[str], result: footers.FooterResult) -> TableSchema:
    """The first file's schema plus columns that only later files have (few files only)."""
    if len(files) > 200:
        return first
    cols = list(first.columns)
    seen = {n for n, _ in cols}
    for f in files[1:]:
        for n, t in footers.read_schema(f).columns:
            if n not in seen:
                cols.append((n, t))
                seen.add(n)
    return TableSchema(tuple(cols))


def _dataset_root(path: str) -> str:
    if fs.has_glob(path):
        head = re.split(r"[*?\[]", path, maxsplit=1)[0]
        return fs.normalize(head.rsplit("/", 1)[0] or "/")
    if fs.is_dir(path):
        return fs.normalize(path)
    norm = fs.normalize(path)
    return norm.rsplit("/", 1)[0]
