"""Calibration: the fit, the stored rates in the settings, the CLI, the cost model using them."""

from __future__ import annotations

import json

import pytest

from engine import api
from engine.cli import main
from engine.core.config import CALIBRATION_FILE_NAME, load_settings
from engine.core.errors import ConfigError
from engine.core.fmt import format_money
from engine.policy.costmodel import recluster_cost, recluster_cost_groups
from engine.spark.calibrate_fit import rates_from_points, terms_from_points

RATES = {"rewrite_fixed_s": 1.5, "rewrite_read_bytes_per_s": 4e7, "sort_bytes_per_s": 1e7,
         "query_fixed_s": 0.02, "query_scan_bytes_per_s": 3e8}


TERMS = {"fitted_job_s": 1.2, "fitted_key_bytes_per_s": 5e6, "file_s": 0.04}


def _store(home, rates=RATES, terms=None):
    home.mkdir(parents=True, exist_ok=True)
    (home / CALIBRATION_FILE_NAME).write_text(json.dumps(
        {"measured_at": "2026-11-23T02:00:00+00:00", "spark_master": "local[2]",
         "rates": rates, "points": [], **({"terms": terms} if terms else {})}))


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


def test_group_terms_hand_numbers_from_the_many_group_runs():
    """Against one group of the same rows and files: 8 groups cost 1.7 s more at 4 MB and
    3.2 s more at 16 MB, 32 groups 5.6 s more at 16 MB = 0.5 s once + 0.1 s per extra group
    + B / 8 MB/s (0.5 s, 2 s). The sort points lie on 1 s + B / 2 MB/s."""
    pts = [{"bytes": 4e6, "rewrite_s": 3.0, "files": 4, "groups_s": 4.7, "groups_n": 8,
            "groups_files": 4, "read_s": 0.5, "query_s": 0.01, "cells": 6e5},
           {"bytes": 16e6, "rewrite_s": 9.0, "files": 16, "groups_s": 12.2, "groups_n": 8,
            "groups_files": 16, "groups2_s": 14.6, "groups2_n": 32, "groups2_files": 16,
            "read_s": 0.5, "query_s": 0.02, "cells": 2.4e6}]
    t = terms_from_points(pts)
    assert t["multi_group_s"] == pytest.approx(0.5)
    assert t["group_s"] == pytest.approx(0.1)
    assert t["multi_group_bytes_per_s"] == pytest.approx(8e6)
    r = rates_from_points(pts)
    assert r["rewrite_fixed_s"] == pytest.approx(1.0)
    assert r["sort_bytes_per_s"] == pytest.approx(2e6)
    assert r["rewrite_cell_bytes"] == pytest.approx(20e6 / 3e6)  # bytes / (rows x columns)


def test_a_many_group_overhead_that_does_not_grow_is_paid_once():
    """8 groups cost 1.4 s at 4 MB and 1.3 s more than one at 16 MB: noise, no per-byte
    part; one group count cannot tell per group from once, and once is kept: the mean
    weighted by 1 / the plan's seconds squared (relative errors), (1.4 / 4.6^2 + 1.3 /
    10.3^2) / (1 / 4.6^2 + 1 / 10.3^2) = 1.3834; 2 more output files in the first run are
    taken off at file_s (0.1 s) first."""
    pts = [{"bytes": 4e6, "rewrite_s": 3.0, "files": 1, "files_s": 4.0, "files_n": 11,
            "groups_s": 4.6, "groups_n": 8, "groups_files": 3},
           {"bytes": 16e6, "rewrite_s": 9.0, "files": 16, "groups_s": 10.3, "groups_n": 8,
            "groups_files": 16}]
    t = terms_from_points(pts)
    assert t["file_s"] == pytest.approx(0.1)
    assert t["multi_group_s"] == pytest.approx(
        (1.4 / 4.6**2 + 1.3 / 10.3**2) / (1 / 4.6**2 + 1 / 10.3**2))
    assert t["multi_group_s"] == pytest.approx(1.3834, abs=1e-4)
    assert t["group_s"] == 0.0 and t["multi_group_bytes_per_s"] == 0.0


def test_the_demo_shaped_probe_joins_the_group_fit_in_cells_and_relative_error():
    """A calibration without a small plan: 8 groups of 50,000-row files cost 0.5 s +
    B / 10 MB/s more than one group (exactly, at 4 and 16 MB; 32 groups at 16 MB the same:
    nothing per group), which a 2 s demo plan would pay in full (0.6 s). The demo-shaped
    probe (6 groups of 2,000-row files, 516,000 cells = 1.032 MB at the large runs' 2 B per
    cell, whatever its own 1.8 MB) costs 0.2 s more than its one group. By hand: the least
    squares over (once, per byte) of the four differences, each row divided by its plan's
    seconds (4.9, 12.1, 12.1, 2.0 s), the per-group term at 0."""
    import numpy as np

    pts = [{"bytes": 4e6, "rewrite_s": 4.0, "files": 4, "groups_s": 4.9, "groups_n": 8,
            "groups_files": 4, "cells": 2e6},
           {"bytes": 16e6, "rewrite_s": 10.0, "files": 16, "groups_s": 12.1, "groups_n": 8,
            "groups_files": 16, "groups2_s": 12.1, "groups2_n": 32, "groups2_files": 16,
            "cells": 8e6}]
    alone = terms_from_points(pts)  # without the probe
    assert (alone["multi_group_s"], alone["multi_group_bytes_per_s"]) == (
        pytest.approx(0.5), pytest.approx(1e7))
    demo = {"rows": 86_000, "cells": 516_000, "bytes": 1.8e6, "sort_s": 1.8, "sort_files": 43,
            "groups_s": 2.0, "groups_n": 6, "groups_files": 43}
    t = terms_from_points(pts, demo)
    rows = np.array([[1, 4e6, 0.9, 4.9], [1, 16e6, 2.1, 12.1], [1, 16e6, 2.1, 12.1],
                     [1, 1.032e6, 0.2, 2.0]])
    (once, per_byte), *_ = np.linalg.lstsq(rows[:, :2] / rows[:, 3:], rows[:, 2] / rows[:, 3],
                                           rcond=None)
    assert once > 0 and per_byte > 0  # so the unconstrained fit is the NNLS answer
    assert t["multi_group_s"] == pytest.approx(once, rel=1e-5)
    assert t["multi_group_bytes_per_s"] == pytest.approx(1 / per_byte, rel=1e-6)
    assert t["group_s"] == 0.0
    # the demo's many-group overhead is now priced near its measured 0.2 s, not 0.6 s
    demo_extra = t["multi_group_s"] + 1.032e6 / t["multi_group_bytes_per_s"]
    assert demo_extra == pytest.approx(0.2, abs=0.05)
    # a probe whose groups write 10 more files than its one group (+0.5 s at 50 ms each):
    # those seconds are the per-file term's, the group terms do not change
    pts[0].update(files=1, files_s=4.0 + 0.05 * 20, files_n=21)
    base = terms_from_points(pts, demo)
    more = terms_from_points(pts, {**demo, "groups_files": 53, "groups_s": 2.5})
    assert base["file_s"] == pytest.approx(0.05)
    assert more["multi_group_s"] == pytest.approx(base["multi_group_s"], abs=0.02)


def test_points_without_cells_keep_compressed_bytes_as_the_unit():
    pts = [{"bytes": b, "rewrite_s": 2 + b / 1e6, "read_s": 0.5, "query_s": 0.01}
           for b in (1e6, 4e6)]
    assert rates_from_points(pts)["rewrite_cell_bytes"] == 0.0


def test_the_default_sizes_span_a_16x_range_up_to_max_rows(tmp_path, capsys):
    from engine.spark.calibrate import default_rows

    assert default_rows() == (100_000, 400_000, 1_600_000)
    assert default_rows(4_000_000) == (250_000, 1_000_000, 4_000_000)
    (tmp_path / "ws").mkdir()
    assert main(["--home", str(tmp_path / "ws"), "calibrate", "--max-rows", "1000"]) == 2
    assert "--max-rows must be at least 100,000 (two input files), got 1000" in \
        capsys.readouterr().err


@pytest.mark.spark
def test_calibrate_measures_stores_and_new_plans_use_the_rates(settings, spark, monkeypatch):
    """The mechanism on real Spark and DuckDB, tiny sizes (accuracy is measured in bench/)."""
    from engine import api
    from engine.policy.base import PlanGroup
    from engine.policy.costmodel import TERM_KEYS, groups_rewrite_cost, work_bytes
    from engine.spark import calibrate as cal
    from plan_helpers import insert_plan, make_table

    monkeypatch.setattr(cal, "ROWS_PER_FILE", 1500)  # 2 and 6 input files: the group runs
    monkeypatch.setattr(cal, "GROUPS_PROBE", 2)  # 2 groups at both sizes, 6 at the largest
    monkeypatch.setattr(cal, "GROUPS_PROBE_MANY", 6)
    monkeypatch.setattr(cal, "DEMO_PROBE", (3000, 500, 3))  # 6 files of 500 rows, 3 groups
    from engine.spark import calibrate_queries
    monkeypatch.setattr(calibrate_queries, "FILE_ROWS", (500, 2000))  # the query probe, small
    monkeypatch.setattr(calibrate_queries, "FILE_COUNTS", {500: (1, 6), 2000: (1, 3)})
    from engine.spark import executor
    monkeypatch.setattr(executor, "_WARM_APPS", set())  # as in a fresh JVM
    result = api.calibrate(settings, rows=[3000, 9000], spark=spark, repeat=1)
    # the cold probe: the session's first rewrite, then the same warm; the term is their gap
    cold = result["cold_probe"]
    assert (cold["fresh"], cold["rows"], cold["files_in"], cold["repeat"]) == (True, 3000, 6, 1)
    assert cold["first_s"] > 0 and cold["warm_s"] > 0
    # the gap of the unrounded times; first_s and warm_s are each stored to 4 decimals
    assert result["rates"]["cold_start_s"] == cold["cold_start_s"]
    assert cold["cold_start_s"] == pytest.approx(max(0.0, cold["first_s"] - cold["warm_s"]), abs=1.5e-4)
    assert not executor.session_fresh(spark)
    # the query side: its three terms in the rates, its 12 shapes kept (engine.spark.calibrate_queries)
    assert len(result["queries"]["points"]) == 12
    assert all(result["rates"][k] == result["queries"]["rates"][k] for k in calibrate_queries.QUERY_KEYS)
    demo = result["demo_probe"]  # the demo-shaped runs: one group, then 3, 500-row files
    assert (demo["rows"], demo["files_in"], demo["cells"], demo["repeat"]) == (3000, 6, 18000, 1)
    assert (demo["sort_files"], demo["groups_n"], demo["groups_files"]) == (6, 3, 6)
    assert demo["sort_s"] > 0 and demo["groups_s"] > 0
    assert json.loads((settings.home / CALIBRATION_FILE_NAME).read_text())["demo_probe"] == demo
    from engine.cli.calibrate import _text
    shown = _text(api.show_calibration(settings))
    assert (f"measured, demo-shaped:     3,000 rows in 6 files: one group {demo['sort_s']:.2f} s, "
            f"3 groups {demo['groups_s']:.2f} s (6 files)") in shown
    assert (f"measured, cold start:     3,000 rows in 6 files: first rewrite of the session "
            f"{cold['first_s']:.2f} s, warm {cold['warm_s']:.2f} s (median of 1)") in shown
    assert "fresh session, +" in shown
    assert load_settings({"home": str(settings.home)}, environ={}).cold_start_s == cold["cold_start_s"]
    # a second calibration in the same (now warm) session measures no cold start
    again = cal.measure(settings, spark=spark, rows=[3000, 9000], repeat=1)
    assert again["cold_probe"]["fresh"] is False and again["cold_probe"]["cold_start_s"] is None
    assert "cold_start_s" not in again["rates"]
    assert len(result["points"]) == 2 and result["spark_master"] == settings.spark_master
    assert [p["repeat"] for p in result["points"]] == [1, 1]
    assert [p["rows"] for p in result["points"]] == [3000, 9000]
    assert all(p["rewrite_s"] > 0 and p["query_s"] > 0 for p in result["points"])
    # layout terms: Hilbert at both sizes, the many-files run at the smallest
    assert all("fitted_s" in p for p in result["points"])
    assert result["points"][0]["files_n"] > result["points"][0]["files"] >= 1
    assert set(result["terms"]) == set(TERM_KEYS)
    # the many-group runs: 2 groups at both sizes, 6 (one per input file) at the largest
    assert [(p["groups_n"], p["groups_files"], p["files"]) for p in result["points"]] == [
        (2, 2, 1), (2, 6, 1)]  # the sort run keeps its 50,000-row files: one each
    assert "groups2_s" not in result["points"][0]
    assert (result["points"][1]["groups2_n"], result["points"][1]["groups2_files"]) == (6, 6)
    assert all(p["groups_s"] > 0 and p["cells"] == p["rows"] * 6 for p in result["points"])
    assert all(v >= 0 for v in result["terms"].values())
    assert json.loads((settings.home / CALIBRATION_FILE_NAME).read_text())["terms"] == result["terms"]
    rates = result["rates"]
    assert rates["sort_bytes_per_s"] > 0
    # the query rate is a slope over two small sizes: under load it can drown in noise; it
    # is then stored as 0 and shown as "not separable" (the default applies), never absurd
    if rates["query_scan_bytes_per_s"] == 0:
        shown = api.show_calibration(settings)["effective"]["query_scan_bytes_per_s"]
        assert shown["source"] == "calibrated: not separable, default applies", shown
    else:
        assert rates["query_scan_bytes_per_s"] > 0
    stored = load_settings({"home": str(settings.home)}, environ={})
    assert stored.rewrite_fixed_s == rates["rewrite_fixed_s"]
    assert stored.sort_bytes_per_s == rates["sort_bytes_per_s"]
    # a plan made with the calibrated settings is priced with them
    base = make_table(stored, n=1000, rows_per_file=500)
    pid = insert_plan(stored, base, [PlanGroup(tuple(p.path for p in base.partitions), "sort",
                                               ("l_shipdate",))])
    cost = api.show_plan(stored, pid).estimated_cost["cpu_seconds"]
    nbytes = sum(p.bytes for p in base.partitions)
    read = rates["rewrite_read_bytes_per_s"] or stored.scan_bytes_per_s  # 0: not separable
    assert cost == pytest.approx(rates["rewrite_fixed_s"] + nbytes / read
                                 + nbytes / rates["sort_bytes_per_s"])
    # the policies' pricing: 1000 rows x 6 columns at the calibration table's cell size
    assert stored.rewrite_cell_bytes == rates["rewrite_cell_bytes"] > 0
    work = 1000 * 6 * rates["rewrite_cell_bytes"]
    assert work_bytes(1000, nbytes, 6, stored) == pytest.approx(work)
    group = PlanGroup(tuple(p.path for p in base.partitions), "sort", ("l_shipdate",))
    assert groups_rewrite_cost(base.zonemaps(), [group], stored).cpu_seconds == pytest.approx(
        rates["rewrite_fixed_s"] + work / read + work / rates["sort_bytes_per_s"]
        + result["terms"]["file_s"])


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


def test_layout_terms_hand_numbers_and_the_sort_fit_is_corrected_per_file():
    """Per file: (4.6 - 2.6) s / (21 - 1) files = 0.1 s. Hilbert minus sort: 1.5 s at
    1 MB, 5.5 s at 9 MB -> 1 s job + 2 MB/s key. The sort points minus 0.1 s per file
    (1 and 9 files: 2.5 s, 6.5 s) lie on 2 s + B / 2 MB/s (the read pass has no slope)."""
    pts = [{"bytes": 1e6, "rewrite_s": 2.6, "files": 1, "files_s": 4.6, "files_n": 21,
            "fitted_s": 4.1, "read_s": 0.5, "query_s": 0.01},
           {"bytes": 9e6, "rewrite_s": 7.4, "files": 9, "fitted_s": 12.9, "read_s": 0.5,
            "query_s": 0.01}]
    t = terms_from_points(pts)
    assert t["file_s"] == pytest.approx(0.1)
    assert t["fitted_job_s"] == pytest.approx(1.0)
    assert t["fitted_key_bytes_per_s"] == pytest.approx(2e6)
    r = rates_from_points(pts, t["file_s"])
    assert r["rewrite_fixed_s"] == pytest.approx(2.0)
    assert r["sort_bytes_per_s"] == pytest.approx(2e6)
    # uncorrected, the 8 extra files are taken for bytes: a slower sort rate
    assert rates_from_points(pts)["sort_bytes_per_s"] == pytest.approx(8e6 / 4.8)


def test_no_hilbert_slope_keeps_the_mean_overhead_as_the_fixed_cost():
    pts = [{"bytes": b, "rewrite_s": 3.0, "files": 1, "fitted_s": 3.0 + d}
           for b, d in ((1e6, 1.4), (9e6, 1.2))]  # overhead shrinks with size: noise
    assert terms_from_points(pts) == {"fitted_job_s": pytest.approx(1.3),
                                      "fitted_key_bytes_per_s": 0.0, "file_s": 0.0,
                                      "multi_group_s": 0.0, "group_s": 0.0,
                                      "multi_group_bytes_per_s": 0.0}


def test_stored_terms_load_and_show_and_an_old_file_has_none(tmp_path, capsys, monkeypatch):
    from engine import api
    from engine.policy.costmodel import RewriteTerms

    home = tmp_path / "ws"
    _store(home, terms=TERMS)
    s = load_settings({"home": str(home)}, environ={})  # "terms" beside "rates": loads
    assert s.rewrite_fixed_s == 1.5
    assert RewriteTerms.from_settings(s) == RewriteTerms(**TERMS)  # plans price with them
    stored = api.show_calibration(s)
    assert RewriteTerms.from_mapping(stored["calibration"]["terms"]) == RewriteTerms(**TERMS)
    # an older file (3 terms, no cell size): loads, the group terms count 0 and say so
    assert {k: v["value"] for k, v in stored["terms"].items()} == {
        **TERMS, "multi_group_s": 0.0, "group_s": 0.0, "multi_group_bytes_per_s": 0.0}
    assert {stored["terms"][k]["source"] for k in TERMS} == {"calibrated"}
    assert stored["terms"]["group_s"]["source"] == "not calibrated"
    assert stored["missing"] == ["rewrite_cell_bytes", "multi_group_s", "group_s",
                                 "multi_group_bytes_per_s"]
    monkeypatch.setenv("LAYOUT_ADVISOR_FILE_S", "0.5")  # configured beats calibrated
    shown = api.show_calibration(s)["terms"]
    assert shown["file_s"] == {"value": 0.5, "source": "configured"}
    assert shown["fitted_job_s"] == {"value": 1.2, "source": "calibrated"}
    monkeypatch.delenv("LAYOUT_ADVISOR_FILE_S")
    assert main(["--home", str(home), "calibrate", "--show"]) == 0
    out = capsys.readouterr().out
    assert "fitted layout, job" in out and "1.2 s" in out and "per output file" in out
    assert "40 ms" in out
    assert ("this calibration predates rewrite_cell_bytes, multi_group_s, group_s, "
            "multi_group_bytes_per_s: "
            "they count 0 (plans price compressed bytes, group terms missing from plans); run "
            "`layout-advisor calibrate` again") in out
    assert "size unit, per cell" in out and "- (compressed bytes)  (not calibrated)" in out
    _store(home)  # a calibration from before the terms: all 0, "not calibrated"
    shown = api.show_calibration(load_settings({"home": str(home)}, environ={}))
    assert all(v == {"value": 0.0, "source": "not calibrated"} for v in shown["terms"].values())


def test_a_term_fitted_to_zero_shows_as_calibrated(tmp_path, capsys):
    """A calibration may fit no cost per extra group (NNLS: 0 s); --show must not say
    "0 (not calibrated)  (not calibrated)". A fitted 0 is calibrated; a term the file
    lacks is not."""
    from engine import api

    home = tmp_path / "ws"
    _store(home, terms={**TERMS, "multi_group_s": 0.88, "group_s": 0.0,
                        "multi_group_bytes_per_s": 9.8e7})
    shown = api.show_calibration(load_settings({"home": str(home)}, environ={}))["terms"]
    assert shown["group_s"] == {"value": 0.0, "source": "calibrated"}
    assert main(["--home", str(home), "calibrate", "--show"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "per extra group" in x)
    assert line.split() == ["per", "extra", "group", "0", "(fitted)", "(calibrated)"]
    assert [x.split()[-1] for x in out.splitlines() if "group" in x] == ["(calibrated)"] * 3


@pytest.mark.spark
def test_the_calibration_table_is_nullable_so_its_rewrites_restore_no_types(settings, spark):
    """Written NOT NULL, the columns ``spark.range`` builds would make every rewrite of
    the calibration table pay the type-restoring pass (pyarrow rewriting the new files to
    give back the non-null fields), which plans on nullable tables never pay."""
    import pyarrow.parquet as pq

    from engine.policy.base import PlanGroup
    from engine.spark import executor
    from engine.spark.calibrate_inputs import make_files
    from engine.table.footers import read_partitions

    phases = {}
    for nullable in (True, False):
        paths = make_files(spark, str(settings.home / f"in-{nullable}"), 2000, 1000,
                           nullable=nullable)
        fields = pq.read_schema(paths[0])
        assert [f.nullable for f in fields] == [nullable] * 6 or not nullable
        schema, parts = read_partitions(paths)
        group = PlanGroup(tuple(p.path for p in parts), "sort", ("l_shipdate",))
        run = executor.rewrite(spark, schema, [(group, parts)],
                               str(settings.home / f"out-{nullable}"), 1000, None)
        phases[nullable] = run.phases
    assert not pq.read_schema(make_files(spark, str(settings.home / "nn"), 100,
                                         nullable=False)[0]).field("l_orderkey").nullable
    assert "restore_types" not in phases[True] and "restore_types" in phases[False]
