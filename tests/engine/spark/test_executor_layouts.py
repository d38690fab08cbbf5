"""The executor's contract (engine/policy/base.py PlanGroup): one job for many groups,
binpack, partition_by, target_file_bytes, partial progress, exact schemas."""

from __future__ import annotations

import datetime as dt
import decimal
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine import api
from engine.policy.base import LAYOUT_KINDS, PlanGroup
from engine.table.footers import read_partitions
from engine.table.store import TableStore
from plan_helpers import insert_plan, lineitem_arrow, make_table, rows_of
from security_helpers import sign_in

pytestmark = pytest.mark.spark


def _run(settings, spark, snap, groups, **kw):
    pid = insert_plan(settings, snap, groups)
    api.approve_plan(settings, pid, sign_in(settings, "alice"), reason="test")
    return api.run_plan(settings, pid, actor=sign_in(settings, "alice"), spark=spark, **kw)


def _new(settings, base):
    old = {p.path for p in base.partitions}
    return [p for p in TableStore(settings).current_snapshot(base.table).partitions
            if p.path not in old]


def test_many_groups_run_as_at_most_two_spark_jobs(settings, spark):
    base = make_table(settings, n=4000, rows_per_file=500)
    paths = [p.path for p in base.partitions]
    groups = [PlanGroup(tuple(paths[i:i + 2]), "sort", (col,))
              for i, col in zip(range(0, 8, 2), ("l_shipdate", "l_commitdate", "l_quantity",
                                                "l_shipdate"))]
    result = _run(settings, spark, base, groups)
    assert result["measured"]["spark_jobs"] <= 2, result["measured"]
    assert len(result["snapshots"]) == 1
    for g, group in zip(result["groups"], groups):
        assert g["rows"] == 1000 and g["outputs"] == 2
        col = group.columns[0]
        for f in g["files"]:  # every file sorted on its own group's key
            values = pq.read_table(f, columns=[col]).column(col).to_pylist()
            assert values == sorted(values)
    check = result["cost_check"]
    assert check["measured_wall_seconds"] > 0 and check["predicted_seconds"] > 0
    assert check["spark_jobs"] == result["measured"]["spark_jobs"]
    assert rows_of([p.path for p in TableStore(settings).current_snapshot("lineitem")
                    .partitions]).equals(rows_of(paths))


def test_binpack_keeps_the_input_order_and_packs_files_to_size(settings, spark):
    assert "binpack" in LAYOUT_KINDS
    base = make_table(settings, n=3000, rows_per_file=300)  # 10 small files
    paths = [p.path for p in base.partitions]
    result = _run(settings, spark, base, [PlanGroup(tuple(paths), "binpack", (),
                                                    layout_params={"target_file_bytes": 10**9})])
    new = _new(settings, base)
    assert len(new) == 1 and new[0].rows == 3000  # packed into one file
    keys = pq.read_table(new[0].path, columns=["l_orderkey"]).column("l_orderkey").to_pylist()
    original = pa.concat_tables([pq.read_table(p) for p in paths]).column("l_orderkey")
    assert keys == original.to_pylist()  # no reordering
    assert result["groups"][0]["layout"] == "binpack"


def test_partition_by_no_file_straddles_two_values(settings, spark):
    base = make_table(settings, n=3000, rows_per_file=500)
    paths = [p.path for p in base.partitions]
    _run(settings, spark, base, [PlanGroup(tuple(paths), "sort", ("l_shipdate",),
                                           layout_params={"partition_by": "l_comment"})])
    new = _new(settings, base)
    assert len(new) > 6
    for p in new:
        values = set(pq.read_table(p.path, columns=["l_comment"]).column("l_comment").to_pylist())
        assert len(values) == 1, (p.path, values)
        dates = pq.read_table(p.path, columns=["l_shipdate"]).column("l_shipdate").to_pylist()
        assert dates == sorted(dates)


def test_partition_by_writes_one_partial_file_per_value_not_per_slice(settings, spark,
                                                                      monkeypatch):
    """A big ``partition_by`` group is cut into slices at partition values (PTO's finding:
    slices by ranges of the sort key gave each value a partial file per slice)."""
    from engine.spark import slicing

    monkeypatch.setattr(slicing, "MIN_SLICE_ROWS", 0)  # 4,000 rows sliced, as a big group
    store = TableStore(settings)
    data = lineitem_arrow(4000)
    data = data.append_column("region", pa.array(["asia", "eu", "us"][i % 3] for i in range(4000)))
    root = store.managed_location("regions")
    os.makedirs(root, exist_ok=True)
    paths = []
    for i in range(0, 4000, 400):
        paths.append(f"{root}/ingest-{i // 400}.parquet")
        pq.write_table(data.slice(i, 400), paths[-1])
    schema, parts = read_partitions(paths)
    base = store.create("regions", schema=schema, partitions=parts, operation="create",
                        target_rows=100)  # 40 files' worth: sliced over the 4 tasks
    result = _run(settings, spark, base, [PlanGroup(tuple(paths), "sort", ("l_shipdate",),
                                                    layout_params={"partition_by": "region"})])
    files: dict[str, list[int]] = {}
    for f in result["groups"][0]["files"]:
        t = pq.read_table(f, columns=["region", "l_shipdate"])
        (region,) = set(t.column("region").to_pylist())
        dates = t.column("l_shipdate").to_pylist()
        assert dates == sorted(dates)
        files.setdefault(region, []).append(t.num_rows)
    assert sorted(files) == ["asia", "eu", "us"]
    for region, sizes in files.items():  # 1334 or 1333 rows: 13 full files and one partial
        assert sum(sizes) == sum(1 for r in data.column("region").to_pylist() if r == region)
        assert len(sizes) == -(-sum(sizes) // 100), (region, sorted(sizes))


def test_target_file_and_row_group_bytes_are_honoured(settings, spark):
    base = make_table(settings, n=4000, rows_per_file=500)
    paths = [p.path for p in base.partitions]
    width = sum(p.bytes for p in base.partitions) / 4000
    _run(settings, spark, base, [PlanGroup(tuple(paths), "sort", ("l_shipdate",), layout_params={
        "target_file_bytes": int(1000 * width), "row_group_bytes": 4096})])
    new = _new(settings, base)
    assert [p.rows for p in new] == [1000] * 4
    assert pq.ParquetFile(new[0].path).metadata.num_row_groups > 1


def test_partial_progress_commits_per_batch_of_groups(settings, spark):
    import dataclasses

    base = make_table(settings, n=2000, rows_per_file=500)
    paths = [p.path for p in base.partitions]
    groups = [PlanGroup((p,), "sort", ("l_shipdate",)) for p in paths]
    partial = dataclasses.replace(settings, partial_progress_groups=2)
    pid = insert_plan(partial, base, groups)
    api.approve_plan(partial, pid, sign_in(partial, "alice"), reason="test")
    result = api.run_plan(partial, pid, actor=sign_in(partial, "alice"), spark=spark)
    assert len(result["snapshots"]) == 2
    assert int(TableStore(settings).current_id("lineitem")) == int(base.id) + 2


TYPES = pa.schema([
    pa.field("i32", pa.int32()), pa.field("i64", pa.int64()),
    pa.field("f32", pa.float32()), pa.field("f64", pa.float64()),
    pa.field("dec", pa.decimal128(12, 2)), pa.field("d", pa.date32()),
    pa.field("ts", pa.timestamp("us")), pa.field("tsz", pa.timestamp("us", tz="UTC")),
    pa.field("s", pa.string()), pa.field("b", pa.bool_()),
])


def _typed_rows(n: int, start: int) -> pa.Table:
    rows = range(start, start + n)
    def nul(v, i):  # every 7th value null
        return None if i % 7 == 3 else v
    return pa.table({
        "i32": [nul(i % 1000, i) for i in rows], "i64": [nul(i * 10**10, i) for i in rows],
        "f32": [nul(i / 3, i) for i in rows], "f64": [nul(i / 7, i) for i in rows],
        "dec": [nul(decimal.Decimal(i) / 100, i) for i in rows],
        "d": [nul(dt.date(2000, 1, 1) + dt.timedelta(days=(i * 37) % 900), i) for i in rows],
        "ts": [nul(dt.datetime(2020, 1, 1) + dt.timedelta(seconds=i * 17), i) for i in rows],
        "tsz": [nul(dt.datetime(2021, 1, 1, tzinfo=dt.timezone.utc)
                    + dt.timedelta(microseconds=i * 1001), i) for i in rows],
        "s": [nul(f"v{(i * 13) % 97}", i) for i in rows], "b": [nul(i % 2 == 0, i) for i in rows],
    }, schema=TYPES)


@pytest.mark.parametrize("layout,columns", [("sort", ("d",)), ("hilbert", ("i32", "f64"))])
def test_rewritten_files_keep_the_exact_arrow_schema_and_values(settings, spark, layout,
                                                                columns):
    store = TableStore(settings)
    root = store.managed_location("typed")
    paths = []
    for i in range(4):
        path = f"{root}/ingest-{i}.parquet"
        os.makedirs(root, exist_ok=True)
        pq.write_table(_typed_rows(250, i * 250), path)
        paths.append(path)
    schema, parts = read_partitions(paths)
    base = store.create("typed", schema=schema, partitions=parts, operation="create",
                        target_rows=400)
    _run(settings, spark, base, [PlanGroup(tuple(paths), layout, columns)])
    new = _new(settings, base)
    assert new
    for p in new:
        assert pq.read_schema(p.path).remove_metadata().equals(TYPES), pq.read_schema(p.path)
    before = pa.concat_tables([pq.read_table(p) for p in paths]).to_pandas()
    after = pa.concat_tables([pq.read_table(p.path) for p in new]).to_pandas()
    key = ["i64"]
    assert (before.sort_values(key, na_position="first").reset_index(drop=True)
            .equals(after.sort_values(key, na_position="first").reset_index(drop=True)))


def test_groups_with_different_file_sizes_all_land(settings, spark):
    """Two file sizes in one plan: two writes into the run's directory, both kept."""
    base = make_table(settings, n=2000, rows_per_file=500)
    paths = [p.path for p in base.partitions]
    width = sum(p.bytes for p in base.partitions) / 2000
    result = _run(settings, spark, base, [
        PlanGroup(tuple(paths[:2]), "sort", ("l_shipdate",),
                  layout_params={"target_file_bytes": int(250 * width)}),
        PlanGroup(tuple(paths[2:]), "sort", ("l_shipdate",))])
    assert [g["outputs"] for g in result["groups"]] == [4, 2]
    after = TableStore(settings).current_snapshot("lineitem")
    assert rows_of([p.path for p in after.partitions]).equals(rows_of(paths))


@pytest.mark.parametrize("layout,columns", [("sort", ("d",)), ("hilbert", ("i32", "f64"))])
def test_the_arrow_writer_writes_what_spark_writes_in_the_exact_types(settings, spark,
                                                                     tmp_path, layout,
                                                                     columns):
    """``ExecutorOptions(writer="arrow")`` (an Arrow sort and pyarrow's files per task)
    writes the files, rows per file and rows per row group that Spark's writer writes for
    the same groups (the output model's shape), each in its group's key order, with the
    inputs' exact Arrow schema and the same rows; the job's measure counts its bytes."""
    from engine.spark.options import ExecutorOptions
    from engine.spark.rewrite import rewrite

    paths = []
    for i in range(4):
        path = str(tmp_path / f"in-{i}.parquet")
        pq.write_table(_typed_rows(250, i * 250), path)
        paths.append(path)
    schema, parts = read_partitions(paths)
    groups = [(PlanGroup(tuple(paths[:3]), layout, columns,
                         layout_params={"row_group_bytes": 2048}), parts[:3]),
              (PlanGroup(tuple(paths[3:]), "sort", ("i64",)), parts[3:])]

    def shape(writer: str):
        result = rewrite(spark, schema, groups, str(tmp_path / writer), 300, None,
                         options=ExecutorOptions(writer=writer))
        files = {g.index: sorted(g.files) for g in result.groups}
        rows = {i: sorted(tuple(pq.ParquetFile(f).metadata.row_group(r).num_rows
                                for r in range(pq.ParquetFile(f).metadata.num_row_groups))
                          for f in fs) for i, fs in files.items()}
        return result, files, rows

    spark_result, spark_files, spark_rows = shape("spark")
    arrow_result, arrow_files, arrow_rows = shape("arrow")
    assert arrow_rows == spark_rows
    assert any(len(r) > 1 for rs in arrow_rows.values() for r in rs)  # several row groups
    assert arrow_result.measured["bytes_written"] > 0
    assert arrow_result.measured["rows_written"] == 1000
    for fs in arrow_files.values():
        for f in fs:
            assert pq.read_schema(f).remove_metadata().equals(TYPES), pq.read_schema(f)
    for f in arrow_files[1]:  # the sort group: each file in its key's order
        values = pq.read_table(f, columns=["i64"]).column(0).to_pylist()
        assert values == sorted(values, key=lambda v: (v is not None, v)), f
    for i in arrow_files:
        before = pa.concat_tables([pq.read_table(f) for f in spark_files[i]]).to_pandas()
        after = pa.concat_tables([pq.read_table(f) for f in arrow_files[i]]).to_pandas()
        key = ["i64"]
        assert (before.sort_values(key, na_position="first").reset_index(drop=True)
                .equals(after.sort_values(key, na_position="first").reset_index(drop=True)))
