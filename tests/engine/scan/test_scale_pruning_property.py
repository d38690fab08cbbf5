"""Sparse, index-driven pruning equals the dense reference evaluator.

Hypothesis draws tables of every logical type with NULLs, unknown bounds, NaN and
infinite float bounds, empty partitions and strings, and fragments of one to three boxes
with open ends, inclusive and exclusive bounds, NaN bounds, fractional bounds on integer
columns and unknown columns. ``analyze_fragment`` (sorted endpoints + exact test on the
candidates) must return the same scanned set, the same fully covered set and the same
utilization to the last bit as ``analyze_fragment_dense``.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.scan import batched, pruning, window
from engine.scan.pruning import (FragmentScan, WindowScans, analyze_fragment,
                                 analyze_fragment_dense, analyze_fragments, analyze_workload,
                                 fragment_summary)
from engine.table.model import ColumnStats, Partition, TableSchema, ZoneMaps
from engine.workload.model import Range, ScanFragment

TYPES = ("int", "float", "decimal", "date", "timestamp", "string", "bool")
SCHEMA = TableSchema(tuple((f"c_{t}", t) for t in TYPES))
DAY0 = dt.date(2024, 1, 1)
TS0 = dt.datetime(2024, 1, 1)
ks = st.integers(-4, 24)


def value(ltype: str, k: int, special: int = 0):
    """One value of a type from a small integer domain (ties between partitions and
    query bounds are frequent: the edge cases of inclusive and exclusive ends)."""
    if ltype == "int":
        return k
    if ltype == "float":
        return [k / 2, math.nan, math.inf, -math.inf][special] if special < 4 else k / 2
    if ltype == "decimal":
        return decimal.Decimal(k) / 4
    if ltype == "date":
        return DAY0 + dt.timedelta(days=k)
    if ltype == "timestamp":
        return TS0 + dt.timedelta(microseconds=500_000 * k)
    if ltype == "string":
        return ["", "a", f"s{k:02d}", f"s{k:02d}x", "z"][special % 5] if special else f"s{k:02d}"
    return bool(k % 2)


@st.composite
def column_stats(draw, ltype: str) -> ColumnStats:
    if draw(st.integers(0, 9)) == 0:
        return ColumnStats(None, None, draw(st.sampled_from([None, 0, 10])), 7)
    a, b = draw(ks), draw(ks)
    special = draw(st.integers(0, 12)) if ltype in ("float", "string") else 0
    lo, hi = value(ltype, min(a, b), special), value(ltype, max(a, b))
    if ltype == "string" and special:
        lo, hi = min(lo, hi), max(lo, hi)
    nulls = draw(st.sampled_from([None, 0, 0, 3, 10]))
    return ColumnStats(lo, hi, nulls, draw(st.integers(0, 50)))


@st.composite
def zonemaps(draw) -> ZoneMaps:
    n = draw(st.integers(1, 40))
    parts = []
    for i in range(n):
        rows = draw(st.sampled_from([0, 10, 10, 10]))
        stats = {name: draw(column_stats(lt)) for name, lt in SCHEMA.columns}
        parts.append(Partition(f"p{i}", rows, 100, stats, i))
    return ZoneMaps.from_partitions(SCHEMA, parts)


@st.composite
def ranges(draw, ltype: str) -> Range:
    def bound():
        if draw(st.integers(0, 4)) == 0:
            return None
        k = draw(ks)
        if ltype == "int" and draw(st.booleans()):
            return k + 0.5  # a fractional bound on an integer column
        if ltype == "float" and draw(st.integers(0, 8)) == 0:
            return math.nan  # treated as an open end
        return value(ltype, k, draw(st.integers(0, 5)) if ltype == "string" else 0)
    return Range(bound(), bound(), draw(st.booleans()), draw(st.booleans()))


@st.composite
def fragments(draw) -> ScanFragment:
    boxes = []
    for _ in range(draw(st.integers(0, 3))):
        cols = draw(st.lists(st.sampled_from([*SCHEMA.names, "unknown_col"]),
                             min_size=0, max_size=3, unique=True))
        boxes.append({c: draw(ranges(SCHEMA.type_of(c) if c != "unknown_col" else "int"))
                      for c in cols})
    proj = tuple(draw(st.lists(st.sampled_from(SCHEMA.names), max_size=3, unique=True)))
    return ScanFragment("q", "t", tuple(boxes), proj)


def assert_same(sparse: FragmentScan, dense: FragmentScan) -> None:
    assert sparse.n == dense.n
    assert sparse.index.tolist() == dense.index.tolist()
    assert sparse.covered.tolist() == dense.covered.tolist()
    assert sparse.util.tobytes() == dense.util.tobytes()  # bit-identical
    assert np.array_equal(sparse.read_bytes, dense.read_bytes)
    assert sparse.predicated_columns == dense.predicated_columns


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(zonemaps(), st.lists(fragments(), min_size=1, max_size=4))
def test_sparse_pruning_equals_dense_evaluator(zm: ZoneMaps, frags: list[ScanFragment]) -> None:
    for frag in frags:
        assert_same(analyze_fragment(zm, frag), analyze_fragment_dense(zm, frag))


@st.composite
def one_box_fragments(draw) -> ScanFragment:
    """The shape the batched path takes: one box of one to three columns (the unknown
    column and empty ranges included)."""
    cols = draw(st.lists(st.sampled_from([*SCHEMA.names, "unknown_col"]), min_size=1,
                         max_size=3, unique=True))
    box = {c: draw(ranges(SCHEMA.type_of(c) if c != "unknown_col" else "int")) for c in cols}
    proj = tuple(draw(st.lists(st.sampled_from(SCHEMA.names), max_size=3, unique=True)))
    return ScanFragment(f"q{draw(st.integers(0, 9))}", "t", (box,), proj)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(zonemaps(), st.lists(st.one_of(one_box_fragments(), fragments()), min_size=1, max_size=8),
       st.sampled_from([1, 7, 2_000_000]))
def test_batched_pruning_equals_dense_evaluator(zm: ZoneMaps, frags: list[ScanFragment],
                                                chunk: int) -> None:
    """The window-at-once evaluator (vectorised look-ups, grouped and chunked arithmetic)
    gives each fragment the dense evaluator's answer to the last bit, whatever the chunk
    size (one candidate per chunk, a few, all)."""
    old = batched.BATCH_ELEMENTS
    batched.BATCH_ELEMENTS = chunk
    try:
        scans = analyze_fragments(zm, frags)
    finally:
        batched.BATCH_ELEMENTS = old
    assert len(scans) == len(frags)
    for frag, scan in zip(frags, scans):
        assert scan.query_id == frag.query_id
        assert_same(scan, analyze_fragment_dense(zm, frag))


@st.composite
def several_box_fragments(draw) -> ScanFragment:
    """ORs and IN lists: two to six boxes, each constraining a column of the zonemaps (the
    shape the batched path takes): point boxes on one column (``c IN (...)``), boxes on
    different columns (``a < x OR b > y``), overlapping boxes (their utilizations add and
    cap at 1), plus extra columns, the unknown column and empty ranges inside boxes."""
    shape = draw(st.sampled_from(["in", "or", "mixed"]))
    boxes = []
    col = draw(st.sampled_from(SCHEMA.names))
    for _ in range(draw(st.integers(2, 6))):
        if shape == "in":
            v = value(SCHEMA.type_of(col), draw(ks), draw(st.integers(0, 5)) if col == "c_string" else 0)
            box = {col: Range(v, v)}
        else:
            first = col if shape == "mixed" else draw(st.sampled_from(SCHEMA.names))
            extra = draw(st.lists(st.sampled_from([*SCHEMA.names, "unknown_col"]), max_size=2, unique=True))
            box = {c: draw(ranges(SCHEMA.type_of(c) if c != "unknown_col" else "int"))
                   for c in dict.fromkeys([first, *extra])}
        boxes.append(box)
    proj = tuple(draw(st.lists(st.sampled_from(SCHEMA.names), max_size=3, unique=True)))
    return ScanFragment(f"q{draw(st.integers(0, 9))}", "t", tuple(boxes), proj)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(zonemaps(), st.lists(st.one_of(several_box_fragments(), one_box_fragments()), min_size=1, max_size=8),
       st.sampled_from([1, 7, 2_000_000]))
def test_several_box_fragments_are_batched_and_equal_the_dense_evaluator(
        zm: ZoneMaps, frags: list[ScanFragment], chunk: int) -> None:
    """OR / IN fragments go through the batched evaluator (the per-fragment path only when
    a box constrains no zonemap column) and get the dense answer to the last
    bit: scanned, covered, utilization, for every type, NULLs, NaN, strings, open ends,
    inclusive and exclusive bounds, at every chunk size."""
    old, per_fragment = batched.BATCH_ELEMENTS, batched.analyze_fragment
    called: list[str] = []
    batched.BATCH_ELEMENTS = chunk
    batched.analyze_fragment = lambda z, f: called.append(f.query_id) or per_fragment(z, f)
    try:
        scans = analyze_fragments(zm, frags)
    finally:
        batched.BATCH_ELEMENTS, batched.analyze_fragment = old, per_fragment
    # only a fragment with a box that restricts no zonemap column (the unknown column
    # alone: every partition is a candidate) takes the per-fragment path
    unrestricted = [f.query_id for f in frags
                    if any(not any(c in zm.columns for c in box) for box in f.boxes)]
    assert called == unrestricted
    for frag, scan in zip(frags, scans):
        assert scan.query_id == frag.query_id
        assert_same(scan, analyze_fragment_dense(zm, frag))


def test_in_list_hand_checked() -> None:
    """``a IN (5, 12, 40)`` over int partitions [0,9] [10,19] [5,14] [30,39]: 5 scans P0
    (1 of 10 points) and P2 (1 of 10), 12 scans P1 and P2, 40 nothing; P2's utilization
    is 0.1 + 0.1 (two boxes add), P3 is pruned."""
    schema = TableSchema((("a", "int"),))
    zm = ZoneMaps.from_partitions(schema, [Partition(f"p{i}", 10, 100, {"a": ColumnStats(lo, hi, 0)})
                                           for i, (lo, hi) in enumerate([(0, 9), (10, 19), (5, 14), (30, 39)])])
    frag = ScanFragment("q", "t", tuple({"a": Range(v, v)} for v in (5, 12, 40)), ("a",))
    scan = analyze_fragments(zm, [frag])[0]
    assert scan.index.tolist() == [0, 1, 2]
    assert scan.util.tolist() == [0.1, 0.1, 0.1 + 0.1]
    assert not scan.covered.any()
    assert_same(scan, analyze_fragment_dense(zm, frag))


def test_hand_checked_case_and_dense_views() -> None:
    """Four int partitions [0,9] [10,19] [5,14] [unknown]; the range 10 <= a < 15:
    P0 pruned, P1 boundary (5 of 10 points), P2 boundary (5 of 10), P3 unknown: scanned
    with utilization 1 (no information)."""
    st_ = [ColumnStats(0, 9, 0), ColumnStats(10, 19, 0), ColumnStats(5, 14, 0),
           ColumnStats(None, None, None)]
    schema = TableSchema((("a", "int"),))
    zm = ZoneMaps.from_partitions(schema, [Partition(f"p{i}", 10, 100, {"a": s})
                                           for i, s in enumerate(st_)])
    frag = ScanFragment("q", "t", ({"a": Range(10, 15, True, False)},), ("a",))
    scan = analyze_fragment(zm, frag)
    assert scan.index.tolist() == [1, 2, 3]
    assert scan.util.tolist() == [0.5, 0.5, 1.0]
    assert scan.scanned.tolist() == [False, True, True, True]
    assert scan.utilization.tolist() == [0.0, 0.5, 0.5, 1.0]
    assert scan.boundary_index.tolist() == [1, 2, 3]
    summary = fragment_summary(scan)
    assert (summary["scanned"], summary["pruned"], summary["boundary"]) == (3, 1, 3)


def test_window_scans_deduplicate_and_rename() -> None:
    """Identical fragments (same boxes, same projection) are pruned once; each position
    still answers with its own query id; slices stay lazy."""
    schema = TableSchema((("a", "int"),))
    zm = ZoneMaps.from_partitions(schema, [Partition(f"p{i}", 10, 100, {"a": ColumnStats(10 * i, 10 * i + 9, 0)})
                                           for i in range(50)])
    box = ({"a": Range(95, 130)},)
    frags = [ScanFragment("q0", "t", box, ("a",)), ScanFragment("q1", "t", ({"a": Range(0, 5)},), ("a",)),
             ScanFragment("q2", "t", box, ("a",)), ScanFragment("q3", "t", box, ("a", "b"))]
    scans = analyze_workload(zm, frags)
    assert isinstance(scans, WindowScans) and len(scans) == 4
    assert [s.query_id for s in scans] == ["q0", "q1", "q2", "q3"]
    assert scans[2].index is scans[0].index  # shared, not recomputed
    assert scans[0].index.tolist() == [9, 10, 11, 12, 13]
    groups = [(s.query_id, pos) for s, pos in scans.distinct()]
    assert groups == [("q0", [0, 2]), ("q1", [1]), ("q3", [3])]
    tail = scans[-2:]
    assert isinstance(tail, WindowScans) and [s.query_id for s in tail] == ["q2", "q3"]


def test_window_iteration_is_batched_and_identical() -> None:
    """Iterating a window and folding its distinct outcomes go through the batched
    evaluator (several batches here) and give what one fragment at a time gives."""
    schema = TableSchema((("a", "int"), ("b", "float")))
    rng = np.random.default_rng(4)
    parts = [Partition(f"p{i}", 10, 100, {"a": ColumnStats(5 * i, 5 * i + int(rng.integers(1, 30)), 0),
                                         "b": ColumnStats(float(rng.uniform(0, 90)), float(rng.uniform(90, 100)), 1)})
             for i in range(300)]
    zm = ZoneMaps.from_partitions(schema, parts)
    frags = []
    for j in range(2_500):
        lo = int(rng.integers(0, 1500))
        box = {"a": Range(lo, lo + 40)} if j % 3 else {"b": Range(float(lo % 90), None), "a": Range(lo, None)}
        frags.append(ScanFragment(f"q{j}", "t", (box,), ("a",)))
    scans = list(analyze_workload(zm, frags))
    assert [s.query_id for s in scans] == [f.query_id for f in frags]
    for frag, scan in zip(frags[::97], scans[::97]):
        assert_same(scan, analyze_fragment(zm, frag))
    assert sum(1 for _ in analyze_workload(zm, frags).distinct()) == len(
        {pruning.fragment_key(f) for f in frags})
    assert any(s.scanned_count for s in scans) and any(s.covered.any() for s in scans)


def test_window_bytes_scanned_survive_the_memo() -> None:
    """After the window's distinct outcomes were folded once, ``bytes_scanned`` answers
    for every fragment (duplicates included) without pruning again, even when the memo
    kept almost nothing; the figures equal each scan's own."""
    schema = TableSchema((("a", "int"),))
    zm = ZoneMaps.from_partitions(schema, [Partition(f"p{i}", 10, 100 + i, {"a": ColumnStats(10 * i, 10 * i + 9, 0)})
                                           for i in range(200)])
    frags = [ScanFragment(f"q{j}", "t", ({"a": Range(7 * (j % 40), 7 * (j % 40) + 25)},), ("a",))
             for j in range(120)]
    scans = WindowScans(zm, frags, memo_entries=1)
    assert sum(len(pos) for _, pos in scans.distinct()) == 120
    evaluate = window.analyze_fragments
    calls: list[int] = []
    window.analyze_fragments = lambda z, f: calls.append(len(f)) or evaluate(z, f)
    try:
        got = scans.bytes_scanned()
    finally:
        window.analyze_fragments = evaluate
    assert calls == []
    want = [analyze_fragment(zm, f).bytes_scanned for f in frags]
    assert got.tolist() == want and min(want) > 0
    fresh = WindowScans(zm, frags, memo_entries=1)
    assert fresh.bytes_scanned().tolist() == want  # nothing folded yet: pruned on demand
