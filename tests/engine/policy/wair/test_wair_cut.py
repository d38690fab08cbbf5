"""Algorithm 2's cut and curve on hand numbers, including the in-memory/external switch."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from engine.core.config import Settings
from engine.core.errors import InvalidParameterError
from engine.policy.costmodel import RewriteTerms, plan_rewrite_cost, recluster_cost_groups
from engine.policy.wair import algorithm2_cut
from engine.policy.wair.cut import prefix_costs, thin_curve

# 100-byte partitions; read 1 s + sort 1 s each in memory; 250 B of memory, external x2
S = Settings(scan_bytes_per_s=100.0, sort_bytes_per_s=100.0, memory_budget_bytes=250,
             external_sort_penalty=2.0)
SAVINGS = np.array([1.5, 10.0, 3.0, 6.0])  # ranked: 10, 6, 3, 1.5 -> cumulative 10, 16, 19, 20.5
BYTES = np.full(4, 100.0)


def test_cut_with_external_sort_in_one_group() -> None:
    # cost: 200 B fits (2+2); 300 B and 400 B spill: 2 runs, 1 pass -> 3 + 2*3 = 9, 4 + 2*4 = 12
    order, cut, curve = algorithm2_cut(SAVINGS, BYTES, S, k_max=64)
    assert order.tolist() == [1, 3, 2, 0]
    assert [c for c, _ in curve] == [1, 2, 3, 4]
    assert [v for _, v in curve] == pytest.approx([2 - 10, 4 - 16, 9 - 19, 12 - 20.5])
    assert cut == 2


def test_k_max_keeps_groups_in_memory_and_moves_the_cut() -> None:
    # k_max = 2: prefix 3 = one 200 B group (4) + one 100 B group (2) = 6; prefix 4 = 4 + 4
    order, cut, curve = algorithm2_cut(SAVINGS, BYTES, S, k_max=2)
    assert prefix_costs(BYTES, S, 2).tolist() == pytest.approx([2, 4, 6, 8])
    assert [v for _, v in curve] == pytest.approx([-8, -12, -13, -12.5])
    assert cut == 3


def test_alpha_scales_the_savings() -> None:
    # equation 4 with alpha = 2: net = cost - savings / 2
    _, cut, curve = algorithm2_cut(SAVINGS, BYTES, S, k_max=64, alpha=2.0)
    assert [v for _, v in curve] == pytest.approx([2 - 5, 4 - 8, 9 - 9.5, 12 - 10.25])
    assert cut == 2


def test_nothing_pays_off_returns_argmin_with_positive_net() -> None:
    _, cut, curve = algorithm2_cut(np.array([0.5, 1.0]), np.full(2, 100.0), S, k_max=64)
    assert cut == 1 and curve[0][1] == pytest.approx(1.0)  # caller must not act


def test_empty_and_invalid() -> None:
    order, cut, curve = algorithm2_cut(np.zeros(0), np.zeros(0), S, k_max=4)
    assert (order.size, cut, curve) == (0, 0, [])
    with pytest.raises(InvalidParameterError, match="alpha"):
        algorithm2_cut(SAVINGS, BYTES, S, k_max=4, alpha=0.0)
    with pytest.raises(InvalidParameterError, match="k_max"):
        algorithm2_cut(SAVINGS, BYTES, S, k_max=0)


def test_prefix_costs_match_brute_force() -> None:
    rng = np.random.default_rng(7)
    b = rng.uniform(10, 200, size=37)
    fast = prefix_costs(b, S, 5)
    for c in range(1, 38):
        chunks = [b[i:min(i + 5, c)].sum() for i in range(0, c, 5)]
        assert fast[c - 1] == pytest.approx(recluster_cost_groups(chunks, S).cpu_seconds)


def test_thin_curve_keeps_the_cut() -> None:
    curve = [(i, float(-i)) for i in range(1, 10_001)]
    thin = thin_curve(curve, 4321, max_points=100)
    assert len(thin) <= 101
    assert (4321, -4321.0) in thin and thin[0] == curve[0] and thin[-1] == curve[-1]


# fixed cost 2 s per job; 100-byte partitions cost 1 + 1 s each (read + sort, in memory)
FIXED = Settings(scan_bytes_per_s=100.0, sort_bytes_per_s=100.0, memory_budget_bytes=10**9,
                 rewrite_fixed_s=2.0)


def test_the_cut_pays_the_fixed_cost_once_per_job_of_the_executor() -> None:
    # k_max = 2: prefixes of 1..5 partitions are 1, 1, 2, 2, 3 groups (chunks); bytes 2..10 s
    b = np.full(5, 100.0)
    # one job (no partial progress): 2 s once, not per chunk (that would be 4 6 10 12 16)
    assert prefix_costs(b, FIXED, 2).tolist() == pytest.approx([4, 6, 8, 10, 12])
    # partial progress, 1 group per batch: one job per chunk
    one = dataclasses.replace(FIXED, partial_progress_groups=1)
    assert prefix_costs(b, one, 2).tolist() == pytest.approx([4, 6, 10, 12, 16])
    # 2 groups per batch: the third chunk starts a second job
    two = dataclasses.replace(FIXED, partial_progress_groups=2)
    assert prefix_costs(b, two, 2).tolist() == pytest.approx([4, 6, 8, 10, 14])
    # the cut moves: savings 5, 4, 3.5, 1.9, 1.9 -> cumulative 5 9 12.5 14.4 16.3; nets
    # -1 -3 -4.5 -4.4 -4.3 -> 3 partitions (a fixed cost per chunk: -1 -3 -2.5 -2.4 -0.3 -> 2)
    s = np.array([5.0, 4.0, 3.5, 1.9, 1.9])
    _, cut, curve = algorithm2_cut(s, b, FIXED, 2)
    assert [v for _, v in curve] == pytest.approx([-1, -3, -4.5, -4.4, -4.3])
    assert cut == 3
    _, cut, curve = algorithm2_cut(s, b, one, 2)
    assert [v for _, v in curve] == pytest.approx([-1, -3, -2.5, -2.4, -0.3]) and cut == 2


def test_prefix_costs_equal_the_plan_price_of_their_chunks() -> None:
    # the cut and costmodel.plan_rewrite_cost (no layout terms) agree, batches included
    rng = np.random.default_rng(11)
    b = rng.uniform(10, 200, size=23)
    for step in (0, 1, 3):
        s = dataclasses.replace(FIXED, partial_progress_groups=step, memory_budget_bytes=500)
        fast = prefix_costs(b, s, 4)
        for c in range(1, 24):
            chunks = [b[i:min(i + 4, c)].sum() for i in range(0, c, 4)]
            assert fast[c - 1] == pytest.approx(
                plan_rewrite_cost(chunks, s, terms=RewriteTerms()).cpu_seconds)


def test_paper_order_takes_algorithm2s_cut_then_tests_equation4() -> None:
    # k_max = 2: cuts cost 2, 4, 6, 8 and save 10, 16, 19, 20.5. Algorithm 2 (section 4.2)
    # minimises cost - savings: -8, -12, -13, -12.5 -> cut 3, whatever alpha is.
    # alpha = 0.5: equation 4 at cut 3: 19 > 0.5 x 6, so the caller acts on cut 3; the
    # scaled rule minimises cost - savings / 0.5 = -18, -28, -32, -33 -> cut 4 instead.
    _, cut, curve = algorithm2_cut(SAVINGS, BYTES, S, k_max=2, alpha=0.5, rule="paper")
    assert cut == 3
    assert [v for _, v in curve] == pytest.approx([-18, -28, -32, -33])  # equation 4's net
    assert curve[cut - 1][1] < 0  # 19 > 0.5 x 6: equation 4 holds at cut 3
    _, scaled, _ = algorithm2_cut(SAVINGS, BYTES, S, k_max=2, alpha=0.5, rule="scaled")
    assert scaled == 4
    # alpha = 2: Algorithm 2 still cuts at 3 (19 > 2 x 6 = 12, acts); the scaled rule
    # minimises 2 - 5, 4 - 8, 6 - 9.5, 8 - 10.25 = -3, -4, -3.5, -2.25 -> cut 2
    _, cut, curve = algorithm2_cut(SAVINGS, BYTES, S, k_max=2, alpha=2.0, rule="paper")
    assert cut == 3 and curve[2][1] == pytest.approx(6 - 19 / 2)
    assert algorithm2_cut(SAVINGS, BYTES, S, k_max=2, alpha=2.0, rule="scaled")[1] == 2
    # with alpha = 1 the two rules agree
    assert algorithm2_cut(SAVINGS, BYTES, S, k_max=2, rule="paper")[1] == \
        algorithm2_cut(SAVINGS, BYTES, S, k_max=2, rule="scaled")[1] == 3


def test_cut_rule_is_a_named_wair_parameter() -> None:
    from engine.policy.wair import WairPolicy

    assert WairPolicy().params.cut_rule == "scaled"
    assert WairPolicy(cut_rule="paper").params.cut_rule == "paper"
    with pytest.raises(InvalidParameterError, match="cut_rule must be one of paper, scaled"):
        WairPolicy(cut_rule="greedy")
    with pytest.raises(InvalidParameterError, match="cut_rule"):
        algorithm2_cut(SAVINGS, BYTES, S, k_max=2, rule="greedy")
