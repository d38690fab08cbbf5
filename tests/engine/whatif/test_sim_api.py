"""The simulate API and CLI: result shape, DD tuned to WAIR's budget, CSV output, errors."""

from __future__ import annotations

import csv
import json

import pytest

from engine import api
from engine.cli import main
from engine.core.errors import InvalidParameterError

SMALL = {"periods": 3, "batches_per_period": 3, "recluster_start": 2, "target_rows": 40}


def test_simulate_result_shape(settings):
    seen = []
    r = api.simulate(settings, preset="tpch", rows=3000, policies=("nr", "wair", "dd", "oracle"),
                     seed=2, overrides=SMALL, progress=seen.append)
    assert set(r["policies"]) == {"nr", "wair", "dd", "oracle"}
    for name, p in r["policies"].items():
        for key in ("query_bytes", "recluster_bytes", "total_bytes", "pruning_rate", "cpu_seconds", "money"):
            assert isinstance(p[key], float), (name, key)
        assert p["total_bytes"] == pytest.approx(p["query_bytes"] + p["recluster_bytes"])
        assert len(p["batches"]) == 9
        b = p["batches"][-1]
        for key in ("period", "batch", "query_bytes", "recluster_bytes", "total_bytes", "pruning_rate",
                    "partitions_scanned", "partitions_pruned"):
            assert key in b
        # totals are the measured batches' sums
        assert p["query_bytes"] == pytest.approx(sum(x["query_bytes"] for x in p["batches"] if x["measured"]))
    assert r["policies"]["nr"]["recluster_bytes"] == 0
    assert r["comparison"]["nr"]["total_bytes_reduction_vs_nr"] == 0
    assert r["dd_tuning"]["budget_bytes"] == r["policies"]["wair"]["recluster_bytes"]
    assert len(r["dd_tuning"]["grid"]) >= 5
    assert seen and {"policy", "batch", "batches"} <= set(seen[-1])
    assert r["scenario"]["batches"] == 9


def test_simulate_rejects_bad_input(settings):
    with pytest.raises(InvalidParameterError, match="unknown policy"):
        api.simulate(settings, rows=2000, policies="nr,zz", overrides=SMALL)
    with pytest.raises(InvalidParameterError, match="unknown preset"):
        api.simulate(settings, preset="tpcx", rows=2000)
    assert {p["name"] for p in api.simulation_policies()} >= {"nr", "nn", "qd", "dd", "dd-ep", "wair",
                                                               "fk", "fw", "aggressive", "oracle"}
    assert api.scenario_parameters("dsb")[0]["default"] == "dsb"


def test_cli_json_and_csv(tmp_path, capsys):
    out = tmp_path / "res"
    code = main(["--home", str(tmp_path / "h"), "simulate", "--preset", "mirrors", "--rows", "4000",
                 "--policies", "nr,nn,wair", "--periods", "2", "--batches-per-period", "4",
                 "--target-rows", "60", "--json", "--out", str(out)])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["policies"]) == {"nr", "nn", "wair"}
    rows = list(csv.DictReader((out / "summary.csv").open()))
    assert [r["policy"] for r in rows] == ["nr", "nn", "wair"]
    batches = list(csv.DictReader((out / "batches.csv").open()))
    assert len(batches) == 3 * 8
    code = main(["--home", str(tmp_path / "h"), "simulate", "--rows", "2000", "--policies", "nope"])
    assert code == 2 and "unknown policy" in capsys.readouterr().err


def test_cli_text_summary(tmp_path, capsys):
    code = main(["--home", str(tmp_path / "h"), "simulate", "--preset", "dsb", "--rows", "3000",
                 "--policies", "nr,oracle", "--periods", "2", "--batches-per-period", "3",
                 "--recluster-start", "2", "--overrides", json.dumps({"templates": 5, "target_rows": 50})])
    assert code == 0
    text = capsys.readouterr().out
    assert "Oracle" in text and "vs NR" in text and "dsb: 3,000 rows" in text
