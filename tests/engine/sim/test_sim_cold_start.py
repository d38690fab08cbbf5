"""The simulator charges a fresh Spark session's cold start (engine.sim.session): ``"first"`` once per policy's run, ``"every"`` once per charged rewrite,
``"none"`` never; a bill that changes no decision.

The scenario by hand: TPC-H, 2,000 rows, 2 periods of 2 batches, reclustering from period 1,
partitions of 40 rows. NN (new-data sort) sorts each batch's freshly ingested partitions
after its queries: 4 reclustering batches, one rewrite each; NR never rewrites. With
``cold_start_s`` = 7.5 s, NN's reclustering seconds move by 7.5 s ("first"), 4 x 7.5 = 30 s
("every") and 0 ("none"); NR's by 0 in every mode.
"""

from __future__ import annotations

import pytest

from engine import api
from engine.cli import main
from engine.core.config import Settings
from engine.core.errors import InvalidParameterError
from engine.scenarios.presets import build_scenario
from engine.sim.runner import simulate_policies
from engine.sim.variants import scenario_policy

COLD = 7.5
S = Settings(scan_bytes_per_s=1e9, rewrite_read_bytes_per_s=1000.0, sort_bytes_per_s=500.0,
             rewrite_fixed_s=2.0, file_s=0.25, target_rows=40, cold_start_s=COLD,
             price_per_cpu_hour=3.6)
OVERRIDES = {"periods": 2, "batches_per_period": 2, "recluster_start": 1, "target_rows": 40}


@pytest.fixture(scope="module")
def runs():
    sc = build_scenario("tpch", rows=2_000, seed=1, overrides=OVERRIDES)
    assert [(b.period, b.batch, b.recluster, b.measured) for b in sc.batches] == [
        (1, 1, True, True), (1, 2, True, True), (2, 1, True, True), (2, 2, True, True)]
    return {mode: simulate_policies(sc, {p: scenario_policy(p, sc) for p in ("nn", "nr")}, S,
                                    cold_start=mode)
            for mode in ("none", "first", "every")}


def test_nn_rewrites_once_per_batch(runs):
    nn = runs["none"]["nn"]
    assert [b.recluster_groups for b in nn.batches] == [1, 1, 1, 1]


@pytest.mark.parametrize("mode, times", [("none", 0), ("first", 1), ("every", 4)])
def test_the_total_moves_by_the_cold_start_times_the_rewrites_the_mode_names(runs, mode, times):
    warm, got = runs["none"]["nn"].totals(), runs[mode]["nn"].totals()
    assert got["cold_start_seconds"] == pytest.approx(times * COLD)
    assert got["recluster_cpu_seconds"] - warm["recluster_cpu_seconds"] == pytest.approx(times * COLD)
    assert got["cpu_seconds"] - warm["cpu_seconds"] == pytest.approx(times * COLD)
    # 3.6 $ per CPU-hour: 7.5 s cost 0.0075 $
    assert got["money"] - warm["money"] == pytest.approx(times * COLD * 3.6 / 3600)
    # a bill, not a price: the same rewrites, the same queries, the same warm feedback
    assert got["recluster_bytes"] == warm["recluster_bytes"] and got["query_bytes"] == warm["query_bytes"]
    assert [f["cost_cpu_s"] for f in runs[mode]["nn"].feedbacks] == \
        [f["cost_cpu_s"] for f in runs["none"]["nn"].feedbacks]
    nr = runs[mode]["nr"].totals()
    assert nr["cold_start_seconds"] == 0.0 and nr["cpu_seconds"] == runs["none"]["nr"].totals()["cpu_seconds"]


def test_first_is_paid_by_the_first_rewrite_of_the_run(runs):
    assert [b.cold_start_s for b in runs["first"]["nn"].batches] == [COLD, 0.0, 0.0, 0.0]
    assert [b.cold_start_s for b in runs["every"]["nn"].batches] == [COLD] * 4
    per_batch = runs["first"]["nn"].to_json()["batches"]
    assert [b["cold_start_seconds"] for b in per_batch] == [COLD, 0.0, 0.0, 0.0]


def test_unknown_mode_is_refused():
    sc = build_scenario("tpch", rows=2_000, seed=1, overrides=OVERRIDES)
    with pytest.raises(InvalidParameterError, match="cold_start must be one of first, every, none"):
        simulate_policies(sc, {"nr": scenario_policy("nr", sc)}, S, cold_start="sometimes")


def test_api_simulate_charges_it_with_the_workspace_rates_not_the_duckdb_economics():
    """The presets' DuckDB economics have no session to start (economics.calibrated_settings
    sets cold_start_s to 0); the workspace's own rates carry the calibrated one."""
    kw = dict(preset="tpch", rows=2_000, policies="nr,nn", overrides=OVERRIDES, tune_dd=False,
              per_batch=False)
    duck = api.simulate(S, cold_start="every", **kw)
    assert duck["rates"]["cold_start_s"] == 0.0
    assert duck["policies"]["nn"]["cold_start_seconds"] == 0.0
    none = api.simulate(S, calibrated=False, cold_start="none", **kw)
    every = api.simulate(S, calibrated=False, cold_start="every", **kw)
    assert every["cold_start"] == "every" and every["rates"]["cold_start_s"] == COLD
    assert every["policies"]["nn"]["cpu_seconds"] - none["policies"]["nn"]["cpu_seconds"] == \
        pytest.approx(4 * COLD)


def test_cli_simulate_takes_the_mode_and_shows_what_it_charged(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LAYOUT_ADVISOR_COLD_START_S", str(COLD))
    base = ["--home", str(tmp_path), "simulate", "--preset", "tpch", "--rows", "2000",
            "--policies", "nr,nn", "--periods", "2", "--batches-per-period", "2",
            "--recluster-start", "1", "--target-rows", "40", "--configured-rates"]
    assert main(base + ["--cold-start", "every"]) == 0
    out = capsys.readouterr().out
    assert ("CPU-s include a fresh Spark session's cold start (7.5 s, every rewrite: "
            "--cold-start every): NR 0 ms, NN 30 s") in out
    assert main(base + ["--cold-start", "first"]) == 0
    assert "the first rewrite of each policy's run: --cold-start first): NR 0 ms, NN 7.5 s" in \
        capsys.readouterr().out
    assert main(base + ["--cold-start", "none"]) == 0
    assert "cold start" not in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        main(base + ["--cold-start", "sometimes"])
    assert e.value.code == 2
    assert "--cold-start: invalid choice: 'sometimes'" in capsys.readouterr().err
