"""The policies that read pruning results use the sparse scan and decide as
the dense formulas do: Algorithm 1's boundary set from the sorted endpoints equals the
test of every partition, DD's window saving from the sparse index equals the dense sum
bit for bit, and the simulator's incremental scans are sparse and equal a fresh analysis.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.core import logical_types
from engine.core.config import Settings
from engine.policy.base import PolicyContext
from engine.policy.boundary import GreedyBoundaryPolicy, boundary_mask
from engine.policy.dd import window_saving_bytes
from engine.scan.pruning import analyze_fragment, analyze_workload
from engine.table.model import ColumnStats, Partition, TableSchema, ZoneMaps
from engine.workload.model import Range, ScanFragment

DAY0 = dt.date(2024, 1, 1)
TYPES = {"i": "int", "f": "float", "d": "date", "s": "string"}


def _value(ltype: str, k: float):
    if ltype == "int":
        return int(k)
    if ltype == "float":
        return k / 2
    if ltype == "date":
        return DAY0 + dt.timedelta(days=int(k))
    return f"s{int(k):03d}"


@st.composite
def tables(draw) -> ZoneMaps:
    schema = TableSchema(tuple(TYPES.items()))
    parts = []
    for i in range(draw(st.integers(1, 30))):
        stats = {}
        for name, ltype in TYPES.items():
            kind = draw(st.integers(0, 12))
            a, b = sorted((draw(st.integers(0, 40)), draw(st.integers(0, 40))))
            if kind == 0:
                stats[name] = ColumnStats(None, None, draw(st.sampled_from([None, 0, 10])))
            elif kind == 1 and ltype == "float":
                stats[name] = ColumnStats(float("nan"), b / 2, 0)
            else:
                stats[name] = ColumnStats(_value(ltype, a), _value(ltype, b), 0)
        parts.append(Partition(f"p{i}", 10, 100, stats, i))
    return ZoneMaps.from_partitions(schema, parts)


def _bounds(draw, ltype: str):
    def one():
        if draw(st.integers(0, 5)) == 0:
            return None
        k = draw(st.integers(-2, 42))
        if ltype == "int" and draw(st.booleans()):
            return k + 0.5  # a bound between two integer points
        if ltype == "string" and draw(st.booleans()):
            return f"s{k:03d}m"  # a string between two endpoints
        return _value(ltype, k)
    return one(), one()


def dense_select(zm: ZoneMaps, key: str, window: list[ScanFragment]) -> np.ndarray:
    """Algorithm 1's boundary set the dense way: one
    pass over every partition per bound."""
    col = zm.column(key)
    mask = np.zeros(len(zm), dtype=bool)
    for frag in window:
        for box in frag.boxes:
            rng = box.get(key)
            for bound in (() if rng is None else (rng.min, rng.max)):
                if bound is not None:
                    mask |= boundary_mask(col.lo, col.hi, col.valid,
                                          logical_types.encode_scalar(col.ltype, bound))
    return np.flatnonzero(mask)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_greedy_boundary_set_equals_the_dense_test(data) -> None:
    zm = data.draw(tables())
    key = data.draw(st.sampled_from(list(TYPES)))
    window = []
    for j in range(data.draw(st.integers(1, 5))):
        lo, hi = _bounds(data.draw, TYPES[key])
        window.append(ScanFragment(f"q{j}", "t", ({key: Range(lo, hi)},), (key,)))
    ctx = PolicyContext(table="t", snapshot_id="1", zonemaps=zm, window=window,
                        scans=analyze_workload(zm, window),
                        settings=Settings())
    got_key, idx = GreedyBoundaryPolicy(key=key, window=10).select(ctx)
    assert got_key == key
    assert idx.tolist() == dense_select(zm, key, window).tolist()


def test_greedy_boundary_set_by_hand() -> None:
    """int partitions [0,9] [10,19] [5,14] [12,12] [unknown]; bounds 12 and 4.5: 12 is
    covered by P1 and P2 (P3 = [12,12] is degenerate and skipped), 4.5 by P0; the
    unknown P4 always counts."""
    stats = [ColumnStats(0, 9, 0), ColumnStats(10, 19, 0), ColumnStats(5, 14, 0),
             ColumnStats(12, 12, 0), ColumnStats(None, None, None)]
    zm = ZoneMaps.from_partitions(TableSchema((("a", "int"),)),
                                  [Partition(f"p{i}", 10, 100, {"a": s}) for i, s in enumerate(stats)])
    window = [ScanFragment("q", "t", ({"a": Range(4.5, 12)},), ("a",))]
    ctx = PolicyContext(table="t", snapshot_id="1", zonemaps=zm, window=window,
                        scans=analyze_workload(zm, window),
                        settings=Settings())
    assert GreedyBoundaryPolicy(key="a").select(ctx)[1].tolist() == [0, 1, 2, 4]


def test_dd_window_saving_is_the_dense_sum_bit_for_bit() -> None:
    rng = np.random.default_rng(3)
    parts = [Partition(f"p{i}", 100, 1000, {"a": ColumnStats(int(i * 10 + rng.integers(-30, 30)),
                                                             int(i * 10 + rng.integers(31, 90)), 0, 400),
                                            "b": ColumnStats(float(rng.uniform(0, 50)), float(rng.uniform(50, 99)), 2, 300)})
             for i in range(400)]
    zm = ZoneMaps.from_partitions(TableSchema((("a", "int"), ("b", "float"))), parts)
    window = []
    for j in range(60):
        lo = int(rng.integers(0, 3900))
        box = {"a": Range(lo, lo + 120)} if j % 4 else {"b": Range(float(lo % 60), float(lo % 60) + 5)}
        window.append(ScanFragment(f"q{j}", "t", (box,), ("a", "b")))
    ctx = PolicyContext(table="t", snapshot_id="1", zonemaps=zm, window=window,
                        scans=analyze_workload(zm, window),
                        settings=Settings())
    chosen = rng.uniform(size=len(zm)) < 0.3
    for key in (None, "a", "b"):
        expect = 0.0
        for frag in window:
            s = analyze_fragment(zm, frag)
            if key is not None and key not in s.predicated_columns:
                continue
            m = chosen & s.scanned
            if m.any():
                expect += float(((1.0 - s.utilization[m]) * s.read_bytes[m]).sum())
        got = window_saving_bytes(ctx, chosen, key)
        assert got > 0 and got == expect
