"""The history of savings predictions: every run's predicted saving beside the verified and
the realized one, hand-computed errors and summary, and what ``calibrate --history
--savings`` prints."""

from __future__ import annotations

import json

import pytest

from engine import api
from engine.cli import main
from engine.plans.savings_history import SavingsRun, summarize
from engine.workspace import Workspace
from plan_helpers import make_table
from savings_helpers import MB, four_runs


@pytest.fixture
def history_ws(settings) -> Workspace:
    """:func:`savings_helpers.four_runs` on a small table."""
    snap = make_table(settings, n=1000, rows_per_file=250)
    ws = Workspace(settings)
    four_runs(ws, snap)
    return ws


def test_each_run_has_its_predicted_verified_and_realized_saving_and_error(history_ws):
    history = api.savings_history(history_ws, "lineitem")
    assert [r.plan_id for r in history.runs] == [1, 2, 3, 4]  # the proposed plan 5 never ran
    first, second, third, fourth = history.runs
    assert (first.predicted_bytes, first.verified_bytes, first.realized_bytes) == (100 * MB, 95 * MB, 80 * MB)
    assert first.error == pytest.approx(-0.20)
    assert first.verified_error == pytest.approx(-0.05)
    assert second.error == pytest.approx(0.30) and second.verified_bytes is None
    assert third.error == pytest.approx(-1.05) and third.underdelivered is True
    assert "reads 9.5 MiB more" in third.reason
    assert fourth.realized_bytes is None and fourth.error is None and fourth.underdelivered is None
    assert fourth.reason == "the decision's window could not be replayed: OSError: gone"
    assert all(r.window_queries == 50 for r in history.runs)


def test_the_summary_is_the_hand_computed_one(history_ws):
    s = api.savings_history(history_ws, "lineitem").summary
    # |errors| 0.20, 0.30, 1.05: median 0.30, mean 1.55 / 3; 0.20 and 0.30 within ±30 %
    assert (s.runs, s.with_error) == (4, 3)
    assert s.median_abs_error == pytest.approx(0.30)
    assert s.mean_abs_error == pytest.approx(1.55 / 3)
    assert (s.within_tolerance, s.underdelivered, s.verified) == (2, 1, 1)
    assert api.savings_history(history_ws, "other").runs == ()


def test_summary_of_no_run_and_an_even_count():
    assert summarize([]).median_abs_error is None and summarize([]).runs == 0
    runs = [SavingsRun(i, "t", "wair", "succeeded", "", 10, 100.0, None, r, False, "")
            for i, r in enumerate((110.0, 50.0))]
    assert summarize(runs).median_abs_error == pytest.approx((0.1 + 0.5) / 2)


def test_calibrate_history_savings_prints_the_three_figures_and_the_summary(history_ws, capsys):
    home = str(history_ws.settings.home)
    assert main(["--home", home, "calibrate", "--history", "--savings", "--table", "lineitem"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["plan", "table", "policy", "window", "predicted", "verified",
                                "realized", "error", "verdict", "ran", "at"]
    row = lines[1].split()
    assert row[:12] == ["1", "lineitem", "wair", "50", "95.4", "MiB", "90.6", "MiB", "76.3",
                        "MiB", "-20%", "kept"]
    assert lines[2].split()[9:11] == ["+30%", "kept"]
    assert lines[3].split()[4:7] == ["190.7", "MiB", "-"]
    assert lines[3].split()[9:11] == ["-105%", "UNDERDELIVERED"]
    assert lines[4].strip() == "the workload now reads 9.5 MiB more than before"
    assert lines[5].split()[6:10] == ["-", "-", "-", "?"]  # verified, realized, error, verdict
    assert lines[6].strip() == "the decision's window could not be replayed: OSError: gone"
    assert lines[-1] == ("4 runs: median |error| 30%, mean 52%, 2 within ±30%; 1 underdelivered; "
                         "1 verified before the run")

    assert main(["--home", home, "calibrate", "--history", "--savings", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["plan_id"] for r in data["runs"]] == [1, 2, 3, 4]
    assert data["runs"][0]["verified_bytes"] == 95 * MB and data["runs"][0]["error"] == pytest.approx(-0.2)
    assert data["summary"]["underdelivered"] == 1

    assert main(["--home", home, "calibrate", "--savings"]) == 2
    assert capsys.readouterr().err.strip().endswith("--savings: only with --history")


def test_plan_show_names_the_unit_of_the_predicted_saving(history_ws, capsys):
    assert main(["--home", str(history_ws.settings.home), "plan", "show", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if "predicted saving per window" in line)
    assert lines[at + 1].strip() == "unit: files (each holds one row group)"
