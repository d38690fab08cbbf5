"""PAW plugins and baselines: STR precise descriptors, storage tuner, k-d tree, lower bounds
(hand-checked cases)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.design.paw import DBox, PawTree
from engine.design.paw.baselines import kd_tree, lower_bounds, qdtree, qdtree_cost
from engine.design.paw.descriptors import PreciseDescriptors, str_mbrs
from engine.design.paw.tuner import tune_storage


def test_str_gives_exactly_n_mbr_boxes_covering_every_row():
    rng = np.random.default_rng(1)
    for d in (1, 2, 3):
        x = rng.normal(size=(500, d))
        for n_mbr in (1, 2, 3, 5, 7):
            boxes = str_mbrs(x, n_mbr)
            assert len(boxes) == n_mbr
            covered = np.zeros(len(x), dtype=bool)
            for b in boxes:
                covered |= b.contains(x)
            assert covered.all()


def test_precise_descriptor_skips_a_query_in_the_gap_of_two_clusters():
    rng = np.random.default_rng(2)
    a = rng.uniform(0, 10, size=(200, 2))  # STR's first slab (2 of 3 tiles) is exactly this cluster
    b = rng.uniform(90, 100, size=(100, 2))
    x = np.vstack([a, b])
    data = {"x": x[:, 0], "y": x[:, 1]}
    tree = PawTree(b_min=300, delta=0.0).fit(data, [])  # one partition holding both clusters
    gap = {"x": (40.0, 60.0), "y": (40.0, 60.0)}
    assert tree.query_cost(gap) == 300
    for n_mbr, cost in ((1, 300.0), (3, 0.0)):
        p = PreciseDescriptors(tree, data, n_mbr)
        assert p.cost([gap]) == cost
        assert p.bytes == 16 * 2 * n_mbr
    assert PreciseDescriptors(tree, data, 3).cost([{"x": (5.0, 6.0), "y": (5.0, 6.0)}]) == 300


def test_storage_tuner_gains_and_budget_steps():
    x = np.arange(1000.0)[:, None]
    qs = [DBox.closed([150], [250]), DBox.closed([160], [240])]
    costs = np.array([200.0, 200.0])  # ten 100-row partitions: each query reads two
    t = tune_storage(x, qs, costs, b_min=50, budget_rows=101)
    assert t.gains == pytest.approx([198 / 101, 119 / 81])
    assert t.chosen == [0] and t.mean_costs == [200.0, 101.0]
    t = tune_storage(x, qs, costs, b_min=50, budget_rows=182)
    assert t.chosen == [0, 1] and t.mean_costs == [200.0, 101.0, 91.0]
    assert t.picked_gains == pytest.approx((198 / 101, 20 / 81))  # RP2's gain updated after RP1 (§5 8)
    assert t.query_cost(DBox.closed([170], [180]), 200.0) == 81.0  # inside both: the smaller RP
    assert t.query_cost(DBox.closed([100], [180]), 200.0) == 200.0
    assert tune_storage(x, qs, costs, b_min=50, budget_rows=80).chosen == []


def test_storage_tuner_floors_an_rp_at_b_min():
    x = np.arange(1000.0)[:, None]
    t = tune_storage(x, [DBox.closed([10], [14])], np.array([100.0]), b_min=50, budget_rows=1000)
    assert t.sizes == (50,) and t.mean_costs == [100.0, 50.0]


def test_kd_tree_halves_by_median_round_robin():
    g = np.meshgrid(np.arange(16.0), np.arange(16.0), indexing="ij")
    data = {"x": g[0].ravel(), "y": g[1].ravel()}
    t = kd_tree(data, b_min=32, columns=("x", "y"))
    assert sorted(lf.rows for lf in t.leaves_) == [32] * 8
    root = t.nodes_[0]
    assert root.split.dim == 0 and root.split.value == 8.0
    assert t.nodes_[root.children[0]].split.dim == 1


def test_lower_bounds_and_qdtree_baseline():
    x = np.arange(1000.0)[:, None]
    qs = [DBox.closed([150], [250]), DBox.closed([2000], [3000]), DBox.closed([5], [9])]
    assert lower_bounds(x, qs, b_min=50) == (101 + 0 + 5, 101 + 0 + 50)
    qd = qdtree({"x": x[:, 0]}, [{"x": (150.0, 250.0)}], b_min=50, columns=("x",))
    assert sorted(lf.rows for lf in qd.leaves_) == [101, 150, 749]
    assert qdtree_cost(qd, [{"x": (150.0, 250.0)}]) == 101
