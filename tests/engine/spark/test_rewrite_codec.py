"""A rewrite writes its files in the codec of the files it replaces: the plan priced the
input's bytes, and an input in ZSTD (what pyiceberg writes) rewritten in Spark's default
Snappy grows by a third, so the window reads more than before whatever the layout."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.policy.base import PlanGroup
from engine.spark.options import ExecutorOptions
from engine.table.footers import read_partitions


def _codecs(files) -> set[str]:
    return {pq.ParquetFile(f).metadata.row_group(r).column(c).compression
            for f in files for r in range(pq.ParquetFile(f).metadata.num_row_groups)
            for c in range(pq.ParquetFile(f).metadata.num_columns)}


@pytest.mark.spark
@pytest.mark.parametrize("writer", ["spark", "arrow"])
@pytest.mark.parametrize("codec", ["zstd", "gzip"])
def test_the_written_files_keep_the_input_codec(spark, tmp_path, writer, codec):
    from engine.spark.rewrite import rewrite

    rng = np.random.default_rng(5)
    paths = []
    for i in range(3):
        path = str(tmp_path / f"in-{i}.parquet")
        pq.write_table(pa.table({"k": rng.integers(0, 1000, 200), "v": rng.random(200)}), path,
                       compression=codec)
        paths.append(path)
    schema, parts = read_partitions(paths)
    result = rewrite(spark, schema, [(PlanGroup(tuple(paths), "sort", ("k",)), parts)],
                     str(tmp_path / "out"), 200, None, options=ExecutorOptions(writer=writer))
    files = [f for g in result.groups for f in g.files]
    assert len(files) == 3
    assert _codecs(files) == {codec.upper()}
    assert sum(pq.ParquetFile(f).metadata.num_rows for f in files) == 600
