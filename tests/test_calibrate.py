"""Calibration: the fit, the stored rates in the settings, the CLI, the cost model using them."""

from __future__ import annotations

import json

import pytest

from engine.cli import main
from engine.core.config import CALIBRATION_FILE_NAME, load_settings
from engine.core.errors import ConfigError
from engine.core.fmt import format_money
from engine.policy.costmodel import recluster_cost, recluster_cost_groups
from engine.spark.calibrate import rates_from_points

RATES = {"rewrite_fixed_s": 1.5, "rewrite_read_bytes_per_s": 4e7, "sort_bytes_per_s": 1e7,
         "query_fixed_s": 0.02, "query_scan_bytes_per_s": 3e8}


def _store(home, rates=RATES):
    home.mkdir(parents=True, exist_ok=True)
    (home / CALIBRATION_FILE_NAME).write_text(json.dumps(
        {"measured_at": "2026-11-23T02:00:00+00:00", "spark_master": "local[2]",
         "rates": rates, "points": []}))


def test_least_squares_recovers_the_rates_of_noisy_points():
    """t = 2 s + B / 40 MB/s + B / 10 MB/s, +-3% noise: the fit is within 10%."""
    import numpy as np

    rng = np.random.default_rng(1)
    pts = []
    for b in (5e6, 2e7, 8e7, 1.6e8):
        noise = 1 + rng.uniform(-0.03, 0.03)
        pts.append({"bytes": b, "rewrite_s": (2 + b / 4e7 + b / 1e7) * noise,
                    "read_s": (0.3 + b / 4e7) * noise, "query_s": 0.01 + b / 3e8})
    r = rates_from_points(pts)
    assert r["rewrite_fixed_s"] == pytest.approx(2.0, rel=0.15)
    assert r["rewrite_read_bytes_per_s"] == pytest.approx(4e7, rel=0.1)
    assert r["sort_bytes_per_s"] == pytest.approx(1e7, rel=0.1)
    assert r["query_scan_bytes_per_s"] == pytest.approx(3e8, rel=0.01)


def test_stored_rates_reach_the_settings_and_configured_values_override(tmp_path):
    home = tmp_path / "ws"
    _store(home)
    s = load_settings({"home": str(home)}, environ={})
    assert (s.rewrite_fixed_s, s.sort_bytes_per_s) == (1.5, 1e7)
    (home / "layout-advisor.toml").write_text("sort_bytes_per_s = 2e7\n")
    s = load_settings({"home": str(home)}, environ={})
    assert s.sort_bytes_per_s == 2e7 and s.rewrite_read_bytes_per_s == 4e7


def test_a_broken_calibration_file_is_one_clear_error(tmp_path):
    home = tmp_path / "ws"
    home.mkdir()
    (home / CALIBRATION_FILE_NAME).write_text("{not json")
    with pytest.raises(ConfigError, match="calibration.json: not a calibration file"):
        load_settings({"home": str(home)}, environ={})


def test_plans_pay_the_calibrated_fixed_cost_once_per_job(tmp_path):
    _store(tmp_path / "ws")
    s = load_settings({"home": str(tmp_path / "ws")}, environ={})
    one = recluster_cost(4e7, s)
    assert one.cpu_seconds == pytest.approx(1.5 + 1.0 + 4.0)
    two = recluster_cost_groups([2e7, 2e7], s)  # one job: 1.5 s once, not twice
    assert two.cpu_seconds == pytest.approx(one.cpu_seconds)


def test_money_is_never_scientific():
    assert format_money(1.2e-06) == "< $0.01"
    assert format_money(0.0123) == "$0.01"
    assert format_money(2.5, "EUR ") == "EUR 2.50"


def test_calibrate_show_prints_rates_and_their_source(tmp_path, capsys):
    home = tmp_path / "ws"
    home.mkdir()
    assert main(["--home", str(home), "calibrate", "--show"]) == 0
    assert "not calibrated yet" in capsys.readouterr().out
    _store(home)
    (home / "layout-advisor.toml").write_text("query_fixed_s = 0.5\n")
    assert main(["--home", str(home), "calibrate", "--show"]) == 0
    out = capsys.readouterr().out
    assert "calibrated 2026-11-23T02:00:00+00:00 on Spark local[2]" in out
    assert "rewrite job, fixed" in out and "1.5 s" in out and "(calibrated)" in out
    assert "query, fixed" in out and "500 ms" in out and "(configured)" in out


def test_bad_sizes_are_exit_2_naming_the_flag(tmp_path, capsys):
    (tmp_path / "ws").mkdir()
    assert main(["--home", str(tmp_path / "ws"), "calibrate", "--rows", "10,abc"]) == 2
    assert "--rows" in capsys.readouterr().err


@pytest.mark.spark
def test_calibrate_measures_stores_and_new_plans_use_the_rates(settings, spark):
    """The mechanism on real Spark and DuckDB, tiny sizes (accuracy is measured in bench/)."""
    from engine import api
    from engine.policy.base import PlanGroup
    from plan_helpers import insert_plan, make_table

    result = api.calibrate(settings, rows=[3000, 9000], spark=spark, repeat=1)
    assert len(result["points"]) == 2 and result["spark_master"] == settings.spark_master
    assert [p["repeat"] for p in result["points"]] == [1, 1]
    assert [p["rows"] for p in result["points"]] == [3000, 9000]
    assert all(p["rewrite_s"] > 0 and p["query_s"] > 0 for p in result["points"])
    rates = result["rates"]
    assert rates["sort_bytes_per_s"] > 0 and rates["query_scan_bytes_per_s"] > 0
    stored = load_settings({"home": str(settings.home)}, environ={})
    assert stored.rewrite_fixed_s == rates["rewrite_fixed_s"]
    assert stored.sort_bytes_per_s == rates["sort_bytes_per_s"]
    # a plan made with the calibrated settings is priced with them
    base = make_table(stored, n=1000, rows_per_file=500)
    pid = insert_plan(stored, base, [PlanGroup(tuple(p.path for p in base.partitions), "sort",
                                               ("l_shipdate",))])
    cost = api.show_plan(stored, pid)["estimated_cost"]["cpu_seconds"]
    nbytes = sum(p.bytes for p in base.partitions)
    read = rates["rewrite_read_bytes_per_s"] or stored.scan_bytes_per_s  # 0: not separable
    assert cost == pytest.approx(rates["rewrite_fixed_s"] + nbytes / read
                                 + nbytes / rates["sort_bytes_per_s"])


def test_history_without_runs_says_so_and_table_needs_history(tmp_path, capsys):
    home = tmp_path / "ws"
    home.mkdir()
    assert main(["--home", str(home), "calibrate", "--history"]) == 0
    assert "no runs with a recorded cost check yet" in capsys.readouterr().out
    assert main(["--home", str(home), "calibrate", "--table", "lineitem"]) == 2
    assert "--table: only with --history" in capsys.readouterr().err


def test_history_text_puts_prediction_beside_measurement():
    from engine.cli.calibrate import _history_text

    runs = [{"plan_id": 3, "table": "lineitem", "groups": 6, "bytes": 3.5 * 2**20,
             "predicted_seconds": 6.46, "measured_seconds": 4.73, "spark_jobs": 3,
             "calibrated": True, "ran_at": "2026-11-23T04:00:00", "error": 6.46 / 4.73 - 1}]
    text = _history_text({"runs": runs, "summary": {
        "with_error": 1, "median_abs_error": 0.366, "mean_abs_error": 0.366,
        "within_tolerance": 0, "tolerance": 0.3}})
    row = text.splitlines()[1]
    assert "6.46 s" in row and "4.73 s" in row and "+37%" in row and "3.5 MiB" in row
    assert "1 runs: median |error| 37%, mean 37%, 0 within ±30%" in text


def test_a_query_time_that_does_not_grow_leaves_the_scan_rate_uncalibrated():
    """Noise above the slope (20 ms, 3 ms, 8 ms as measured under load) gives no rate."""
    pts = [{"bytes": b, "rewrite_s": 2 + b / 1e6, "read_s": 0.5, "query_s": q}
           for b, q in ((8.7e5, 0.020), (3.3e6, 0.0033), (1.3e7, 0.008))]
    assert rates_from_points(pts)["query_scan_bytes_per_s"] == 0.0
