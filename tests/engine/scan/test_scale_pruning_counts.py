"""The dashboard's pruning summary from prefix sums (engine/scan/counts.py)
equals the sparse scan's :func:`fragment_summary`: counts and bytes to the bit, the
utilization sums to 1e-9 relative, on random tables with NULLs, unknown bounds, open
ends, inclusive and exclusive bounds, every discrete type and string ranks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.scan import counts
from engine.scan.counts import one_range_summaries
from engine.scan.pruning import analyze_fragment, fragment_summary
from engine.table.model import ColumnStats, Partition, TableSchema, ZoneMaps
from engine.workload.model import Range, ScanFragment
from test_scale_pruning_property import SCHEMA, fragments, ranges, zonemaps

EXACT = ("query_id", "partitions", "scanned", "pruned", "fully_covered", "boundary",
         "pruning_rate", "bytes_scanned", "predicated_columns")


def reference(zm: ZoneMaps, frag: ScanFragment) -> dict:
    scan = analyze_fragment(zm, frag)
    row = fragment_summary(scan)
    rows = zm.rows.astype(np.float64)
    row["selectivity"] = float((scan.util * rows[scan.index]).sum() / (float(rows.sum()) or 1.0))
    return row


def assert_matches(fast: dict, ref: dict) -> None:
    assert list(fast) == list(ref)
    for key in EXACT:
        assert fast[key] == ref[key], key  # to the bit
    scale = max(ref["bytes_scanned"], 1.0)
    assert abs(fast["wasted_bytes"] - ref["wasted_bytes"]) <= 1e-9 * scale
    assert fast["average_utilization"] == pytest.approx(ref["average_utilization"], abs=2e-6)
    assert fast["selectivity"] == pytest.approx(ref["selectivity"], rel=1e-9, abs=1e-12)


@st.composite
def one_range_fragments(draw) -> ScanFragment:
    column = draw(st.sampled_from(SCHEMA.names))
    proj = tuple(draw(st.lists(st.sampled_from(SCHEMA.names), max_size=3, unique=True)))
    return ScanFragment(f"q{draw(st.integers(0, 9))}", "t",
                        ({column: draw(ranges(SCHEMA.type_of(column)))},), proj)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(zonemaps(), st.lists(st.one_of(one_range_fragments(), fragments()), min_size=1, max_size=8),
       st.sampled_from([1, 3, 4096]))
def test_prefix_sum_summary_equals_the_sparse_scan(zm: ZoneMaps, frags: list[ScanFragment],
                                                   block: int) -> None:
    counts.BLOCK = block  # small blocks exercise the full-block and partial-block paths
    try:
        got = one_range_summaries(zm, frags, selectivity=True)
    finally:
        counts.BLOCK = 4096
    for frag, fast in zip(frags, got):
        if fast is not None:
            assert_matches(fast, reference(zm, frag))


def test_answers_the_one_range_queries_only() -> None:
    """Which fragments the fast path takes: one range on one discrete column; a second
    box, a second column, a float column are left to the exact evaluator (None)."""
    schema = TableSchema((("d", "int"), ("f", "float")))
    parts = [Partition(f"p{i}", 10, 100, {"d": ColumnStats(i, i + 5, 0, 5),
                                          "f": ColumnStats(0.0, 1.0, 0, 5)}, i) for i in range(20)]
    zm = ZoneMaps.from_partitions(schema, parts)
    r = Range(3, 7, True, True)
    frags = [ScanFragment("a", "t", ({"d": r},), ()),
             ScanFragment("b", "t", ({"d": r}, {"d": r}), ()),
             ScanFragment("c", "t", ({"d": r, "f": Range(0.1, 0.2, True, True)},), ()),
             ScanFragment("e", "t", ({"f": Range(0.1, 0.2, True, True)},), ())]
    got = one_range_summaries(zm, frags)
    assert [g is not None for g in got] == [True, False, False, False]
    # hand-checked: partitions [i, i+5] meet [3, 7] for i = 0..7 (8 scanned); covered
    # needs i >= 3 and i + 5 <= 7: none; utilization of [0,5]: 3/6, [1,6]: 4/6, [2,7]: 5/6,
    # [3,8]: 5/6, [4,9]: 4/6, [5,10]: 3/6, [6,11]: 2/6, [7,12]: 1/6 -> mean 27/48
    assert got[0]["scanned"] == 8 and got[0]["pruned"] == 12 and got[0]["fully_covered"] == 0
    assert got[0]["average_utilization"] == round(27 / 48, 6)
    assert got[0]["bytes_scanned"] == 40.0  # 8 partitions x 5 bytes of column d
    assert got[0]["wasted_bytes"] == pytest.approx(40.0 - 5 * 27 / 6)
    with_sel = one_range_summaries(zm, frags[:1], selectivity=True)[0]
    assert with_sel["selectivity"] == pytest.approx(10 * 27 / 6 / 200)
    assert_matches(with_sel, reference(zm, frags[0]))
