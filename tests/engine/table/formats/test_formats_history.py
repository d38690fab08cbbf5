"""Snapshot history from the format itself (``api.snapshot_history``), the same shape for
Iceberg (real SQLite catalog), Delta (real deltalake table) and the native chain."""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import write_deltalake

from engine import api
from engine.table.footers import read_partitions
from engine.table.formats import iceberg
from engine.table.store import TableStore
from plan_helpers import lineitem_arrow, make_table
from security_helpers import sign_in

KEYS = {"id", "parent", "created_at", "operation", "actor", "current", "format", "plan_id",
        "policy", "approver", "added_files", "removed_files", "added_rows", "total_files",
        "total_rows", "summary"}


def _rewrite_two(settings, name: str) -> tuple:
    """Replace the first two files of ``name`` with one, as plan 5 approved by carol."""
    store = TableStore(settings)
    base = store.current_snapshot(name)
    chosen = [p.path for p in base.partitions[:2]]
    rows = pa.concat_tables([pq.read_table(p.replace("file://", "")) for p in chosen])
    out = f"{store.new_data_dir(name, 'plan5-g0')}/part-0.parquet"
    pq.write_table(rows.sort_by("l_shipdate"), out.replace("file://", ""))
    _, added = read_partitions([out])
    after = store.format(name).commit_rewrite(
        base.id, chosen, added, {"plan_id": "5", "policy": "wair", "approver": "carol"})
    return base, after


def test_iceberg_history_names_the_plan_the_approver_and_the_file_counts(settings):
    data = lineitem_arrow(300)
    catalog = iceberg.workspace_catalog(str(settings.home))
    tbl = iceberg.create_table(catalog, "ns.h", data.schema)
    for i in range(0, 300, 100):
        tbl.append(data.slice(i, 100))
    api.register_iceberg(settings, "h", "ns.h")
    base, after = _rewrite_two(settings, "h")
    hist = api.snapshot_history(settings, "h")
    assert all(set(h) == KEYS for h in hist) and json.dumps(hist)
    assert [h["operation"] for h in hist] == ["append", "append", "append", "overwrite"]
    last = hist[-1]
    assert (last["id"], last["parent"], last["current"]) == (after.id, base.id, True)
    assert (last["plan_id"], last["policy"], last["approver"], last["actor"]) == (
        "5", "wair", "carol", "carol")
    assert (last["added_files"], last["removed_files"], last["total_files"],
            last["total_rows"]) == (1, 2, 2, 300)
    assert hist[0]["added_rows"] == 100 and hist[0]["plan_id"] is None
    assert last["summary"]["la.operation"] == "rewrite"
    api.rollback_table(settings, "h", base.id, actor=sign_in(settings, "root"))
    hist = api.snapshot_history(settings, "h")
    assert [h["id"] for h in hist if h["current"]] == [base.id]


def test_delta_history_has_versions_metrics_and_the_plan(settings, tmp_path):
    path = str(tmp_path / "d")
    data = lineitem_arrow(300)
    for i in range(0, 300, 100):
        write_deltalake(path, data.slice(i, 100), mode="append")
    api.register_delta(settings, "d", path)
    base, after = _rewrite_two(settings, "d")
    hist = api.snapshot_history(settings, "d")
    assert [h["id"] for h in hist] == ["0", "1", "2", "3"] and json.dumps(hist)
    assert hist[0]["operation"] in ("write", "create table") and hist[0]["added_rows"] == 100
    last = hist[-1]
    assert (last["plan_id"], last["approver"], last["actor"], last["current"]) == (
        "5", "carol", "carol", True)
    assert (last["added_files"], last["removed_files"]) == (1, 2)
    assert last["format"] == "delta" and last["parent"] == "2"
    api.rollback_table(settings, "d", base.id, actor=sign_in(settings, "root"))
    hist = api.snapshot_history(settings, "d")
    assert hist[-1]["operation"] == "restore" and hist[-1]["actor"] == "root"


def test_native_history_has_the_same_shape(settings):
    make_table(settings, "n", n=400, rows_per_file=100)
    base, after = _rewrite_two(settings, "n")
    hist = api.snapshot_history(settings, "n")
    assert all(set(h) == KEYS for h in hist)
    assert [h["operation"] for h in hist] == ["create", "recluster"]
    assert (hist[-1]["plan_id"], hist[-1]["approver"], hist[-1]["current"]) == ("5", "carol", True)
    assert (hist[-1]["added_files"], hist[-1]["removed_files"]) == (1, 2)
    assert hist[-1]["format"] == "native"
    # every native snapshot records its totals: the history shows them as for Iceberg
    assert [(h["total_files"], h["total_rows"]) for h in hist] == [(4, 400), (3, 400)]
    TableStore(settings).rollback("n", base.id)
    assert [h["total_rows"] for h in api.snapshot_history(settings, "n")] == [400, 400, 400]
    # a header written without the total (an older writer): blank, not a guess
    header = os.path.join(TableStore(settings).info("n").metadata_dir, "snap-00000001.json")
    with open(header) as f:
        old = json.load(f)
    del old["total_rows"]
    with open(header, "w") as f:
        json.dump(old, f)
    hist = api.snapshot_history(settings, "n")
    assert [h["total_rows"] for h in hist] == [None, 400, 400] and hist[0]["total_files"] == 4
