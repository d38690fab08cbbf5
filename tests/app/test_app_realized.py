"""The dashboard's two scopes of a run's saving, its predicted regressions and its history
of prediction errors, against ``engine.api``.

One WAIR plan on the demo-like table (4000 rows, 40 queries) is previewed, stored,
approved and run on Spark. Before any later query the Approve page says the realized
saving is waiting and shows the window replay under its own name ("re-estimated on the
decision window"); after a later log is imported it shows the realized saving of those
queries with the numbers :func:`engine.api.realized_savings` returns.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app import views
from app_workspace import build_table, engine_settings  # noqa: F401 (fixture)
from later_queries import later_log
from engine import api
from security_helpers import sign_in

APP = str(Path(__file__).resolve().parents[2] / "app" / "streamlit_app.py")
TIMEOUT = 120


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, spark) -> Path:
    home = tmp_path_factory.mktemp("realized") / "home"
    build_table(home, "lineitem", rows=4000, queries=40)
    return home


def open_page(page: str, plan_id: int | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["table"] = "lineitem"
    if plan_id is not None:
        at.session_state["selected_plan"] = plan_id
    at.run()
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def frame_with(at: AppTest, column: str, row: str | None = None):
    """The first table with ``column`` (and, given ``row``, that label in its first column;
    AppTest does not expose a dataframe's key)."""
    return next(f.value for f in at.dataframe if column in f.value.columns
                and (row is None or row in f.value.iloc[:, 0].tolist()))


def texts(at: AppTest) -> str:
    return " ".join([m.value for m in at.markdown] + [c.value for c in at.caption]
                    + [i.value for i in at.info])


@pytest.mark.spark
def test_preview_lists_the_predicted_regressions(workspace, engine_settings):
    at = open_page("recommendation")
    params = views.wair_params(at.session_state["wair_params"])  # what the page previewed
    rec = api.preview_plan(engine_settings, "lineitem", "wair", params)
    assert rec.status == "preview", rec
    expected = views.regressions_frame(rec.regressions)
    if expected.empty:  # nothing gets worse: the page says so instead of an empty table
        assert "No query of the window is predicted to read more" in texts(at)
        return
    shown = frame_with(at, "queries affected")
    assert shown["column"].tolist() == expected["column"].tolist()
    assert shown["queries affected"].tolist() == [
        r["queries"] for r in rec.regressions["columns"] if r["queries"]]
    assert shown["bytes lost"].tolist() == [views.fmt_bytes(r["bytes_lost"])
                                            for r in rec.regressions["columns"] if r["queries"]]
    net = rec.predicted_saving["cpu_seconds"] - rec.regressions["cpu_seconds"]
    assert f"net of that the plan saves {views.fmt_seconds(net)} CPU" in texts(at)


@pytest.mark.spark
def test_run_shows_re_estimated_then_realized_on_later_queries(workspace, engine_settings,
                                                               spark, tmp_path):
    plan = api.create_plan(engine_settings, "lineitem", "wair", created_by=sign_in(engine_settings, "carol"))
    assert plan.status == "proposed", plan
    alice = sign_in(engine_settings, "alice")
    api.approve_plan(engine_settings, plan.id, alice)
    result = api.run_plan(engine_settings, plan.id, spark=spark, actor=alice)
    replay = result["re_estimated"]
    assert replay["scope"] == "re-estimated"

    at = open_page("approve_run", plan.id)
    shown = texts(at)
    assert "No query has been imported since this run" in shown
    assert "Re-estimated on the decision window" in shown
    assert f"The same {replay['queries']} queries the prediction was fitted on" in shown
    assert not [m for m in at.metric if m.label == "Realized / predicted"]  # nothing realized yet
    ratio = replay["realized_over_predicted"]
    assert [m.value for m in at.metric if m.label == "Re-estimated / predicted"] == [
        f"{ratio * 100:.0f} %" if ratio is not None else "–"]
    table = frame_with(at, "CPU time saved", views.RE_ESTIMATED_LABEL)
    assert table[""].tolist() == ["predicted", views.RE_ESTIMATED_LABEL]
    assert table["CPU time saved"].tolist() == [
        views.fmt_seconds(replay["predicted_saving_cpu_seconds"]),
        views.fmt_seconds(replay["saving_cpu_seconds"])]
    history = frame_with(at, views.REALIZED_LABEL)
    row = history[history["plan"] == plan.id].iloc[0]
    assert row[views.RE_ESTIMATED_LABEL] == views.fmt_seconds(replay["saving_cpu_seconds"]) + " CPU"
    assert row[views.REALIZED_LABEL] == "waiting for later queries"
    assert "realized saving" not in history.columns  # the replay is never called realized

    api.import_workload(engine_settings, "lineitem", later_log(tmp_path / "late.jsonl", 60),
                        append=True)
    real = api.realized_savings(engine_settings, plan.id)
    assert real["status"] == "measured" and real["queries"] == 60
    at = open_page("approve_run", plan.id)
    later = frame_with(at, "CPU time saved", views.REALIZED_LABEL)
    assert later[""].tolist() == ["predicted (scaled to 60 queries)", views.REALIZED_LABEL]
    assert later["bytes saved"].tolist() == [views.fmt_bytes(real["predicted_saving_bytes"]),
                                             views.fmt_bytes(real["saving_bytes"])]
    assert later["CPU time saved"].tolist() == [
        views.fmt_seconds(real["predicted_saving_cpu_seconds"]),
        views.fmt_seconds(real["saving_cpu_seconds"])]
    assert "The 60 queries imported after the run" in texts(at)
    ratio = real["realized_over_predicted"]
    assert [m.value for m in at.metric if m.label == "Realized / predicted"] == [
        f"{ratio * 100:.0f} %" if ratio is not None else "–"]
    log = frame_with(at, "measured (log)").set_index("")
    assert log.loc["bytes scanned", "queries"] == 60
    assert log.loc["bytes scanned", "measured (log)"] == views.fmt_bytes(sum(1000 + i for i in range(60)))
    assert log.loc["duration", "measured (log)"] == views.fmt_seconds(60 * 0.04)
    history = frame_with(at, views.REALIZED_LABEL)
    row = history[history["plan"] == plan.id].iloc[0]
    assert row[views.REALIZED_LABEL] == (views.fmt_seconds(real["saving_cpu_seconds"])
                                         + " CPU over 60 queries")

    # the history of prediction errors: the same runs and summary as the engine's
    predictions = api.prediction_history(engine_settings, "lineitem")
    run = next(r for r in predictions["runs"] if r["plan_id"] == plan.id)
    frame = frame_with(at, "predicted time")
    shown_run = frame[frame["plan"] == plan.id].iloc[0]
    assert shown_run["predicted time"] == views.fmt_seconds(run["predicted_seconds"])
    assert shown_run["measured time"] == views.fmt_seconds(run["measured_seconds"])
    assert shown_run["error"] == f"{run['error'] * 100:+.0f} %"
    assert views.prediction_summary(predictions["summary"]) in [m.value for m in at.markdown]

    # the savings history: the run's prediction beside what its commit realized
    savings = api.savings_history(engine_settings, "lineitem")
    ran = next(r for r in savings.runs if r.plan_id == plan.id)
    assert ran.predicted_bytes == pytest.approx(replay["predicted_saving_bytes"])
    assert ran.realized_bytes == pytest.approx(replay["saving_bytes"])
    assert ran.underdelivered is result["delivery"]["underdelivered"]
    frame = frame_with(at, "realized saving")
    shown_saving = frame[frame["plan"] == plan.id].iloc[0]
    assert shown_saving["predicted saving"] == views.fmt_bytes(replay["predicted_saving_bytes"])
    assert shown_saving["realized saving"] == views.fmt_bytes(replay["saving_bytes"])
    assert shown_saving["verdict"] == (views.UNDERDELIVERED if ran.underdelivered else "kept")
    assert views.savings_summary(savings.summary.to_json()) in [m.value for m in at.markdown]


def test_refusal_net_of_losses_is_named_and_its_losses_listed():
    """A no-action answer whose reason is WAIR's net-of-losses refusal (the reason string
    of engine/policy/wair/policy.py) is recognised; other refusals are not."""
    refused = {"status": "no-action", "reason": "net of losses, saving 0.2 - predicted loss "
               "0.5 = -0.3 CPU-s is not positive",
               "details": {"regressions": [
                   {"column": "l_commitdate", "queries": 8, "bytes_lost": 5 * 1024 ** 2,
                    "cpu_seconds_lost": 0.5, "depth_before": 1.5, "depth_after": 9.25},
                   {"column": "l_orderkey", "queries": 0, "bytes_lost": 0.0,
                    "cpu_seconds_lost": 0.0, "depth_before": 1.0, "depth_after": 1.0}]}}
    assert views.refused_net_of_losses(refused)
    assert not views.refused_net_of_losses({"status": "no-action",
                                            "reason": "best cut 3 has net cost +0.5 CPU-s >= 0"})
    frame = views.regressions_frame(refused["details"]["regressions"])
    assert frame.to_dict("records") == [{"column": "l_commitdate", "depth before": 1.5,
                                         "depth after": 9.25, "queries affected": 8,
                                         "bytes lost": "5.0 MB", "CPU time lost": "500 ms"}]


def test_prediction_summary_counts_runs_within_the_tolerance():
    # errors +10 %, -40 %, +25 %: median 25 %, mean 25 %, two within 30 %
    runs = [{"plan_id": i, "policy": "wair", "ran_at": f"2026-01-0{i}T00:00:00",
             "partitions": 10, "bytes": 1e6, "predicted_seconds": p, "measured_seconds": 10.0,
             "calibrated": True, "error": (p - 10.0) / 10.0}
            for i, p in ((1, 11.0), (2, 6.0), (3, 12.5))]
    errors = sorted(abs(r["error"]) for r in runs)
    summary = {"runs": 3, "with_error": 3, "median_abs_error": errors[1],
               "mean_abs_error": sum(errors) / 3, "within_tolerance": 2, "tolerance": 0.3}
    assert views.prediction_summary(summary) == ("3 runs: median error ±25 %, mean ±25 %; "
                                                 "2 of 3 within ±30 %.")
    frame = views.prediction_frame(runs)
    assert frame["plan"].tolist() == [3, 2, 1]  # newest first
    assert frame["error"].tolist() == ["+25 %", "-40 %", "+10 %"]
