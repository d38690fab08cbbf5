"""A check after the commit that fails (Iceberg's row count read back) is "committed,
verification failed": the new snapshot stands, every file it names is kept, the plan says
``succeeded`` with the failure in its result, and the error names the snapshot and the way
back. Before the commit was split from its checks, this failure deleted the new snapshot's
files and left the plan ``failed``.

The run goes through the plan service and the executor with Spark's work replaced by byte
copies (:func:`kill_victim.patch_spark_away`)."""

from __future__ import annotations

import shutil

import pytest

import format_tables
from engine.core.errors import CommitVerificationError, DataFileError
from engine.plans import service
from engine.policy.base import PlanGroup
from engine.spark.commit import BatchFiles
from engine.table import fs
from engine.table.footers import read_partitions
from engine.table.formats.iceberg import IcebergFormat
from engine.table.formats.native import NativeFormat
from engine.table.store import TableStore
from engine.workspace import Workspace
from format_tables import NAME
from kill_victim import patch_spark_away
from plan_helpers import insert_plan


def test_a_failed_check_after_the_commit_keeps_the_commit(settings, tmp_path, monkeypatch):
    base = format_tables.make("iceberg", settings, tmp_path, n=40, per_file=10)
    rows = format_tables.read("iceberg", settings)
    patch_spark_away(monkeypatch.setattr)

    def fails(self, snapshot_id, before):
        raise DataFileError(f"a pyiceberg scan plans {before - 1} rows (test)")

    monkeypatch.setattr(IcebergFormat, "_verify_total_rows", fails)
    chosen = tuple(p.path for p in base.partitions[:2])
    pid = insert_plan(settings, base, [PlanGroup(chosen, "sort", ("l_shipdate",), "t")])
    ws = Workspace(settings)
    ws.plans.move(pid, ("proposed",), "approved", "tester", "approve", "verification test")

    with pytest.raises(CommitVerificationError) as err:
        service.run_plan(ws, pid)

    now = TableStore(settings).current_snapshot(NAME)
    assert now.id != base.id and err.value.snapshot_id == now.id
    assert f"snapshot {now.id} was committed, but checking it failed" in str(err.value)
    assert f"--to {base.id}" in str(err.value)
    assert all(fs.exists(p.path) for p in now.partitions)
    assert format_tables.read("iceberg", settings) == rows
    plan = Workspace(settings).plans.get(pid)
    assert plan.status == "succeeded"
    assert plan.result["snapshot_id"] == now.id and plan.result["verified"] is False
    assert "then failed" in plan.result["error"] and "checking it failed" in plan.result["error"]


def test_a_commit_whose_answer_was_lost_keeps_its_files(settings, tmp_path, monkeypatch):
    """The format's write took effect but the call raised (an answer lost after the catalog
    took the metadata): the table names the new files, so the cleanup keeps them."""
    base = format_tables.make("native", settings, tmp_path, n=40, per_file=10)
    rows = format_tables.read("native", settings)
    publish = NativeFormat.publish_rewrite

    def loses_the_answer(self, *args, **kwargs):
        publish(self, *args, **kwargs)
        raise OSError("connection reset after the commit (test)")

    monkeypatch.setattr(NativeFormat, "publish_rewrite", loses_the_answer)
    store = TableStore(settings)
    out = store.new_data_dir(NAME, "lost-answer")
    old = base.partitions[0]
    copy = f"{out}/part-0.parquet"
    shutil.copyfile(old.path, copy)
    _, added = read_partitions([copy], schema=base.schema)
    removed: list[str] = []
    told: list[str] = []
    with pytest.raises(OSError):
        with BatchFiles(store.format(NAME), NAME, out, lambda d: removed.append(d)) as files:
            files.commit(base.id, [old.path], added, {"plan_id": "lost"}, on_commit=told.append)
    assert removed == []  # the folder was not removed: the table names its file
    now = TableStore(settings).current_snapshot(NAME)
    assert files.snapshot_id == now.id and told == [now.id]  # and the run learns it committed
    assert now.id != base.id and copy in {p.path for p in now.partitions}
    assert fs.exists(copy) and format_tables.read("native", settings) == rows
