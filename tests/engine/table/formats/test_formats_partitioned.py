"""Partitioned Iceberg and Delta tables (real pyiceberg SQLite catalogs, real deltalake
tables): plan groups are split by partition at planning time, and the rewrite's new files
carry their partition values; the format's own reader returns the same rows."""

from __future__ import annotations

import datetime as dt
import json
import os

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable
from pyiceberg.io.pyarrow import parquet_file_to_data_file
from pyiceberg.transforms import MonthTransform

from engine import api
from engine.core.errors import DataFileError
from engine.policy.base import PlanGroup
from engine.table.formats import iceberg, iceberg_files
from engine.table.formats.base import RewriteGroup
from engine.table.formats.partitioning import prepare_groups, split_groups
from engine.table.store import TableStore
from format_helpers import delta_table, digest, iceberg_table, live_data_files, rewrite_file
from plan_helpers import insert_plan, lineitem_arrow
from security_helpers import sign_in

IDENT = "ns.li"


def _rewrite(store: TableStore, name: str, paths: list[str], tag: str, key: str = "l_shipdate"):
    return rewrite_file(store, name, paths, tag, key)


def _month_table(settings, tmp_path):
    """lineitem partitioned by month(l_orderdate), order dates over three months, added as
    three loads of 100 rows, each load one file per month (pyiceberg's own ``append`` to a
    transform-partitioned table needs the optional pyiceberg-core; ``add_files`` does not)."""
    data = lineitem_arrow(300)
    days = [dt.date(2020, 1, 1) + dt.timedelta(days=i * 90 // 300) for i in range(300)]
    data = data.set_column(1, "l_orderdate", pa.array(days, pa.date32()))
    catalog = iceberg.workspace_catalog(str(settings.home))
    catalog.create_namespace("ns")
    tbl = catalog.create_table(IDENT, schema=data.schema)
    with tbl.update_spec() as spec:
        spec.add_field("l_orderdate", MonthTransform(), "order_month")
    tbl = catalog.load_table(IDENT)
    for load in range(3):
        chunk = data.slice(load * 100, 100)
        months = pc.month(chunk.column("l_orderdate"))
        files = []
        for month in sorted(set(months.to_pylist())):
            out = str(tmp_path / f"load{load}-m{month}.parquet")
            pq.write_table(chunk.filter(pc.equal(months, month)), out)
            files.append(out)
        tbl.add_files(files)
        tbl = catalog.load_table(IDENT)
    return catalog, data


def test_iceberg_groups_are_split_by_month_and_new_files_carry_their_month(settings, tmp_path):
    catalog, data = _month_table(settings, tmp_path)
    snap = api.register_iceberg(settings, "li", IDENT)
    store = TableStore(settings)
    keys = store.format("li").partition_keys()
    assert set(keys) == {p.path for p in snap.partitions}
    months = {k[1][0] for k in keys.values()}
    # one partition per month of order dates (pyiceberg months since 1970-01)
    first = {(d.year - 1970) * 12 + d.month - 1 for d in data.column("l_orderdate").to_pylist()}
    assert months == first and snap.partition_count == 4  # the second load spans two months
    # a policy's group over every file: split into one group per month, nothing lost
    group = PlanGroup(tuple(p.path for p in snap.partitions), "sort", ("l_shipdate",), "why",
                      predicted_saving_bytes=90.0)
    split = split_groups([group], keys)
    assert len(split) == len(months)
    assert sorted(p for g in split for p in g.partitions) == sorted(group.partitions)
    assert all(len({keys[p] for p in g.partitions}) == 1 for g in split)
    assert sum(g.predicted_saving_bytes for g in split) == pytest.approx(90.0)
    assert all(g.reason.startswith("why; split by table partition") for g in split)
    # rewriting one month: the new file's partition is that month, entry as pyiceberg's
    month_files = list(split[0].partitions)
    added = _rewrite(store, "li", month_files, "plan1-g0")
    tbl = catalog.load_table(IDENT)
    plan = iceberg_files.statistics_plan(tbl.metadata)
    uri = iceberg.file_uri(added[0].path)
    mine = iceberg_files.data_file(uri, added[0], tbl.metadata, plan)
    ref = parquet_file_to_data_file(tbl.io, tbl.metadata, uri)
    for field in ("partition", "record_count", "file_size_in_bytes", "column_sizes",
                  "value_counts", "null_value_counts", "lower_bounds", "upper_bounds"):
        assert getattr(mine, field) == getattr(ref, field), field
    before = digest(tbl.scan().to_arrow())
    after = store.format("li").commit_rewrite(snap.id, month_files, added, {"plan_id": "1"})
    assert after.partition_count == snap.partition_count - len(month_files) + 1
    assert store.format("li").partition_keys()[uri] == keys[month_files[0]]
    assert digest(catalog.load_table(IDENT).scan().to_arrow()) == before
    # a file spanning two months is refused at commit, nothing committed
    two = [split[1].partitions[0], split[2].partitions[0]]
    mixed = _rewrite(store, "li", two, "plan2-g0", key="l_orderdate")
    with pytest.raises(DataFileError, match="more than one partition value"):
        store.format("li").commit_rewrite(after.id, two, mixed, {"plan_id": "2"})
    assert store.current_id("li") == after.id


def _region_delta(path: str) -> pa.Table:
    data = lineitem_arrow(240).append_column(
        "region", pa.array(["eu" if i % 3 else "us" for i in range(240)]))
    delta_table(path, data, 80, partition_by=["region"])
    return data


def test_delta_partitioned_table_is_registered_split_and_rewritten_in_place(settings, tmp_path):
    path = str(tmp_path / "d")
    data = _region_delta(path)
    snap = api.register_delta(settings, "d", path)
    assert snap.partition_count == 6 and snap.total_rows == 240
    for p in snap.partitions:  # the partition column's bounds: the add action's value
        region = p.columns["region"]
        assert region.min == region.max and region.min in ("eu", "us") and region.null_count == 0
    assert "region" not in snap.summary["columns_without_stats"]
    store = TableStore(settings)
    keys = store.format("d").partition_keys()
    assert set(keys.values()) == {("eu",), ("us",)}
    groups = split_groups([PlanGroup(tuple(p.path for p in snap.partitions), "sort",
                                     ("l_shipdate",))], keys)
    assert len(groups) == 2
    before = digest(pa.table(DeltaTable(path).to_pyarrow_table()))
    removed = [p for g in groups for p in g.partitions]
    added = [f for i, g in enumerate(groups) for f in _rewrite(store, "d", list(g.partitions),
                                                              f"plan1-g{i}")]
    assert all("region" not in pq.read_schema(a.path).names for a in added)
    # the wrong order (group 1's file first) is caught, nothing committed
    with pytest.raises(DataFileError, match="nothing was committed"):
        store.format("d").commit_rewrite(snap.id, removed, added[::-1], {"plan_id": "1"})
    # a group written from both partitions (a plan not split) is refused too
    mixed = _rewrite(store, "d", removed, "plan9-g0")
    with pytest.raises(DataFileError, match="more than one partition .* nothing was committed"):
        store.format("d").commit_rewrite(snap.id, removed, mixed, {"plan_id": "9"})
    assert store.current_id("d") == snap.id
    after = store.format("d").commit_rewrite(snap.id, removed, added, {"plan_id": "1"})
    assert after.partition_count == 2
    table = DeltaTable(path)
    assert digest(pa.table(table.to_pyarrow_table())) == before
    eu = pa.table(table.to_pyarrow_table(filters=[("region", "=", "eu")]))
    assert eu.num_rows == sum(1 for r in data.column("region").to_pylist() if r == "eu")
    log = os.path.join(path, "_delta_log", f"{int(after.id):020d}.json")
    actions = [json.loads(line) for line in open(log)]
    adds = [a["add"] for a in actions if "add" in a]
    assert sorted(a["partitionValues"]["region"] for a in adds) == ["eu", "us"]
    assert all("region" not in json.loads(a["stats"])["minValues"] for a in adds)
    removes = [a["remove"] for a in actions if "remove" in a]
    assert {r["partitionValues"]["region"] for r in removes} == {"eu", "us"}
    shipped = {p.path: p for p in after.partitions}
    for a in added:
        assert shipped[a.path].columns["region"].min in ("eu", "us")


@pytest.mark.spark
def test_partitioned_delta_plan_run_by_spark_keeps_every_row_in_its_partition(settings, spark,
                                                                              tmp_path):
    path = str(tmp_path / "d")
    data = _region_delta(path)
    snap = api.register_delta(settings, "d", path)
    keys = TableStore(settings).format("d").partition_keys()
    groups = split_groups([PlanGroup(tuple(p.path for p in snap.partitions), "sort",
                                     ("l_shipdate",), "test")], keys)
    pid = insert_plan(settings, snap, groups)
    api.approve_plan(settings, pid, sign_in(settings, "alice"), reason="test")
    result = api.run_plan(settings, pid, actor=sign_in(settings, "alice"), spark=spark)
    table = DeltaTable(path)
    assert str(table.version()) == result["snapshot_id"]
    assert digest(pa.table(table.to_pyarrow_table())) == digest(data.select(
        pa.table(table.to_pyarrow_table()).column_names))
    for region in ("eu", "us"):
        got = pa.table(table.to_pyarrow_table(filters=[("region", "=", region)]))
        want = data.filter(pc.equal(data.column("region"), region))
        assert got.num_rows == want.num_rows
    after = TableStore(settings).current_snapshot("d")
    new = [p for p in after.partitions if p.path not in keys]
    spans = sorted((p.columns["l_shipdate"].min, p.columns["l_shipdate"].max, p.columns["region"].min)
                   for p in new)
    assert {s[2] for s in spans} == {"eu", "us"}
    assert isinstance(spans[0][0], dt.date)


@pytest.mark.spark
def test_partitioned_iceberg_plan_run_by_spark_commits_each_file_to_its_partition(settings, spark):
    data = lineitem_arrow(600).append_column(
        "region", pa.array(["eu" if i % 3 else "us" for i in range(600)]))
    catalog, _ = iceberg_table(settings, data, 300, IDENT, identity="region")  # a file per region
    snap = api.register_iceberg(settings, "li", IDENT)
    fmt = TableStore(settings).format("li")
    groups = prepare_groups([PlanGroup(tuple(p.path for p in snap.partitions), "sort",
                                       ("l_shipdate",), "test")], fmt, snap.id)
    assert len(groups) == 2
    before = digest(catalog.load_table(IDENT).scan().to_arrow())
    pid = insert_plan(settings, snap, groups)
    api.approve_plan(settings, pid, sign_in(settings, "alice"), reason="test")
    api.run_plan(settings, pid, actor=sign_in(settings, "alice"), spark=spark)
    tbl = catalog.load_table(IDENT)
    assert digest(tbl.scan().to_arrow()) == before
    keys = TableStore(settings).format("li").partition_keys()
    assert not set(keys) & {p.path for p in snap.partitions} and len(keys) >= 2
    for path, (_, (region,)) in keys.items():  # every row of a file is in its partition
        assert set(pq.read_table(path.replace("file://", "")).column("region").to_pylist()) == {region}
    eu = tbl.scan(row_filter="region == 'eu'").to_arrow()
    assert eu.num_rows == sum(1 for r in data.column("region").to_pylist() if r == "eu")


def test_plan_group_is_the_rewrite_group_the_formats_read():
    """The format layer names the fields it reads of a group (``RewriteGroup``, a Protocol:
    the policy layer is above it); the policies' PlanGroup has them."""
    group = PlanGroup(("a", "b"), "sort", ("l_shipdate",), "why", predicted_saving_bytes=4.0)
    assert isinstance(group, RewriteGroup)
    (a, b) = split_groups([group], {"a": ("eu",), "b": ("us",)})
    assert (a.partitions, b.partitions, a.predicted_saving_bytes) == (("a",), ("b",), 2.0)


def test_files_of_an_older_spec_are_grouped_by_the_current_spec_or_left_out(settings, tmp_path):
    """Real spec evolution: three unpartitioned loads, then the table is partitioned by
    month(l_orderdate) and two loads land in it. An old file within one month joins that
    month's group; the old file spanning two months is left out at planning with the
    reason (its rewrite would be one file across two partitions, refused at commit)."""
    data = lineitem_arrow(250)
    days = ([dt.date(2020, 1, 5)] * 50 + [dt.date(2020, 1, 20)] * 25 + [dt.date(2020, 2, 3)] * 25
            + [dt.date(2020, 3, 9)] * 50 + [dt.date(2020, 1, 11)] * 50 + [dt.date(2020, 3, 1)] * 50)
    data = data.set_column(1, "l_orderdate", pa.array(days, pa.date32()))
    catalog, tbl = iceberg_table(settings, data.slice(0, 150), 50, IDENT)  # Jan, Jan+Feb, Mar
    with tbl.update_spec() as spec:
        spec.add_field("l_orderdate", MonthTransform(), "order_month")
    for k, start in enumerate((150, 200)):  # Jan, Mar under the new spec
        out = str(tmp_path / f"new{k}.parquet")
        pq.write_table(data.slice(start, 50), out)
        catalog.load_table(IDENT).add_files([out])
    snap = api.register_iceberg(settings, "li", IDENT)
    fmt = TableStore(settings).format("li")
    paths = [p.path for p in snap.partitions]  # in load order
    jan, mar = 600, 602  # months since 1970-01
    spans_two = paths[1]
    assert set(fmt.spec_misfits()) == {spans_two}
    assert "was written under partition spec 0 and fits no single partition of the current " \
           "spec (order_month=month): Cannot infer partition value" in fmt.spec_misfits()[spans_two]
    keys = fmt.partition_keys()
    assert [keys.get(p) for p in paths] == [(1, (jan,)), None, (1, (mar,)), (1, (jan,)), (1, (mar,))]
    group = PlanGroup(tuple(paths), "sort", ("l_shipdate",), "wair", predicted_saving_bytes=50.0)
    groups = prepare_groups([group], fmt, snap.id)
    assert [g.partitions for g in groups] == [(paths[0], paths[3]), (paths[2], paths[4])]
    assert all(f"left out 1 file(s) that fit no partition of the current spec, e.g. {spans_two} "
               "was written under partition spec 0" in g.reason for g in groups)
    assert sum(g.predicted_saving_bytes for g in groups) == pytest.approx(40.0)
    # each group commits under the current spec; the rows are pyiceberg's as before
    store = TableStore(settings)
    before = digest(catalog.load_table(IDENT).scan().to_arrow())
    head = snap
    for k, g in enumerate(groups):
        head = fmt.commit_rewrite(head.id, list(g.partitions),
                                  _rewrite(store, "li", list(g.partitions), f"plan1-g{k}"),
                                  {"plan_id": "1"})
    tbl = catalog.load_table(IDENT)
    assert digest(tbl.scan().to_arrow()) == before
    new = {p: f for p, f in live_data_files(tbl).items() if p != spans_two}
    assert sorted((f.spec_id, f.partition[0]) for f in new.values()) == [(1, jan), (1, mar)]
    assert set(fmt.spec_misfits()) == {spans_two}  # still live, still left out
    # the misfit alone: its one new file would straddle Jan and Feb, refused at commit
    with pytest.raises(DataFileError, match="more than one partition value"):
        fmt.commit_rewrite(head.id, [spans_two],
                           _rewrite(store, "li", [spans_two], "plan2-g0"), {"plan_id": "2"})
