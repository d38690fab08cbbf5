"""The calibration table: synthetic lineitem-like rows that calibration rewrites.

Rows in ingestion order (order dates wander, ship dates trail them, quantities random),
every column nullable as Spark writes a rewrite's files, written either by Spark
(:func:`make_files`) or by pyarrow on the driver (:func:`arrow_files`, for the cold probe,
whose inputs must exist before the session's first Spark job). :func:`write_slices` lays
any Arrow table out as files of a fixed number of rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.spark import executor

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: rows per input file of the calibration table
ROWS_PER_FILE = 50_000
__all__ = ["ROWS_PER_FILE", "arrow_files", "make_files", "write_slices"]


def make_files(spark: "SparkSession", root: str, rows: int,
                rows_per_file: int = 0, nullable: bool = True) -> list[str]:
    """Lineitem-like rows in ingestion order (dates wander, quantities random), written
    by Spark into files of ``rows_per_file`` (default ROWS_PER_FILE) rows.

    Every column nullable, as Spark writes every rewrite's files: with the columns built
    from ``spark.range`` written NOT NULL, every calibration rewrite would pay the
    executor's type-restoring pass (``arrow_types.restore_files``: the new files
    rewritten by pyarrow to give them the inputs' non-null fields), which plans on tables
    of nullable columns (the demo's, the bench's, anything Spark or DuckDB ingested)
    never pay (bench/executor/README.md). ``nullable=False`` writes NOT NULL
    columns, for comparison.
    """
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    # "when id >= 0" is always true but unknown to the optimizer: the column stays nullable
    live = (lambda c: F.when(F.col("id") >= 0, c)) if nullable else (lambda c: c)
    df = spark.range(rows).select(
        live(F.col("id")).alias("l_orderkey"),
        live(F.date_add(F.lit("1992-01-01").cast("date"), (F.col("id") * 2526 / rows).cast("int")))
        .alias("l_orderdate"),
        live(F.date_add(F.lit("1992-01-01").cast("date"),
                        ((F.col("id") * 2526 / rows) + F.rand(7) * 120).cast("int")))
        .alias("l_shipdate"),
        live((F.rand(11) * 50).cast("decimal(12,2)")).alias("l_quantity"),
        live(F.rand(13) * 100000).alias("l_extendedprice"),
        live(F.concat(F.lit("note "), (F.rand(17) * 1000).cast("int").cast("string")))
        .alias("l_comment"))
    df.coalesce(1).write.mode("overwrite").option(
        "maxRecordsPerFile", rows_per_file or ROWS_PER_FILE).parquet(root)
    return executor.list_data_files(spark, root)


def arrow_files(root: Path, rows: int, rows_per_file: int) -> list[str]:
    """The calibration table's rows (as :func:`make_files` draws them, every column
    nullable) written by pyarrow on the driver: the cold probe's inputs must exist before
    the session's first Spark job, so that its first rewrite is the session's first job,
    as a CLI ``plan run``'s is."""
    import pyarrow as pa  # the driver's writer (write_slices): no Spark job

    rng = np.random.default_rng(7)
    ids = np.arange(rows, dtype=np.int64)
    day = (ids * 2526 // rows).astype("int32")
    start = np.datetime64("1992-01-01", "D").astype("int64")
    table = pa.table({
        "l_orderkey": pa.array(ids),
        "l_orderdate": pa.array(start + day, pa.int32()).cast(pa.date32()),
        "l_shipdate": pa.array(start + day + (rng.random(rows) * 120).astype("int32"),
                               pa.int32()).cast(pa.date32()),
        "l_quantity": pa.array(np.round(rng.random(rows) * 50, 2)).cast(
            pa.decimal128(12, 2), safe=False),
        "l_extendedprice": pa.array(rng.random(rows) * 100000),
        "l_comment": pa.array([f"note {v}" for v in (rng.random(rows) * 1000).astype(int)])})
    return write_slices(table, root, rows_per_file)


def write_slices(table: Any, root: Path, rows_per_file: int) -> list[str]:
    """Write an Arrow table as files of ``rows_per_file`` rows (``part-00000.parquet``, ...)
    under ``root`` with pyarrow on the driver (no Spark job); their paths, in row order.
    Calibrate's cold probe and ``bench/executor/bench_executor.py`` lay out their inputs this way."""
    import pyarrow.parquet as pq

    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(0, table.num_rows, rows_per_file):
        path = root / f"part-{i // rows_per_file:05d}.parquet"
        pq.write_table(table.slice(i, rows_per_file), path)
        paths.append(str(path))
    return paths
