"""WairPolicy decisions on hand-made windows: alpha, cost limit, credit, beta, window, k_max.

Setup used throughout: partitions of 100 B, scan 100 B/s and sort 100 B/s with plenty of
memory, so reclustering one partition costs 1 s read + 1 s sort = 2 CPU-s. A query that
scans only boundary partitions (no measured duration) saves (1 - u) * 100 / 100 = (1 - u)
CPU-s per partition (equation 3 with t_read = size_read(Q) / scan rate). Neighbouring
partitions overlap on ``a`` (a lone partition, or partitions whose key ranges are already
disjoint, cannot change a zonemap when rewritten: Algorithm 1's guard), so the smallest
plan rewrites two partitions.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pytest

from engine.core.config import Settings
from engine.core.errors import InvalidParameterError
from engine.policy.base import Feedback, PolicyContext
from engine.policy.registry import make_policy
from engine.policy.wair import WairParams, WairPolicy
from engine.scan.pruning import FragmentScan
from engine.table.model import ColumnStats, Partition, TableSchema, ZoneMaps
from engine.workload.model import Range, ScanFragment

S = Settings(scan_bytes_per_s=100.0, sort_bytes_per_s=100.0, memory_budget_bytes=10**9,
             price_per_cpu_hour=36.0, target_rows=10)  # the table's files: 10 rows each
SCHEMA = TableSchema((("a", "int"), ("b", "int")))
TWO = {1: 0.5, 2: 0.5}  # two overlapping boundary partitions at utilization 0.5


def zonemaps(n: int) -> ZoneMaps:
    """Partition i holds a in [10 i, 10 i + 19] and b in [n - i, n - i + 5]."""
    parts = [Partition(f"p{i:03d}.parquet", 10, 100,
                       {"a": ColumnStats(10 * i, 10 * i + 19), "b": ColumnStats(n - i, n - i + 5)})
             for i in range(n)]
    return ZoneMaps.from_partitions(SCHEMA, parts)


def ctx(n: int, util: Sequence[float] | dict[int, float], queries: int,
        column: str = "a", queries_seen: int = 0) -> PolicyContext:
    """``queries`` identical fragments on ``column``; ``util`` maps boundary partition -> u."""
    zm = zonemaps(n)
    util = dict(enumerate(util)) if not isinstance(util, dict) else util
    scanned = np.zeros(n, dtype=bool)
    u = np.zeros(n)
    for i, v in util.items():
        scanned[i], u[i] = True, v
    frags, scans = [], []
    for q in range(queries):
        frags.append(ScanFragment(f"q{q}", "t", ({column: Range(0, 10**6)},), ("a", "b")))
        scans.append(FragmentScan(f"q{q}", scanned, np.zeros(n, dtype=bool), u,
                                  zm.bytes.astype(float), (column,)))
    return PolicyContext("t", "s1", zm, frags, scans, S, queries_seen=queries_seen)


def test_propose_one_group_with_costs_and_break_even() -> None:
    # 2 partitions, u = 0.5, 5 queries: saving 2 x 2.5 CPU-s > cost 2 x 2 CPU-s
    prop = WairPolicy().propose(ctx(3, TWO, 5))
    assert prop is not None
    assert prop.partitions == ("p001.parquet", "p002.parquet")
    g = prop.groups[0]
    assert (g.layout, g.columns) == ("sort", ("a",))
    assert "2 boundary partitions of a queries" in g.reason
    assert prop.estimated_cost.cpu_seconds == pytest.approx(4.0)
    assert prop.estimated_cost.money == pytest.approx(4.0 / 3600 * 36.0)
    assert prop.predicted_saving["cpu_seconds"] == pytest.approx(5.0)
    assert prop.predicted_saving["bytes"] == pytest.approx(2 * 5 * 50.0)
    assert prop.predicted_saving["window_queries"] == 5
    assert prop.details["loss_cpu_s"] == 0.0  # the queries cover every value
    assert prop.break_even_queries == pytest.approx(4.0 / 1.0)  # 1 CPU-s saved per query
    assert prop.details["k_max"] == 10**9 // 100  # memory budget / median partition
    assert prop.curve[0] == (1, pytest.approx(2.0 - 2.5))
    assert prop.details["top_partitions"][0]["path"] == "p001.parquet"


def test_alpha_blocks_a_marginal_plan() -> None:
    c = ctx(3, TWO, 5)  # saving 5 vs cost 4
    assert WairPolicy(alpha=1.0).propose(c) is not None
    assert WairPolicy(alpha=0.5).propose(c) is not None
    strict = WairPolicy(alpha=1.5)  # needs 6.0
    assert strict.propose(c) is None
    assert strict.last_decision["action"] == "none"
    assert "net cost" in strict.last_decision["reason"]


def test_cost_limit_blocks_and_counts_debt() -> None:
    c = ctx(3, TWO, 5)  # cost 4
    assert WairPolicy(cost_limit=4.0).propose(c) is None  # 0 + 4 < 4 fails (eq. 2)
    assert WairPolicy(cost_limit=4.01).propose(c) is not None
    pol = WairPolicy(cost_limit=5.5)
    pol.observe(Feedback(predicted_saving_cpu_s=2.5, realized_saving_cpu_s=1.0,
                         recluster_cost_cpu_s=2.0, queries=5))
    assert pol.state()["cost_total"] == 2.0
    assert pol.propose(c) is not None  # debt 1 + 4 < 5.5
    pol.observe(Feedback(2.5, 0.0, 2.0, 5))  # debt 3
    assert pol.propose(c) is None
    assert "cost limit" in pol.last_decision["reason"]
    assert pol.last_decision["debt_cpu_s"] == pytest.approx(3.0)


def test_cost_limit_debt_is_counted_over_the_window() -> None:
    # equation 2 sums the costs and savings of the window W, not of the whole history:
    # the two runs booked at query 0 leave the 50-query window by query 60
    c0, c60 = ctx(3, TWO, 5, queries_seen=0), ctx(3, TWO, 5, queries_seen=60)
    pol = WairPolicy(cost_limit=5.5, adaptive_window=False)
    pol.advance(0)
    pol.observe(Feedback(2.5, 0.0, 2.0, 5))
    pol.observe(Feedback(2.5, 0.0, 2.0, 5))  # debt 4 within the window
    assert pol.propose(c0) is None and "cost limit" in pol.last_decision["reason"]
    assert pol.propose(c60) is not None  # the window (10..60) holds no run: debt 0
    assert pol.last_decision["debt_cpu_s"] == 0.0
    assert pol.state_.debt == pytest.approx(4.0)  # the whole history, for display
    # realized savings larger than the costs leave room (no clamp at 0)
    rich = WairPolicy(cost_limit=4.5)
    rich.advance(0)
    rich.observe(Feedback(2.5, 3.0, 2.0, 5))  # debt -1: -1 + 4 < 4.5
    assert rich.propose(c0) is not None


def test_credit_budget_equation5() -> None:
    # c = 0.1 CPU-s per query: 10 queries seen -> credit 1 < cost 4; 40 -> credit 4 >= 4
    cpu = {"credit_allowance_c": 0.1, "credit_unit": "cpu_s"}
    assert WairPolicy(**cpu).propose(ctx(3, TWO, 5, queries_seen=10)) is None
    assert WairPolicy(**cpu).propose(ctx(3, TWO, 5, queries_seen=40)) is not None
    pol = WairPolicy(**cpu)
    assert pol.propose(ctx(3, TWO, 5, queries_seen=10)) is None
    assert "credit" in pol.last_decision["reason"]
    pol.observe(Feedback(5.0, 5.0, 2.0, 5))  # net realized +3: credit 5 - 2 + 0.1 * 10 = 4
    assert pol.propose(ctx(3, TWO, 5, queries_seen=10)) is not None


def test_credit_allowance_in_mean_query_costs() -> None:
    # each query reads the two 100 B partitions: 2 CPU-s at 100 B/s, the window's mean.
    # c = 0.1 mean queries = 0.2 CPU-s per query: 10 seen -> 2 < cost 4; 20 -> 4 >= 4
    assert WairPolicy(credit_allowance_c=0.1).propose(ctx(3, TWO, 5, queries_seen=10)) is None
    pol = WairPolicy(credit_allowance_c=0.1)
    assert pol.propose(ctx(3, TWO, 5, queries_seen=20)) is not None
    assert pol.last_decision["mean_query_cpu_s"] == pytest.approx(2.0)
    assert pol.last_decision["credit_cpu_s"] == pytest.approx(4.0)


def test_a_lone_partition_or_a_sorted_run_is_not_rewritten() -> None:
    # Algorithm 1's guard: one partition in, one file out, the same zonemap
    lone = WairPolicy()
    assert lone.propose(ctx(3, {1: 0.1}, 20)) is None
    assert "can change a zonemap" in lone.last_decision["reason"]
    # partitions 0 and 2 of ``zonemaps``: a in [0, 19] and [20, 39], already disjoint
    sorted_run = WairPolicy()
    assert sorted_run.propose(ctx(3, {0: 0.1, 2: 0.1}, 20)) is None
    assert sorted_run.last_decision["dropped_unchangeable"] == 2


def losses_ctx(b_queries: int) -> PolicyContext:
    """b is clustered (partition i: b in [n - i, n - i + 5], disjoint every 6); a sort of
    20 partitions on a mixes b: queries on a narrow b range then read more files. 8
    a-queries save 0.5 CPU-s per partition each (80 in all; cost 2 x 20 = 40); each b-query
    loses 2 CPU-s."""
    n = 20
    zm = zonemaps(n)
    frags, scans = [], []
    util = np.full(n, 0.5)
    for q in range(8):
        frags.append(ScanFragment(f"a{q}", "t", ({"a": Range(0, 10**6)},), ("a", "b")))
        scans.append(FragmentScan(f"a{q}", np.ones(n, dtype=bool), np.zeros(n, dtype=bool),
                                  util, zm.bytes.astype(float), ("a",)))
    for q in range(b_queries):
        frags.append(ScanFragment(f"b{q}", "t", ({"b": Range(n - 3, n - 3)},), ("a", "b")))
        one = np.zeros(n, dtype=bool)
        one[3] = True
        scans.append(FragmentScan(f"b{q}", one, np.zeros(n, dtype=bool), np.ones(n),
                                  zm.bytes.astype(float), ("b",)))
    return PolicyContext("t", "s1", zm, frags, scans, S)


def test_a_plan_whose_losses_exceed_its_saving_is_not_proposed() -> None:
    c = losses_ctx(60)
    gains_only = WairPolicy(window=100, losses="off", hybrid=False, fixed_key="a")
    assert gains_only.propose(c) is not None
    net = WairPolicy(window=100, hybrid=False, fixed_key="a")
    assert net.propose(c) is None
    d = net.last_decision
    assert "net of losses" in d["reason"] and "is not positive" in d["reason"]
    assert d["loss_cpu_s"] > d["saving_cpu_s"]
    lost = {r["column"]: r for r in d["regressions"]}
    assert set(lost) == {"b"} and lost["b"]["queries"] == 60
    assert lost["b"]["depth_after"] > lost["b"]["depth_before"]


def test_beta_bonus_turns_a_loss_into_a_plan() -> None:
    c = ctx(3, TWO, 3)  # saving 2 x 1.5 < cost 2 x 2
    assert WairPolicy().propose(c) is None
    # bonus = beta * 3 queries * (1 - 0.5) estimated extra pruned partitions, per partition
    assert WairPolicy(beta=0.3).propose(c) is None  # 2 x (1.5 + 0.45) = 3.9 < 4
    prop = WairPolicy(beta=1.0).propose(c)  # 2 x (1.5 + 1.5) = 6.0 > 4
    assert prop is not None
    assert prop.predicted_saving["cpu_seconds"] == pytest.approx(3.0)
    assert prop.predicted_saving["bonus_cpu_seconds"] == pytest.approx(3.0)
    assert prop.curve[0][1] == pytest.approx(2.0 - 3.0)


def test_feedback_adapts_the_window_when_its_window_of_queries_completes() -> None:
    # the per-window rule itself is covered in tests/engine/policy/wair/test_wair_window.py
    pol = WairPolicy(window=50, min_window=10, max_window=150)
    pol.advance(0)
    pol.observe(Feedback(1.0, 2.0, 0.5, 10))  # realized > predicted: stable
    assert pol.window_size == 50  # not before the window of 50 queries completes
    pol.advance(49)
    assert pol.window_size == 50
    pol.advance(50)
    assert pol.window_size == 100
    fixed = WairPolicy(adaptive_window=False)
    fixed.advance(0)
    fixed.observe(Feedback(1.0, 2.0, 0.5, 10))
    fixed.advance(500)
    assert fixed.window_size == 50


def test_propose_looks_only_at_the_last_window_size_fragments() -> None:
    c = ctx(3, {1: 0.0, 2: 0.0}, 6)  # each query saves 1 CPU-s on p001 and on p002
    prop = WairPolicy(window=3, min_window=1).propose(c)
    assert prop is not None
    assert prop.predicted_saving["window_queries"] == 3
    assert prop.predicted_saving["cpu_seconds"] == pytest.approx(6.0)


def test_k_max_splits_150_partitions_into_disjoint_chunks() -> None:
    rng = np.random.default_rng(3)
    n = 150
    util = dict(enumerate(rng.uniform(0.0, 0.3, n)))  # ranks differ from key order
    prop = WairPolicy(k_max=64).propose(ctx(n, util, 3))
    assert prop is not None
    sizes = [len(g.partitions) for g in prop.groups]
    assert sizes == [64, 64, 22]
    allp = [p for g in prop.groups for p in g.partitions]
    assert sorted(allp) == [f"p{i:03d}.parquet" for i in range(n)]  # each exactly once
    # chunks of one group cover neighbouring, disjoint ranges of the key
    firsts = [[int(p[1:4]) for p in g.partitions] for g in prop.groups]
    assert max(firsts[0]) < min(firsts[1]) and max(firsts[1]) < min(firsts[2])
    assert all("chunk" in g.reason for g in prop.groups)
    # cost: two 6400 B chunks + one 2200 B chunk, 2 CPU-s per 100 B
    assert prop.estimated_cost.cpu_seconds == pytest.approx(2.0 * n)


def test_ablations_fixed_key_and_fixed_partitions() -> None:
    c = ctx(20, {i: 0.5 for i in range(20)}, 2)  # saving 1 per partition < cost 2: no plan
    assert WairPolicy().propose(c) is None
    fw = WairPolicy(fixed_partitions_per_batch=5).propose(c)
    assert fw is not None and len(fw.partitions) == 5
    fk = WairPolicy(fixed_key="b", fixed_partitions_per_batch=20).propose(c)
    assert fk is not None and {g.columns for g in fk.groups} == {("b",)}
    with pytest.raises(InvalidParameterError, match="fixed_key 'zz'"):
        WairPolicy(fixed_key="zz").propose(c)


def test_no_candidates_says_why() -> None:
    pol = WairPolicy()
    assert pol.propose(ctx(4, {}, 3)) is None
    assert "no boundary partition" in pol.last_decision["reason"]


def test_state_round_trip_and_params_json() -> None:
    pol = WairPolicy(window=40, credit_allowance_c=0.5)
    pol.advance(0)
    pol.observe(Feedback(1.0, 2.0, 0.7, 12))
    pol.advance(40)
    state = pol.state()
    assert state["window_size"] == 80 and state["params"]["cost_limit"] is None
    other = WairPolicy(window=40)
    other.load_state(state)
    assert other.window_size == 80
    assert other.state()["realized_total"] == 2.0 and other.state()["runs"] == 1
    params = WairParams.from_json(pol.params.to_json())
    assert params == pol.params and math.isinf(params.cost_limit)


@pytest.mark.parametrize("kwargs,match", [
    ({"alpha": 0.0}, "alpha"), ({"beta": -1.0}, "beta"), ({"k_max": 0}, "k_max"),
    ({"window": 5}, "window"), ({"cost_limit": 0.0}, "cost_limit"),
    ({"credit_allowance_c": -1.0}, "credit_allowance_c"), ({"bogus": 1}, "bogus"),
    ({"window_rule": "lazy"}, "window_rule"), ({"credit_unit": "usd"}, "credit_unit"),
    ({"losses": "some"}, "losses"),
])
def test_bad_parameters(kwargs: dict, match: str) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        make_policy("wair", kwargs)  # the registry refuses unknown names; WairParams the rest


def test_losses_in_equation_4_refuse_a_plan_that_no_longer_pays_its_cost() -> None:
    # 25 b-queries lose 50 CPU-s: net saving 80 - 50 = 30 > 0 but below the cost of 40
    c = losses_ctx(25)
    net = WairPolicy(window=100, hybrid=False, fixed_key="a").propose(c)
    assert net is not None and net.details["loss_cpu_s"] == pytest.approx(50.0)
    assert net.details["net_saving_cpu_s"] == pytest.approx(30.0)
    strict = WairPolicy(window=100, hybrid=False, fixed_key="a", losses="cost")
    assert strict.propose(c) is None
    assert "eq. 4 net of losses" in strict.last_decision["reason"]


def test_the_cut_prices_partitions_as_the_plan_is_priced() -> None:
    # calibrated per cell: 10 rows x 2 columns x 2.5 B = 50 work bytes per partition (its
    # compressed 100 B no longer count), so one partition costs 0.5 read + 0.5 sort = 1 CPU-s
    # in Algorithm 2's curve, and the two-partition plan 2 CPU-s in groups_rewrite_cost
    import dataclasses

    c = dataclasses.replace(ctx(3, TWO, 5), settings=dataclasses.replace(S, rewrite_cell_bytes=2.5))
    prop = WairPolicy().propose(c)
    assert prop is not None
    assert prop.estimated_cost.cpu_seconds == pytest.approx(2.0)
    assert prop.curve[0] == (1, pytest.approx(1.0 - 2.5))
    assert prop.curve[1] == (2, pytest.approx(2.0 - 5.0))  # the plan's own cost, not 4.0
