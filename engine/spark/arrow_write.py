"""The write of a rewrite job with Arrow in each task: Spark's one shuffle sends each row
to its task (its group's bucket, or its key range's: :func:`engine.spark.writing.pid_column`),
then each task sorts its rows with ``pyarrow.compute.sort_indices`` and writes its Parquet
files with pyarrow (:attr:`ExecutorOptions.writer <engine.spark.options.ExecutorOptions>`
"arrow").

Spark's own path (:func:`engine.spark.writing.write`) sorts the rows as Spark rows,
converts each to Parquet through parquet-mr's writer and then, for a type Spark cannot
spell (``large_string``, ``timestamp[ms]``, time zones, non-null fields), rewrites the files
with pyarrow (:func:`engine.spark.arrow_types.restore_files`). Here the rows cross to Python
once, in Arrow batches, and the files are written once, with the inputs' exact Arrow
schema (a safe cast: a value that does not fit fails the task instead of changing).

The files are what the output model says (:func:`engine.layout.output.output_shape`):
within each task, each group's sorted run is cut into files of ``max_rows`` rows (the
last one smaller), each file into row groups of ``row_group_rows`` rows (one row group
per file without it): the cuts Spark's ``maxRecordsPerFile`` and
``parquet.block.row.count.limit`` make. Each file is written under a hidden name and
renamed when complete; its name depends only on the task, the write and its position,
so a retried task replaces its own files instead of adding to them. The verification
(:mod:`engine.spark.verification`) reads them back as it reads Spark's.

Used where the write has no physical partition (``partition_by`` or a Qd-tree leaf: their
folder names stay Spark's), no task reads more than :data:`ARROW_TASK_BYTES` and no group
sorts on a nested column (:func:`eligible`); the Spark writer elsewhere. Measured against
Spark's writer in ``bench/executor/README.md``: for one group it costs about 5% more (the
rows' conversion to Arrow and their copy to Python cost what Spark's sort and Parquet
writer do), for many groups less (the group is one more key of the same sort, where
Spark's writer keeps a file open per group or sorts by group first), hence the default
"auto": Arrow for two or more groups.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from engine.core.errors import ExecutionError
from engine.spark.arrow_types import worker_error
from engine.spark.jobspec import GROUP_COLUMN, PID_COLUMN, GroupSpec, q
from engine.spark.writing import (
    SORT_KEY_PREFIX, input_codec, key_specs, max_task_bytes, part_column, pid_column, with_sort_keys,
)
from engine.table import fs as table_fs

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: the most input bytes (compressed, as the footers say) one task of an Arrow write may
#: read: the task holds all its rows in memory, decoded (about 2-4x), and their sorted copy
ARROW_TASK_BYTES = 256 << 20
#: Spark's Parquet codecs that pyarrow writes alike (``spark.sql.parquet.compression.codec``)
CODECS = {"snappy": "snappy", "gzip": "gzip", "zstd": "zstd", "uncompressed": "none",
          "none": "none", "lz4_raw": "lz4"}
#: rows per Arrow batch from Spark to the task (``spark.sql.execution.arrow.maxRecordsPerBatch``
#: is 10,000 by default: fewer, larger batches cost fewer crossings)
BATCH_ROWS = 100_000
#: what each task reports per written file (and its own CPU seconds, on its first file)
_REPORT = "group long, rows long, bytes long, cpu double, path string"


@dataclass(frozen=True, slots=True)
class Written:
    """One file an Arrow write task wrote; ``cpu``: the task's Python CPU seconds (Spark's
    task metrics count only the JVM's), on its first file, 0 on the others."""

    group: int
    rows: int
    bytes: int
    cpu: float
    path: str


def eligible(specs: Sequence[GroupSpec], df: "DataFrame") -> bool:
    """Can this write go through Arrow: no physical partition, every task's rows fit, and
    no group sorts on a nested column of ``df`` (a struct, list or map, which Spark
    orders and pyarrow's sort does not)?"""
    if part_column(specs) is not None or max_task_bytes(specs) > ARROW_TASK_BYTES:
        return False
    nested = {f.name for f in df.schema.fields
              if f.dataType.typeName() in ("struct", "array", "map")}
    return not nested & {c for key in key_specs(specs) for c in key}


def codec_of(spark_codec: str | None) -> str:
    """pyarrow's name of Spark's Parquet codec; an unknown one is named.

    >>> codec_of("snappy"), codec_of("UNCOMPRESSED")
    ('snappy', 'none')
    """
    name = (spark_codec or "snappy").lower()
    if name not in CODECS:
        raise ExecutionError(f"spark.sql.parquet.compression.codec={spark_codec!r}: the Arrow "
                             f"writer knows {', '.join(CODECS)}")
    return CODECS[name]


def write(df: "DataFrame", specs: Sequence[GroupSpec], n_buckets: int, out_dir: str,
          max_rows: int, row_group_rows: int | None, data_cols: Sequence[str],
          schema: pa.Schema) -> list[Written]:
    """The one shuffle, then per task an Arrow sort by (group, key) and pyarrow's files
    in ``out_dir/__la_g=i/`` (as Spark's ``partitionBy`` names them) with ``schema``'s
    fields of ``data_cols``; returns the written files."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    from engine.spark.writing import session_conf

    spark = df.sparkSession
    codec = codec_of(input_codec(specs) or spark.conf.get("spark.sql.parquet.compression.codec", "snappy"))
    df = df.withColumn(PID_COLUMN, pid_column(specs, n_buckets))
    shuffled = df.repartition(n_buckets, F.col(PID_COLUMN))
    by_spec = key_specs(specs)
    if len(by_spec) == 1:
        keys = list(next(iter(by_spec)))
    else:
        shuffled, _ = with_sort_keys(shuffled, specs)
        keys = [c for c in shuffled.columns if c.startswith(SORT_KEY_PREFIX)]
    extra = [GROUP_COLUMN] + [k for k in keys if k not in data_cols]
    names = [*data_cols, *extra]
    # by position: mapInArrow looks its input columns up by name without quoting them, so a
    # name holding a back quote or a dot would not parse (the task restores the names)
    frame = shuffled.select(*[F.col(q(c)).alias(f"c{i}") for i, c in enumerate(names)])
    target = pa.schema([schema.field(c) for c in data_cols], metadata=schema.metadata)
    task = partial(write_task, names=names, data_cols=list(data_cols),
                   keys=[GROUP_COLUMN, *keys],
                   out_dir=out_dir.rstrip("/"), max_rows=int(max_rows),
                   row_group_rows=int(row_group_rows) if row_group_rows else None,
                   schema=target, codec=codec, token=uuid.uuid4().hex[:12])
    conf = {"spark.sql.execution.arrow.maxRecordsPerBatch": str(BATCH_ROWS)}
    try:
        with session_conf(spark, conf):
            rows = frame.mapInArrow(task, _REPORT).collect()
    except Exception as exc:  # noqa: BLE001 - Spark wraps the worker's error; name it once
        raise ExecutionError(f"the Arrow write failed ({worker_error(str(exc))}); "
                             "nothing was committed") from None
    return [Written(int(r["group"]), int(r["rows"]), int(r["bytes"]), float(r["cpu"]),
                    str(r["path"])) for r in rows]


def write_task(batches: Iterator[pa.RecordBatch], *, names: list[str], data_cols: list[str],
               keys: list[str],
               out_dir: str, max_rows: int, row_group_rows: int | None, schema: pa.Schema,
               codec: str, token: str) -> Iterator[pa.RecordBatch]:
    """One task: its rows sorted by ``keys`` (the group first; nulls first, as Spark sorts
    ascending; ``names``: the input's columns, by position), each group's run cut into
    files of ``max_rows`` rows, written with
    ``schema`` (a safe cast); yields (group, rows, bytes, cpu, path) of each file."""
    from pyspark import TaskContext  # on the executor

    started = time.process_time()
    got = list(batches)
    if not got or not sum(b.num_rows for b in got):
        return
    table = pa.Table.from_batches(got).rename_columns(names)
    del got
    order = pc.sort_indices(table, sort_keys=[(k, "ascending", "at_start") for k in keys])
    groups = table.column(GROUP_COLUMN).take(order).to_numpy()
    data = table.select(data_cols).take(order)
    del table, order
    data = data.cast(schema)
    ctx = TaskContext.get()
    task = ctx.partitionId() if ctx is not None else 0
    fs, root = table_fs.filesystem(out_dir)
    starts = np.concatenate([[0], np.flatnonzero(np.diff(groups)) + 1, [len(groups)]])
    found: dict[str, list[Any]] = {"group": [], "rows": [], "bytes": [], "cpu": [], "path": []}
    n = 0
    for a, b in zip(starts[:-1], starts[1:]):
        g = int(groups[a])
        folder = f"{root}/{GROUP_COLUMN}={g}"
        fs.create_dir(folder, recursive=True)
        for off in range(int(a), int(b), max_rows):
            piece = data.slice(off, min(max_rows, int(b) - off))
            name = f"part-{task:05d}-{token}-{n:05d}.{codec}.parquet"
            n += 1
            tmp, final = f"{folder}/.{name}.tmp", f"{folder}/{name}"
            pq.write_table(piece, tmp, filesystem=fs, compression=codec,
                           row_group_size=row_group_rows or piece.num_rows)
            fs.move(tmp, final)
            found["group"].append(g)
            found["rows"].append(piece.num_rows)
            found["bytes"].append(fs.get_file_info(final).size)
            found["cpu"].append(0.0)
            found["path"].append(f"{out_dir}/{GROUP_COLUMN}={g}/{name}")
    found["cpu"][0] = time.process_time() - started
    yield pa.RecordBatch.from_pydict(found, schema=pa.schema(
        [("group", pa.int64()), ("rows", pa.int64()), ("bytes", pa.int64()),
         ("cpu", pa.float64()), ("path", pa.string())]))
