"""propose() end to end on synthetic zonemaps: hybrid layouts from savings signatures.

Four sets of 20 partitions (1000 B each) over columns a..f in [0, 1000]:

* A: wide on a, narrow elsewhere -> only the a-queries touch them (boundary, u = 0.1);
* B: wide on b -> only the b-queries;
* AB: wide on a and b -> both, equally: the blend v_{a,b};
* D: wide on c, d, e, f -> only the four-column queries on c..f: a diffuse signature.

Narrow ranges sit at 5000-5010, outside every query, so the other queries prune them.
Pruning results come from engine.scan.pruning.analyze_workload (uniform utilization).
Expected: sort on a for A, sort on b for B, Hilbert over (a, b) for AB, Qd-tree for D.
"""

from __future__ import annotations

import pytest

from engine.core.config import Settings
from engine.policy.base import PolicyContext
from engine.policy.wair import WairPolicy
from engine.scan.pruning import analyze_workload
from engine.table.model import ColumnStats, Partition, TableSchema, ZoneMaps
from engine.workload.model import Range, ScanFragment

COLS = ("a", "b", "c", "d", "e", "f")
DIFFUSE = ("c", "d", "e", "f")
SCHEMA = TableSchema(tuple((c, "float") for c in COLS))  # continuous: u = covered share
S = Settings(scan_bytes_per_s=1000.0, sort_bytes_per_s=1000.0, target_rows=1000)
WIDE = {"A": {"a"}, "B": {"b"}, "AB": {"a", "b"}, "D": set(DIFFUSE)}


def table() -> tuple[ZoneMaps, dict[str, list[str]]]:
    parts, sets = [], {}
    for name, wide in WIDE.items():
        for i in range(20):
            path = f"{name}-{i:02d}.parquet"
            stats = {c: ColumnStats(0.0, 1000.0) if c in wide else ColumnStats(5000.0 + i, 5010.0 + i)
                     for c in COLS}
            parts.append(Partition(path, 1000, 1000, stats))
            sets.setdefault(name, []).append(path)
    return ZoneMaps.from_partitions(SCHEMA, parts), sets


def window(zm: ZoneMaps) -> tuple[list[ScanFragment], list[FragmentScan]]:
    frags = []
    for k in range(15):
        lo = 100 + 10 * k
        frags.append(ScanFragment(f"qa{k}", "t", ({"a": Range(lo, lo + 100)},), COLS))
        frags.append(ScanFragment(f"qb{k}", "t", ({"b": Range(lo, lo + 100)},), COLS))
    for k in range(10):
        lo = 50 + 20 * k
        frags.append(ScanFragment(f"qd{k}", "t", ({c: Range(lo, lo + 500) for c in DIFFUSE},), COLS))
    return frags, analyze_workload(zm, frags)


@pytest.fixture(scope="module")
def proposal():
    zm, sets = table()
    frags, scans = window(zm)
    pol = WairPolicy(min_samples=5, eps=0.05)
    prop = pol.propose(PolicyContext("t", "s1", zm, frags, scans, S, queries_seen=len(frags)))
    return prop, sets


def test_hybrid_groups_sort_a_sort_b_hilbert_and_qdtree(proposal) -> None:
    prop, sets = proposal
    assert prop is not None
    by_key = {(g.layout, g.columns): set(g.partitions) for g in prop.groups}
    assert by_key[("sort", ("a",))] == set(sets["A"])
    assert by_key[("sort", ("b",))] == set(sets["B"])
    hilbert = [k for k in by_key if k[0] == "hilbert"]
    assert len(hilbert) == 1 and set(hilbert[0][1]) == {"a", "b"}
    assert by_key[hilbert[0]] == set(sets["AB"])
    qd = [k for k in by_key if k[0] == "qdtree"]
    assert len(qd) == 1 and by_key[qd[0]] == set(sets["D"]) and set(qd[0][1]) == set(DIFFUSE)
    assert len(prop.partitions) == 80 == len(set(prop.partitions))


def test_group_reasons_and_qdtree_params(proposal) -> None:
    prop, _ = proposal
    sort_a = next(g for g in prop.groups if g.columns == ("a",))
    assert sort_a.reason.startswith("20 boundary partitions of a queries; 100% of their saving from a")
    qd = next(g for g in prop.groups if g.layout == "qdtree")
    params = qd.layout_params
    assert params["min_leaf_rows"] == 1000
    assert len(params["queries"]) == 10 and params["weights"] == [1.0] * 10
    assert set(params["queries"][0]) == set(DIFFUSE)
    assert params["queries"][0]["c"][2:] == [True, True]


def test_costs_savings_and_evidence(proposal) -> None:
    prop, _ = proposal
    # 80 partitions x (1 s read + 1 s sort); all groups fit in one k_max chunk
    assert prop.estimated_cost.cpu_seconds == pytest.approx(160.0)
    # A, B: 15 queries x 0.9 s ; AB: 30 x 0.9 s ; D: 10 queries, u = 0.5^4 on 1000 B at 1000 B/s
    expected = 20 * 15 * 0.9 * 2 + 20 * 30 * 0.9 + 20 * 10 * (1 - 0.5 ** 4)
    assert prop.predicted_saving["cpu_seconds"] == pytest.approx(expected)
    assert prop.predicted_saving["window_queries"] == 40
    assert prop.break_even_queries == pytest.approx(160.0 / (expected / 40))
    scatter = prop.details["scatter"]
    assert len(scatter["signatures"]) == len(scatter["labels"]) == len(scatter["anchors"]) == 80
    assert scatter["columns"] == list(COLS)  # every predicated column, schema order
    assert {"a", "b", "a+b", "diffuse"} <= set(scatter["anchors"])
    assert prop.curve and min(v for _, v in prop.curve) < 0
