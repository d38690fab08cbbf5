"""Parquet footers of very many files, read on the Spark executors.

:mod:`engine.table.footers` reads footers with pyarrow in this process; past
:data:`PARALLEL_THRESHOLD` files (a table registered over a big dataset, a large rewrite)
the same :func:`~engine.table.footers.footer_reader` is mapped over the executors instead.
The reader knows nothing but the path, so this works on a cluster.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from engine.table import footers
from engine.table.model import Partition, TableSchema

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PARALLEL_THRESHOLD = 2000  # files; below this the driver reads footers itself


def raw_reader(spark: "SparkSession | None") -> footers.RawReader:
    """A :data:`~engine.table.footers.RawReader` that uses ``spark``'s executors for more
    than :data:`PARALLEL_THRESHOLD` files (the driver's threads otherwise, or without Spark)."""

    def read(paths: Sequence[str]) -> list[tuple]:
        if spark is None or len(paths) <= PARALLEL_THRESHOLD:
            return footers.read_raw(paths)
        sc = spark.sparkContext
        slices = max(1, min(len(paths) // 250 + 1, sc.defaultParallelism * 8))
        return sc.parallelize(list(paths), slices).map(footers.footer_reader()).collect()

    return read


def read_footers(spark: "SparkSession | None", paths: Sequence[str],
                 schema: TableSchema | None = None, first_seq: int = 0) -> footers.FooterResult:
    """:func:`engine.table.footers.read_footers`, on the executors for very many files."""
    return footers.read_footers(paths, schema, first_seq, raw_reader(spark))


def read_partitions(spark: "SparkSession | None", paths: Sequence[str],
                    schema: TableSchema | None = None, first_seq: int = 0,
                    ) -> tuple[TableSchema, list[Partition]]:
    """:func:`engine.table.footers.read_partitions`, on the executors for very many files."""
    return footers.read_partitions(paths, schema, first_seq, raw_reader(spark))
