"""Overlap width, depth, profile and histogram: hand-checked cases and brute-force properties."""

from __future__ import annotations

import datetime as dt
import decimal

import numpy as np
import pytest
from hypothesis import given, settings as hsettings, strategies as st

from engine.metrics.overlap import (column_clustering, clustering_verdict, depth_histogram,
                                    depth_profile, histogram_key, overlap_counts,
                                    partition_depths)
from engine.metrics.sweep import profile_arrays, range_max
from engine.table.model import ColumnStats, Partition, TableSchema, ZoneMaps


def brute_overlaps(lo, hi):
    n = len(lo)
    return [sum(1 for j in range(n) if j != i and lo[j] <= hi[i] and hi[j] >= lo[i])
            for i in range(n)]


def brute_cover(lo, hi, x):
    return sum(1 for a, b in zip(lo, hi) if a <= x <= b)


def brute_depths(lo, hi):
    pts = sorted(set(lo) | set(hi))
    return [max(brute_cover(lo, hi, p) for p in pts if a <= p <= b) for a, b in zip(lo, hi)]


intervals = st.lists(
    st.tuples(st.integers(0, 30), st.integers(0, 12)).map(lambda t: (float(t[0]), float(t[0] + t[1]))),
    min_size=0, max_size=40)


@hsettings(max_examples=300, deadline=None)
@given(intervals)
def test_sweep_line_equals_brute_force(ivs):
    lo = np.array([a for a, _ in ivs], dtype=float)
    hi = np.array([b for _, b in ivs], dtype=float)
    assert overlap_counts(lo, hi).tolist() == brute_overlaps(lo.tolist(), hi.tolist())
    assert partition_depths(lo, hi).tolist() == brute_depths(lo.tolist(), hi.tolist())


@hsettings(max_examples=300, deadline=None)
@given(intervals)
def test_profile_equals_brute_force_coverage(ivs):
    lo = np.array([a for a, _ in ivs], dtype=float)
    hi = np.array([b for _, b in ivs], dtype=float)
    prof = depth_profile(lo, hi)
    if not ivs:
        assert prof == []
        return
    # contiguous, maximal segments
    for (s0, e0, d0), (s1, e1, d1) in zip(prof, prof[1:]):
        assert e0 == s1 and d0 != d1
    assert prof[0][0] == lo.min() and prof[-1][1] == hi.max()
    probes = sorted({*lo.tolist(), *hi.tolist()})
    probes += [(a + b) / 2 for a, b in zip(probes, probes[1:])]
    for x in probes:
        got = max(d for s, e, d in prof if s <= x <= e)
        assert got == brute_cover(lo, hi, x), x


@hsettings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="abc", max_size=3), min_size=2, max_size=30))
def test_strings_sweep_equals_brute_force(words):
    pairs = [tuple(sorted(p)) for p in zip(words[::2], words[1::2])]
    lo = np.array([a for a, _ in pairs], dtype=np.str_)
    hi = np.array([b for _, b in pairs], dtype=np.str_)
    assert overlap_counts(lo, hi).tolist() == brute_overlaps(lo.tolist(), hi.tolist())
    assert partition_depths(lo, hi).tolist() == brute_depths(lo.tolist(), hi.tolist())


@given(st.lists(st.integers(-50, 50), min_size=1, max_size=60), st.data())
def test_range_max_equals_slices(vals, data):
    arr = np.array(vals)
    n = len(arr)
    left = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=20)))
    right = np.array([data.draw(st.integers(int(a), n - 1)) for a in left])
    assert range_max(arr, left, right).tolist() == [arr[a:b + 1].max() for a, b in zip(left, right)]


def test_touching_intervals_overlap_and_disjoint_do_not():
    lo, hi = np.array([0.0, 5.0, 7.0]), np.array([5.0, 6.0, 8.0])
    assert overlap_counts(lo, hi).tolist() == [1, 1, 0]
    assert partition_depths(lo, hi).tolist() == [2, 2, 1]


def test_wair_figure_3_width_and_depth_three_to_one():
    """Figure 3: three partitions holding 1..9 in ingestion order each span the domain
    (width and depth 3); sorted by the key they are disjoint (width and depth 1)."""
    rows = np.array([1, 5, 9, 2, 6, 7, 3, 4, 8], dtype=float).reshape(3, 3)  # natural order
    lo, hi = rows.min(axis=1), rows.max(axis=1)
    assert (overlap_counts(lo, hi) + 1).tolist() == [3, 3, 3]  # width counts itself
    assert partition_depths(lo, hi).tolist() == [3, 3, 3]
    sorted_rows = np.sort(rows.ravel()).reshape(3, 3)
    lo, hi = sorted_rows.min(axis=1), sorted_rows.max(axis=1)
    assert (overlap_counts(lo, hi) + 1).tolist() == [1, 1, 1]
    assert partition_depths(lo, hi).tolist() == [1, 1, 1]


@pytest.mark.parametrize("depth,key", [
    (0, "00000"), (1, "00001"), (16, "00016"), (17, "00032"), (32, "00032"), (33, "00064"),
    (64, "00064"), (65, "00128"), (1000, "01024"), (100000, "131072"),
], ids=lambda v: str(v))
def test_histogram_key_edges(depth, key):
    assert histogram_key(depth) == key


def test_histogram_counts_and_keys():
    h = depth_histogram([1, 2, 2, 16, 17, 32, 33, 64, 65])
    assert list(h)[:17] == [f"{k:05d}" for k in range(17)]
    assert h["00001"] == 1 and h["00002"] == 2 and h["00016"] == 1
    assert h["00032"] == 2 and h["00064"] == 2 and h["00128"] == 1
    assert "00256" not in h
    assert sum(h.values()) == 9
    empty = depth_histogram([])
    assert set(empty) == {f"{k:05d}" for k in range(17)} and sum(empty.values()) == 0


def _zonemaps(ltype, bounds, nulls=None):
    schema = TableSchema((("c", ltype),))
    parts = []
    for i, (a, b) in enumerate(bounds):
        parts.append(Partition(f"/t/p{i}.parquet", 10, 100,
                               {"c": ColumnStats(a, b, 0 if nulls is None else nulls[i], 50)},
                               created_seq=i))
    return ZoneMaps.from_partitions(schema, parts)


@pytest.mark.parametrize("ltype,bounds", [
    ("int", [(1, 5), (5, 9), (20, 20), (None, None)]),
    ("float", [(0.5, 5.0), (5.0, 9.25), (20.0, 20.0), (None, None)]),
    ("decimal", [(decimal.Decimal("1.10"), decimal.Decimal("5.00")),
                 (decimal.Decimal("5.00"), decimal.Decimal("9.99")),
                 (decimal.Decimal("20.00"), decimal.Decimal("20.00")), (None, None)]),
    ("date", [(dt.date(2020, 1, 1), dt.date(2020, 2, 1)), (dt.date(2020, 2, 1), dt.date(2020, 3, 1)),
              (dt.date(2021, 1, 1), dt.date(2021, 1, 1)), (None, None)]),
    ("timestamp", [(dt.datetime(2020, 1, 1, 1), dt.datetime(2020, 1, 1, 5)),
                   (dt.datetime(2020, 1, 1, 5), dt.datetime(2020, 1, 2)),
                   (dt.datetime(2021, 1, 1), dt.datetime(2021, 1, 1)), (None, None)]),
    ("string", [("apple", "kiwi"), ("kiwi", "pear"), ("zebra", "zebra"), (None, None)]),
])
def test_column_clustering_all_types(ltype, bounds):
    """Two touching partitions, one constant partition apart, one without statistics."""
    c = column_clustering(_zonemaps(ltype, bounds), "c")
    assert c.total_partition_count == 3
    assert c.unknown_partition_count == 1
    assert c.total_constant_partition_count == 1
    assert c.overlaps.tolist() == [1, 1, 0, -1]
    assert c.depths.tolist() == [2, 2, 1, -1]
    assert c.average_overlaps == pytest.approx(2 / 3)
    assert c.average_depth == pytest.approx(5 / 3)
    assert c.partition_depth_histogram["00001"] == 1 and c.partition_depth_histogram["00002"] == 2
    data = c.to_json()
    # profile: [lo0, hi0) depth 1, the shared point depth 2, then depth 1, a gap, the constant
    depths = [seg[2] for seg in data["depth_profile"]]
    assert depths == [1, 2, 1, 0, 1]
    first = data["depth_profile"][0][0]
    expected_first = {"date": "2020-01-01", "timestamp": "2020-01-01T01:00:00",
                      "string": "apple", "int": 1, "float": 0.5, "decimal": 1.1}[ltype]
    assert first == expected_first
    # the depth-2 spike is the single shared value; deepest *ranges* are spans
    assert [r["depth"] for r in data["deepest_ranges"]] == [1, 1]  # the constant point is not a span
    assert all(r["start"] != r["end"] for r in data["deepest_ranges"])
    assert data["max_depth"] == 2
    assert set(data) >= {"column", "total_partition_count", "total_constant_partition_count",
                         "average_overlaps", "average_depth", "partition_depth_histogram"}


def test_verdicts():
    n = 50
    lo = np.arange(n, dtype=float)
    sorted_zm = _zonemaps("int", [(int(a), int(a) + 0) for a in lo])
    assert clustering_verdict(column_clustering(sorted_zm, "c"))[0] == "green"
    wide = _zonemaps("int", [(i, 1000 + i) for i in range(n)])
    color, reason = clustering_verdict(column_clustering(wide, "c"))
    assert color == "red" and "~50.0 of 50" in reason
    empty = _zonemaps("int", [(None, None)])
    assert clustering_verdict(column_clustering(empty, "c"))[0] == "grey"


def test_deepest_ranges_prefer_spans_over_endpoint_spikes():
    from engine.metrics.profile import deepest_ranges

    lo = np.array([0.0, 5.0, 6.0, 6.0, 20.0])
    hi = np.array([5.0, 10.0, 8.0, 7.0, 20.0])
    s, e, d = profile_arrays(lo, hi)
    idx = deepest_ranges(s, e, d, top=2)
    assert [(s[i], e[i], d[i]) for i in idx] == [(6.0, 7.0, 3), (7.0, 8.0, 2)]
    # only single values: they are reported
    s, e, d = profile_arrays(np.array([1.0, 1.0, 2.0]), np.array([1.0, 1.0, 2.0]))
    assert [(s[i], d[i]) for i in deepest_ranges(s, e, d)] == [(1.0, 2), (2.0, 1)]


def test_profile_arrays_empty_and_single():
    s, e, d = profile_arrays(np.array([]), np.array([]))
    assert len(s) == len(e) == len(d) == 0
    assert depth_profile(np.array([3.0]), np.array([3.0])) == [(3.0, 3.0, 1)]
