"""EP-file metrics: the patent's FIG. 5 example, creation-order grouping, sub-ranges."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings as hsettings, strategies as st

from engine.core.errors import InvalidParameterError
from engine.metrics.ep import ep_files, ep_groups, ep_metrics_json, subranges
from engine.metrics.sweep import partition_depths
from engine.table.model import ColumnStats, Partition, TableSchema, ZoneMaps

# FIG. 5, laid out to satisfy paragraphs 77-82: EP A members have local depths 1,2,2,2,
# EP B 1,1, EP C 3,3,3,3, EP D 2,3,3,3; EP regions A=[0,60], B=[57,70], C=[45,55],
# D=[40,100] give EP-level overlaps 3, 2, 2, 3 and depths 3 for A, C and D.
FIG5 = {
    "A": [(0, 10), (20, 40), (30, 50), (50, 60)],
    "B": [(57, 60), (65, 70)],
    "C": [(45, 49), (47, 52), (48, 54), (51, 55)],
    "D": [(40, 42), (41, 80), (60, 90), (75, 100)],
}


def zonemaps_of(bounds, seqs=None, ltype="int"):
    schema = TableSchema((("k", ltype),))
    parts = [Partition(f"/t/p{i}.parquet", 100, 1000,
                       {"k": ColumnStats(a, b, 0, 500)},
                       created_seq=i if seqs is None else seqs[i])
             for i, (a, b) in enumerate(bounds)]
    return ZoneMaps.from_partitions(schema, parts)


def test_patent_fig5_average_depths_and_ep_level_metrics():
    bounds = [b for ep in FIG5.values() for b in ep]
    groups = np.repeat(np.arange(4), [len(v) for v in FIG5.values()])
    ep = ep_files(zonemaps_of(bounds), "k", 4, groups=groups)
    assert ep.local_depths.tolist() == [1, 2, 2, 2, 1, 1, 3, 3, 3, 3, 2, 3, 3, 3]
    assert ep.average_depth.tolist() == pytest.approx([1.75, 1.0, 3.0, 2.75])
    assert ep.partition_count.tolist() == [4, 2, 4, 4]
    assert ep.overlap.tolist() == [3, 2, 2, 3]
    assert ep.depth[[0, 2, 3]].tolist() == [3, 3, 3]
    assert ep.lo.tolist() == [0, 57, 45, 40] and ep.hi.tolist() == [60, 70, 55, 100]
    data = ep_metrics_json(ep)
    assert data["ep_files"][0]["average_depth"] == 1.75
    # the deepest sub-range sums the average depths of the EP regions covering it
    deepest = data["deepest_subrange"]
    assert deepest["total_average_depth"] == pytest.approx(1.75 + 3.0 + 2.75)
    assert sorted(deepest["ep_files"]) == [0, 2, 3]


def test_creation_order_grouping_and_unknown_stats():
    # created_seq scrambled: grouping follows it, not the snapshot order
    bounds = [(0, 1), (10, 11), (2, 3), (None, None), (12, 13), (4, 5)]
    seqs = [0, 3, 1, 2, 4, 5]
    zm = zonemaps_of(bounds, seqs)
    assert ep_groups(zm, 2).tolist() == [0, 1, 0, 1, 2, 2]
    ep = ep_files(zm, "k", 2)
    assert ep.partition_count.tolist() == [2, 2, 2]
    assert ep.known_count.tolist() == [2, 1, 2]
    assert ep.local_depths.tolist() == [1, 1, 1, -1, 1, 1]
    assert ep.lo.tolist() == [0, 10, 4] and ep.hi.tolist() == [3, 11, 13]
    assert ep.overlap.tolist() == [0, 1, 1]
    with pytest.raises(InvalidParameterError):
        ep_groups(zm, 0)


def test_all_unknown_column_has_no_regions():
    ep = ep_files(zonemaps_of([(None, None), (None, None)]), "k", 1)
    assert ep.valid.tolist() == [False, False]
    assert ep_metrics_json(ep)["deepest_subrange"] is None


groups_st = st.lists(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 15)),
                              min_size=1, max_size=6), min_size=1, max_size=8)


@hsettings(max_examples=150, deadline=None)
@given(groups_st)
def test_local_depths_equal_per_group_brute_force(eps):
    bounds = [(a, a + w) for ep in eps for a, w in ep]
    groups = np.repeat(np.arange(len(eps)), [len(e) for e in eps])
    ep = ep_files(zonemaps_of(bounds), "k", 1, groups=groups)
    for g, members in enumerate(eps):
        lo = np.array([a for a, _ in members], float)
        hi = np.array([a + w for a, w in members], float)
        assert ep.local_depths[groups == g].tolist() == partition_depths(lo, hi).tolist()
        assert ep.lo[g] == lo.min() and ep.hi[g] == hi.max()


@hsettings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 6), st.integers(1, 9)),
                min_size=1, max_size=12))
def test_subranges_total_depth_brute_force(regions):
    lo = np.array([a for a, _, _ in regions], float)
    hi = np.array([a + w for a, w, _ in regions], float)
    wt = np.array([d for _, _, d in regions], float)
    sr = subranges(lo, hi, wt)
    pts = sorted(set(lo) | set(hi))
    gaps = list(zip(pts, pts[1:]))
    consts = sorted({a for a, b in zip(lo, hi) if a == b})
    assert len(sr) == len(gaps) + len(consts)
    for s, e, t, c in zip(sr.starts, sr.ends, sr.total_depth, sr.regions):
        cover = (lo <= s) & (hi >= e)
        assert t == pytest.approx(wt[cover].sum()) and c == cover.sum()
    assert sr.total_depth[sr.deepest] == pytest.approx(sr.total_depth.max())
    # ordered along the value domain
    assert list(sr.starts) == sorted(sr.starts)
