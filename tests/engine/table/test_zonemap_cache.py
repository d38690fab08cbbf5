"""A snapshot's zonemaps cached as numpy under <home>/cache/zonemaps: a fresh
process reads the cache instead of the manifest, with arrays equal to the manifest's."""

from __future__ import annotations

import datetime as dt
import decimal
import math
import pickle
import os
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from engine.core.errors import DataFileError
from engine.table import manifest, zonemap_cache
from engine.table.formats.native_files import clear_snapshot_cache
from engine.table.model import ColumnStats, Partition, TableSchema, ZoneMaps
from engine.table.store import TableStore

SCHEMA = TableSchema((("i", "int"), ("f", "float"), ("m", "decimal"), ("d", "date"),
                      ("ts", "timestamp"), ("s", "string"), ("b", "bool")))


def _parts(tmp_path, n: int = 40, offset: int = 0) -> list[Partition]:
    words = ["apple", "Ærø", "Zürich", "東京", "🦆duck", "", "naïve", "abc"]
    out = []
    for k in range(n):
        i = k + offset
        missing = i % 9 == 4
        out.append(Partition(f"{tmp_path}/dir é/p{i:04d}.parquet", 100 + i, 5_000 + i, {
            "i": ColumnStats(None if missing else i - 20, None if missing else i + 3, 0, 10),
            "f": ColumnStats(math.nan if i % 11 == 5 else -0.5 * i, 0.25 * i + 1, None, 20),
            "m": ColumnStats(decimal.Decimal(f"{i}.25"), decimal.Decimal(f"{i + 1}.50"), 1, 5),
            "d": ColumnStats(dt.date(2024, 1, 1) + dt.timedelta(days=i),
                             None if missing else dt.date(2024, 3, 1), 0, 5),
            "ts": ColumnStats(dt.datetime(2024, 1, 1, 10, 30) + dt.timedelta(hours=i),
                              dt.datetime(2024, 2, 1, 0, 0, 1), 2, 7),
            "s": ColumnStats(words[i % len(words)], words[(i + 3) % len(words)] + "z", 1, 30),
            "b": ColumnStats(False, bool(i % 2), 0, 1),
        }, i))
    return out


def _assert_same(a: ZoneMaps, b: ZoneMaps) -> None:
    assert a.paths.dtype == object and a.paths.tolist() == b.paths.tolist()
    for name in ("rows", "bytes", "created_seq"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert list(a.columns) == list(b.columns)
    for name, x in a.columns.items():
        y = b.column(name)
        assert x.ltype == y.ltype and x.lo.dtype == y.lo.dtype, name
        for field in ("lo", "hi"):
            u, v = getattr(x, field), getattr(y, field)
            if u.dtype.kind == "U":
                assert u.tolist() == v.tolist(), name
            else:
                assert np.array_equal(u, v, equal_nan=True), (name, field)
        for field in ("valid", "null_count", "compressed_bytes"):
            assert np.array_equal(getattr(x, field), getattr(y, field)), (name, field)


def _entries(settings, table: str = "t") -> list:
    folder = settings.home / "cache" / "zonemaps" / table
    return sorted(p for p in folder.glob("*") if not p.name.startswith(".")) if folder.exists() else []


def test_a_fresh_store_reads_the_cached_arrays_equal_to_the_manifests(settings, tmp_path, monkeypatch):
    parts = _parts(tmp_path)
    TableStore(settings).create("t", schema=SCHEMA, partitions=parts, operation="register",
                                managed=False, location=str(tmp_path))
    clear_snapshot_cache()
    first = TableStore(settings).current_snapshot("t")  # reads the manifest, writes the cache
    assert len(_entries(settings)) == 1
    info = TableStore(settings).info("t")
    table = pq.read_table(f"{info.metadata_dir}/snap-00000001.manifest.parquet")
    from_manifest = manifest.table_to_zonemaps(SCHEMA, table)
    _assert_same(first.zonemaps(), from_manifest)

    # a fresh process: no in-process snapshot, and the manifest must not be read
    clear_snapshot_cache()
    reads = []
    real = pq.read_table
    monkeypatch.setattr(pq, "read_table", lambda *a, **k: reads.append(a) or real(*a, **k))
    again = TableStore(settings).current_snapshot("t")
    _assert_same(again.zonemaps(), from_manifest)
    assert reads == []
    assert again.total_rows == sum(p.rows for p in parts) and len(again.partitions) == 40
    # a partition's own statistics still come from the manifest, read on demand
    assert again.partitions[3].path == parts[3].path
    assert again.partitions[3].columns["m"].min == decimal.Decimal("3.25")
    assert len(reads) == 1
    assert pickle.loads(pickle.dumps(again)).partitions[3].path == parts[3].path
    assert [(p.path, p.rows, p.created_seq, p.columns["s"]) for p in again.partitions] == \
        [(p.path, p.rows, p.created_seq, p.columns["s"]) for p in parts]


def test_a_new_snapshot_gets_its_own_entry(settings, tmp_path):
    store = TableStore(settings)
    base = store.create("t", schema=SCHEMA, partitions=_parts(tmp_path), operation="register",
                        managed=False, location=str(tmp_path))
    clear_snapshot_cache()
    store.current_snapshot("t")
    later = _parts(tmp_path, 5, offset=100)
    for part in later:  # a commit checks that the files it adds exist with their size
        Path(part.path).parent.mkdir(parents=True, exist_ok=True)
        Path(part.path).write_bytes(b"x" * part.bytes)
    removed = [p.path for p in base.partitions[:10]]
    store.commit("t", base.id, removed, later, operation="append")
    clear_snapshot_cache()
    fresh = TableStore(settings).current_snapshot("t")
    assert len(_entries(settings)) == 2
    assert len(fresh.zonemaps()) == 35
    want = {p.path for p in base.partitions[10:]} | {p.path for p in later}
    assert set(fresh.zonemaps().paths.tolist()) == want
    _assert_same(fresh.zonemaps(), ZoneMaps.from_partitions(SCHEMA, list(fresh.partitions)))
    TableStore(settings).drop("t")  # a dropped table's entries go with it
    assert _entries(settings) == []


def test_an_unreadable_entry_is_rebuilt(settings, tmp_path):
    TableStore(settings).create("t", schema=SCHEMA, partitions=_parts(tmp_path), operation="register",
                                managed=False, location=str(tmp_path))
    clear_snapshot_cache()
    want = TableStore(settings).current_snapshot("t").zonemaps()
    (entry,) = _entries(settings)
    for damage in ("c5_lo.npy", "path_offsets.npy", "meta.json"):
        (entry / damage).write_bytes(b"\x93NUMPY not an array")
        assert zonemap_cache.load(entry, SCHEMA) is None, damage
        clear_snapshot_cache()
        _assert_same(TableStore(settings).current_snapshot("t").zonemaps(), want)
        _assert_same(zonemap_cache.load(entry, SCHEMA), want)  # written again, readable


def test_an_entry_of_another_schema_or_version_is_ignored(settings, tmp_path, monkeypatch):
    zm = ZoneMaps.from_partitions(SCHEMA, _parts(tmp_path, 6))
    path = tmp_path / "cache" / "entry"
    assert zonemap_cache.store(path, SCHEMA, zm)
    _assert_same(zonemap_cache.load(path, SCHEMA), zm)
    other = TableSchema(SCHEMA.columns[:-1])
    assert zonemap_cache.load(path, other) is None
    stale = path.parent / ".killed-writer.tmp"  # a writer killed mid-store, long ago
    stale.mkdir()
    os.utime(stale, (1, 1))
    assert zonemap_cache.store(path.parent / "other", SCHEMA, zm) and not stale.exists()
    monkeypatch.setattr(zonemap_cache, "CACHE_VERSION", zonemap_cache.CACHE_VERSION + 1)
    assert zonemap_cache.load(path, SCHEMA) is None
    assert zonemap_cache.cache_path("h", "t", ["x"]) != path


def test_a_replaced_manifest_is_another_entry(settings, tmp_path):
    """The key holds the manifest file's identity: the benches replace a snapshot's
    manifest in place, and a damaged manifest must not hide behind a cached entry."""
    TableStore(settings).create("t", schema=SCHEMA, partitions=_parts(tmp_path), operation="register",
                                managed=False, location=str(tmp_path))
    clear_snapshot_cache()
    TableStore(settings).current_snapshot("t")
    info = TableStore(settings).info("t")
    path = f"{info.metadata_dir}/snap-00000001.manifest.parquet"
    table = pq.read_table(path).slice(0, 7)
    pq.write_table(table, path)
    clear_snapshot_cache()
    assert len(TableStore(settings).current_snapshot("t").zonemaps()) == 7
    with open(path, "wb") as handle:
        handle.write(b"damaged")
    clear_snapshot_cache()
    with pytest.raises(DataFileError, match="damaged"):
        TableStore(settings).current_snapshot("t")


def test_partition_details_read_one_row_and_show_what_the_partition_objects_show(settings, tmp_path):
    """The Partitions page's row details (one row of the zonemap arrays, not
    ``snap.partitions[i]``) show what the manifest's Partition objects showed: the same
    text per bound (None where unknown, "nan" for a NaN statistic); decimals as the
    float64 the engine compares with."""
    from app import views
    from engine import api

    parts = _parts(tmp_path)
    TableStore(settings).create("t", schema=SCHEMA, partitions=parts, operation="register",
                                managed=False, location=str(tmp_path))
    clear_snapshot_cache()
    snap = TableStore(settings).current_snapshot("t")
    for idx in (0, 4, 5, 13, 39):
        got = api.partition_details(settings, "t", idx)
        part = snap.partitions[idx]
        assert (got["path"], got["rows"], got["bytes"], got["created_seq"]) == \
            (part.path, part.rows, part.bytes, part.created_seq)
        frame = views.partition_zonemaps(got)
        assert frame["column"].tolist() == SCHEMA.names
        for row, col, (name, stats) in zip(frame.to_dict("records"), got["columns"],
                                           part.columns.items()):
            want = [None if v is None else str(v) for v in (stats.min, stats.max)]
            if name == "m":
                assert [float(v) for v in (row["min"], row["max"])] == [float(v) for v in want]
            else:
                assert [row["min"], row["max"]] == want, (idx, name)
            assert (col["nulls"], col["compressed_bytes"]) == (stats.null_count, stats.compressed_bytes)
    with pytest.raises(Exception, match="partition index must be 0 to 39"):
        api.partition_details(settings, "t", 40)
