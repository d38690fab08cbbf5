"""The Approve page's savings history: predicted, verified and realized side by side per
run, underdelivered runs in red, the summary sentence and the unit the figures count."""

from __future__ import annotations

import pytest

from app import views
from app_workspace import init_home, plan_page
from engine.core.config import load_settings
from engine.workspace import Workspace
from plan_helpers import make_table
from savings_helpers import four_runs


@pytest.fixture
def runs_home(tmp_path, monkeypatch):
    home = init_home(tmp_path / "home", target_rows=250)
    settings = load_settings({"home": str(home)}, environ={})
    snap = make_table(settings, n=1000, rows_per_file=250)
    four_runs(Workspace(settings), snap, new_snapshot=snap.id)
    monkeypatch.setenv("LAYOUT_ADVISOR_HOME", str(home))
    return home


def test_the_approve_page_shows_predicted_verified_and_realized_savings(runs_home):
    at = plan_page("lineitem", plan_id=3)
    shown = next(f.value for f in at.dataframe if "realized saving" in f.value.columns)
    assert list(shown.columns) == ["plan", "policy", "ran", "window", "predicted saving",
                                   "verified saving", "realized saving", "error", "verdict"]
    assert shown["plan"].tolist() == [4, 3, 2, 1]  # newest first; plan 5 never ran
    rows = shown.set_index("plan")
    assert rows.loc[1, ["predicted saving", "verified saving", "realized saving", "error",
                        "verdict"]].tolist() == ["95.4 MB", "90.6 MB", "76.3 MB", "-20 %", "kept"]
    assert rows.loc[3, ["realized saving", "error", "verdict"]].tolist() == [
        "-9.5 MB", "-105 %", views.UNDERDELIVERED]
    assert rows.loc[4, ["realized saving", "error", "verdict"]].tolist() == ["–", "–", "?"]
    texts = [m.value for m in at.markdown]
    assert ("4 runs: median error ±30 %, mean ±52 %; 2 of 3 within ±30 %; 1 underdelivered; "
            "1 verified before its run.") in texts
    captions = " ".join(c.value for c in at.caption)
    assert "Runs that underdelivered are in red. Unit: files (each holds one row group)." \
        in captions
    # the selected run's own figures name their unit too
    assert "Unit: files (each holds one row group)." in [c.value for c in at.caption]


def test_underdelivered_rows_are_red_and_only_those():
    frame = views.savings_frame([
        {"plan_id": 1, "policy": "wair", "window_queries": 50, "predicted_bytes": 10.0,
         "realized_bytes": 9.0, "error": -0.1, "underdelivered": False},
        {"plan_id": 2, "policy": "wair", "window_queries": 50, "predicted_bytes": 10.0,
         "realized_bytes": -1.0, "error": -1.1, "underdelivered": True, "rolled_back": True}])
    styles = views.underdelivered_red(frame)._compute().ctx
    red = {row for (row, _col), css in styles.items() if ("color", "#d62728") in css}
    assert frame.loc[sorted(red), "plan"].tolist() == [2]
    assert frame.loc[0, "verdict"] == "underdelivered · rolled back"
