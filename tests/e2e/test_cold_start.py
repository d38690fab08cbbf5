"""A fresh Spark session's first rewrite is priced with the calibrated cold start.

The executor records whether a run's session was fresh (no rewrite job in this JVM yet),
the plan states its warm and its cold prediction, and the prediction-error history compares
each run with the figure that matches its session. Real Spark: the test session is shared by
the whole test run, so "a fresh JVM" is the executor's record cleared (``_WARM_APPS``, the
process's registry of Spark applications that have rewritten); the runs, the record and
the comparison are the real ones.
"""

from __future__ import annotations

import pytest

from engine import api
from engine.cli.calibrate import _history_text
from engine.cli.plans import _plan_text
from engine.policy.base import PlanGroup, Proposal
from engine.policy.codec import proposal_to_json
from engine.policy.costmodel import recluster_cost_groups
from engine.spark import executor
from engine.table.store import TableStore
from engine.security.signing import PROPOSE, sign_plan
from engine.workspace import Workspace
from plan_helpers import make_table
from security_helpers import sign_in

pytestmark = pytest.mark.spark

COLD = 5.0  # a calibrated cold start, seconds


def _plan(settings, snap, paths, details) -> int:
    """An approved one-group sort plan of ``paths``, priced by the bytes-only model (its
    warm figure), with ``details`` as a decision would store them."""
    by_path = {p.path: p for p in snap.partitions}
    cost = recluster_cost_groups([sum(by_path[p].bytes for p in paths)], settings)
    proposal = Proposal("wair", {}, (PlanGroup(tuple(paths), "sort", ("l_shipdate",)),), cost,
                        {"bytes": 0.0, "cpu_seconds": 0.0, "window_queries": 0.0},
                        details=details)
    ws = Workspace(settings)
    pid = ws.control.insert_plan(snap.table, snap.id, "wair", {}, proposal_to_json(proposal),
                                 "tester")
    sign_plan(ws, pid, sign_in(settings, "tester"), PROPOSE)  # a signed-in proposer
    api.approve_plan(settings, pid, sign_in(settings, "alice"), reason="test")
    return pid


def test_a_fresh_session_run_is_compared_with_the_cold_figure(settings, spark, monkeypatch):
    monkeypatch.setattr(executor, "_WARM_APPS", set())  # as in a new JVM: nothing rewritten
    assert executor.session_fresh(spark)
    base = make_table(settings, n=2000, rows_per_file=500)  # 4 files
    first = _plan(settings, base, [p.path for p in base.partitions[:2]],
                  {"cold_start_s": COLD, "priced_with_calibration": True})
    shown = _plan_text(api.show_plan(settings, first).to_json())
    warm1 = api.show_plan(settings, first).estimated_cost["cpu_seconds"]
    assert "in a warm session" in shown and "+5 s cold start" in shown
    ran = api.run_plan(settings, first, spark=spark, actor=sign_in(settings, "alice"))
    assert ran["measured"]["fresh_session"] is True
    assert not executor.session_fresh(spark)  # the session is warm from now on
    check = ran["cost_check"]
    assert check["fresh_session"] is True and check["compared_with"] == "cold"
    assert check["predicted_warm_seconds"] == pytest.approx(warm1)
    assert check["predicted_seconds"] == check["predicted_cold_seconds"] == pytest.approx(
        warm1 + COLD)
    wall = check["measured_wall_seconds"]
    assert check["error"] == pytest.approx((warm1 + COLD - wall) / wall)

    # the second run in the same session is warm: compared with the warm figure
    snap = TableStore(settings).current_snapshot("lineitem")
    rest = [p.path for p in snap.partitions if p.path in {q.path for q in base.partitions[2:]}]
    second = _plan(settings, snap, rest, {"cold_start_s": COLD, "priced_with_calibration": True})
    ran2 = api.run_plan(settings, second, spark=spark, actor=sign_in(settings, "alice"))
    check2 = ran2["cost_check"]
    assert ran2["measured"]["fresh_session"] is False
    assert check2["compared_with"] == "warm" and check2["fresh_session"] is False
    assert check2["predicted_seconds"] == check2["predicted_warm_seconds"]
    assert check2["predicted_cold_seconds"] == pytest.approx(check2["predicted_warm_seconds"] + COLD)
    wall2 = check2["measured_wall_seconds"]
    assert check2["error"] == pytest.approx((check2["predicted_seconds"] - wall2) / wall2)

    # the history and `plan show` say which figure each run was compared with
    history = api.prediction_history(settings, "lineitem")
    assert [(r["plan_id"], r["fresh_session"], r["compared_with"]) for r in history["runs"]] == [
        (first, True, "cold"), (second, False, "warm")]
    text = _history_text(history)
    assert "session" in text.splitlines()[0]
    first_line, second_line = text.splitlines()[1:3]
    assert " fresh " in first_line and " warm " in second_line
    assert "(fresh session: the cold figure)" in _plan_text(api.show_plan(settings, first).to_json())
    assert "(warm session)" in _plan_text(api.show_plan(settings, second).to_json())


def test_a_fresh_run_of_a_plan_without_a_cold_figure_is_compared_warm(settings, spark,
                                                                      monkeypatch):
    """A plan priced without a calibrated cold start has one figure."""
    monkeypatch.setattr(executor, "_WARM_APPS", set())
    base = make_table(settings, n=1000, rows_per_file=500)
    pid = _plan(settings, base, [p.path for p in base.partitions], {})
    assert "fresh one" not in _plan_text(api.show_plan(settings, pid).to_json())
    check = api.run_plan(settings, pid, spark=spark, actor=sign_in(settings, "alice"))["cost_check"]
    assert check["fresh_session"] is True and check["compared_with"] == "warm"
    assert check["predicted_cold_seconds"] is None
    assert check["predicted_seconds"] == check["predicted_warm_seconds"]
    (run,) = api.prediction_history(settings, "lineitem")["runs"]
    assert " fresh* " in _history_text({"runs": [run]}).splitlines()[1]
