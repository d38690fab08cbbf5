"""The demo's embedded default is an open format: ``lineitem`` is an Iceberg table of the
workspace's SQLite catalog, and after the demo's WAIR plan runs, pyiceberg's own scan
returns exactly the rows it held before, and the catalog's live files are the table's."""

from __future__ import annotations

import hashlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine import api
from engine.cli.demo import DEMO_TABLE, build_demo, sample_dir
from engine.table.formats import iceberg
from security_helpers import SECRET

pytestmark = pytest.mark.spark


def _digest(table: pa.Table) -> tuple[int, str]:
    rows = sorted(repr(r) for r in table.to_pylist())
    return len(rows), hashlib.sha256("\n".join(rows).encode()).hexdigest()


def test_demo_builds_iceberg_and_its_plan_keeps_every_row(settings, spark, monkeypatch):
    monkeypatch.setenv("LAYOUT_ADVISOR_DEMO_SECRET", SECRET)
    build_demo(settings)  # default format: iceberg; the demo admin is dba
    catalog = iceberg.workspace_catalog(str(settings.home))
    tbl = catalog.load_table("default.lineitem")
    source = pq.read_table(sample_dir() / "lineitem.parquet")
    before = _digest(tbl.scan().to_arrow())
    assert before[0] == source.num_rows
    info = api.table_info(settings, DEMO_TABLE)
    assert (info.format, info.identifier, info.managed) == ("iceberg", "default.lineitem", True)
    dba = api.authenticate(settings, "dba", SECRET)
    api.add_approver(settings, "alice", SECRET, actor=dba)
    alice = api.authenticate(settings, "alice", SECRET)  # a signed-in proposer
    plan = api.create_plan(settings, DEMO_TABLE, "wair", created_by=alice)
    assert plan.id is not None, plan
    api.approve_plan(settings, plan.id, dba, reason="demo")
    result = api.run_plan(settings, plan.id, actor=dba, spark=spark)
    tbl = catalog.load_table("default.lineitem")
    assert str(tbl.current_snapshot().snapshot_id) == result["snapshot_id"]
    assert _digest(tbl.scan().to_arrow()) == before
    live = set(tbl.inspect.files().column("file_path").to_pylist())
    assert set(api.table_files(settings, DEMO_TABLE)) == live
    assert result["partitions_removed"] > 0 and result["partitions_added"] > 0
