"""Spark ingest: exact micro-partitions from CSV and Parquet, zonemaps equal to the data."""

from __future__ import annotations

import datetime as dt
import decimal
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

from engine.core.errors import ColumnNotFoundError, DataFileError, TableExistsError
from engine.spark import footers_parallel
from engine.spark.ingest import append_batch, create_table
from engine.table import footers
from engine.table.store import TableStore

pytestmark = pytest.mark.spark

SIX = ("i", "f", "d", "dt", "ts", "s")


def source_table(n: int, seed: int = 0) -> pa.Table:
    """Rows in a scrambled order so that ingestion order and sort order differ."""
    rows = [(r * 7919 + seed) % n for r in range(n)]
    return pa.table({
        "i": pa.array([r for r in rows], pa.int64()),
        "f": pa.array([r * 0.25 - 100 for r in rows], pa.float64()),
        "d": pa.array([decimal.Decimal(r) / 100 for r in rows], pa.decimal128(12, 2)),
        "dt": pa.array([dt.date(1995, 1, 1) + dt.timedelta(days=(r * 13) % 2000) for r in rows]),
        "ts": pa.array([dt.datetime(2021, 3, 1) + dt.timedelta(minutes=r * 17) for r in rows],
                       pa.timestamp("us")),
        "s": pa.array([None if r % 97 == 0 else f"v{(r * 31) % 5000:05d}" for r in rows]),
    })


def check_exact(snap, target: int, total: int, location: str) -> None:
    counts = [p.rows for p in snap.partitions]
    assert len(counts) == -(-total // target)
    assert all(c == target for c in counts[:-1]) and 0 < counts[-1] <= target
    assert sum(counts) == total
    assert [p.created_seq for p in snap.partitions] == list(range(len(counts)))
    for p in snap.partitions:
        assert p.path.startswith(location + os.sep)
        assert pq.ParquetFile(p.path).metadata.num_rows == p.rows  # one file per partition


def naive_utc(value):
    """Zonemaps keep timestamps as naive UTC (see engine.core.logical_types)."""
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return value


def check_zonemaps(snap, columns=SIX) -> None:
    for p in snap.partitions:
        data = pq.read_table(p.path)
        for col in columns:
            mm = {k: naive_utc(v) for k, v in pc.min_max(data[col]).as_py().items()}
            stats = p.columns[col]
            assert stats.min == mm["min"] and stats.max == mm["max"], (p.path, col, stats, mm)
            assert stats.null_count == data[col].null_count
            assert stats.compressed_bytes > 0


def test_create_from_parquet_keeps_ingestion_order_and_cuts_exact_files(settings, spark, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    t = source_table(2350)
    # two files: ingestion order is file order, then row order within each file
    pq.write_table(t.slice(0, 1200), src / "a-1.parquet", row_group_size=500)
    pq.write_table(t.slice(1200), src / "a-2.parquet", row_group_size=500)
    snap = create_table(TableStore(settings), "p", str(src), target_rows=400, spark=spark)
    assert snap.id == "1" and snap.operation == "create"
    assert dict(snap.schema.columns) == {"i": "int", "f": "float", "d": "decimal", "dt": "date",
                                        "ts": "timestamp", "s": "string"}
    check_exact(snap, 400, 2350, TableStore(settings).info("p").location)
    check_zonemaps(snap)
    ingested = pa.concat_tables([pq.read_table(p.path) for p in snap.partitions])
    assert ingested.column("i").to_pylist() == t.column("i").to_pylist()  # exact natural order
    info = TableStore(settings).info("p")
    assert info.managed and info.target_rows == 400
    assert info.location == str(settings.home.resolve() / "tables" / "p" / "data")
    assert not [f for f in os.listdir(os.path.dirname(snap.partitions[0].path))
                if f.startswith(("_", "."))]


def test_create_from_csv_with_order_by_and_default_target(settings, spark, tmp_path):
    t = source_table(2500, seed=3)
    path = tmp_path / "rows.csv"
    pcsv.write_csv(t, path)
    snap = create_table(TableStore(settings), "c", str(path), order_by="DT", spark=spark)  # settings: 1000 rows
    check_exact(snap, 1000, 2500, TableStore(settings).info("c").location)
    cols = dict(snap.schema.columns)
    assert cols["i"] == "int" and cols["dt"] == "date" and cols["ts"] == "timestamp" and cols["s"] == "string"
    check_zonemaps(snap, ("i", "f", "dt", "ts", "s"))
    # sorted on dt: the partitions' date ranges follow each other
    ranges = [(p.columns["dt"].min, p.columns["dt"].max) for p in snap.partitions]
    assert all(a[1] <= b[0] for a, b in zip(ranges, ranges[1:]))


def test_target_mb_estimates_rows_from_a_sample(settings, spark, tmp_path):
    path = tmp_path / "one.parquet"
    pq.write_table(source_table(3000), path)
    snap = create_table(TableStore(settings), "m", str(path), target_mb=0.02, spark=spark)
    rows = TableStore(settings).info("m").target_rows
    assert rows and rows < 3000
    check_exact(snap, rows, 3000, TableStore(settings).info("m").location)
    sizes = [p.bytes for p in snap.partitions[:-1]]
    assert 0.3 * 0.02 * 2**20 < sum(sizes) / len(sizes) < 3 * 0.02 * 2**20


def test_bad_inputs_publish_nothing(settings, spark, tmp_path):
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(DataFileError, match="empty"):
        create_table(TableStore(settings), "e", str(tmp_path / "empty.csv"), spark=spark)
    (tmp_path / "header.csv").write_text("a,b\n")
    with pytest.raises(DataFileError, match="no rows"):
        create_table(TableStore(settings), "e", str(tmp_path / "header.csv"), spark=spark)
    (tmp_path / "bad.parquet").write_bytes(b"PAR1garbagegarbagePAR1")
    with pytest.raises(DataFileError, match="bad.parquet"):
        create_table(TableStore(settings), "e", str(tmp_path / "bad.parquet"), spark=spark)
    pq.write_table(source_table(10), tmp_path / "ok.parquet")
    with pytest.raises(ColumnNotFoundError, match="nope"):
        create_table(TableStore(settings), "e", str(tmp_path / "ok.parquet"), order_by="nope", spark=spark)
    pcsv.write_csv(source_table(10), tmp_path / "ok.csv")
    with pytest.raises(ColumnNotFoundError, match="nope"):
        create_table(TableStore(settings), "e", str(tmp_path / "ok.csv"), order_by="nope", spark=spark)
    store = TableStore(settings)
    assert not store.exists("e")
    assert not (Path(store.root) / "e").exists()  # no leftover data directory
    create_table(TableStore(settings), "e", str(tmp_path / "ok.parquet"), spark=spark)
    with pytest.raises(TableExistsError):
        create_table(TableStore(settings), "e", str(tmp_path / "ok.parquet"), spark=spark)


def test_append_adds_newest_partitions(settings, spark, tmp_path):
    pq.write_table(source_table(1500), tmp_path / "b1.parquet")
    pq.write_table(source_table(900, seed=5), tmp_path / "b2.parquet")
    create_table(TableStore(settings), "a", str(tmp_path / "b1.parquet"), target_rows=500, spark=spark)
    snap = append_batch(TableStore(settings), "a", str(tmp_path / "b2.parquet"), spark=spark)
    assert snap.operation == "append" and snap.parent == "1"
    assert [p.rows for p in snap.partitions] == [500, 500, 500, 500, 400]
    assert [p.created_seq for p in snap.partitions] == [0, 1, 2, 3, 4]
    check_zonemaps(snap)


def test_parallel_footer_reading_on_executors_matches_driver(spark, tmp_path, monkeypatch):
    paths = []
    for k in range(6):
        path = tmp_path / f"f{k}.parquet"
        pq.write_table(source_table(300, seed=k), path, row_group_size=100)
        paths.append(str(path))
    _, local = footers.read_partitions(paths)
    monkeypatch.setattr(footers_parallel, "PARALLEL_THRESHOLD", 2)
    _, remote = footers_parallel.read_partitions(spark, paths)
    assert remote == local
    (tmp_path / "bad.parquet").write_bytes(b"nope")
    with pytest.raises(DataFileError, match="bad.parquet"):
        footers_parallel.read_partitions(spark, paths + [str(tmp_path / "bad.parquet")])


def test_natural_order_survives_files_split_across_tasks(settings, spark, tmp_path):
    """Tiny split size: every file is read as several splits, packed by size into tasks."""
    src = tmp_path / "src"
    src.mkdir()
    t = source_table(3000, seed=11)
    sizes = (1700, 300, 1000)  # unequal files: Spark packs splits largest first
    start = 0
    for k, n in enumerate(sizes):
        pq.write_table(t.slice(start, n), src / f"batch-{k}.parquet", row_group_size=150)
        start += n
    old = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "4096")
    try:
        snap = create_table(TableStore(settings), "n", str(src), target_rows=700, spark=spark)
    finally:
        spark.conf.set("spark.sql.files.maxPartitionBytes", old)
    assert [p.rows for p in snap.partitions] == [700, 700, 700, 700, 200]
    ingested = pa.concat_tables([pq.read_table(p.path) for p in snap.partitions])
    assert ingested.column("i").to_pylist() == t.column("i").to_pylist()


def test_many_buckets_per_write_task_keep_order(settings, spark, tmp_path):
    """More buckets than write tasks (130 files, at most 64 tasks): each task gets a run of
    consecutive buckets by computed hash keys, so the files still follow the source order."""
    t = source_table(2590, seed=5)
    pq.write_table(t, tmp_path / "one.parquet", row_group_size=700)
    snap = create_table(TableStore(settings), "m", str(tmp_path / "one.parquet"), target_rows=20, spark=spark)
    assert [p.rows for p in snap.partitions] == [20] * 129 + [10]
    ingested = pa.concat_tables([pq.read_table(p.path) for p in snap.partitions])
    assert ingested.column("i").to_pylist() == t.column("i").to_pylist()
