"""A real replay split by policy (``--policies``) is merged and ranked across its pieces
(``python -m bench.real_replay --merge``); files of different scenarios are refused."""

from __future__ import annotations

import csv

from bench.real_replay.__main__ import main

FIELDS = ["preset", "rows", "periods", "seed", "policy", "label", "sim_total_bytes", "real_total_bytes",
          "real_query_duckdb_bytes", "real_recluster_bytes", "real_total_seconds", "sim_total_seconds",
          "sim_query_seconds", "real_query_wall_seconds", "sim_recluster_seconds",
          "real_recluster_wall_seconds", "sim_vs_real_seconds"]


def _piece(path, rows, scenario_rows=1000):
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        w.writeheader()
        for policy, sim_b, real_b, duck_b, rec_b, real_s, sim_s in rows:
            w.writerow({"preset": "tpch", "rows": scenario_rows, "periods": 2, "seed": 0,
                        "policy": policy, "label": policy.upper(), "sim_total_bytes": sim_b,
                        "real_total_bytes": real_b, "real_query_duckdb_bytes": duck_b,
                        "real_recluster_bytes": rec_b, "real_total_seconds": real_s,
                        "sim_total_seconds": sim_s, "sim_query_seconds": sim_s,
                        "real_query_wall_seconds": real_s, "sim_recluster_seconds": 0,
                        "real_recluster_wall_seconds": 0, "sim_vs_real_seconds": sim_s / real_s - 1})


def test_pieces_are_ranked_across_each_other(tmp_path, capsys):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    _piece(a, [("wair", 10, 30, 5, 20, 9.0, 8.0)])
    _piece(b, [("nr", 40, 20, 60, 0, 7.0, 12.0), ("dd", 20, 30, 40, 5, 8.0, 10.0)])
    assert main(["--merge", str(a), str(b), "--out", str(tmp_path / "m")]) == 0
    with open(tmp_path / "m" / "real_replay.csv", newline="") as fh:
        got = {r["policy"]: r for r in csv.DictReader(fh)}
    assert set(got) == {"wair", "nr", "dd"}
    # simulated bytes 10 < 20 < 40; real bytes 20 < 30 = 30 (a tie shares the better rank)
    assert [got[p]["rank_sim"] for p in ("wair", "dd", "nr")] == ["1", "2", "3"]
    assert [got[p]["rank_real_bytes"] for p in ("nr", "wair", "dd")] == ["1", "2", "2"]
    # DuckDB bytes + recluster bytes: wair 25 < dd 45 < nr 60
    assert [got[p]["rank_real_duckdb_bytes"] for p in ("wair", "dd", "nr")] == ["1", "2", "3"]
    assert [got[p]["rank_real_seconds"] for p in ("nr", "dd", "wair")] == ["1", "2", "3"]
    assert [got[p]["rank_sim_seconds"] for p in ("wair", "dd", "nr")] == ["1", "2", "3"]
    assert "WAIR" in capsys.readouterr().out


def test_pieces_of_different_scenarios_are_refused(tmp_path, capsys):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    _piece(a, [("wair", 10, 30, 5, 20, 9.0, 8.0)])
    _piece(b, [("nr", 40, 20, 60, 0, 7.0, 12.0)], scenario_rows=2000)
    assert main(["--merge", str(a), str(b), "--out", str(tmp_path / "m")]) == 2
    assert "different scenarios" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()
