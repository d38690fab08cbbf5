"""Pruning estimated from zonemaps: hand-checked bounds and a conservativeness property."""

from __future__ import annotations

import datetime as dt
import decimal

import numpy as np
import pytest
from hypothesis import given, settings as hsettings, strategies as st

from engine.scan.pruning import analyze_fragment, analyze_workload, fragment_summary
from engine.table.model import ColumnStats, Partition, TableSchema, ZoneMaps
from engine.workload.model import Range, ScanFragment

SCHEMA = TableSchema((("i", "int"), ("f", "float"), ("d", "date"), ("t", "timestamp"),
                      ("m", "decimal"), ("s", "string")))
D0 = dt.date(2020, 1, 1)
T0 = dt.datetime(2020, 1, 1)


def partition(i: int, rows: list[dict], cbytes: int = 10) -> Partition:
    cols = {}
    for name, _ in SCHEMA.columns:
        vals = [r[name] for r in rows if r.get(name) is not None]
        nulls = len(rows) - len(vals)
        cols[name] = ColumnStats(min(vals) if vals else None, max(vals) if vals else None,
                                 nulls, cbytes)
    return Partition(f"/t/p{i}.parquet", len(rows), 100 * len(SCHEMA.columns), cols, i)


def zonemaps(parts_rows: list[list[dict]]) -> ZoneMaps:
    return ZoneMaps.from_partitions(SCHEMA, [partition(i, r) for i, r in enumerate(parts_rows)])


def frag(*boxes, columns=("i",)) -> ScanFragment:
    return ScanFragment("q1", "t", tuple(boxes), tuple(columns))


def row(i=None, f=None, d=None, t=None, m=None, s=None):
    return {"i": i, "f": f, "d": d, "t": t, "m": m, "s": s}


def two_partitions():
    """p0 holds i 1..10, p1 holds i 11..20 (and matching values in every column)."""
    def rows(start):
        return [row(i=k, f=float(k), d=D0 + dt.timedelta(days=k), t=T0 + dt.timedelta(hours=k),
                    m=decimal.Decimal(k) / 10, s=f"k{k:02d}") for k in range(start, start + 10)]
    return zonemaps([rows(1), rows(11)])


@pytest.mark.parametrize("column,rng,scanned,covered,util", [
    ("i", Range(1, 5), [1, 0], [0, 0], [0.5, 0.0]),
    ("i", Range(None, 10), [1, 0], [1, 0], [1.0, 0.0]),
    ("i", Range(10, 11), [1, 1], [0, 0], [0.1, 0.1]),
    ("i", Range(10, 11, min_inclusive=False, max_inclusive=False), [0, 0], [0, 0], [0, 0]),
    ("i", Range(5.2, 5.8), [0, 0], [0, 0], [0, 0]),  # no integer inside: provably empty
    ("i", Range(30, None), [0, 0], [0, 0], [0, 0]),
    ("f", Range(1.0, 3.25), [1, 0], [0, 0], [0.25, 0.0]),
    ("d", Range(dt.date(2020, 1, 2), dt.date(2020, 1, 3)), [1, 0], [0, 0], [0.2, 0.0]),
    ("t", Range(T0 + dt.timedelta(hours=1), T0 + dt.timedelta(hours=20)), [1, 1], [1, 1], [1, 1]),
    ("m", Range(decimal.Decimal("0.1"), decimal.Decimal("0.55")), [1, 0], [0, 0], [0.5, 0.0]),
    ("s", Range("k01", "k20"), [1, 1], [1, 1], [1.0, 1.0]),
    ("s", Range("k10", "k11"), [1, 1], [0, 0], [0.5, 0.5]),  # ranks k01 k10 | k11 k20
    ("nope", Range(1, 2), [1, 1], [0, 0], [1.0, 1.0]),  # unknown column: might match
], ids=lambda v: repr(v) if not isinstance(v, list) else "")
def test_single_range_bounds(column, rng, scanned, covered, util):
    scan = analyze_fragment(two_partitions(), frag({column: rng}))
    assert scan.scanned.astype(int).tolist() == scanned
    assert scan.fully_covered.astype(int).tolist() == covered
    assert scan.utilization.tolist() == pytest.approx(util)


def test_union_of_boxes_and_projection_aware_bytes():
    zm = two_partitions()
    scan = analyze_fragment(zm, frag({"i": Range(1, 2)}, {"i": Range(15, 20)}, columns=("f",)))
    assert scan.scanned.tolist() == [True, True]
    assert scan.utilization.tolist() == pytest.approx([0.2, 0.6])
    assert scan.read_bytes.tolist() == [20.0, 20.0]  # f and i compressed bytes only
    summary = fragment_summary(scan)
    assert summary == {**summary, "scanned": 2, "pruned": 0, "fully_covered": 0, "boundary": 2,
                       "pruning_rate": 0.0, "bytes_scanned": 40.0, "partitions": 2}
    assert summary["wasted_bytes"] == pytest.approx(0.8 * 20 + 0.4 * 20)


def test_nulls_all_null_and_empty_partitions():
    zm = zonemaps([
        [row(i=1), row(i=4), row(), row()],  # half NULL
        [row(), row()],  # all NULL: min/max unknown but cannot match a range
        [],  # empty
    ])
    scan = analyze_fragment(zm, frag({"i": Range(0, 10)}))
    assert scan.scanned.tolist() == [True, False, False]
    assert scan.fully_covered.tolist() == [False, False, False]  # NULLs never match
    assert scan.utilization.tolist() == pytest.approx([0.5, 0.0, 0.0])


def test_string_range_between_two_endpoints_is_not_pruned():
    """Found by the Spark/DuckDB cross-check: no zonemap endpoint lies inside ('aa', 'b'),
    but a partition spanning it may hold 'ax'."""
    zm = zonemaps([[row(s="a'"), row(s="ax"), row(s="hz")], [row(s="c"), row(s="d")]])
    scan = analyze_fragment(zm, frag({"s": Range("aa", "b", False, False)}))
    assert scan.scanned.tolist() == [True, False]
    assert scan.fully_covered.tolist() == [False, False]
    assert 0.0 <= scan.utilization[0] < 1.0


def test_no_boxes_scans_everything_fully():
    zm = two_partitions()
    scans = analyze_workload(zm, [frag(columns=("i", "s"))])
    assert scans[0].scanned.all() and scans[0].fully_covered.all()
    assert scans[0].utilization.tolist() == [1.0, 1.0]
    assert scans[0].pruning_rate == 0.0


# ----- property: never prune a partition holding a matching row -------------------------

ints = st.one_of(st.none(), st.integers(-5, 5))
rows_st = st.lists(st.builds(
    row,
    i=ints,
    f=st.one_of(st.none(), st.floats(-5, 5, allow_nan=False).map(lambda x: round(x, 1))),
    d=st.one_of(st.none(), st.integers(0, 8).map(lambda k: D0 + dt.timedelta(days=k))),
    t=st.one_of(st.none(), st.integers(0, 8).map(lambda k: T0 + dt.timedelta(seconds=k))),
    m=st.one_of(st.none(), st.integers(-9, 9).map(lambda k: decimal.Decimal(k) / 4)),
    s=st.one_of(st.none(), st.text(alphabet="abc", max_size=3)),
), min_size=0, max_size=6)

bound_by_col = {
    "i": st.integers(-6, 6).map(float) | st.integers(-6, 6),
    "f": st.floats(-6, 6, allow_nan=False).map(lambda x: round(x, 1)),
    "d": st.integers(-1, 9).map(lambda k: D0 + dt.timedelta(days=k)),
    "t": st.integers(-1, 9).map(lambda k: T0 + dt.timedelta(seconds=k)),
    "m": st.integers(-10, 10).map(lambda k: decimal.Decimal(k) / 4),
    "s": st.text(alphabet="abc", max_size=3),
}


@st.composite
def ranges(draw, column):
    b = bound_by_col[column]
    return Range(draw(st.none() | b), draw(st.none() | b), draw(st.booleans()), draw(st.booleans()))


@st.composite
def boxes(draw):
    cols = draw(st.lists(st.sampled_from(list(bound_by_col)), min_size=1, max_size=3, unique=True))
    return {c: draw(ranges(c)) for c in cols}


def matches(value, r: Range) -> bool:
    if value is None:
        return False
    if r.min is not None and (value < r.min or (value == r.min and not r.min_inclusive)):
        return False
    if r.max is not None and (value > r.max or (value == r.max and not r.max_inclusive)):
        return False
    return True


def row_matches(rw, fboxes) -> bool:
    return any(all(matches(rw[c], r) for c, r in box.items()) for box in fboxes)


@hsettings(max_examples=400, deadline=None)
@given(st.lists(rows_st, min_size=1, max_size=5), st.lists(boxes(), min_size=1, max_size=3))
def test_estimate_is_conservative(parts, fboxes):
    zm = zonemaps(parts)
    scan = analyze_fragment(zm, frag(*fboxes))
    for p, rows in enumerate(parts):
        hits = [row_matches(r, fboxes) for r in rows]
        if any(hits):
            assert scan.scanned[p], (p, rows, fboxes)
        if scan.fully_covered[p]:
            assert rows and all(hits), (p, rows, fboxes)
        assert 0.0 <= scan.utilization[p] <= 1.0
        if not scan.scanned[p]:
            assert scan.utilization[p] == 0.0


@hsettings(max_examples=400, deadline=None)
@given(st.lists(st.lists(st.one_of(st.none(), st.text(alphabet="ab'z", max_size=3)),
                         min_size=0, max_size=5), min_size=1, max_size=5),
       st.lists(st.builds(Range, st.none() | st.text(alphabet="ab'z", max_size=3),
                          st.none() | st.text(alphabet="ab'z", max_size=3),
                          st.booleans(), st.booleans()), min_size=1, max_size=2))
def test_string_estimate_is_conservative(parts, rngs):
    zm = zonemaps([[row(s=v) for v in p] for p in parts])
    fboxes = [{"s": r} for r in rngs]
    scan = analyze_fragment(zm, frag(*fboxes))
    for p, vals in enumerate(parts):
        hits = [any(matches(v, r) for r in rngs) for v in vals]
        if any(hits):
            assert scan.scanned[p]
        if scan.fully_covered[p]:
            assert vals and all(hits)


@hsettings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="ab'z", min_size=1, max_size=4), min_size=3, max_size=6, unique=True),
       st.data())
def test_string_point_lookup_of_an_inner_value_is_scanned(words, data):
    """IN lists on strings become point ranges; a value strictly inside a partition's range
    is never an endpoint, yet the partition must be scanned."""
    words = sorted(words)
    inner = data.draw(st.sampled_from(words[1:-1]))
    zm = zonemaps([[row(s=w) for w in words]])
    scan = analyze_fragment(zm, frag({"s": Range(inner, inner)}))
    assert scan.scanned.tolist() == [True]
    assert not scan.fully_covered[0]
