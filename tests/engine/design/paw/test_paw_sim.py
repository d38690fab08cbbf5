"""PAW in the simulator and the what-if API: leaf starts, the sampling hook, period starts."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from engine import api
from engine.core.config import Settings
from engine.core.errors import InvalidParameterError
from engine.design.paw import PawTree
from engine.design.paw.boxes import DBox
from engine.design.paw.descriptors import row_group_cost
from engine.policy.base import PeriodInfo, PlanGroup, Policy
from engine.policy.costmodel import scan_seconds
from engine.policy.paw import PawPolicy
from engine.policy.registry import make_sim_policy
from engine.scenarios.presets import build_scenario
from engine.sim.apply import apply_groups, dataset_sampler, order_rows
from engine.sim.driver import Pending
from engine.sim.scan import compile_fragment, query_cost
from engine.sim.table import SimTable
from engine.table.model import TableSchema
from engine.workload.model import Range, ScanFragment

B_MIN = 100


def grid_data() -> dict[str, np.ndarray]:
    g = np.meshgrid(np.arange(100.0), np.arange(100.0), indexing="ij")
    return {"x": g[0].ravel(), "y": g[1].ravel()}


def test_order_rows_returns_the_executors_files_of_each_paw_leaf():
    """The §5 grid case (GP sizes 100 / 100 / 112, IP 9,688), files of 100 rows: each leaf is
    cut on its own into full files and one remainder, as the executor writes them."""
    data = grid_data()
    queries = [{"x": (10, 19), "y": (10, 19)}, {"x": (50, 59), "y": (50, 59)}, {"x": (80, 84), "y": (10, 19)}]
    tree = PawTree(b_min=B_MIN, delta=0.0, psi="printed").fit(data, queries)
    table = SimpleNamespace(data=data, types={"x": "float", "y": "float"}, target_rows=B_MIN)
    rows = np.random.default_rng(0).permutation(10_000)
    ordered, starts = order_rows(table, rows, "paw", ("x", "y"), {"tree": tree.router_json()})
    assert np.array_equal(np.sort(ordered), np.arange(10_000))  # every row exactly once
    leaf = tree.leaf_of({c: a[ordered] for c, a in data.items()})
    bounds = np.append(starts, len(ordered))
    per_leaf: dict[int, list[int]] = {}
    for a, b in zip(bounds[:-1], bounds[1:]):
        (one,) = set(leaf[a:b].tolist())  # a segment (a file) holds one leaf
        per_leaf.setdefault(one, []).append(int(b - a))
    assert sorted(sum(v) for v in per_leaf.values()) == sorted(lf.rows for lf in tree.leaves_) == [100, 100, 112, 9688]
    assert sorted(per_leaf.values(), key=len) == [[100], [100], [100, 12], [100] * 96 + [88]]


def test_sim_table_cuts_paw_leaves_on_their_own():
    """SimTable.replace with PAW leaf starts: no partition straddles two leaves."""
    data = grid_data()
    queries = [{"x": (10, 19), "y": (10, 19)}, {"x": (50, 59), "y": (50, 59)}, {"x": (80, 84), "y": (10, 19)}]
    tree = PawTree(b_min=B_MIN, delta=0.0, psi="printed").fit(data, queries)
    table = SimTable(TableSchema((("x", "float"), ("y", "float"))), data, {"x": 8, "y": 8}, 1000)
    old = table.ingest(0, 10_000)
    ordered, starts = order_rows(table, table.gather(old), "paw", ("x", "y"), {"tree": tree.router_json()})
    new = table.replace(old, ordered, starts)
    assert len(new) == 1 + 1 + 1 + 10  # ceil(leaf rows / 1000) files per leaf
    for pid in new:
        assert len(set(tree.leaf_of({c: a[table.rows_of(int(pid))] for c, a in data.items()}).tolist())) == 1
    assert table.total_rows() == 10_000


def test_policy_hook_defaults_to_a_no_op_and_paw_binds_it():
    class Silent(Policy):
        name = "silent"

        def propose(self, ctx):
            return None

    assert Silent().bind_sampler(lambda *a: {}) is None
    paw = PawPolicy()
    sampler = dataset_sampler(grid_data())
    paw.bind_sampler(sampler)
    assert paw.sampler_ is sampler


def test_dataset_sampler_refuses_rows_it_does_not_have():
    s = dataset_sampler({"x": np.arange(10.0)})
    with pytest.raises(InvalidParameterError, match="rows beyond 10"):
        s(SimpleNamespace(rows=np.array([11])), ["x"], 5, 0)
    with pytest.raises(InvalidParameterError, match="'y'"):
        s(SimpleNamespace(rows=np.array([3])), ["y"], 5, 0)


def test_paw_is_period_driven_in_the_simulator():
    """After begin_period, propose is silent; before_queries repartitions once per period start."""
    paw = make_sim_policy("paw", {}, partitions_per_batch=1, first_key="x")
    assert isinstance(paw, PawPolicy)
    paw.begin_period(PeriodInfo(period=2, recluster=False, oracle_layout="sort", oracle_columns=("x",)))
    assert paw.propose(SimpleNamespace()) is None
    assert "period starts" in paw.last_decision["reason"]
    assert paw.before_queries(SimpleNamespace()) is None  # no reclustering period: nothing due


def test_what_if_lists_paw_and_runs_it(settings):
    assert {"name": "paw", "label": "PAW"} in api.simulation_policies()
    scenario = build_scenario("tpch", rows=3000, seed=1)
    runs, _ = api.simulate_scenario(settings, scenario, ["nr", "qd", "paw"], tune=False)
    paw, qd, nr = runs["paw"], runs["qd"], runs["nr"]
    paw_batches = [(b.period, b.batch) for b in paw.batches if b.recluster_layouts.get("paw")]
    qd_batches = [(b.period, b.batch) for b in qd.batches if b.recluster_layouts.get("qdtree")]
    assert paw_batches and paw_batches == qd_batches  # a full repartition at each period start, like QD
    assert all(batch == 1 for _, batch in paw_batches)
    assert paw.totals()["query_bytes"] < nr.totals()["query_bytes"]
    # the rewrite is charged like QD's (the same rows are read and written)
    assert paw.totals()["recluster_bytes"] == pytest.approx(qd.totals()["recluster_bytes"], rel=0.01)


def test_policy_delta_words():
    assert PawPolicy().delta == "auto"  # the paper's δ′ (§IV-E, Def. 2) stays the default
    assert PawPolicy().n_mbr == 0  # plugins off by default, as in the paper's experiments
    assert PawPolicy(delta="Auto-Nearest").delta == "auto-nearest"
    assert PawPolicy(delta="0.02").delta == 0.02
    with pytest.raises(InvalidParameterError, match="auto, auto-nearest"):
        PawPolicy(delta="lots")


def _paw_grid_table(n_mbr: int) -> SimTable:
    """The §5 grid (GP sizes 100 / 100 / 112, IP 9,688) rewritten by a ``paw`` plan group
    through the simulator's executor, one file per leaf, with ``n_mbr`` STR row groups."""
    data = grid_data()
    queries = [{"x": (10, 19), "y": (10, 19)}, {"x": (50, 59), "y": (50, 59)}, {"x": (80, 84), "y": (10, 19)}]
    tree = PawTree(b_min=B_MIN, delta=0.0, psi="printed").fit(data, queries)
    table = SimTable(TableSchema((("x", "float"), ("y", "float"))), data, {"x": 8, "y": 8}, 10_000)
    old = table.ingest(0, 10_000)
    params = {"tree": tree.router_json(), **({"n_mbr": n_mbr} if n_mbr else {})}
    group = PlanGroup(tuple(table.path(int(p)) for p in old), "paw", ("x", "y"), layout_params=params)
    apply_groups(table, [group], Settings())
    return table


def test_simulator_prices_paw_str_row_groups_by_the_row_groups_met():
    """Decision 9 in the simulator: a query inside the first half of GP 1 (x 10-14, y 10-19).
    With 1 MBR per file it reads GP 1's file (100 rows) and the IP's (9,688 rows, its
    zonemap is the whole grid): 9,788 rows, the §5 overfitting figure. With 2 STR row groups
    per file, GP 1's are x 10-14 and x 15-19 (50 rows each) and the IP's are its x-sorted
    halves (4,844 rows each, x 0..49 and 49..99): it reads 50 + 4,844 = 4,894 rows, i.e.
    4,894 x 16 bytes over columns x and y (8 bytes each)."""
    frag = ScanFragment("q", "t", ({"x": Range(10.0, 14.0), "y": Range(10.0, 19.0)},), ("x", "y"))
    cf = compile_fragment(frag, {"x": "float", "y": "float"})
    one, two = _paw_grid_table(0), _paw_grid_table(2)
    assert one.row_group_zonemaps() is None
    cost_one = query_cost(one.zonemaps()[0], cf, None, one.row_group_zonemaps())
    assert (cost_one.bytes, cost_one.scanned, cost_one.total) == (9_788 * 16, 2, 4)
    rg_zm, rg_pos = two.row_group_zonemaps()
    assert len(rg_zm) == 8 and sorted(rg_zm.rows.tolist()) == [50, 50, 50, 50, 56, 56, 4_844, 4_844]
    cost_two = query_cost(two.zonemaps()[0], cf, None, (rg_zm, rg_pos))
    assert (cost_two.bytes, cost_two.scanned, cost_two.total) == (4_894 * 16, 2, 4)
    # the same numbers as the PAW bench's physical check (row_group_cost), not a second model
    lo = np.column_stack([rg_zm.columns[c].lo for c in ("x", "y")])
    hi = np.column_stack([rg_zm.columns[c].hi for c in ("x", "y")])
    assert row_group_cost(lo, hi, rg_zm.rows, rg_pos, DBox.closed([10, 10], [14, 19])) == (2, 4_894.0)
    # every row kept exactly once, each file's rows are its row groups'
    assert np.array_equal(np.sort(two.gather(two.live_pids)), np.arange(10_000))
    assert np.bincount(rg_pos, weights=rg_zm.rows).tolist() == two.zonemaps()[0].rows.tolist()


def test_feedback_measures_a_paw_rewrite_by_its_row_groups():
    """The simulator's feedback (Pending) prices the new files by their row groups too: on the
    §5 grid, rewriting the 1-MBR layout into the 2-row-group one saves (9,788 − 4,894) × 16
    bytes on the query of the previous test."""
    frag = ScanFragment("q", "t", ({"x": Range(10.0, 14.0), "y": Range(10.0, 19.0)},), ("x", "y"))
    cf = compile_fragment(frag, {"x": "float", "y": "float"})
    one, two = _paw_grid_table(0), _paw_grid_table(2)
    new = two.live_pids
    assert two.row_group_zonemaps_of(np.array([0])) is None  # the ingested partition has none
    settings = Settings(scan_bytes_per_s=1e6)
    pending = Pending(0.0, 0.0, one.zonemaps()[0], two.zonemaps_of(new), target=1,
                      old_row_groups=one.row_group_zonemaps(), new_row_groups=two.row_group_zonemaps_of(new))
    pending.add(cf, settings)
    assert pending.saved_s == pytest.approx(scan_seconds((9_788 - 4_894) * 16, settings))


def test_policies_scans_charge_the_same_row_groups_as_the_simulators_query_cost():
    """What a policy sees (``ctx.scans``, ``engine.scan.rowgroups``) with ``prune_row_groups``:
    the query above reads 4,894 rows (2 of the 8 row groups) of the 2-row-group grid, exactly
    what the simulator charges; without the setting, the file-level 9,788."""
    from engine.scan.pruning import analyze_fragment
    from engine.scan.rowgroups import RowGroupMaps, refine
    from engine.sim.runner import LazyScans, ScanCache

    frag = ScanFragment("q", "t", ({"x": Range(10.0, 14.0), "y": Range(10.0, 19.0)},), ("x", "y"))
    two = _paw_grid_table(2)
    zm, live = two.zonemaps()
    rg_zm, rg_pos = two.row_group_zonemaps()
    groups = RowGroupMaps.build(zm, rg_zm, rg_pos)
    assert (len(groups), groups.total) == (8, 8)
    scan = refine(analyze_fragment(zm, frag), groups, frag, zm.rows)
    assert (scan.bytes_scanned, scan.row_groups, scan.scanned_count) == (4_894 * 16, (2, 8), 2)
    assert scan.bytes_scanned == query_cost(zm, compile_fragment(frag, {"x": "float", "y": "float"}),
                                            None, (rg_zm, rg_pos)).bytes
    for on, want in ((True, 4_894 * 16), (False, 9_788 * 16)):
        run = SimpleNamespace(table=two, scans=ScanCache(two), settings=Settings(prune_row_groups=on),
                              read_bytes=lambda z, cols: z.read_bytes(list(cols)))
        (got,) = LazyScans(run, zm, live, [frag])
        assert got.bytes_scanned == want
