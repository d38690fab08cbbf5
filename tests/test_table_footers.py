"""Footer statistics (unknown vs empty, time zones, nested columns) and manifest speed."""

from __future__ import annotations

import datetime as dt
import decimal
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.core.errors import DataFileError
from engine.table import footers, manifest
from engine.table.model import TableSchema, ZoneMaps


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
    lo, hi, nulls, cbytes, _ = footers._merge("int", groups, "a")
    assert (lo, hi, nulls, cbytes) == (None, None, None, 135)
    lo, hi, nulls, _, _ = footers._merge("int", [groups[0], groups[2]], "a")
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


def test_manifest_of_100k_partitions_loads_fast(tmp_path):
    n, types = 100_000, ["int", "float", "date", "string", "decimal", "timestamp", "int", "date"] * 2
    schema = TableSchema(tuple((f"col{i}", t) for i, t in enumerate(types)))
    rng = np.random.default_rng(0)
    data = {"path": [f"/data/part-{k:06d}.parquet" for k in range(n)],
            "rows": np.full(n, 100_000), "bytes": np.full(n, 32 << 20), "created_seq": np.arange(n),
            "rg_file": [None] * n}
    for i, t in enumerate(types):
        base = rng.integers(0, 10_000, n)
        for suffix, values in (("min", base), ("max", base + 30)):
            if t == "string":
                col = pa.array([f"k{v:06d}" for v in values])
            elif t == "decimal":
                col = pa.array([str(v / 100) for v in values])
            elif t == "date":
                col = pa.array(values.astype("datetime64[D]"))
            elif t == "timestamp":
                col = pa.array(values.astype("datetime64[s]")).cast(pa.timestamp("us"))
            elif t == "float":
                col = pa.array(values / 3.0)
            else:
                col = pa.array(values)
            data[f"c{i}_{suffix}"] = col
        data[f"c{i}_nulls"] = np.zeros(n, dtype=np.int64)
        data[f"c{i}_cbytes"] = np.full(n, 1 << 20)
    table = pa.Table.from_pydict(data, schema=manifest.manifest_schema(schema))
    pq.write_table(table, tmp_path / "m.parquet", compression="zstd")
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        loaded = pq.read_table(tmp_path / "m.parquet")
        parts = manifest.table_to_partitions(schema, loaded)
        zm = manifest.table_to_zonemaps(schema, loaded)
        best = min(best, time.perf_counter() - start)
    assert len(parts) == n and len(zm) == n
    assert best < 2.0, f"loading 100k partitions took {best:.2f} s"
    assert parts[12_345].columns["col3"].min == data["c3_min"][12_345].as_py()
    assert zm.column("col2").lo[7] == float(data["c2_min"][7].cast(pa.int32()).as_py())
