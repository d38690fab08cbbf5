"""Real replay on a tiny TPC-H scenario: Spark ingestion and reclustering, DuckDB queries.

What genuinely holds, and is checked here:

* pruning is safe and the files hold exactly the scenario's rows: for every policy and
  query, DuckDB's count over the files that survive zonemap pruning equals a numpy
  brute-force count over every row ingested so far (the replay also recounts over all
  live files, ``check_all_files``, and fails on a mismatch);
* with the same cuts, the same files are pruned: with one file per batch (target rows
  above a batch's size), ingestion cuts exactly as the simulator does, so under NR each
  query scans as many files as the simulator's NR scans partitions. (Bytes differ: the
  simulator charges modelled widths per row, the replay the files' real column chunks;
  with more files per batch the cuts differ too: the simulator cuts near-equal chunks,
  ingestion exact ``target_rows`` files.)
"""

from __future__ import annotations

import json
import os

import numpy as np
import pyarrow.parquet as pq
import pytest

from engine.replay.runner import batch_table, ranks, replay_scenario, with_file_widths
from engine.sim.runner import compile_scenario, simulate_policies
from engine.sim.variants import scenario_policy
from engine.scenarios.presets import build_scenario
from engine.workspace import Workspace

pytestmark = pytest.mark.spark

OVERRIDES = {"periods": 2, "recluster_start": 2, "batches_per_period": 3, "max_gap_days": 30,
             "target_rows": 2000}


def _brute_count(scenario, cf, stop: int) -> int:
    """Rows among the first ``stop`` that match the compiled fragment (numpy, no files)."""
    data = scenario.dataset.data
    if cf.empty:
        return 0
    if not cf.boxes:
        return stop
    hit = np.zeros(stop, dtype=bool)
    for box in cf.boxes:
        m = np.ones(stop, dtype=bool)
        for b in box:
            v = data[b.column][:stop]
            if b.lo is not None:
                m &= (v >= b.lo) if b.lo_inc else (v > b.lo)
            if b.hi is not None:
                m &= (v <= b.hi) if b.hi_inc else (v < b.hi)
        hit |= m
    return int(hit.sum())


def test_replay_counts_and_nr_pruning_match_the_simulator(settings, spark, tmp_path):
    sc = build_scenario("tpch", rows=6000, seed=3, overrides=OVERRIDES)
    assert max(b.row_stop - b.row_start for b in sc.batches) <= sc.spec.target_rows
    table = batch_table(sc, sc.batches[1].row_start, sc.batches[1].row_stop)
    assert table.num_rows == sc.batches[1].row_stop - sc.batches[1].row_start
    assert table.column_names == sc.schema.names

    out = replay_scenario(settings, sc, {"nr": scenario_policy("nr", sc), "nn": scenario_policy("nn", sc)},
                          spark, str(tmp_path / "replay"), queries="all", check_all_files=True,
                          store=Workspace(settings).tables)

    compiled = compile_scenario(sc)
    stop_of = {b.index: b.row_stop for b in sc.batches}
    n_queries = sum(len(b.fragments) for b in sc.batches)
    for name, rec in out.items():
        assert len(rec.queries) == n_queries
        for q in rec.queries:
            assert q.rows == _brute_count(sc, compiled[q.query_id], stop_of[q.batch]), (name, q.query_id)
            if q.files_scanned:  # DuckDB's own profile was read back
                assert q.duckdb_seconds > 0 and q.duckdb_bytes_read > 0, (name, q.query_id)
    assert not out["nr"].reclusters
    assert out["nn"].reclusters and all(r.bytes_read > 0 and r.bytes_written > 0 for r in out["nn"].reclusters)
    # each plan's executor CPU time and spill bytes are carried from the executor's result
    assert all(r.cpu_seconds > 0 and r.memory_spilled >= 0 and r.disk_spilled >= 0
               for r in out["nn"].reclusters)

    scanned: dict[str, int] = {}

    def observe(batch, fragment, table, cost):
        scanned[fragment.query_id] = cost.scanned

    simulate_policies(sc, {"nr": scenario_policy("nr", sc)}, settings, observer=observe)
    real = {q.query_id: q.files_scanned for q in out["nr"].queries}
    assert real == scanned
    assert any(q.files_scanned < q.files_total for q in out["nr"].queries)  # pruning happened
    # NN sorts each new batch: it never scans more files than NR (same files before P2)
    nr_files = sum(q.files_scanned for q in out["nr"].queries)
    assert sum(q.files_scanned for q in out["nn"].queries) <= nr_files
    assert ranks({"a": 2.0, "b": 1.0}) == {"a": 2, "b": 1}

    # --file-widths: each column weighs, per row, what the ingested files hold (footers
    # read back here with pyarrow), and the simulator's NR then reads the files' bytes
    sim_sc, widths = with_file_widths(sc, str(tmp_path / "replay"))
    with open(os.path.join(tmp_path, "replay", "batches", "ingested.json")) as fh:
        files = [p for ps in json.load(fh)["batches"].values() for p in ps]
    chunks: dict[str, int] = {}
    for path in files:
        meta = pq.ParquetFile(path).metadata
        for g in range(meta.num_row_groups):
            for i in range(meta.num_columns):
                col = meta.row_group(g).column(i)
                chunks[col.path_in_schema] = chunks.get(col.path_in_schema, 0) + col.total_compressed_size
    rows = sc.batches[-1].row_stop
    assert widths == pytest.approx({c: chunks[c] / rows for c in sc.schema.names})
    assert sim_sc.dataset.widths == widths and sc.dataset.widths != widths
    sim_bytes: dict[str, float] = {}

    def observe_bytes(batch, fragment, table, cost):
        sim_bytes[fragment.query_id] = cost.bytes

    simulate_policies(sim_sc, {"nr": scenario_policy("nr", sim_sc)}, settings,
                      observer=observe_bytes)
    real_bytes = sum(q.zonemap_bytes for q in out["nr"].queries)
    assert sum(sim_bytes.values()) == pytest.approx(real_bytes, rel=0.05)
