"""What-if on the user's own table: a simulated copy built from the
current snapshot's zonemaps and a stratified sample, the imported workload replayed (and
shifted by quantile) against NR, WAIR, DD, DD-EP and PAW."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from own_table_helpers import FILES, ROWS_PER_FILE, write_files, write_log
from engine import api
from engine.core.errors import InvalidParameterError
from engine.scan.pruning import analyze_fragment
from engine.sim.own_sample import read_partition_sample
from engine.sim.own_table import (DesignOnce, OwnTable, PawTreeOnly, anchor_sample, own_scenario, shift_fragments,
                                  simulate_own)
from engine.policy.paw import PawPolicy
from engine.workload.model import Range, ScanFragment

@pytest.fixture
def own(settings, tmp_path):
    api.register_table(settings, "t", str(write_files(tmp_path / "data")))
    api.import_workload(settings, "t", str(write_log(tmp_path / "log.jsonl")))
    return settings


def test_the_simulated_table_starts_as_the_real_files_with_their_zonemaps(own):
    snap = api.load_snapshot(own, "t")
    zm, types = snap.zonemaps(), dict(snap.schema.columns)
    cols = ["l_orderkey", "l_quantity", "l_shipdate", "l_commitdate"]
    sample = read_partition_sample(list(zm.paths), zm.rows, types, cols, 0.05, seed=1)
    assert sample.counts.tolist() == [20] * FILES  # 5 % of each 400-row file
    data = anchor_sample(sample, zm)
    table = OwnTable(snap.schema, data, {c: 1.0 for c in snap.schema.names}, 20, starts=sample.starts)
    table.ingest(0, sample.rows)
    sim, _ = table.zonemaps()
    assert len(sim) == FILES
    for c in cols:  # each simulated partition's zonemap is its file's, bound for bound
        assert np.array_equal(sim.columns[c].lo, zm.columns[c].lo), c
        assert np.array_equal(sim.columns[c].hi, zm.columns[c].hi), c


def test_the_sample_reads_one_row_group_of_a_file_or_the_whole_file(tmp_path):
    path = tmp_path / "groups.parquet"
    pq.write_table(pa.table({"k": pa.array(np.arange(4000, dtype=np.int64))}), path, row_group_size=1000)
    rows, types = np.array([4000]), {"k": "int"}
    one = read_partition_sample([str(path)], rows, types, ["k"], 0.05, seed=2)
    assert one.counts.tolist() == [200]
    # every sampled row comes from the same 1,000-row group
    assert len(set((one.data["k"] // 1000).astype(int).tolist())) == 1
    whole = read_partition_sample([str(path)], rows, types, ["k"], 0.05, seed=2, read="file")
    assert whole.counts.tolist() == [200] and len(set((whole.data["k"] // 1000).astype(int).tolist())) == 4
    # a group smaller than the file's share: the whole file is read
    most = read_partition_sample([str(path)], rows, types, ["k"], 0.5, seed=2)
    assert most.counts.tolist() == [2000] and len(set((most.data["k"] // 1000).astype(int).tolist())) == 4
    with pytest.raises(InvalidParameterError, match="sample_read"):
        read_partition_sample([str(path)], rows, types, ["k"], 0.05, read="pages")


def test_a_shifted_range_keeps_its_selectivity_by_quantile(own):
    snap = api.load_snapshot(own, "t")
    zm, types = snap.zonemaps(), dict(snap.schema.columns)
    sample = read_partition_sample(list(zm.paths), zm.rows, types, ["l_shipdate", "l_commitdate"], 1.0)
    f = ScanFragment("q", "t", ({"l_shipdate": Range(dt.date(1994, 1, 1), dt.date(1995, 1, 1))},),
                     ("l_shipdate", "l_quantity"))
    (g,) = shift_fragments([f], "l_shipdate", "l_commitdate", sample.data, types)
    assert g.query_id == "q~shift" and g.predicated_columns == ("l_commitdate",)
    assert g.columns == ("l_commitdate", "l_quantity")
    ship, commit = sample.data["l_shipdate"], sample.data["l_commitdate"]
    lo, hi = (float((d - dt.date(1970, 1, 1)).days) for d in (dt.date(1994, 1, 1), dt.date(1995, 1, 1)))
    r = g.boxes[0]["l_commitdate"]
    glo, ghi = (float((d - dt.date(1970, 1, 1)).days) for d in (r.min, r.max))
    share_before = np.mean((ship >= lo) & (ship <= hi))
    share_after = np.mean((commit >= glo) & (commit <= ghi))
    assert share_after == pytest.approx(share_before, abs=0.01)
    with pytest.raises(InvalidParameterError, match="same type"):
        shift_fragments([f], "l_shipdate", "l_quantity", sample.data, types)


def test_whatif_on_the_table_compares_the_policies_with_real_zonemaps(own):
    seen = []
    r = api.whatif_table(own, "t", batches=4, shift="auto", sample_rows=2400, progress=seen.append)
    assert r.shift == {"from": "l_shipdate", "to": "l_commitdate"}
    assert set(r.policies) == {"nr", "wair", "dd", "dd-ep", "paw", "pto"}
    assert r.sample["rows"] == 2400 and r.sample["files"] == FILES
    assert [p["period"] for p in r.scenario["periods"]] == [1, 2, 3]
    assert [p["queries"] for p in r.scenario["periods"]] == [48, 48, 48]
    nr = r.policies["nr"]
    assert nr["recluster_bytes"] == 0
    # NR reads, query by query, what the real snapshot's zonemaps let it read; only the
    # per-file byte widths are averaged
    assert r.check["ratio"] == pytest.approx(1.0, rel=0.02)
    # the same figure straight from the engine's pruning on the real table
    snap = api.load_snapshot(own, "t")
    real = sum(analyze_fragment(snap.zonemaps(), f).bytes_scanned
               for f in api.workload_fragments(own, "t"))
    assert r.check["real_zonemap_bytes"] == pytest.approx(real, rel=1e-9)
    for name, p in r.policies.items():
        assert p["total_bytes"] == pytest.approx(p["query_bytes"] + p["recluster_bytes"])
        assert len(p["batches"]) == 1 + 4 + 4
    # l_shipdate is badly clustered and every replayed query filters it: WAIR rewrites and
    # the replay's queries read less than on the untouched table
    def period_bytes(name: str, period: int) -> float:
        return sum(b["query_bytes"] for b in r.policies[name]["batches"] if b["period"] == period)

    assert r.policies["wair"]["recluster_bytes"] > 0
    assert period_bytes("wair", 2) < period_bytes("nr", 2)
    assert r.comparison["wair"]["cpu_reduction_vs_nr"] == pytest.approx(
        1 - r.policies["wair"]["cpu_seconds"] / nr["cpu_seconds"])
    assert any("sample" in n for n in r.estimated) and any("Text columns" not in n for n in r.estimated)
    assert seen and seen[-1]["policies"] == 6


def _own_scenario(settings, sample_rows: int = 2400, batches: int = 2):
    snap = api.load_snapshot(settings, "t")
    zm, types = snap.zonemaps(), dict(snap.schema.columns)
    cols = ["l_orderkey", "l_quantity", "l_shipdate", "l_commitdate"]
    sample = read_partition_sample(list(zm.paths), zm.rows, types, cols, sample_rows / (FILES * ROWS_PER_FILE))
    return own_scenario("t", snap.schema, zm, sample, api.workload_fragments(settings, "t"), 100, batches)


def test_a_zorder_design_with_a_file_size_is_replayed(own):
    """PTO's design names the executor's ``target_file_bytes``: the simulator cuts files at
    that size and the ordering never sees it (a Z-order design used to fail the layout's
    parameter check)."""
    scenario = _own_scenario(own)
    width = sum(scenario.dataset.widths.values())
    design = DesignOnce("zorder", ("l_shipdate", "l_commitdate"), target_file_bytes=int(50 * width))
    run = simulate_own(scenario, {"pto": design}, own)["pto"]
    rewrite = [b for b in run.batches if b.recluster_partitions]
    assert len(rewrite) == 1 and rewrite[0].period == 2 and rewrite[0].batch == 1
    # 2,400 sample rows cut at 50 rows a file
    assert rewrite[0].partitions == 2400 // 50


def test_paw_unpriced_designs_the_same_tree_and_replays_the_same(own):
    """The what-if's PAW skips only the pricing against the baselines: the tree in the
    proposal, every batch's bytes and the partitions are those of the registry's PAW."""
    scenario = _own_scenario(own, batches=2)
    plain = simulate_own(scenario, {"paw": PawPolicy()}, own)["paw"]
    fast_policy = PawTreeOnly()
    fast = simulate_own(scenario, {"paw": fast_policy}, own)["paw"]
    assert fast_policy.sampler_ is not None and not fast_policy.n_mbr  # the unpriced path ran
    assert [b.recluster_partitions for b in plain.batches] == [b.recluster_partitions for b in fast.batches]
    assert sum(b.recluster_partitions for b in fast.batches) == FILES
    assert [b.query_bytes for b in plain.batches] == [b.query_bytes for b in fast.batches]
    assert [b.partitions for b in plain.batches] == [b.partitions for b in fast.batches]


def test_design_paw_unpriced_fits_the_same_tree_without_the_baselines():
    """``price=False`` (the what-if's PAW) keeps the tree and drops only the comparison."""
    from engine.design.paw.designer import design_paw

    rng = np.random.default_rng(7)
    sample = {"x": rng.uniform(0, 100, 2000), "y": rng.uniform(0, 100, 2000)}
    history = [{"x": (10.0 * i, 10.0 * i + 15.0), "y": (0.0, 50.0)} for i in range(6)]
    kw = dict(table_rows=20_000, b_min_rows=1_000, delta=0.0, columns=("x", "y"))
    priced, bare = design_paw(sample, history, **kw), design_paw(sample, history, price=False, **kw)
    assert bare.tree.router_json() == priced.tree.router_json() and len(bare.tree.leaves_) > 1
    assert bare.costs == {} and set(priced.costs) >= {"paw", "qdtree", "kdtree", "lb_b", "lb"}
    assert bare.b_min_rows == priced.b_min_rows == 1_000


def test_pto_designs_on_a_row_sample_and_chooses_as_on_every_row():
    """``PtoConfig.max_design_rows`` (the what-if's PTO): the design's rows are a sample,
    the table's cardinality kept, and the choice is the full-table one; 0 is the paper's."""
    from engine.design.pto.data import TableData
    from engine.design.pto.optimizer import PtoConfig, design_rows, run

    rng = np.random.default_rng(1)
    n = 40_000
    t = TableData({"a": rng.integers(0, 40, n).astype(float), "d": np.sort(rng.uniform(0, 1e4, n))},
                  {"a": "int", "d": "float"}, n, n, n * 16)
    frags = [ScanFragment(f"q{i}", "t", ({"a": Range(i % 40, i % 40)},), ("a",)) for i in range(30)]
    frags += [ScanFragment(f"r{i}", "t", ({"d": Range(300.0 * i, 300.0 * i + 200)},), ("d",)) for i in range(10)]
    part = design_rows(t, PtoConfig(max_design_rows=8_000))
    assert 7_000 < part.n_rows < 9_000 and part.n_table == n and part.table_bytes == t.table_bytes
    assert design_rows(t, PtoConfig(max_design_rows=0)) is t and design_rows(t, PtoConfig()) is t
    full, capped = run(t, frags), run(t, frags, PtoConfig(max_design_rows=8_000))
    assert capped.sample.n_rows <= part.n_rows and capped.sample.n_table == n
    assert capped.partitions == full.partitions
    # Algorithm 1 ranks the sort schemes alike (Algorithm 2 on the sample, as its table)
    assert [s.columns for s in capped.sorts.scored] == [s.columns for s in full.sorts.scored]
    chose = [(r.choice.layout.partition, r.choice.layout.sort.kind, r.choice.layout.sort.columns)
             for r in (full, capped)]
    # the default open costs and ties within the model's fitting residual make one sort
    # on "a" in 256 KB files the choice
    assert chose[0] == chose[1] == (None, "sort", ("a",)), chose
    with pytest.raises(InvalidParameterError, match="max_design_rows"):
        PtoConfig(max_design_rows=-1)


def test_a_repeated_whatif_reuses_pto_and_dd_and_answers_the_same(own):
    kw = dict(batches=2, sample_rows=2400)
    ws = api.Workspace(own)  # the memos live in the workspace
    first = api.whatif_table(ws, "t", **kw)
    again = api.whatif_table(ws, "t", **kw)
    assert again.pto.get("reused") and again.dd_tuning.get("reused") and again.sample["reused"]
    assert not first.pto.get("reused") and not first.dd_tuning.get("reused")
    assert again.dd_tuning["chosen"] == first.dd_tuning["chosen"]
    for name, p in first.policies.items():
        assert again.policies[name]["total_bytes"] == p["total_bytes"], name
    assert set(again.timings["policies"]) == set(first.policies)
    assert "pto_design_s" in again.timings and "sample_s" in again.timings
    fresh = api.whatif_table(ws, "t", policies="nr,wair,dd", options=api.WhatIfOptions(reuse=False), **kw)
    assert not fresh.dd_tuning.get("reused") and not fresh.sample["reused"]
    assert fresh.policies["dd"]["total_bytes"] == first.policies["dd"]["total_bytes"]


def test_whatif_refuses_bad_input_in_one_line(own, tmp_path):
    with pytest.raises(InvalidParameterError, match="l_comment"):
        api.whatif_table(own, "t", shift="l_comment:l_shipdate")
    with pytest.raises(InvalidParameterError, match="unknown policy"):
        api.whatif_table(own, "t", policies="nr,bogus")
    with pytest.raises(InvalidParameterError, match="pto_design_read must be 'sample' or 'all'"):
        api.whatif_table(own, "t", options=api.WhatIfOptions(pto_design_read="rows"))
    api.register_table(own, "u", str(write_files(tmp_path / "other")))
    with pytest.raises(InvalidParameterError, match="no imported workload"):
        api.whatif_table(own, "u", policies="nr")
