"""Small native tables of real Parquet files written with chosen row-group sizes, shared by
the row-group tests (test_paw_rowgroups, test_rowgroup_views)."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq

from engine.table.footers import read_partitions
from engine.table.store import TableStore
from engine.workload.model import Range, ScanFragment


def rowgroup_table(settings, name: str, files: list[tuple[pa.Table, int]]):
    """A managed table of the given files, each written with the given row-group size."""
    store = TableStore(settings)
    root = store.managed_location(name)
    os.makedirs(os.path.join(root, "data"), exist_ok=True)
    paths = []
    for i, (data, rg_rows) in enumerate(files):
        path = os.path.join(root, "data", f"part-{i:05d}.parquet")
        pq.write_table(data, path, row_group_size=rg_rows)
        paths.append(path)
    schema, parts = read_partitions(paths)
    return store.create(name, schema=schema, partitions=parts, operation="create", target_rows=100)


def xy_fragment(qid: str, *boxes: dict, table: str = "t", **fields) -> ScanFragment:
    """A query projecting x and y, with one box per ``{column: (lo, hi)}``."""
    return ScanFragment(query_id=qid, table=table, columns=("x", "y"),
                        boxes=tuple({c: Range(lo, hi) for c, (lo, hi) in b.items()} for b in boxes),
                        **fields)


def chunk_bytes(path: str, columns=("x", "y")) -> list[int]:
    """Per row group of ``path``, the compressed bytes of ``columns``' chunks, read from the
    footer with pyarrow: what a reader of those columns reads of each row group."""
    meta = pq.ParquetFile(path.removeprefix("file://")).metadata
    names = [meta.schema.column(j).name for j in range(meta.num_columns)]
    return [sum(meta.row_group(g).column(names.index(c)).total_compressed_size for c in columns)
            for g in range(meta.num_row_groups)]
