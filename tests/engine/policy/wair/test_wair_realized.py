"""Realized savings on the queries that come after a run (WAIR section 4.3), end to end.

A WAIR plan on the demo-like table (4000 rows, 8 files, 40 queries) is run on Spark. The
run records the decision's window replayed (labelled "re-estimated") and where it stood
in the query log; WAIR learns nothing from that replay. Queries imported afterwards, with
measured bytes and durations, are the realized saving, and once a window's worth of them
has arrived the next decision feeds them to WAIR (credit, debt, window).
"""

from __future__ import annotations

import pytest

from app_workspace import build_table
from later_queries import later_log
from engine import api
from engine.core.config import load_settings
from engine.plans.service import decide
from engine.workspace import Workspace
from security_helpers import sign_in

pytestmark = pytest.mark.spark


def test_realized_savings_come_from_later_queries_and_feed_wair(tmp_path, spark):
    home = tmp_path / "home"
    build_table(home, "lineitem", rows=4000, queries=40, spark=spark)
    settings = load_settings({"home": str(home)}, environ={})
    plan = api.create_plan(settings, "lineitem", "wair", created_by=sign_in(settings, "carol"))
    assert plan.status == "proposed", plan
    assert "regressions" in plan.details  # WAIR priced its predicted losses
    alice = sign_in(settings, "alice")
    api.approve_plan(settings, plan.id, alice)
    result = api.run_plan(settings, plan.id, spark=spark, actor=alice)
    assert result["queries_at_run"] == 40
    assert result["re_estimated"]["scope"] == "re-estimated"
    assert result["re_estimated"]["queries"] == plan.predicted_saving["window_queries"]
    state = api.policy_state(settings, "lineitem", "wair")
    assert state["runs"] == 0  # the in-sample replay is not learned from

    waiting = api.realized_savings(settings, plan.id)
    assert waiting["status"] == "waiting for later queries" and waiting["queries"] == 0

    api.import_workload(settings, "lineitem", later_log(tmp_path / "late.jsonl", 60))
    real = api.realized_savings(settings, plan.id)
    assert real["status"] == "measured" and real["scope"] == "later queries"
    assert real["queries"] == 60
    assert real["bytes_after"] <= real["bytes_before"]
    window = plan.predicted_saving["window_queries"]
    assert real["predicted_saving_cpu_seconds"] == pytest.approx(
        plan.predicted_saving["cpu_seconds"] * 60 / window)
    log = real["log"]
    assert log["queries_with_bytes"] == 60 and log["measured_bytes"] == sum(1000 + i for i in range(60))
    assert log["estimated_bytes"] > 0 and log["queries_with_duration"] == 60
    assert log["measured_seconds"] == pytest.approx(60 * 0.04)
    assert real["settled"] is False

    # the next decision learns from the first window's worth of later queries, once
    d = decide(Workspace(settings), "lineitem", "wair", None)
    assert d.settled == (plan.id,)
    learned = d.policy.state()
    assert learned["runs"] == 1
    assert learned["cost_total"] == pytest.approx(plan.estimated_cost["cpu_seconds"])
    assert learned["history"][0]["queries"] == window
    again = decide(Workspace(settings), "lineitem", "wair", None)  # nothing saved by a bare decision
    assert again.policy.state()["runs"] == 1 and again.settled == (plan.id,)
