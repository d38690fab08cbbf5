"""The demo table written from Arrow (engine.scenarios.demo_table) holds exactly what the
general Spark ingest writes from the same file: the same rows in the same files, in the
same order, with the same column types, and its Iceberg table scans back every row."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from engine import api
from engine.cli.demo import sample_dir
from engine.core.config import load_settings
from engine.core.errors import TableExistsError
from engine.scenarios import demo_table
from engine.table.formats import iceberg

ROWS, TARGET = 9_100, 2_000


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """The first 9,100 rows of the committed sample (in o_orderdate order, as generated)."""
    path = tmp_path / "lineitem.parquet"
    pq.write_table(pq.read_table(sample_dir() / "lineitem.parquet").slice(0, ROWS), path)
    return path


def _home(tmp_path: Path, name: str):
    home = tmp_path / name
    home.mkdir()
    (home / "layout-advisor.toml").write_text('spark_master = "local[2]"\n')
    return load_settings({"home": str(home)}, environ={})


def _files(settings, table: str) -> list:
    snap = api.load_snapshot(settings, table)
    order = sorted(snap.partitions, key=lambda p: p.created_seq)
    return [pq.read_table(p.path) for p in order]


def test_micro_partitions_are_exact_and_in_row_order(source, tmp_path):
    written, rows = demo_table.write_micro_partitions(str(source), str(tmp_path / "out"), TARGET)
    assert rows == ROWS
    assert [Path(f).name for f in written] == [demo_table.file_name(i) for i in range(5)]
    parts = [pq.read_table(f) for f in written]
    assert [p.num_rows for p in parts] == [2000, 2000, 2000, 2000, 1100]
    assert all(pq.ParquetFile(f).metadata.num_row_groups == 1 for f in written)
    whole = pq.read_table(source)
    assert all(f.nullable for f in parts[0].schema)  # as Spark writes every column
    for i, part in enumerate(parts):
        assert part.cast(whole.schema).equals(whole.slice(i * TARGET, TARGET))


@pytest.mark.spark
def test_arrow_and_spark_writers_publish_the_same_table(source, tmp_path, spark):
    arrow = _home(tmp_path, "arrow")
    via_spark = _home(tmp_path, "spark")
    api.create_demo_table(arrow, "lineitem", source, TARGET, table_format="native", writer="arrow")
    api.create_demo_table(via_spark, "lineitem", source, TARGET, table_format="native",
                          writer="spark")
    a, b = _files(arrow, "lineitem"), _files(via_spark, "lineitem")
    assert [t.num_rows for t in a] == [t.num_rows for t in b] == [2000, 2000, 2000, 2000, 1100]
    for left, right in zip(a, b):
        assert left.schema.equals(right.schema), (left.schema, right.schema)
        assert left.equals(right)
    assert api.table_info(arrow, "lineitem").columns == api.table_info(via_spark, "lineitem").columns
    assert api.table_info(arrow, "lineitem").target_rows == TARGET
    with pytest.raises(TableExistsError):
        api.create_demo_table(arrow, "lineitem", source, TARGET, table_format="native")


def test_arrow_iceberg_demo_table_scans_back_every_row(source, tmp_path):
    settings = _home(tmp_path, "ice")
    snap = api.create_demo_table(settings, "lineitem", source, TARGET)  # iceberg, arrow
    assert snap.partition_count == 5 and snap.total_rows == ROWS
    info = api.table_info(settings, "lineitem")
    assert (info.format, info.identifier, info.managed) == ("iceberg", "default.lineitem", True)
    scanned = iceberg.workspace_catalog(str(settings.home)).load_table("default.lineitem").scan().to_arrow()
    whole = pq.read_table(source)
    key = ["l_orderkey", "l_linenumber"]
    assert scanned.num_rows == ROWS
    order = [(k, "ascending") for k in key]
    assert scanned.select(key).sort_by(order).to_pydict() == whole.select(key).sort_by(order).to_pydict()
    # ingestion order is the table's creation order: o_orderdate never goes back
    firsts = [t.column("o_orderdate")[0].as_py() for t in _files(settings, "lineitem")]
    assert firsts == sorted(firsts)
