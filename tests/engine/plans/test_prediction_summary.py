"""The rewrite-time history's summary takes the same median as the savings history's: the
true median (the mean of the middle two of an even count), not the upper one."""

from __future__ import annotations

import pytest

from engine import api
from engine.plans.savings_history import SavingsRun, summarize
from engine.workspace import Workspace
from plan_helpers import make_table
from savings_helpers import proposal


def test_an_even_count_of_errors_has_the_mean_of_the_middle_two_in_both_histories(settings):
    snap = make_table(settings, n=1000, rows_per_file=250)
    ws = Workspace(settings)
    for error in (0.1, -0.5, 0.2, -0.3):  # |errors| 0.1, 0.2, 0.3, 0.5: median 0.25
        pid = ws.control.insert_plan("lineitem", snap.id, "wair", {}, proposal(100.0), "tester",
                                     status="running")
        ws.control.transition(pid, ("running",), "succeeded", "system", "succeed", result={
            "snapshot_id": "9", "cost_check": {"predicted_seconds": 10.0 * (1 + error),
                                               "measured_wall_seconds": 10.0, "error": error}})
    summary = api.prediction_history(ws, "lineitem")["summary"]
    assert (summary["runs"], summary["with_error"]) == (4, 4)
    assert summary["median_abs_error"] == pytest.approx(0.25)  # the upper median was 0.3
    assert summary["mean_abs_error"] == pytest.approx(1.1 / 4)
    assert summary["within_tolerance"] == 3
    savings = summarize([SavingsRun(i, "t", "wair", "succeeded", "", 10, 100.0, None,
                                    100.0 * (1 + e), False, "")
                         for i, e in enumerate((0.1, -0.5, 0.2, -0.3))])
    assert savings.median_abs_error == pytest.approx(summary["median_abs_error"])
