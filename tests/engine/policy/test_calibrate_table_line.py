"""The table's own line (``calibrate --rewrite-on TABLE --fit line``):
the stored fixed part and price per cell hand-checked from the stored points (real Spark),
a plan priced with them by hand, the fallback to "cell" with its reason, the busy-machine
warning (the CPU reading injected where the probe reads it), and the CLI's refusals."""

from __future__ import annotations

import json
import math
import os
import time

import pytest

from engine import api
from engine.cli import main
from engine.core import cpu_share
from engine.policy import pricing
from engine.core.config import CALIBRATION_FILE_NAME, load_settings
from engine.spark import calibrate_rewrite
from engine.workload.store import WorkloadStore
from plan_helpers import make_table, shipdate_fragments
from test_table_price import RATES, TERMS, _calibrated

PER_CELL_S = 1 / RATES["rewrite_read_bytes_per_s"] + 1 / RATES["sort_bytes_per_s"]


def _hand_line(points):
    """The weighted least squares of seconds = F + c x cells x (1/read + 1/sort) +
    file_s x files, weights 1 / seconds^2 (relative errors), in closed form."""
    x = [p["cells"] * PER_CELL_S for p in points]
    y = [p["seconds"] - TERMS["file_s"] * p["files_out"] for p in points]
    w = [1 / p["seconds"] ** 2 for p in points]
    sw, sx, sy = sum(w), sum(a * b for a, b in zip(w, x)), sum(a * b for a, b in zip(w, y))
    sxx = sum(a * b * b for a, b in zip(w, x))
    sxy = sum(a * b * c for a, b, c in zip(w, x, y))
    c = (sw * sxy - sx * sy) / (sw * sxx - sx * sx)
    return (sy - c * sx) / sw, c


def test_the_line_fit_is_stored_hand_checked_and_a_busy_machine_is_warned(
        settings, spark, capsys, monkeypatch):
    s = _calibrated(settings)
    snap = make_table(s, "lineitem", n=4000, rows_per_file=500)
    busy = 4.5 * os.cpu_count()  # the 1-minute load: stored, not what decides the warning
    monkeypatch.setattr(calibrate_rewrite, "_load", lambda: busy)  # the probe's own reading
    # other processes busy on 1.5 cores: the machine's counter runs 1.5 s per second ahead of
    # this process tree's (the probe's own reading, engine.core.cpu_share)
    monkeypatch.setattr(calibrate_rewrite, "_cpu_reading", lambda: cpu_share.CpuReading(
        1.5 * time.monotonic(), 0.0, time.monotonic()))
    code = main(["--home", str(s.home), "calibrate", "--rewrite-on", "lineitem", "--repeat", "2",
                 "--max-rows", "4000", "--fit", "line", "--warmup", "0"])
    assert code == 0
    err = capsys.readouterr().err
    assert "0 warm-up(s), then 2 interleaved rounds" in err and "warm-up 1/" not in err
    entry = json.loads((s.home / CALIBRATION_FILE_NAME).read_text())["tables"]["lineitem"]
    pts = entry["points"]
    assert entry["fit_requested"] == "line" and entry["warmup"] == 0
    assert all(len(p["runs_s"]) == 2 for p in pts)
    # the line: hand-checked from the stored points (in memory: no external sort)
    fixed, cell = _hand_line(pts)
    line = entry["fits"]["line"]
    assert line["rewrite_fixed_s"] == pytest.approx(fixed, abs=1e-4)
    assert line["rewrite_cell_bytes"] == pytest.approx(cell, rel=1e-5)
    for p, e in zip(pts, line["errors"]):  # no errors for a price that is not one
        hand = fixed + cell * p["cells"] * PER_CELL_S + TERMS["file_s"] * p["files_out"]
        assert e == (pytest.approx(hand / p["seconds"] - 1, abs=2e-4) if cell > 0 else None)
    # the chosen fit follows the rule, hand-applied to the stored points
    noise = max(max(p["runs_s"]) - min(p["runs_s"]) for p in pts)  # 2 runs: max - min
    trusted = cell > 0 and fixed >= 0 and pts[-1]["seconds"] - pts[0]["seconds"] > noise
    assert entry["fit"] == ("line" if trusted else "cell"), entry
    assert (entry["fit_fallback"] is None) == trusted
    if cell <= 0:
        assert entry["fit_fallback"].startswith(f"the line's price per cell came out {cell:.3f} B")
    elif fixed < 0:
        assert entry["fit_fallback"].startswith(f"the line's fixed part came out {fixed:.2f} s")
    if trusted:
        assert entry["rewrite_fixed_s"] == line["rewrite_fixed_s"]
        assert entry["rewrite_cell_bytes"] == line["rewrite_cell_bytes"]
    else:
        assert "rewrite_fixed_s" not in entry
        assert entry["rewrite_cell_bytes"] == entry["fits"]["cell"]["rewrite_cell_bytes"]
    # the busy machine: other processes on 1.5 cores (to the reading's rounding), the factor
    # hand-computed: the probe had at most cores - 1.5 of the cores
    cores = os.cpu_count()
    assert entry["load"] == [busy, busy] and entry["load_max"] == busy and entry["cores"] == cores
    others = entry["others_cores"]
    assert others == pytest.approx(1.5, abs=0.01)
    factor = cores / max(cores - others, 0.25)
    warning = (f"warning: other processes used {others:.2f} of {cores} cores during the rewrite "
               f"probe: its times and price are likely ~{factor:.2f}x too high "
               f"({factor - 1:+.0%}); measure again on a quiet machine")
    assert entry["busy"] == warning
    assert err.strip().splitlines()[-1] == f"layout-advisor: {warning}"
    # --show: the fit, both fits, each size's spread over its runs, and the warning
    assert main(["--home", str(s.home), "calibrate", "--show"]) == 0
    shown = capsys.readouterr().out
    assert f"    {warning}" in shown
    for p in pts:
        lo, hi = min(p["runs_s"]), max(p["runs_s"])
        assert (f"    {p['rows']:>11,} rows: {p['seconds']:.2f} s median of 2, runs {lo:.2f}-"
                f"{hi:.2f} s (spread {(hi - lo) / p['seconds']:.0%} of the median)") in shown
    assert (f"    line fit: fixed {line['rewrite_fixed_s']:.2f} s, "
            f"{line['rewrite_cell_bytes']:.3f} B per cell") in shown


def test_a_plan_is_priced_with_the_tables_line_by_hand_and_cold_start_stays_global(settings):
    s = _calibrated(settings)
    snap = make_table(s, "lineitem", n=4000, rows_per_file=500)
    WorkloadStore(s).append("lineitem", shipdate_fragments("lineitem", n=30), snap.schema)
    data = json.loads((s.home / CALIBRATION_FILE_NAME).read_text())
    data["rates"]["cold_start_s"] = 5.0
    data["tables"] = {"lineitem": {
        "rewrite_cell_bytes": 3.0, "rewrite_fixed_s": 1.5, "fit": "line",
        "measured_at": "2026-11-27T07:00:00+00:00", "snapshot_id": str(snap.id),
        "spark_master": "local[2]", "fits": {
            "cell": {"rewrite_cell_bytes": 4.0, "rewrite_fixed_s": RATES["rewrite_fixed_s"]},
            "line": {"rewrite_cell_bytes": 3.0, "rewrite_fixed_s": 1.5}}}}
    (s.home / CALIBRATION_FILE_NAME).write_text(json.dumps(data))
    s = load_settings({"home": str(s.home), "target_rows": 1000, "spark_master": "local[2]"},
                      environ={})
    preview = api.preview_plan(s, "lineitem", "dd", {})
    assert len(preview.groups) == 1, preview.groups
    rows = {p.path: p.rows for p in snap.partitions}
    r = sum(rows[p] for p in preview.groups[0]["partitions"])
    columns = len(snap.zonemaps().columns)
    hand = 1.5 + r * columns * 3.0 * PER_CELL_S + TERMS["file_s"] * math.ceil(r / 500)
    assert preview.estimated_cost["cpu_seconds"] == pytest.approx(hand)
    price = preview.rewrite_price
    assert price["fixed_s"] == 1.5 and price["cell_bytes"] == 3.0
    assert price["label"].endswith(", its own fixed part 1.50 s per job (line fit)")
    # the cold start stays global: added on top of the table's warm price, unchanged
    own, _ = pricing.apply(s, "lineitem")
    assert own.cold_start_s == 5.0 and own.rewrite_fixed_s == 1.5 and own.file_s == s.file_s
    # the cell fit, selected: the calibration's fixed cost and the cell price
    cell, p = pricing.apply(s, "lineitem", "cell")
    assert (cell.rewrite_fixed_s, cell.rewrite_cell_bytes, p.fit) == (RATES["rewrite_fixed_s"], 4.0, "cell")
    # a configured fixed cost keeps itself, and the table's cell fit is used with it
    s2 = load_settings({"home": str(s.home), "target_rows": 1000, "spark_master": "local[2]",
                        "rewrite_fixed_s": 0.9}, environ={})
    conf, p = pricing.apply(s2, "lineitem")
    assert (conf.rewrite_fixed_s, conf.rewrite_cell_bytes, p.fit) == (0.9, 4.0, "cell")


def _points(seconds, runs=None):
    """Three in-memory samples of 10 columns (100k / 200k / 400k rows, one file out)."""
    return [{"rows": r, "bytes": r * 50, "cells": r * 10, "files_out": 1, "seconds": t,
             "runs_s": rs} for r, t, rs in zip((100_000, 200_000, 400_000), seconds, runs or [[t] for t in
                                                                                   seconds])]


def test_an_untrustworthy_line_falls_back_to_the_cell_fit_with_its_reason():
    from engine.core.config import Settings

    s = Settings(rewrite_fixed_s=RATES["rewrite_fixed_s"], rewrite_cell_bytes=2.0,
                 rewrite_read_bytes_per_s=RATES["rewrite_read_bytes_per_s"],
                 sort_bytes_per_s=RATES["sort_bytes_per_s"], file_s=TERMS["file_s"])
    per = 10 * PER_CELL_S  # seconds per row per B of cell price
    # an exact line: fixed 0.3 s + 5 B per cell (+ 10 ms per file): kept
    exact = [0.3 + r * per * 5 + 0.01 for r in (100_000, 200_000, 400_000)]
    got = calibrate_rewrite.choose_fit(_points(exact), 10, s, "line")
    assert got["fit"] == "line" and got["fit_fallback"] is None
    assert got["rewrite_fixed_s"] == pytest.approx(0.3, abs=1e-4)
    assert got["rewrite_cell_bytes"] == pytest.approx(5.0, rel=1e-5)
    # a negative intercept: -0.2 s + 5 B per cell
    neg = [-0.2 + r * per * 5 + 0.01 for r in (100_000, 200_000, 400_000)]
    got = calibrate_rewrite.choose_fit(_points(neg), 10, s, "line")
    assert got["fit"] == "cell" and got["rewrite_fixed_s"] is None
    assert got["fit_fallback"] == ("the line's fixed part came out -0.20 s (negative): the "
                                   "calibration's fixed cost is kept")
    assert got["rewrite_cell_bytes"] == got["fits"]["cell"]["rewrite_cell_bytes"]
    assert got["fits"]["line"]["rewrite_fixed_s"] == pytest.approx(-0.2, abs=1e-4)
    # the slope lost in noise: the medians rise 0.10 s, one size's runs spread 0.50 s
    runs = [[0.9, 1.0, 1.4], [0.95, 1.05, 1.1], [1.0, 1.1, 1.2]]
    got = calibrate_rewrite.choose_fit(_points([1.0, 1.05, 1.1], runs), 10, s, "line")
    assert got["fit"] == "cell" and got["fit_fallback"] == (
        "the slope is lost in noise: the samples rise 0.10 s from the smallest to the "
        "largest, one size's runs spread 0.50 s")
    # "cell" asked: the line is not fitted, nothing to fall back from
    got = calibrate_rewrite.choose_fit(_points(exact), 10, s, "cell")
    assert got["fit"] == "cell" and got["fit_fallback"] is None and "line" not in got["fits"]


def test_the_cli_refuses_bad_fit_and_warmup_flags(settings, capsys):
    home = str(settings.home)

    def refused(*args):
        try:
            code = main(["--home", home, "calibrate", *args])
        except SystemExit as exc:  # argparse: usage, then one error line
            code = exc.code
        return code, capsys.readouterr().err.strip().splitlines()

    for args, says in ((("--fit", "line"), "layout-advisor: error: --fit: only with --rewrite-on TABLE"),
                       (("--warmup", "2"), "layout-advisor: error: --warmup: only with --rewrite-on TABLE")):
        code, err = refused(*args)
        assert code == 2 and err == [says], (args, err)
    for args, says in ((("--rewrite-on", "t", "--fit", "quad"), "argument --fit: invalid choice: 'quad'"),
                       (("--rewrite-on", "t", "--warmup", "-1"), "argument --warmup: -1 must be at least 0"),
                       (("--rewrite-on", "t", "--warmup", "x"), "argument --warmup: 'x' is not an integer")):
        code, err = refused(*args)
        assert code == 2 and err[-1].startswith("layout-advisor calibrate: error: " + says), (args, err)
        assert not any("Traceback" in line for line in err)
