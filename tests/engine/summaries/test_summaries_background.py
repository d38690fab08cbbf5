"""The dashboard's background plan run (``api.start_run``) stores the new
snapshot's summaries after its commit, as ``api.run_plan`` (the CLI) does; a refused run
stores nothing. A real Spark run over real Parquet files."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import api
from engine.summaries import store as summaries
from engine.policy.base import PlanGroup
from engine.table.store import TableStore
from plan_helpers import insert_plan, make_table
from security_helpers import sign_in

pytestmark = pytest.mark.spark
WAIT_S = 300.0  # an upper bound for a blocked wait, never a speed goal


def _stored(settings) -> set[str]:
    return {p.name for p in (Path(settings.home) / "cache" / "summaries" / "lineitem").glob("*.json")}


def test_a_background_run_stores_the_new_snapshots_summaries(settings, spark, monkeypatch):
    base = make_table(settings, n=1000, rows_per_file=250)
    refused = insert_plan(settings, base, [PlanGroup(tuple(p.path for p in base.partitions),
                                                     "sort", ("l_shipdate",))])
    alice = sign_in(settings, "alice")
    run = api.start_run(settings, refused, actor=alice, spark=spark)  # not approved
    run.wait(WAIT_S)
    run.warming.join(WAIT_S)
    assert run.error is not None and _stored(settings) == set()

    pid = insert_plan(settings, base, [PlanGroup(tuple(p.path for p in base.partitions),
                                                 "sort", ("l_shipdate",))])
    api.approve_plan(settings, pid, alice, reason="test")
    run = api.start_run(settings, pid, actor=alice, spark=spark)
    run.wait(WAIT_S)
    run.warming.join(WAIT_S)
    assert run.error is None, run.error
    new = TableStore(settings).current_id("lineitem")
    assert new == run.result["snapshot_id"] != base.id
    assert len(_stored(settings)) == 2  # the columns and the pruning summary of the new snapshot

    def boom(*_a, **_k):
        raise AssertionError("recomputed")

    monkeypatch.setattr(summaries, "analyze_with_arrays", boom)
    monkeypatch.setattr(summaries, "pruning_summaries", boom)
    assert api.column_summaries(settings, "lineitem")["snapshot"]["id"] == new  # loaded
    assert api.pruning_summary(settings, "lineitem") == []  # no workload imported
