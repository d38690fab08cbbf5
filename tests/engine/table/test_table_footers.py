"""Footer statistics (unknown vs empty, time zones, nested columns) and the manifest
round trip of every type (its speed: ``bench/planning/bench_zonemap_cache.py --mixed``)."""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from manifest_helpers import mixed_manifest
from engine.core.errors import DataFileError
from engine.table import footers, manifest
from engine.table.model import ZoneMaps


def test_missing_statistics_mean_unknown_not_empty(tmp_path):
    path = tmp_path / "nostats.parquet"
    t = pa.table({"a": [1, 2, 3], "b": ["x", "y", "z"]})
    pq.write_table(t, path, write_statistics=["b"])  # no statistics for "a"
    schema, [part] = footers.read_partitions([str(path)])
    assert part.columns["a"].min is None and part.columns["a"].max is None
    assert part.columns["b"].min == "x" and part.columns["b"].max == "z"
    zm = ZoneMaps.from_partitions(schema, [part])
    assert not zm.column("a").valid[0] and zm.column("b").valid[0]


def test_all_null_row_groups_do_not_make_stats_unknown(tmp_path):
    path = tmp_path / "nulls.parquet"
    t = pa.table({"a": pa.array([None, None, 5, 9, None, None], pa.int64())})
    pq.write_table(t, path, row_group_size=2)  # groups: [null,null] [5,9] [null,null]
    _, [part] = footers.read_partitions([str(path)])
    assert (part.columns["a"].min, part.columns["a"].max, part.columns["a"].null_count) == (5, 9, 4)
    result = footers.read_footers([str(path)])
    groups = result.row_groups[str(path)]
    assert [g.rows for g in groups] == [2, 2, 2]
    assert groups[1].columns["a"] == (5, 9, 0) and groups[0].columns["a"] == (None, None, 2)


def test_merge_is_unknown_when_one_row_group_lacks_stats():
    # (rows, {column: (has_min_max, min, max, null_count, compressed_bytes)})
    groups = [(10, {"a": (True, 1, 4, 0, 50)}), (10, {"a": (False, None, None, None, 40)}),
              (10, {"a": (True, 7, 9, 0, 45)})]
    lo, hi, nulls, cbytes, _ = footers.merge_column_stats("int", groups, "a")
    assert (lo, hi, nulls, cbytes) == (None, None, None, 135)
    lo, hi, nulls, _, _ = footers.merge_column_stats("int", [groups[0], groups[2]], "a")
    assert (lo, hi, nulls) == (1, 9, 0)


def test_types_time_zones_and_nested_columns(tmp_path):
    path = tmp_path / "types.parquet"
    t = pa.table({
        "ts_utc": pa.array([dt.datetime(2020, 1, 1, 12), dt.datetime(2020, 1, 2, 6)], pa.timestamp("ms", tz="UTC")),
        "dec": pa.array([decimal.Decimal("-1.50"), decimal.Decimal("2.25")], pa.decimal128(5, 2)),
        "cat": pa.array(["b", "a"]).dictionary_encode(),
        "tags": pa.array([[1, 2], [3]]),
        "flag": [True, False],
        "small": pa.array([3, -4], pa.int8()),
    })
    pq.write_table(t, path)
    schema, [part] = footers.read_partitions([str(path)])
    assert dict(schema.columns) == {"ts_utc": "timestamp", "dec": "decimal", "cat": "string",
                                    "tags": "other", "flag": "bool", "small": "int"}
    assert part.columns["ts_utc"].min == dt.datetime(2020, 1, 1, 12)  # naive UTC
    assert part.columns["dec"].min == decimal.Decimal("-1.50")
    assert (part.columns["cat"].min, part.columns["cat"].max) == ("a", "b")
    assert part.columns["tags"].min is None and part.columns["tags"].compressed_bytes > 0
    assert (part.columns["small"].min, part.columns["small"].max) == (-4, 3)
    # round trip through the manifest keeps every type
    table = manifest.partitions_to_table(schema, [part])
    [back] = manifest.table_to_partitions(schema, table)
    assert back == part


def test_corrupt_missing_and_empty_files_are_named(tmp_path):
    (tmp_path / "empty.parquet").write_bytes(b"")
    (tmp_path / "junk.parquet").write_bytes(b"not parquet at all, just text")
    for name, message in (("empty.parquet", "empty"), ("junk.parquet", "not a readable Parquet"),
                          ("gone.parquet", "no such file")):
        with pytest.raises(DataFileError, match=f"{name}: {message}"):
            footers.read_partitions([str(tmp_path / name)])


def test_manifest_of_many_partitions_loads_every_type(tmp_path):
    """A manifest of mixed types read back as lazy partitions and numpy zonemaps, values
    exact (its load time at 100k and 1M partitions is in ``bench/planning/bench_zonemap_cache.py
    --mixed``, not a timed assertion here)."""
    n = 3_000
    schema, table, data = mixed_manifest(n, seed=0)
    pq.write_table(table, tmp_path / "m.parquet", compression="zstd")
    loaded = pq.read_table(tmp_path / "m.parquet")
    parts = manifest.table_to_partitions(schema, loaded)
    zm = manifest.table_to_zonemaps(schema, loaded)
    assert len(parts) == n and len(zm) == n
    assert parts[1_234].columns["col3"].min == data["c3_min"][1_234].as_py()  # a string
    assert parts[n - 1].columns["col4"].max == decimal.Decimal(data["c4_max"][n - 1].as_py())
    assert parts[7].columns["col5"].min == data["c5_min"][7].as_py()  # a timestamp
    assert zm.column("col2").lo[7] == float(data["c2_min"][7].cast(pa.int32()).as_py())  # days
    assert zm.column("col0").hi.tolist() == data["c0_max"].to_numpy().astype(float).tolist()
    assert zm.paths[42] == f"/data/part-{42:06d}.parquet" and int(zm.rows.sum()) == n * 100_000