"""The query side of the cost model: calibrate's three query terms (a fixed
cost per query, a cost per file scanned, a rate per projected byte), measured by DuckDB on the
workload's query shapes (engine.spark.calibrate_queries), and priced by one rule on both
sides of WAIR's trade (engine.policy.costmodel: the bill and the value of saved bytes)."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine import api
from engine.cli import main
from engine.core.config import CALIBRATION_FILE_NAME, Settings, load_settings
from engine.policy.costmodel import query_seconds, scan_seconds
from engine.sim.runner import batch_query_seconds
from engine.spark import calibrate_queries as cq
from engine.workload.model import Range, ScanFragment


def test_a_query_pays_fixed_per_file_and_per_byte_by_hand():
    s = Settings(query_fixed_s=0.004, query_file_s=0.0005, query_scan_bytes_per_s=5e8)
    # 4 ms + 300 files x 0.5 ms + 1 GB at 500 MB/s = 0.004 + 0.15 + 2.0
    assert query_seconds(1e9, s, files=300) == pytest.approx(2.154)
    # 192 queries over 58,000 files and 9 GB: 0.768 + 29 + 18
    assert batch_query_seconds(192, 9e9, s, files=58_000) == pytest.approx(47.768)


def test_saved_bytes_are_valued_at_the_rate_queries_are_billed_at():
    """One rule: a rewrite that removes B bytes from a query's scan saves exactly what the
    bill of that query falls by (never the uncalibrated scan_bytes_per_s against the
    calibrated bill)."""
    s = Settings(scan_bytes_per_s=2e8, query_fixed_s=0.01, query_scan_bytes_per_s=8e8)
    saved = query_seconds(5e8, s, files=10) - query_seconds(1e8, s, files=10)
    assert scan_seconds(4e8, s) == pytest.approx(saved) == pytest.approx(0.5)  # 4e8 / 8e8
    # uncalibrated: both at scan_bytes_per_s
    assert scan_seconds(4e8, Settings(scan_bytes_per_s=2e8)) == pytest.approx(2.0)


def test_the_three_terms_are_fitted_non_negative():
    pts = [{"files": f, "bytes": b, "seconds": 0.002 + f * 0.001 + b / 2e8}
           for f, b in ((1, 1e5), (8, 4e6), (64, 2e6), (64, 3e7), (256, 5e7))]
    t = cq.fit_query_terms(pts)
    assert (t["query_fixed_s"], t["query_file_s"]) == pytest.approx((0.002, 0.001), rel=1e-6)
    assert t["query_scan_bytes_per_s"] == pytest.approx(2e8, rel=1e-6)
    # a time that falls with bytes: no negative rate, the slope is 0 ("not separable")
    flat = [{"files": 1, "bytes": b, "seconds": s} for b, s in ((1e6, 0.02), (5e6, 0.01), (9e6, 0.005))]
    t = cq.fit_query_terms(flat)
    assert t["query_scan_bytes_per_s"] == 0.0 and t["query_fixed_s"] >= 0 and t["query_file_s"] >= 0


def _files(tmp_path, n_files=12, rows=400):
    """Ingestion-ordered files: each file holds one 30-day window of ``d``."""
    rng = np.random.default_rng(3)
    paths = []
    for k in range(n_files):
        day0 = dt.date(2020, 1, 1) + dt.timedelta(days=30 * k)
        t = pa.table({"d": pa.array([day0 + dt.timedelta(days=int(x)) for x in rng.integers(0, 30, rows)],
                                    pa.date32()),
                      "x": pa.array(rng.random(rows)),
                      "s": pa.array([f"v{int(v)}" for v in rng.integers(0, 50, rows)])})
        path = tmp_path / f"f{k:02d}.parquet"
        pq.write_table(t, path)
        paths.append(str(path))
    return paths


def _frag(qid, lo_file, hi_file, columns=("d", "x")):
    lo = dt.date(2020, 1, 1) + dt.timedelta(days=30 * lo_file)
    hi = dt.date(2020, 1, 1) + dt.timedelta(days=30 * hi_file + 29)
    return ScanFragment(qid, "t", ({"d": Range(lo, hi, True, True)},), tuple(columns))


def test_the_probe_runs_each_query_over_the_files_its_pruning_keeps(tmp_path):
    paths = _files(tmp_path)
    frags = [_frag("a", 0, 11), _frag("b", 2, 5, ("d", "x", "s"))]
    got = cq.measure_fragments(paths, frags, repeat=3)
    # every shape timed once per round; its seconds are the median of its rounds
    assert all(len(p["rounds"]) == 3 and p["seconds"] == sorted(p["rounds"])[1] for p in got["points"])
    # the terms fitted on each round alone: min <= median <= max, the median fit in between
    for key in cq.QUERY_KEYS:
        lo, mid, hi = (got["spread"][key][k] for k in ("min", "median", "max"))
        assert lo <= mid <= hi
    # query a keeps all 12 files: 1, a quarter (3), half (6), all, then half and all with
    # its predicated column d alone; b keeps files 2..5: 1, 2, 4, then 2 and 4 with d alone
    assert [(p["files"], p["columns"]) for p in got["points"]] == [
        (1, 2), (3, 2), (6, 2), (12, 2), (6, 1), (12, 1), (1, 3), (2, 3), (4, 3), (2, 1), (4, 1)]
    # the bytes are the projected column chunks of those files, from the footers
    meta = [pq.ParquetFile(p).metadata for p in paths]
    chunk = [{m.row_group(0).column(i).path_in_schema: m.row_group(0).column(i).total_compressed_size
              for i in range(m.num_columns)} for m in meta]
    assert got["points"][1]["bytes"] == sum(chunk[k]["d"] + chunk[k]["x"] for k in range(3))
    assert got["points"][8]["bytes"] == sum(chunk[k][c] for k in range(2, 6) for c in "dxs")
    assert got["points"][5]["bytes"] == sum(chunk[k]["d"] for k in range(12))
    assert all(p["seconds"] > 0 for p in got["points"])
    assert set(got["rates"]) == set(cq.QUERY_KEYS) and min(got["rates"].values()) >= 0


def test_the_synthetic_probe_fits_its_terms_on_both_file_sizes(tmp_path):
    got = cq.measure(tmp_path, repeat=1, file_rows=(500, 2000), file_counts={500: (1, 6), 2000: (1, 3)})
    assert [(p["file_rows"], p["files"]) for p in got["points"][::3]] == [(500, 1), (500, 6), (2000, 1), (2000, 3)]
    assert [p["columns"] for p in got["points"][:3]] == [2, 7, 16]
    assert set(got["rates"]) == set(cq.QUERY_KEYS)


def test_query_terms_are_stored_beside_the_rest_and_reach_the_settings(tmp_path, capsys):
    home = tmp_path / "ws"
    home.mkdir()
    rest = {"measured_at": "2026-11-26T20:00:00+00:00", "spark_master": "local[2]",
            "rates": {"rewrite_fixed_s": 2.0, "sort_bytes_per_s": 1e7}, "terms": {"file_s": 0.1},
            "points": []}
    (home / CALIBRATION_FILE_NAME).write_text(json.dumps(rest))
    settings = load_settings({"home": str(home)}, environ={})
    paths = _files(tmp_path)
    stored = api.calibrate_queries(settings, paths=paths, fragments=[_frag("a", 0, 11)], repeat=1,
                                   label="test table")
    data = json.loads((home / CALIBRATION_FILE_NAME).read_text())
    assert data["rates"]["rewrite_fixed_s"] == 2.0 and data["terms"] == {"file_s": 0.1}  # kept
    assert data["rates"]["query_file_s"] == stored["queries"]["rates"]["query_file_s"]
    again = load_settings({"home": str(home)}, environ={})
    assert again.query_file_s == data["rates"]["query_file_s"] and again.rewrite_fixed_s == 2.0
    assert main(["--home", str(home), "calibrate", "--show"]) == 0
    out = capsys.readouterr().out
    assert "query, per file" in out and ("query terms measured on test table: 12 files, 1 of its "
                                         "queries: 6 shapes, 1-12 files") in out


def test_queries_on_a_table_without_a_workload_is_one_line_exit_2(tmp_path, capsys):
    from plan_helpers import make_table

    settings = load_settings({"home": str(tmp_path / "ws")}, environ={})
    make_table(settings, "lineitem", n=1000, rows_per_file=250)
    assert main(["--home", str(tmp_path / "ws"), "calibrate", "--queries-on", "lineitem"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--queries-on lineitem" in err[0] and "import" in err[0]


def test_wair_prices_an_unmeasured_query_by_the_bill_without_its_fixed_cost():
    """Equation 3's t_read(Q), when the log has no duration: the query's files and bytes at
    the calibrated terms (the bill minus query_fixed_s, which no layout changes). By hand:
    2 files x 10 ms + 100 bytes at 100 B/s = 1.02 s; P0 (u = 0.25, 40 of the 100 bytes)
    saves 0.75 x 40 / 100 x 1.02 = 0.306 s (0.3 s with bytes alone)."""
    from engine.policy.wair.savings import savings_breakdown
    from engine.scan.pruning import FragmentScan

    scan = FragmentScan("q1", np.array([True, True]), np.array([False, True]),
                        np.array([0.25, 1.0]), np.array([40.0, 60.0]), ("a",))
    s = Settings(query_fixed_s=5.0, query_file_s=0.01, query_scan_bytes_per_s=100.0)
    b = savings_breakdown(2, [scan], [None], s)
    assert b.saving_cpu.tolist() == pytest.approx([0.306, 0.0])
    assert b.mean_query_seconds == pytest.approx(1.02)
    assert savings_breakdown(2, [scan], [None], Settings(scan_bytes_per_s=100.0)).saving_cpu.tolist() == \
        pytest.approx([0.3, 0.0])


def test_queries_on_a_table_measures_its_files_with_its_imported_queries(tmp_path, capsys):
    from plan_helpers import make_table

    home = tmp_path / "ws"
    settings = load_settings({"home": str(home)}, environ={})
    make_table(settings, "lineitem", n=4000, rows_per_file=250)  # 16 files, ship dates 1995-2001
    log = tmp_path / "q.jsonl"
    log.write_text("\n".join(json.dumps({
        "id": f"q{i}", "ts": f"2024-03-01T08:{i:02d}:00",
        "sql": f"SELECT sum(l_quantity) FROM lineitem WHERE l_shipdate >= DATE '199{5 + i % 4}-01-01' "
               f"AND l_shipdate < DATE '199{5 + i % 4}-07-01'"}) for i in range(6)) + "\n")
    api.import_workload(settings, "lineitem", str(log))
    assert main(["--home", str(home), "calibrate", "--queries-on", "lineitem", "--repeat", "1"]) == 0
    data = json.loads((home / CALIBRATION_FILE_NAME).read_text())
    assert data["queries"]["source"].startswith("table lineitem: 16 files, 6 of its queries")
    assert set(cq.QUERY_KEYS) <= set(data["rates"])
    # every query projects l_shipdate and l_quantity, over 1 .. all the files it keeps, and
    # its predicated column l_shipdate alone over half and all of them
    assert sorted({p["columns"] for p in data["queries"]["points"]}) == [1, 2]
    assert min(p["files"] for p in data["queries"]["points"]) == 1
    assert "query terms measured on table lineitem" in capsys.readouterr().out
