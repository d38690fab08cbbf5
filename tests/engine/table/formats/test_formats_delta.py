"""Delta tables through deltalake (real tables in tmp folders): statistics from the log,
history, rewrites as Add/Remove actions with data_change=False, conflicts with real
concurrent writers, restore and vacuum; a plan run by the Spark executor, verified by
deltalake's own reader."""

from __future__ import annotations

import datetime as dt
import json
import os

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake

from engine import api
from engine.core.errors import CommitConflictError
from engine.policy.base import PlanGroup
from engine.table.store import TableStore
from format_helpers import delta_scan, delta_table, digest, registered_delta, rewrite_file
from plan_helpers import insert_plan, lineitem_arrow
from security_helpers import sign_in


def test_statistics_history_and_columns_without_statistics(settings, tmp_path):
    path = str(tmp_path / "li")
    data = lineitem_arrow(300)
    delta_table(path, data, 100, configuration={"delta.dataSkippingNumIndexedCols": "4"})
    snap = api.register_delta(settings, "li", path)
    assert snap.partition_count == 3 and snap.total_rows == 300 and snap.id == "2"
    for i, part in enumerate(snap.partitions):
        chunk = data.slice(i * 100, 100)
        lo, hi = pc.min_max(chunk.column("l_shipdate")).values()
        assert (part.columns["l_shipdate"].min, part.columns["l_shipdate"].max) == (lo.as_py(), hi.as_py())
        # 6th column: not indexed in the log; its bounds come from the footer
        lo, hi = pc.min_max(chunk.column("l_comment")).values()
        assert (part.columns["l_comment"].min, part.columns["l_comment"].max) == (lo.as_py(), hi.as_py())
        assert os.path.isfile(part.path)
    assert snap.summary["columns_without_stats"] == ["l_quantity", "l_comment"]
    assert snap.summary["columns_from_footers"] == ["l_quantity", "l_comment"]
    info = api.table_info(settings, "li")
    assert info.format == "delta" and info.columns_without_stats == ["l_quantity", "l_comment"]
    hist = api.table_snapshots(settings, "li")
    assert [h["id"] for h in hist] == ["0", "1", "2"] and hist[-1]["parent"] == "1"
    assert hist[0]["operation"] in ("write", "create table")


def test_rewrite_commit_restore_concurrency_and_vacuum(settings, tmp_path):
    path = str(tmp_path / "li")
    data = lineitem_arrow(300)
    store, base = registered_delta(settings, path, data, 100)
    chosen = [p.path for p in base.partitions[:2]]
    added = rewrite_file(store, "li", chosen, "plan3-g0")
    extra = lineitem_arrow(40, seed=5)
    write_deltalake(path, extra, mode="append")  # a concurrent writer's append
    after = store.format("li").commit_rewrite(base.id, chosen, added,
                                              {"plan_id": "3", "policy": "wair", "approver": "bob"})
    assert after.id == str(int(base.id) + 2)
    assert delta_scan(path) == digest(pa.concat_tables([data, extra]))
    appended = {p.path for p in after.partitions} - {p.path for p in base.partitions} - {added[0].path}
    assert len(appended) == 1  # the other writer's file survived
    assert {p.path for p in after.partitions} == (
        {p.path for p in base.partitions} - set(chosen)) | {added[0].path} | appended
    # the log entry: no data change, the plan in the commit info
    log = os.path.join(path, "_delta_log", f"{int(after.id):020d}.json")
    actions = [json.loads(line) for line in open(log)]
    assert all(a["add"]["dataChange"] is False for a in actions if "add" in a)
    assert all(a["remove"]["dataChange"] is False for a in actions if "remove" in a)
    commit = next(a["commitInfo"] for a in actions if "commitInfo" in a)
    assert commit["la.plan-id"] == "3" and commit["la.approver"] == "bob"
    new = next(p for p in after.partitions if p.path == added[0].path)
    assert new.columns["l_shipdate"].min == added[0].columns["l_shipdate"].min  # stats written
    # a concurrent delete of a plan's file: the commit conflicts, nothing changes
    victim = next(p.path for p in after.partitions if p.path != added[0].path)
    DeltaTable(path).delete(f"l_orderkey = {pq.read_table(victim).column('l_orderkey')[0].as_py()}")
    left = delta_scan(path)
    with pytest.raises(CommitConflictError, match="no longer live"):
        store.format("li").commit_rewrite(store.current_id("li"), [victim], [], {"plan_id": "4"})
    assert delta_scan(path) == left
    # restore through Delta's own mechanism
    back = api.rollback_table(settings, "li", base.id, actor=sign_in(settings, "root"))
    assert delta_scan(path) == digest(data) and back.partition_count == 3
    assert api.gc_table(settings, "li", older_than="7d", dry_run=True) == []
    doomed = api.gc_table(settings, "li", older_than="0s", dry_run=True, force_retention=True)
    assert added[0].path in doomed and not set(p.path for p in back.partitions) & set(doomed)


@pytest.mark.spark
def test_plan_run_by_spark_commits_to_delta_and_deltalake_reads_the_same_rows(
        settings, spark, tmp_path):
    path = str(tmp_path / "li")
    data = lineitem_arrow(2000)
    delta_table(path, data, 500)
    base = api.register_delta(settings, "lineitem", path)
    chosen = [p.path for p in base.partitions[:3]]
    pid = insert_plan(settings, base, [PlanGroup(tuple(chosen), "sort", ("l_shipdate",), "test")])
    api.approve_plan(settings, pid, sign_in(settings, "alice"), reason="test")
    result = api.run_plan(settings, pid, actor=sign_in(settings, "alice"), spark=spark)
    after = TableStore(settings).current_snapshot("lineitem")
    assert after.id == result["snapshot_id"] == str(int(base.id) + 1)
    assert delta_scan(path) == digest(data)
    new = [p for p in after.partitions if p.path not in {q.path for q in base.partitions}]
    assert sum(p.rows for p in new) == 1500 and all(p.path.startswith(path) for p in new)
    spans = sorted((p.columns["l_shipdate"].min, p.columns["l_shipdate"].max) for p in new)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    assert dt.date(1990, 1, 1) < spans[0][0]


@pytest.mark.spark
def test_real_writers_during_a_run_append_survives_delete_conflicts(settings, spark, tmp_path):
    path = str(tmp_path / "li")
    data = lineitem_arrow(1500)
    delta_table(path, data, 500)
    base = api.register_delta(settings, "lineitem", path)
    extra = lineitem_arrow(60, seed=4)
    first = [p.path for p in base.partitions[:2]]
    pid = insert_plan(settings, base, [PlanGroup(tuple(first), "sort", ("l_shipdate",), "t"),
                                       PlanGroup((base.partitions[2].path,), "sort",
                                                 ("l_commitdate",), "t")])
    api.approve_plan(settings, pid, sign_in(settings, "alice"), reason="test")
    done: dict = {}

    def writer(event):  # between the groups: the plan is running
        if event["groups_done"] == 1 and not done:
            done["append"] = write_deltalake(path, extra, mode="append")
            victim = base.partitions[2].path
            key = pq.read_table(victim).column("l_orderkey")[0].as_py()
            DeltaTable(path).delete(f"l_orderkey = {key}")  # rewrites group 1's file
            done["scan"] = delta_scan(path)
            done["version"] = DeltaTable(path).version()

    with pytest.raises(CommitConflictError, match="no longer live"):
        api.run_plan(settings, pid, actor=sign_in(settings, "alice"), progress=writer, spark=spark)
    assert api.show_plan(settings, pid).status == "failed"
    assert delta_scan(path) == done["scan"] and DeltaTable(path).version() == done["version"]
    assert done["scan"][0] == 1500 + 60 - 1  # the append is there, the deleted row gone
    assert not [d for d in os.listdir(path) if d.startswith(f"plan{pid}-")]  # run files removed


def test_two_plans_on_one_base_at_most_one_commits(settings, tmp_path):
    path = str(tmp_path / "li")
    data = lineitem_arrow(400)
    store, base = registered_delta(settings, path, data, 100)
    a = [p.path for p in base.partitions[:2]]
    b = [p.path for p in base.partitions[2:]]
    added_a, added_b = rewrite_file(store, "li", a, "plan1-g0"), rewrite_file(store, "li", b, "plan2-g0")
    first = store.format("li").commit_rewrite(base.id, a, added_a, {"plan_id": "1"})
    with pytest.raises(CommitConflictError, match="plan 1"):
        store.format("li").commit_rewrite(base.id, b, added_b, {"plan_id": "2"})
    assert store.current_id("li") == first.id and delta_scan(path) == digest(data)


def test_a_rewrite_of_infinite_and_nan_doubles_writes_strict_json_statistics(settings, tmp_path):
    """A double column holding ±Infinity and NaN: the rewrite's log entry is strict JSON
    (the non-finite bounds are left out, as Spark and delta-rs leave them), so deltalake and
    the tool still open the table and read the same rows."""
    path = str(tmp_path / "inf")
    values = [float("inf"), -1.5, float("-inf"), float("nan"), 2.5, 0.0]
    data = pa.table({"k": pa.array(range(6), pa.int32()), "d": pa.array(values, pa.float64())})
    store, base = registered_delta(settings, path, data, 3)
    chosen = [p.path for p in base.partitions]
    added = rewrite_file(store, "li", chosen, "plan1-g0", key="k")
    after = store.format("li").commit_rewrite(base.id, chosen, added, {"plan_id": "1"})
    log = os.path.join(path, "_delta_log", f"{int(after.id):020d}.json")
    adds = [json.loads(line, parse_constant=lambda c: pytest.fail(f"{c} in the Delta log"))
            for line in open(log)]
    stats = [json.loads(a["add"]["stats"], parse_constant=lambda c: pytest.fail(f"{c} in stats"))
             for a in adds if "add" in a]
    assert stats and all("d" not in s["minValues"] and s["minValues"]["k"] == 0 for s in stats)
    rows, _ = delta_scan(path)
    assert rows == 6 and DeltaTable(path).to_pyarrow_table().num_rows == 6
    assert store.current_snapshot("li").total_rows == 6
