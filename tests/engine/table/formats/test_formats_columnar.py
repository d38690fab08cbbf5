"""Zonemaps of Iceberg and Delta snapshots straight from the format's metadata (numpy
arrays built from Arrow, no Partition object per file), equal to the object path's."""

from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
from deltalake import write_deltalake

from engine import api
from engine.table.formats import columnar, iceberg
from engine.table.model import ZoneMaps
from test_formats_iceberg import typed_rows


def _same(zm: ZoneMaps, ref: ZoneMaps) -> None:
    assert list(zm.paths) == list(ref.paths)
    assert np.array_equal(zm.rows, ref.rows) and np.array_equal(zm.bytes, ref.bytes)
    assert np.array_equal(zm.created_seq, ref.created_seq)
    assert set(zm.columns) == set(ref.columns)
    for name, col in zm.columns.items():
        other = ref.columns[name]
        assert col.ltype == other.ltype, name
        assert np.array_equal(col.valid, other.valid), name
        assert np.array_equal(col.lo[col.valid], other.lo[other.valid]), name
        assert np.array_equal(col.hi[col.valid], other.hi[other.valid]), name
        assert np.array_equal(col.null_count, other.null_count), name
        assert np.array_equal(col.compressed_bytes, other.compressed_bytes), name


def test_iceberg_zonemaps_come_from_the_manifests_without_partition_objects(settings):
    data = typed_rows(90)
    catalog = iceberg.workspace_catalog(str(settings.home))
    catalog.create_namespace("ns")
    tbl = catalog.create_table("ns.t", schema=data.schema,
                               properties={"write.metadata.metrics.column.price": "counts"})
    for i in range(0, 90, 30):
        tbl.append(data.slice(i, 30))
    snap = api.register_iceberg(settings, "t", "ns.t")
    zm = snap.__dict__["_zonemaps"]  # built with the snapshot, from Arrow arrays
    assert type(snap.partitions).__name__ == "ManifestPartitions"  # objects only on access
    _same(zm, ZoneMaps.from_partitions(snap.schema, list(snap.partitions)))
    assert zm.column("d").valid.all() and zm.column("s").null_count.tolist() == [6, 6, 6]
    # days since the epoch for dates, microseconds for timestamps
    first = data.column("d")[0].as_py()
    assert zm.column("d").lo[0] == (first - first.__class__(1970, 1, 1)).days
    assert snap.summary["columns_from_footers"] == ["price"] and zm.column("price").valid.all()


def test_delta_zonemaps_come_from_the_add_actions(settings, tmp_path):
    path = str(tmp_path / "d")
    data = typed_rows(90).drop_columns(["ts"]).append_column(
        "region", pa.array(["eu" if i % 2 else "us" for i in range(90)]))
    for i in range(0, 90, 30):
        write_deltalake(path, data.slice(i, 30), mode="append", partition_by=["region"],
                        configuration={"delta.dataSkippingNumIndexedCols": "3"})
    snap = api.register_delta(settings, "d", path)
    zm = snap.__dict__["_zonemaps"]
    assert len(zm) == 6 and type(snap.partitions).__name__ == "ManifestPartitions"
    _same(zm, ZoneMaps.from_partitions(snap.schema, list(snap.partitions)))
    region = zm.column("region")
    assert region.valid.all() and set(region.lo) == {"eu", "us"} and (region.null_count == 0).all()
    assert snap.summary["columns_from_footers"] == ["price", "s"]  # beyond 3 indexed columns


def test_bounds_are_decoded_in_bulk_like_iceberg_serializes_them():
    longs = [(7).to_bytes(8, "little", signed=True), None, (-3).to_bytes(4, "little", signed=True)]
    assert columnar.decode_bounds("int64", longs).to_pylist() == [7, None, -3]  # promoted int
    floats = [struct.pack("<f", 1.5), struct.pack("<d", 2.25), None]
    assert columnar.decode_bounds("float64", floats).to_pylist() == [1.5, 2.25, None]
    micros = [(1_577_854_800_000_000).to_bytes(8, "little")]
    assert str(columnar.decode_bounds("timestamp", micros)[0].as_py()) == "2020-01-01 05:00:00"
    assert columnar.decode_bounds("decimal", [(-150).to_bytes(2, "big", signed=True)],
                                  scale=2).to_pylist() == ["-1.50"]
    assert columnar.decode_bounds("bool", [b"\x01", b"\x00"]).to_pylist() == [True, False]
