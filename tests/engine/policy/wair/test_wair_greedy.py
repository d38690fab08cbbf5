"""Algorithm 1 (boundary greedy) on a small hand-made example, and its potential drop."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.core.config import Settings
from engine.policy.base import PolicyContext
from engine.policy.boundary import (GreedyBoundaryPolicy, algorithm1, covering, potential,
                                    recluster_at, table_potential)
from engine.table.model import ColumnStats, Partition, TableSchema, ZoneMaps
from engine.workload.model import Range, ScanFragment


def _parts() -> list[np.ndarray]:
    # m = 2 values per partition: P0 [1, 7], P1 [2, 6], P2 [3, 9], P3 degenerate [8, 8]
    return [np.array([1.0, 7.0]), np.array([2.0, 6.0]), np.array([9.0, 3.0]), np.array([8.0, 8.0])]


def test_algorithm1_on_query_4_8() -> None:
    after, (at_l, at_r) = algorithm1(_parts(), 4.0, 8.0)
    assert at_l == [0, 1, 2]  # all cover 4
    # sorted 1 2 3 6 7 9 cut back into three partitions of two
    assert [p.tolist() for p in after[:3]] == [[1.0, 2.0], [3.0, 6.0], [7.0, 9.0]]
    # at r = 8: only the new [7, 9]; the degenerate [8, 8] is skipped
    assert at_r == [2]
    assert after[3].tolist() == [8.0, 8.0]
    # the query [4, 8] now has one boundary partition at each end
    assert covering(after, 4.0) == [1] and covering(after, 8.0) == [2]


def test_potential_by_hand() -> None:
    assert potential(8, 8) == 0.0
    assert potential(2.5, 2.7) == 0.0  # ceil(a) > floor(b)
    assert potential(1, 2) == pytest.approx(4 + 4 * math.log2(2))
    before = table_potential(_parts())
    assert before == pytest.approx(12 + 8 * math.log2(7) + 4 * math.log2(5))
    after, _ = algorithm1(_parts(), 4.0, 8.0)
    # phi(1,2) + phi(3,6) + phi(7,9) + phi(8,8) = 8 + 12 + (4 + 4 log2 3) + 0
    assert table_potential(after) == pytest.approx(24 + 4 * math.log2(3))
    drop = before - table_potential(after)
    assert drop == pytest.approx(8 * math.log2(7) + 4 * math.log2(5) - 12 - 4 * math.log2(3))
    assert drop > 0  # Lemma 3: reclustering k partitions releases potential


def test_recluster_keeps_the_multiset() -> None:
    rng = np.random.default_rng(0)
    parts = [rng.integers(0, 50, 4).astype(float) for _ in range(12)]
    out, idx = recluster_at(parts, 25.0)
    assert len(idx) >= 2
    assert sorted(np.concatenate(out).tolist()) == sorted(np.concatenate(parts).tolist())
    # outputs are pairwise disjoint except at endpoints (the proof's matching argument)
    ranges = sorted((out[i].min(), out[i].max()) for i in idx)
    assert all(a[1] <= b[0] for a, b in zip(ranges, ranges[1:]))


def test_greedy_policy_on_zonemaps() -> None:
    schema = TableSchema((("k", "int"),))
    bounds = [(0, 30), (10, 20), (25, 60), (40, 45), (50, 50), (55, 90)]
    zm = ZoneMaps.from_partitions(schema, [Partition(f"p{i}", 10, 100, {"k": ColumnStats(a, b)})
                                           for i, (a, b) in enumerate(bounds)])
    frag = ScanFragment("q", "t", ({"k": Range(15, 50)},), ("k",))
    s = Settings(scan_bytes_per_s=100.0, sort_bytes_per_s=100.0)
    pol = GreedyBoundaryPolicy(k_max=2)
    key, idx = pol.select(PolicyContext("t", "s", zm, [frag], [], s))
    # covers 15: p0, p1 ; covers 50: p2 (p4 = [50, 50] is degenerate)
    assert key == "k" and idx.tolist() == [0, 1, 2]
    prop = pol.propose(PolicyContext("t", "s", zm, [frag], [], s))
    assert [g.partitions for g in prop.groups] == [("p0", "p1"), ("p2",)]
    assert prop.estimated_cost.cpu_seconds == pytest.approx(3 * 2.0)
