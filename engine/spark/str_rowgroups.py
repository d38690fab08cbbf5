"""PAW's precise descriptors on disk (seed 001 §V-A).

A ``paw`` group whose ``layout_params["n_mbr"]`` is N > 0 gets each written file's rows in
STR (sort-tile-recursive) order over the tree's columns, as exactly N row groups: one row
group per STR tile. Every row group's min/max statistics are then one MBR of the file's STR
packing (:func:`engine.design.paw.descriptors.str_mbrs` on the same rows), so a reader that
prunes row groups by their statistics (DuckDB, Spark, pyarrow datasets) skips the MBRs a
query misses: the physical analogue of the master node's precise descriptors.

Spark's Parquet writer cuts row groups by bytes (``parquet.block.size``), never at given
rows, so the STR row groups are written after Spark's write, by pyarrow on the executors (a
few files per task), exactly as :func:`engine.spark.arrow_types.restore_files` rewrites a
file: same schema, same compression, the file replaced in place. It runs before the
verification, which then counts and checksums what gets committed. STR needs only each
column's order, so the tiles are computed on dense ranks (any type, nulls last) and equal
those :func:`~engine.design.paw.descriptors.str_order` gives on the encoded values.

Example (a file of two clusters in 2 tiles: the row groups bound one cluster each):
>>> t = pa.table({"x": [0.0, 9.0, 1.0, 10.0], "y": [0.0, 9.0, 1.0, 10.0]})
>>> [t.take(pa.array(i)).column("x").to_pylist() for i in str_tiles(t, ["x", "y"], 2)]
[[0.0, 1.0], [9.0, 10.0]]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from engine.design.paw.descriptors import str_order
from engine.spark.arrow_types import on_executors
from engine.spark.hadoop_files import group_of_file
from engine.table import fs as table_fs

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from engine.spark.jobspec import GroupSpec


def str_groups(specs: Sequence["GroupSpec"]) -> dict[int, tuple[list[str], int]]:
    """Group index -> (STR columns, row groups per file) for every ``paw`` group with ``n_mbr`` > 0."""
    out = {}
    for s in specs:
        n = int((s.group.layout_params or {}).get("n_mbr") or 0)
        if s.group.layout == "paw" and n > 0:
            out[s.index] = (list(s.group.columns), n)
    return out


def _ranks(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Dense ranks (1, 2, ...) in ascending order, nulls (and NaN) last: STR only needs order."""
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    return np.asarray(pc.rank(arr, sort_keys="ascending", tiebreaker="dense"), dtype=np.float64)


def str_tiles(table: pa.Table, columns: Sequence[str], n_tiles: int) -> list[np.ndarray]:
    """Row indices of the ``n_tiles`` STR tiles of ``table`` over ``columns`` (fewer only
    when the table has fewer rows)."""
    if table.num_rows == 0:
        return []
    x = np.column_stack([_ranks(table.column(c)) for c in columns])
    return [t for t in str_order(x, n_tiles) if len(t)]


def write_str_file(path: str, columns: Sequence[str], n_tiles: int) -> int:
    """Rewrite one Parquet file with its rows in STR order, one row group per tile; returns
    the row groups written. Schema (with its metadata) and compression are kept."""
    fs, inner = table_fs.filesystem(path)
    source = pq.ParquetFile(inner, filesystem=fs)
    meta = source.metadata
    compression = (meta.row_group(0).column(0).compression.lower()
                   if meta.num_row_groups and meta.num_columns else "snappy")
    table = source.read()
    tiles = str_tiles(table, columns, n_tiles)
    if not tiles:
        return meta.num_row_groups
    folder, name = inner.rsplit("/", 1)
    tmp = f"{folder}/.str-{name}"
    with pq.ParquetWriter(tmp, table.schema, filesystem=fs, compression=compression) as writer:
        for tile in tiles:
            writer.write_table(table.take(pa.array(tile)), row_group_size=max(1, len(tile)))
    fs.move(tmp, inner)
    crc = f"{folder}/.{name}.crc"  # Hadoop's checksum of Spark's bytes: stale now (see arrow_types)
    if fs.get_file_info(crc).type != pafs.FileType.NotFound:
        fs.delete_file(crc)
    return len(tiles)


def _rewrite_many(jobs: dict[str, tuple[list[str], int]]):
    def run(paths: Iterable[str]) -> list[tuple[str, int]]:
        return [(p, write_str_file(p, *jobs[p])) for p in paths]
    return run


def write_str_row_groups(spark: "SparkSession", files: Sequence[str], specs: Sequence["GroupSpec"]) -> int:
    """Give every written file of a ``paw`` group with ``n_mbr`` > 0 its STR row groups (on
    the executors); returns the files rewritten (0, and no Spark job, when no group asks)."""
    wanted = str_groups(specs)
    jobs = {f: wanted[g] for f in files if (g := group_of_file(f)) in wanted}
    if not jobs:
        return 0
    done = on_executors(spark, sorted(jobs), _rewrite_many(jobs),
                        "the STR row groups of a paw group could not be written")
    for s in specs:
        if s.index in wanted:
            s.fit["str_row_groups"] = wanted[s.index][1]
    return len(done)
