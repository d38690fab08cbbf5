"""A table's own rewrite price per cell (``calibrate --rewrite-on``):
measured on the table's files with real Spark, stored per table, used by that table's plans
only (hand-checked from the stored values), shown, and the CLI's refusals."""

from __future__ import annotations

import json
import math

import pytest

from engine import api
from engine.cli import main
from engine.core.config import CALIBRATION_FILE_NAME, load_settings
from engine.spark import calibrate_rewrite
from engine.table.info import WriteTarget
from engine.table.store import TableStore
from engine.workload.store import WorkloadStore
from plan_helpers import make_table, shipdate_fragments

# a hand-made global calibration: its fixed cost and per-file term are held by the probe.
# The fixed cost is below any real Spark job's here (a 1,000-row sample takes 0.2-0.4 s):
# at 0.4 s, samples that ran in 0.37 s left no positive price per cell ("not separable",
# exit 2), so these tests would fail on a fast run
RATES = {"rewrite_fixed_s": 0.05, "rewrite_read_bytes_per_s": 4e7, "sort_bytes_per_s": 1e7,
         "rewrite_cell_bytes": 2.0}
TERMS = {"file_s": 0.01}


def _calibrated(settings):
    home = settings.home
    home.mkdir(parents=True, exist_ok=True)
    (home / CALIBRATION_FILE_NAME).write_text(json.dumps(
        {"measured_at": "2026-11-27T05:00:00+00:00", "spark_master": "local[2]",
         "rates": RATES, "terms": TERMS, "points": []}))
    return load_settings({"home": str(home), "target_rows": 1000, "spark_master": "local[2]"},
                         environ={})


def _hand_cost(s, snap, plan, cell):
    """fixed + work / read + work / sort + file_s x files, work = rows x columns x cell;
    one group per job (dd), the table's 500-row files."""
    rows = {p.path: p.rows for p in snap.partitions}
    columns = len(snap.zonemaps().columns)
    total = 0.0
    for g in plan.groups:
        r = sum(rows[p] for p in g["partitions"])
        work = r * columns * cell
        files = math.ceil(r / 500)
        total += work / RATES["rewrite_read_bytes_per_s"] + work / RATES["sort_bytes_per_s"] \
            + TERMS["file_s"] * files
    assert len(plan.groups) == 1, plan.groups  # one job: the fixed cost once
    return RATES["rewrite_fixed_s"] + total


def test_the_table_price_is_measured_stored_used_by_its_plans_only_and_shown(settings, spark,
                                                                             capsys):
    s = _calibrated(settings)
    snap = make_table(s, "lineitem", n=4000, rows_per_file=500)  # 8 files
    other = make_table(s, "orders", n=4000, rows_per_file=500)
    for t, sn in (("lineitem", snap), ("orders", other)):
        WorkloadStore(s).append(t, shipdate_fragments(t, n=30), sn.schema)
    before = {t: api.preview_plan(s, t, "dd", {}) for t in ("lineitem", "orders")}
    # today's price: the calibration table's 2.0 B per cell
    assert before["lineitem"].estimated_cost["cpu_seconds"] == pytest.approx(
        _hand_cost(s, snap, before["lineitem"], 2.0))
    assert before["lineitem"].rewrite_price["label"] == "the calibration table's"

    code = main(["--home", str(s.home), "calibrate", "--rewrite-on", "lineitem", "--repeat", "1",
                 "--max-rows", "4000", "--fit", "cell", "--warmup", "1"])
    assert code == 0
    err = capsys.readouterr().err
    assert "rewrite probe: 3 samples of 2, 4, 8 files (1,000, 2,000, 4,000 rows)" in err
    assert "warm-up 1/1 (2 files)" in err and "repetition 1/1, 8 files" in err
    stored = json.loads((s.home / CALIBRATION_FILE_NAME).read_text())
    assert stored["rates"] == RATES and stored["terms"] == TERMS  # the global terms kept
    entry = stored["tables"]["lineitem"]
    master = load_settings({"home": str(s.home)}).spark_master  # the CLI's own settings
    assert entry["snapshot_id"] == str(snap.id) and entry["spark_master"] == master
    assert entry["measured_at"] and entry["calibration_cell_bytes"] == 2.0
    assert [p["files_in"] for p in entry["points"]] == [2, 4, 8]
    assert [p["rows"] for p in entry["points"]] == [1000, 2000, 4000]
    columns = len(snap.zonemaps().columns)
    assert all(p["cells"] == p["rows"] * columns and p["seconds"] > 0 for p in entry["points"])
    # each sample wrote the table's own file size (500 rows), as its plans do
    assert [p["files_out"] for p in entry["points"]] == [2, 4, 8]
    # the stored price is the fit of the stored points with the held terms (relative errors)
    cell, errors = calibrate_rewrite.fit_cell_price(entry["points"], columns, s, 2.0)
    assert entry["rewrite_cell_bytes"] == pytest.approx(cell, rel=1e-5) and cell > 0
    assert [p["error_at_fit"] for p in entry["points"]] == [round(e, 4) for e in errors]
    # and at that price the points' own predictions carry those errors (hand: the model)
    for p in entry["points"]:
        work = p["cells"] * entry["rewrite_cell_bytes"]
        hand = (RATES["rewrite_fixed_s"] + work / RATES["rewrite_read_bytes_per_s"]
                + work / RATES["sort_bytes_per_s"] + TERMS["file_s"] * p["files_out"])
        assert hand / p["seconds"] - 1 == pytest.approx(p["error_at_fit"], abs=2e-4)

    # a plan on lineitem is priced with its own price; orders' plan is unchanged
    s2 = load_settings({"home": str(s.home), "target_rows": 1000, "spark_master": "local[2]"},
                       environ={})
    after = {t: api.preview_plan(s2, t, "dd", {}) for t in ("lineitem", "orders")}
    assert after["lineitem"].estimated_cost["cpu_seconds"] == pytest.approx(
        _hand_cost(s2, snap, after["lineitem"], entry["rewrite_cell_bytes"]))
    assert after["orders"].estimated_cost == before["orders"].estimated_cost
    assert after["orders"].rewrite_price["label"] == "the calibration table's"
    assert after["lineitem"].rewrite_price == {
        "source": "table", "table": "lineitem", "cell_bytes": entry["rewrite_cell_bytes"],
        "measured_at": entry["measured_at"], "snapshot_id": str(snap.id),
        "label": f"table lineitem's own price, measured {entry['measured_at']} "
                 f"(snapshot {snap.id})"}
    # a stored plan says which price, in `plan show`
    plan = api.create_plan(s2, "lineitem", "dd", {}, created_by="carol")
    assert plan.estimated_cost == after["lineitem"].estimated_cost
    assert main(["--home", str(s.home), "plan", "show", str(plan.id)]) == 0
    shown = capsys.readouterr().out
    assert (f"rewrite priced at {entry['rewrite_cell_bytes']:.2f} B per cell: table lineitem's "
            f"own price, measured {entry['measured_at']}") in shown
    # --show lists the per-table price
    assert main(["--home", str(s.home), "calibrate", "--show"]) == 0
    load = entry["load"]
    assert len(load) == 2 and all(v >= 0 for v in load)
    shown = capsys.readouterr().out
    assert (f"table lineitem: {entry['rewrite_cell_bytes']:.3f} B per cell (the calibration "
            f"table's 2.000), measured {entry['measured_at']} on snapshot {snap.id}, 3 sizes, "
            f"load {load[0]} -> {load[1]} (used by its plans)") in shown
    assert "    fit: cell (the calibration's fixed cost held)\n" in shown
    # a configured rewrite_cell_bytes overrides every table's price, as configured values do
    s3 = load_settings({"home": str(s.home), "target_rows": 1000, "spark_master": "local[2]",
                        "rewrite_cell_bytes": 2.5}, environ={})
    assert api.preview_plan(s3, "lineitem", "dd", {}).rewrite_price["label"] == \
        "the calibration table's"


def test_the_cli_refuses_an_unknown_table_an_empty_one_and_a_change_mid_probe(
        settings, spark, capsys, monkeypatch):
    s = _calibrated(settings)
    home = str(s.home)
    snap = make_table(s, "lineitem", n=2000, rows_per_file=500)
    store = TableStore(s)
    store.create("empty", schema=snap.schema, partitions=[], operation="create")

    def refused(*args):
        code = main(["--home", home, "calibrate", *args])
        err = capsys.readouterr().err.strip().splitlines()
        return code, err

    code, err = refused("--rewrite-on", "nosuch")
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith("layout-advisor: error: --rewrite-on nosuch: no table named 'nosuch'")
    code, err = refused("--rewrite-on", "empty")
    assert code == 2 and err == ["layout-advisor: error: --rewrite-on empty: the table has no "
                                 "data files to rewrite (load data first)"], err
    code, err = refused("--rewrite-on", "lineitem", "--rows", "100,200")
    assert code == 2 and len(err) == 1 and "--rows: not with --rewrite-on" in err[0], err

    # the table changes while it is measured: a commit lands during the probe
    real = calibrate_rewrite.measure

    def measure_then_commit(*args, **kwargs):
        got = real(*args, **kwargs)
        store.commit("lineitem", snap.id, [snap.partitions[0].path], [snap.partitions[0]],
                     "rewrite")
        return got

    monkeypatch.setattr(calibrate_rewrite, "measure", measure_then_commit)
    code, err = refused("--rewrite-on", "lineitem", "--repeat", "1")
    now = store.current_snapshot("lineitem").id
    assert code == 2 and err[-1] == (
        f"layout-advisor: error: --rewrite-on lineitem: the table changed while it was "
        f"measured (snapshot {snap.id} -> {now}); nothing stored: run it again"), err
    assert "tables" not in json.loads((s.home / CALIBRATION_FILE_NAME).read_text())


def test_sample_sizes_and_an_uncalibrated_workspace_is_refused(settings, capsys):
    assert calibrate_rewrite.sample_sizes([500] * 8, 4000) == [2, 4, 8]
    assert calibrate_rewrite.sample_sizes([500] * 8, 2000) == [1, 2, 4]
    with pytest.raises(ValueError, match="two sample sizes"):
        calibrate_rewrite.sample_sizes([500] * 8, 500)
    snap = make_table(settings, "lineitem", n=1000, rows_per_file=500)
    assert snap.partitions
    code = main(["--home", str(settings.home), "calibrate", "--rewrite-on", "lineitem"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "run `layout-advisor calibrate` first" in err[0], err


def test_wair_cuts_and_prices_at_the_table_price_when_it_has_one(settings):
    """WAIR's Algorithm 2 sizes partitions with ``work_bytes_array`` under the settings the
    plan service resolves for the table: a stored table price reaches its cut and its price
    (a hand-stored price; no Spark needed for a preview)."""
    from dataclasses import replace

    from engine.policy.base import PlanGroup
    from engine.policy.costmodel import for_table, groups_rewrite_cost

    s = _calibrated(settings)
    snap = make_table(s, "lineitem", n=4000, rows_per_file=500)
    WorkloadStore(s).append("lineitem", shipdate_fragments("lineitem", n=30), snap.schema)
    params = {"alpha": 0.001}  # savings weigh 1000x: WAIR proposes at either price
    cheap = api.preview_plan(s, "lineitem", "wair", params)
    data = json.loads((s.home / CALIBRATION_FILE_NAME).read_text())
    data["tables"] = {"lineitem": {"rewrite_cell_bytes": 8.0, "measured_at": "2026-11-27T06:00:00",
                                   "snapshot_id": str(snap.id), "spark_master": "local[2]"}}
    (s.home / CALIBRATION_FILE_NAME).write_text(json.dumps(data))
    own = api.preview_plan(s, "lineitem", "wair", params)
    zm = snap.zonemaps()
    for preview, cell in ((cheap, 2.0), (own, 8.0)):
        assert preview.groups, (preview.status, preview.reason)
        groups = [PlanGroup(tuple(g["partitions"]), g["layout"], tuple(g["columns"]),
                            g.get("layout_params") or {}) for g in preview.groups]
        priced = for_table(replace(s, rewrite_cell_bytes=cell), WriteTarget(file_rows=500))
        assert preview.estimated_cost["cpu_seconds"] == pytest.approx(
            groups_rewrite_cost(zm, groups, priced).cpu_seconds)
    assert own.rewrite_price["source"] == "table" and cheap.rewrite_price["source"] == "calibration"
    # the cut's net curve (equation 4, per cut) is priced at the table's price: each cut costs more
    c_cheap, c_own = dict(map(tuple, cheap.curve)), dict(map(tuple, own.curve))
    shared = sorted(set(c_cheap) & set(c_own))
    assert shared and all(c_own[k] > c_cheap[k] for k in shared), (c_cheap, c_own)


def test_the_whatif_simulates_the_table_at_its_own_price(settings, monkeypatch):
    """The what-if's simulated copy holds the table's rows: it is priced at the table's own
    price when it has one, at the calibration table's otherwise (the simulation itself is
    not run here: the settings it receives are the point)."""
    from engine.whatif import own as whatif

    s = _calibrated(settings)
    snap = make_table(s, "lineitem", n=4000, rows_per_file=500)
    WorkloadStore(s).append("lineitem", shipdate_fragments("lineitem", n=30), snap.schema)
    seen = []

    class Stop(Exception):
        pass

    def capture(settings, *args, **kwargs):
        seen.append(settings.rewrite_cell_bytes)
        raise Stop

    monkeypatch.setattr(whatif, "simulate_scenario", capture)
    for _ in range(2):
        with pytest.raises(Stop):
            api.whatif_table(s, "lineitem", policies="nr,wair",
                                options=api.WhatIfOptions(tune_dd=False, reuse=False))
        data = json.loads((s.home / CALIBRATION_FILE_NAME).read_text())
        data["tables"] = {"lineitem": {"rewrite_cell_bytes": 8.0, "measured_at": "x",
                                       "snapshot_id": str(snap.id), "spark_master": "local[2]"}}
        (s.home / CALIBRATION_FILE_NAME).write_text(json.dumps(data))
    assert seen == [2.0, 8.0]
