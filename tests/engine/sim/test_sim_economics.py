"""The simulator's calibrated economics: DuckDB-measured rates per
preset, scaled to the scenario's rows, and the layout-independent cost every query pays."""

from __future__ import annotations

import pytest

from engine.core.config import Settings
from engine.core.logical_types import encode_scalar
from engine.policy.baselines import NoRecluster
from engine.scenarios.presets import SIM_CALIBRATION, build_scenario
from engine.sim.economics import calibrated_settings, selected_mask
from engine.sim.runner import simulate_policies

TINY = {"periods": 3, "batches_per_period": 2, "recluster_start": 2}


def test_calibrated_settings_follow_the_measurement_scaled_to_the_rows():
    sc = build_scenario("tpch", rows=4_000, seed=1, overrides=TINY)
    cal = SIM_CALIBRATION["presets"]["tpch"]
    s = calibrated_settings(sc, Settings())
    scale = sc.dataset.rows / SIM_CALIBRATION["rows"]
    assert s.scan_bytes_per_s == cal["scan_bytes_per_s"]
    assert s.query_fixed_s == pytest.approx(cal["query_mean_s"] * scale)
    # read at the scan rate + sort-and-write = the measured rewrite rate per byte
    per_byte = 1 / s.rewrite_read_bytes_per_s + 1 / s.sort_bytes_per_s
    assert per_byte == pytest.approx(1 / cal["rewrite_bytes_per_s"])
    assert s.rewrite_fixed_s == pytest.approx(cal["rewrite_fixed_s"] * scale)
    # a preset without a measurement keeps the given settings
    assert calibrated_settings(sc, Settings(), preset="none") == Settings()


def test_every_query_pays_the_layout_independent_cost():
    sc = build_scenario("tpch", rows=4_000, seed=1, overrides=TINY)
    s = Settings(scan_bytes_per_s=1e6, query_fixed_s=0.5)
    run = simulate_policies(sc, {"nr": NoRecluster()}, s)["nr"]
    for b in run.batches:
        assert b.query_cpu_s == pytest.approx(b.queries * 0.5 + b.query_bytes / 1e6)
    t = run.totals()
    assert t["query_cpu_seconds"] == pytest.approx(t["queries"] * 0.5 + t["query_bytes"] / 1e6)


def test_selected_mask_counts_the_rows_a_query_selects():
    sc = build_scenario("dsb", rows=6_000, seed=2, overrides={"periods": 3, "batches_per_period": 2,
                                                               "recluster_start": 2})
    frag = next(f for b in sc.batches for f in b.fragments)
    mask = selected_mask(sc, frag)
    d = sc.dataset.data["ss_sold_date_sk"]
    r = frag.boxes[0]["ss_sold_date_sk"]
    lo, hi = encode_scalar("date", r.min), encode_scalar("date", r.max)
    assert mask.sum() > 0 and ((d[mask] >= lo) & (d[mask] <= hi)).all()
