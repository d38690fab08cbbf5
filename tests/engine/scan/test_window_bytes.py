"""Bytes scanned per query from prefix sums over sorted endpoints
(engine/scan/window_bytes.py) equal the sparse scan's ``bytes_scanned`` to the bit, on
random tables of every logical type (NULLs, unknown bounds, NaN and infinite floats,
string ranks, inclusive and exclusive ends) and fragments of any shape."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.scan.pruning import analyze_workload
from engine.scan.window_bytes import window_bytes
from engine.table.model import ColumnStats, Partition, TableSchema, ZoneMaps
from engine.workload.model import Range, ScanFragment
from test_scale_pruning_property import SCHEMA, fragments, ranges, zonemaps


@st.composite
def one_range_fragments(draw) -> ScanFragment:
    column = draw(st.sampled_from(SCHEMA.names))
    proj = tuple(draw(st.lists(st.sampled_from(SCHEMA.names), max_size=3, unique=True)))
    return ScanFragment(f"q{draw(st.integers(0, 9))}", "t",
                        ({column: draw(ranges(SCHEMA.type_of(column)))},), proj)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(zonemaps(), st.lists(st.one_of(one_range_fragments(), fragments()), min_size=1, max_size=10))
def test_window_bytes_equal_the_sparse_scan(zm: ZoneMaps, frags: list[ScanFragment]) -> None:
    want = [s.bytes_scanned for s in analyze_workload(zm, frags)]
    assert window_bytes(zm, frags).tolist() == want  # to the bit


def test_hand_checked_float_ranges() -> None:
    """Four partitions on a float column [0, 1], [1, 2], [2, 3] and unknown bounds, 10, 20,
    40 and 80 bytes read: the unknown one is always read; a bound that touches a
    partition's end reads it only when inclusive."""
    schema = TableSchema((("f", "float"),))
    bounds = [(0.0, 1.0), (1.0, 2.0), (2.0, 3.0), (None, None)]
    parts = [Partition(f"p{i}", 10, 1000, {"f": ColumnStats(lo, hi, 0, size)}, i)
             for i, ((lo, hi), size) in enumerate(zip(bounds, (10, 20, 40, 80)))]
    zm = ZoneMaps.from_partitions(schema, parts)

    def q(lo, hi, lo_inc=True, hi_inc=True):
        return ScanFragment("q", "t", ({"f": Range(lo, hi, lo_inc, hi_inc)},), ("f",))

    frags = [q(1.0, 2.0), q(1.0, 2.0, False, False), q(1.5, 1.6), q(None, 0.5), q(5.0, None),
             q(2.0, 2.0)]
    assert window_bytes(zm, frags).tolist() == [10 + 20 + 40 + 80, 20 + 80, 20 + 80, 10 + 80, 80,
                                                20 + 40 + 80]
    assert window_bytes(zm, frags).tolist() == [s.bytes_scanned for s in analyze_workload(zm, frags)]


def test_row_groups_and_several_columns_go_through_the_exact_evaluator() -> None:
    """A box on two columns is answered (by the exact evaluator) like the scan answers it."""
    schema = TableSchema((("a", "int"), ("b", "float")))
    parts = [Partition(f"p{i}", 10, 100, {"a": ColumnStats(i, i + 2, 0, 5),
                                          "b": ColumnStats(float(i % 3), float(i % 3) + 0.5, 0, 7)}, i)
             for i in range(30)]
    zm = ZoneMaps.from_partitions(schema, parts)
    frags = [ScanFragment("x", "t", ({"a": Range(3, 9), "b": Range(0.0, 0.2)},), ("a", "b")),
             ScanFragment("y", "t", ({"a": Range(3, 9)}, {"b": Range(2.1, 2.2)}), ("a",))]
    got = window_bytes(zm, frags)
    assert got.tolist() == [s.bytes_scanned for s in analyze_workload(zm, frags)]
    assert np.all(got > 0)
