"""Zonemaps straight from the manifest, partitions made on access (issue 15)."""

from __future__ import annotations

import datetime as dt

import numpy as np

from engine.table import store as store_mod
from engine.table.manifest import ManifestPartitions
from engine.table.model import ColumnStats, Partition, ZoneMaps
from engine.table.store import TableStore
from tests.scale_scenario import SCHEMA


def test_loaded_snapshot_has_lazy_partitions_and_identical_zonemaps(settings, tmp_path) -> None:
    rng = np.random.default_rng(3)
    parts = []
    for i in range(300):
        a = int(rng.integers(0, 1000))
        parts.append(Partition(f"{tmp_path}/p{i:04d}.parquet", 100 + i, 5000 + i, {
            "a": ColumnStats(a, a + 5, 0, 10),
            "b": ColumnStats(None, None, None, 0) if i % 7 == 0 else ColumnStats(0.5 * i, 0.5 * i + 1, 2, 20),
            "d": ColumnStats(dt.date(2024, 1, 1), dt.date(2024, 2, 1) + dt.timedelta(days=i), 0, 5),
            "s": ColumnStats(f"k{i:04d}", f"k{i + 9:04d}", 1, 30),
            "c": ColumnStats(float(i), float(i) + 2.0, 0, 40),
        }, i))
    TableStore(settings).create("t", schema=SCHEMA, partitions=parts, operation="register",
                                managed=False, location=str(tmp_path))
    store_mod._SNAPSHOT_CACHE.clear()
    snap = TableStore(settings).current_snapshot("t")
    assert isinstance(snap.partitions, ManifestPartitions)
    assert len(snap.partitions) == snap.partition_count == 300
    assert snap.partitions[-1].path == parts[-1].path and snap.partitions[5].rows == 105
    assert [p.path for p in snap.partitions[10:13]] == [p.path for p in parts[10:13]]
    assert snap.partitions[7].columns["b"].min is None
    assert snap.partitions == tuple(parts)
    assert snap.total_rows == sum(p.rows for p in parts)
    zm, ref = snap.zonemaps(), ZoneMaps.from_partitions(SCHEMA, parts)
    assert zm.paths.tolist() == ref.paths.tolist() and zm.paths.dtype == object
    assert np.array_equal(zm.rows, ref.rows) and np.array_equal(zm.created_seq, ref.created_seq)
    for name in SCHEMA.names:
        a, b = zm.column(name), ref.column(name)
        assert np.array_equal(a.valid, b.valid), name
        assert a.lo[a.valid].tolist() == b.lo[b.valid].tolist(), name
        assert a.hi[a.valid].tolist() == b.hi[b.valid].tolist(), name
        assert np.array_equal(a.null_count, b.null_count), name
        assert np.array_equal(a.compressed_bytes, b.compressed_bytes), name
