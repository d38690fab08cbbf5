"""Iceberg tables on a real pyiceberg SQL catalog (SQLite in the workspace): statistics from
the manifests, history, commits that replace exactly the plan's files, conflicts with real
concurrent writers, rollback and expiry; and a plan run by the Spark executor, verified by
pyiceberg's own scan."""

from __future__ import annotations

import datetime as dt
import decimal
import os

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from pyiceberg.io.pyarrow import parquet_file_to_data_file
from pyiceberg.partitioning import PartitionSpec

from engine import api
from engine.core.errors import CommitConflictError, DataFileError
from engine.policy.base import PlanGroup
from engine.table.footers import read_partitions
from engine.table import fs
from engine.table.formats import iceberg, iceberg_files
from engine.table.store import TableStore
from format_helpers import (IDENT, delete_data_file, digest, iceberg_scan, iceberg_table,
                            live_data_files, registered_iceberg, rewrite_file)
from plan_helpers import insert_plan, lineitem_arrow
from security_helpers import sign_in



def typed_rows(n: int = 60) -> pa.Table:
    """Every type the advisor clusters on, with nulls in the string column."""
    base = dt.datetime(2021, 3, 1, 12, 30)
    return pa.table({
        "k": pa.array(range(n), pa.int64()),
        "d": pa.array([dt.date(2020, 1, 1) + dt.timedelta(days=i * 7) for i in range(n)]),
        "ts": pa.array([base + dt.timedelta(hours=i) for i in range(n)], pa.timestamp("us")),
        "tz": pa.array([(base + dt.timedelta(minutes=i)).replace(tzinfo=dt.timezone.utc)
                        for i in range(n)], pa.timestamp("us", tz="UTC")),
        "price": pa.array([decimal.Decimal(i * 125) / 100 for i in range(n)], pa.decimal128(12, 2)),
        "s": pa.array([None if i % 5 == 0 else f"name-{i:03d}" for i in range(n)]),
    })


def _scan(catalog, ident: str = IDENT) -> tuple[int, str]:
    return iceberg_scan(catalog, ident)


def test_statistics_are_decoded_from_the_manifests_by_iceberg_type(settings):
    data = typed_rows(60)
    iceberg_table(settings, data, 20)
    snap = api.register_iceberg(settings, "typed", IDENT)
    assert snap.partition_count == 3 and snap.total_rows == 60
    assert dict(snap.schema.columns) == {"k": "int", "d": "date", "ts": "timestamp",
                                         "tz": "timestamp", "price": "decimal", "s": "string"}
    for i, part in enumerate(snap.partitions):  # creation order = append order
        chunk = data.slice(i * 20, 20)
        for col in ("k", "d", "ts", "price", "s"):
            lo, hi = pc.min_max(chunk.column(col)).values()
            assert part.columns[col].min == lo.as_py(), col
            assert part.columns[col].max == hi.as_py(), col
        # a zoned timestamp comes back as naive UTC, like the footers give it
        lo, hi = pc.min_max(chunk.column("tz")).values()
        assert part.columns["tz"].min == lo.as_py().replace(tzinfo=None)
        assert part.columns["s"].null_count == chunk.column("s").null_count
        assert part.columns["k"].compressed_bytes > 0
        assert part.path.startswith("file://") and part.rows == 20
    shown = api.show_table(settings, "typed")
    assert (shown["format"], shown["catalog"]) == ("iceberg", None)
    assert shown["location"].endswith("/ns/lineitem")
    assert shown["partitions"][0]["columns"]["d"]["min"] == "2020-01-01"
    info = api.table_info(settings, "typed")
    assert info.format == "iceberg" and info.identifier == IDENT
    assert api.table_files(settings, "typed") == [p.path for p in snap.partitions]


def test_commit_rewrite_replaces_exactly_the_files_and_names_the_plan(settings):
    data = lineitem_arrow(400)
    catalog, store, base = registered_iceberg(settings, data, 100)
    before = _scan(catalog)
    chosen = [p.path for p in base.partitions[1:3]]
    # the rewrite: the two files' rows, sorted by ship date, in one new file
    rows = pa.concat_tables([pq.read_table(p.replace("file://", "")) for p in chosen])
    added = rewrite_file(store, "li", chosen, "plan7-g0")
    new_path = iceberg.file_uri(added[0].path)  # the name Iceberg gives it
    assert new_path.startswith(catalog.load_table(IDENT).location() + "/data/")
    after = store.format("li").commit_rewrite(
        base.id, chosen, added, {"plan_id": "7", "policy": "wair", "approver": "alice"})
    assert after.parent == base.id and after.operation == "overwrite"
    assert (after.summary["la.plan-id"], after.summary["la.policy"],
            after.summary["la.approver"], after.summary["la.operation"]) == ("7", "wair", "alice",
                                                                           "rewrite")
    paths = [p.path for p in after.partitions]
    assert set(paths) == (set(p.path for p in base.partitions) - set(chosen)) | {new_path}
    assert _scan(catalog) == before  # same rows, same content
    new = next(p for p in after.partitions if p.path == new_path)
    assert new.columns["l_shipdate"].min == pc.min(rows.column("l_shipdate")).as_py()
    # history from the format; the rewrite's snapshot names the plan
    hist = store.history("li")
    assert [h["id"] for h in hist][-2:] == [base.id, after.id]
    assert hist[-1]["actor"] == "alice" and hist[-1]["partition_count"] == 3
    # removing a file that is no longer live is a conflict, and commits nothing
    with pytest.raises(CommitConflictError, match="no longer live"):
        store.format("li").commit_rewrite(after.id, [chosen[0]], [], {"plan_id": "8"})
    assert store.current_id("li") == after.id
    # rollback through Iceberg's own snapshot management
    back = api.rollback_table(settings, "li", base.id, actor=sign_in(settings, "root"))
    assert back.id == base.id and [p.path for p in back.partitions] == [p.path for p in base.partitions]
    assert _scan(catalog) == before
    # after the commit, the total row count is read back through pyiceberg: a rewrite that
    # lost rows (here: a file of 100 rows replaced by 40 of them) is committed, then named
    lossy = f"{store.new_data_dir('li', 'plan9-g0')}/part-0.parquet"
    pq.write_table(pq.read_table(chosen[0].replace("file://", "")).slice(0, 40),
                   lossy.replace("file://", ""))
    _, short = read_partitions([lossy])
    with pytest.raises(DataFileError, match=r"was committed, but a pyiceberg scan plans 340 rows "
                       r"\(summary total-records: 340\) where the previous snapshot \d+ had 400; "
                       r"`layout-advisor table rollback li --to \d+"):
        store.format("li").commit_rewrite(back.id, [chosen[0]], short, {"plan_id": "9"})
    assert store.current_snapshot("li").total_rows == 340  # committed, not silently undone
    api.rollback_table(settings, "li", back.id, actor=sign_in(settings, "root"))
    assert _scan(catalog) == before


def test_concurrent_append_survives_and_concurrent_delete_conflicts(settings):
    data = lineitem_arrow(300)
    catalog, store, base = registered_iceberg(settings, data, 100)
    chosen = [base.partitions[0].path]
    added = rewrite_file(store, "li", chosen, "plan1-g0")
    new_path = iceberg.file_uri(added[0].path)  # the name Iceberg gives it
    # another writer appends while the plan "runs" (after the base was read)
    extra = lineitem_arrow(50, seed=11)
    catalog.load_table(IDENT).append(extra)
    after = store.format("li").commit_rewrite(base.id, chosen, added, {"plan_id": "1"})
    assert after.total_rows == 350
    assert _scan(catalog) == digest(pa.concat_tables([data, extra]))
    # another writer deletes one of a second plan's files: that plan's commit conflicts
    victim = next(p for p in after.partitions if p.path != new_path)
    delete_data_file(catalog, IDENT, victim.path)
    left_by_other = _scan(catalog)
    with pytest.raises(CommitConflictError, match="no longer live"):
        store.format("li").commit_rewrite(after.id, [victim.path], [], {"plan_id": "2"})
    assert _scan(catalog) == left_by_other


def test_expire_deletes_only_files_of_expired_snapshots(settings):
    data = lineitem_arrow(200)
    catalog, store, base = registered_iceberg(settings, data, 100)
    old = base.partitions[0].path
    added = rewrite_file(store, "li", [old], "p")
    store.format("li").commit_rewrite(base.id, [old], added, {"plan_id": "1"})
    assert api.gc_table(settings, "li", older_than="7d", dry_run=True) == []
    listed = api.gc_table(settings, "li", older_than="0s", dry_run=True, force_retention=True)
    # the replaced data file, then the metadata only the expired snapshots referenced
    tbl = catalog.load_table(IDENT)
    expired = [s for s in tbl.metadata.snapshots if s.snapshot_id != tbl.current_snapshot().snapshot_id]
    kept_manifests = {m.manifest_path for m in tbl.current_snapshot().manifests(tbl.io)}
    old_manifests = {m.manifest_path for s in expired for m in s.manifests(tbl.io)} - kept_manifests
    assert old_manifests and listed == [old, *sorted(old_manifests),
                                        *sorted(s.manifest_list for s in expired)]
    assert all(fs.exists(p) for p in listed)
    deleted = api.gc_table(settings, "li", older_than="0s", dry_run=False, force_retention=True,
                           actor=sign_in(settings, "root"))
    assert deleted == listed and not any(fs.exists(p) for p in deleted)
    tbl = catalog.load_table(IDENT)
    assert not tbl.metadata.snapshot_by_id(int(base.id)) and len(tbl.metadata.snapshots) == 1
    assert fs.exists(tbl.current_snapshot().manifest_list)
    assert all(fs.exists(p) for p in kept_manifests)
    assert _scan(catalog) == digest(data)


@pytest.mark.spark
def test_plan_run_by_spark_commits_to_iceberg_and_pyiceberg_reads_the_same_rows(settings, spark):
    data = lineitem_arrow(3000)
    catalog, _ = iceberg_table(settings, data, 500)
    base = api.register_iceberg(settings, "lineitem", IDENT)
    before = _scan(catalog)
    chosen = [p.path for p in base.partitions[1:5]]
    pid = insert_plan(settings, base, [PlanGroup(tuple(chosen), "sort", ("l_shipdate",), "test")])
    api.approve_plan(settings, pid, sign_in(settings, "alice"), reason="test")
    result = api.run_plan(settings, pid, actor=sign_in(settings, "alice"), spark=spark)
    store = TableStore(settings)
    after = store.current_snapshot("lineitem")
    assert after.id == result["snapshot_id"] and after.parent == base.id
    assert after.summary["la.plan-id"] == str(pid) and after.summary["la.policy"] == "wair"
    assert _scan(catalog) == before  # pyiceberg's own reader: same count, same content
    new = [p for p in after.partitions if p.path not in {q.path for q in base.partitions}]
    assert not set(chosen) & {p.path for p in after.partitions}
    assert sum(p.rows for p in new) == 2000
    spans = sorted((p.columns["l_shipdate"].min, p.columns["l_shipdate"].max) for p in new)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    tbl = catalog.load_table(IDENT)
    assert all(p.path.startswith(tbl.location() + "/data/") for p in new)
    back = api.rollback_table(settings, "lineitem", base.id, actor=sign_in(settings, "root"))
    assert back.id == base.id and _scan(catalog) == before


def _plan_dirs(location: str, pid: int) -> list[str]:
    data = location.replace("file://", "") + "/data"
    return [d for d in os.listdir(data) if d.startswith(f"plan{pid}-")]


@pytest.mark.spark
def test_real_writers_during_a_run_append_survives_delete_conflicts(settings, spark):
    data = lineitem_arrow(2000)
    catalog, tbl = iceberg_table(settings, data, 500)
    base = api.register_iceberg(settings, "lineitem", IDENT)
    extra = lineitem_arrow(100, seed=9)

    appended: list = []

    def append_while_running(event):  # after the group is written, before the commit
        if event["groups_done"] == 1 and not appended:
            appended.append(catalog.load_table(IDENT).append(extra))

    chosen = [p.path for p in base.partitions[:2]]
    pid = insert_plan(settings, base, [PlanGroup(tuple(chosen), "sort", ("l_shipdate",), "t")])
    api.approve_plan(settings, pid, sign_in(settings, "alice"), reason="test")
    api.run_plan(settings, pid, actor=sign_in(settings, "alice"), progress=append_while_running, spark=spark)
    assert _scan(catalog) == digest(pa.concat_tables([data, extra]))
    assert api.show_plan(settings, pid).status == "succeeded"

    # a second plan; another writer deletes one of its files while it runs
    current = TableStore(settings).current_snapshot("lineitem")
    chosen = [p.path for p in current.partitions if p.path not in chosen][:2]
    pid2 = insert_plan(settings, current, [PlanGroup(tuple(chosen), "sort", ("l_shipdate",), "t")])
    api.approve_plan(settings, pid2, sign_in(settings, "alice"), reason="test")

    def delete_while_running(event):
        if event["groups_done"] == 1 and not left:
            delete_data_file(catalog, IDENT, chosen[1])
            left["scan"] = _scan(catalog)
            left["snapshot"] = str(catalog.load_table(IDENT).current_snapshot().snapshot_id)

    left: dict = {}
    with pytest.raises(CommitConflictError, match="no longer live"):
        api.run_plan(settings, pid2, actor=sign_in(settings, "alice"), progress=delete_while_running, spark=spark)
    shown = api.show_plan(settings, pid2)
    assert shown.status == "failed" and "no longer live" in shown.result["error"]
    assert _scan(catalog) == left["scan"]  # exactly as the other writer left it
    assert TableStore(settings).current_id("lineitem") == left["snapshot"]
    assert _plan_dirs(tbl.location(), pid2) == []  # the run's files are gone


def test_partitioned_table_new_files_carry_their_partition_and_never_mix(settings):
    data = lineitem_arrow(300).append_column(
        "region", pa.array(["eu" if i % 2 else "us" for i in range(300)]))
    catalog, tbl = iceberg_table(settings, data, 150, identity="region")  # a file per region
    field = tbl.schema().find_field("region")
    assert isinstance(tbl.spec(), PartitionSpec) and len(tbl.spec().fields) == 1
    snap = api.register_iceberg(settings, "p", IDENT)
    assert snap.partition_count == 4
    store = TableStore(settings)
    eu = [p.path for p in snap.partitions if p.columns["region"].min == "eu"]
    us = [p.path for p in snap.partitions if p.columns["region"].min == "us"]
    assert len(eu) == len(us) == 2
    before = _scan(catalog)

    def rewrite(paths, tag):
        return rewrite_file(store, "p", paths, tag)

    # a file mixing two partition values is refused; nothing is committed
    mixed = rewrite([eu[0], us[0]], "mixed")
    with pytest.raises(DataFileError, match="cannot be added to iceberg table"):
        store.format("p").commit_rewrite(snap.id, [eu[0], us[0]], mixed, {"plan_id": "1"})
    assert store.current_id("p") == snap.id
    # one partition's files: the new file carries the partition tuple ("eu",)
    after = store.format("p").commit_rewrite(snap.id, eu, rewrite(eu, "eu"), {"plan_id": "2"})
    assert after.partition_count == 3 and _scan(catalog) == before
    tbl = catalog.load_table(IDENT)
    new = [e.data_file for m in tbl.current_snapshot().manifests(tbl.io)
           for e in m.fetch_manifest_entry(tbl.io, discard_deleted=True)
           if e.data_file.file_path not in set(eu) | set(us)]
    assert len(new) == 1 and new[0].partition[0] == "eu" and field.name == "region"
    assert tbl.scan(row_filter="region == 'eu'").to_arrow().num_rows == 150


def test_columns_without_bounds_are_named(settings):
    data = typed_rows(40)
    iceberg_table(settings, data, 40, properties={"write.metadata.metrics.column.s": "counts",
                                                  "write.metadata.metrics.column.price": "none"})
    snap = api.register_iceberg(settings, "typed", IDENT)
    assert snap.summary["columns_without_stats"] == ["price", "s"]
    # their bounds come from the Parquet footers instead (and say so)
    assert snap.summary["columns_from_footers"] == ["price", "s"]
    assert snap.partitions[0].columns["s"].min == pc.min(data.column("s")).as_py()
    assert snap.partitions[0].columns["price"].max == pc.max(data.column("price")).as_py()
    assert snap.partitions[0].columns["s"].null_count == data.column("s").null_count
    assert snap.partitions[0].columns["k"].max == 39
    assert api.table_info(settings, "typed").columns_without_stats == ["price", "s"]


def test_two_plans_on_one_base_at_most_one_commits(settings):
    data = lineitem_arrow(400)
    catalog, store, base = registered_iceberg(settings, data, 100)

    def rewrite(paths, tag):
        return rewrite_file(store, "li", paths, tag)

    a = [p.path for p in base.partitions[:2]]
    b = [p.path for p in base.partitions[2:]]  # disjoint from a
    added_a, added_b = rewrite(a, "plan1-g0"), rewrite(b, "plan2-g0")
    first = store.format("li").commit_rewrite(base.id, a, added_a, {"plan_id": "1"})
    with pytest.raises(CommitConflictError, match="plan 1 rewrote it after snapshot"):
        store.format("li").commit_rewrite(base.id, b, added_b, {"plan_id": "2"})
    assert store.current_id("li") == first.id and _scan(catalog) == digest(data)
    # a plan based on a snapshot that was rolled away from is refused as well
    api.rollback_table(settings, "li", base.id, actor=sign_in(settings, "root"))
    with pytest.raises(CommitConflictError, match="no longer an ancestor"):
        store.format("li").commit_rewrite(first.id, b, added_b, {"plan_id": "3"})


def test_committed_files_carry_split_offsets_as_pyiceberg_computes_them(settings):
    """Row-group offsets of the new files, from the footers read once, equal to what
    pyiceberg's own footer reader gives (dictionary pages and several row groups)."""
    data = lineitem_arrow(2000)
    catalog, store, base = registered_iceberg(settings, data, 1000)
    chosen = [p.path for p in base.partitions]
    rows = pa.concat_tables([pq.read_table(p.replace("file://", "")) for p in chosen])
    out = f"{store.new_data_dir('li', 'plan1-g0')}/part-0.parquet"
    pq.write_table(rows.sort_by("l_shipdate"), out, row_group_size=300)  # 7 row groups
    _, added = read_partitions([out])
    tbl = catalog.load_table(IDENT)
    ref = parquet_file_to_data_file(tbl.io, tbl.metadata, iceberg.file_uri(out))
    assert len(ref.split_offsets) == 7 and pq.ParquetFile(out).metadata.row_group(0).column(
        0).has_dictionary_page
    assert iceberg_files.split_offsets(added, base.schema) == {added[0].path: ref.split_offsets}
    store.format("li").commit_rewrite(base.id, chosen, added, {"plan_id": "1"})
    (entry,) = live_data_files(catalog.load_table(IDENT)).values()
    assert entry.split_offsets == ref.split_offsets
    assert _scan(catalog) == digest(data)
