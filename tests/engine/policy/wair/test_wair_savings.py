"""Equation 3 (+ equation 6's beta) on a 3-partition, 2-query example computed by hand."""

from __future__ import annotations

import numpy as np
import pytest

from engine.core.config import Settings
from engine.core.errors import InvalidParameterError
from engine.policy.wair import partition_savings
from engine.policy.wair.savings import breakdown_for_window
from engine.scan.pruning import FragmentScan
from engine.table.model import ColumnStats, Partition, TableSchema, ZoneMaps
from engine.workload.model import Range, ScanFragment

SCHEMA = TableSchema((("a", "int"), ("b", "int")))
S = Settings(scan_bytes_per_s=100.0)


def _zonemaps() -> ZoneMaps:
    parts = [Partition(f"p{i}.parquet", 10, 400,
                       {"a": ColumnStats(i * 10, i * 10 + 9), "b": ColumnStats(0, 9)})
             for i in range(3)]
    return ZoneMaps.from_partitions(SCHEMA, parts)


def _window() -> tuple[list[ScanFragment], list[FragmentScan]]:
    """Q1 (a only, measured 2 s) scans all three: P0 boundary u=0.5 (100 B read), P1 fully
    covered (200 B), P2 boundary u=0.2 (100 B) -> size_read(Q1) = 400 B.
    Q2 (a and b, no duration) scans P1 (u=0.25, 50 B) and P2 (u=0.5, 25 B) -> 75 B at
    100 B/s: t_read(Q2) = 0.75 s."""
    q1 = ScanFragment("q1", "t", ({"a": Range(5, 25)},), ("a", "b"), duration_ms=2000.0)
    q2 = ScanFragment("q2", "t", ({"a": Range(12, 22), "b": Range(0, 4)},), ("a", "b"))
    s1 = FragmentScan("q1", np.array([True, True, True]), np.array([False, True, False]),
                      np.array([0.5, 1.0, 0.2]), np.array([100.0, 200.0, 100.0]), ("a",))
    s2 = FragmentScan("q2", np.array([False, True, True]), np.array([False, False, False]),
                      np.array([0.0, 0.25, 0.5]), np.array([0.0, 50.0, 25.0]), ("a", "b"))
    return [q1, q2], [s1, s2]


def test_equation3_by_hand() -> None:
    frags, scans = _window()
    total, per_col, cols = partition_savings(_zonemaps(), scans, frags, S)
    # P0: Q1 (1-0.5)*100/400*2 = 0.25
    # P1: Q2 (1-0.25)*50/75*0.75 = 0.375 (fully covered for Q1: nothing)
    # P2: Q1 (1-0.2)*100/400*2 = 0.4 ; Q2 (1-0.5)*25/75*0.75 = 0.125
    assert total.tolist() == pytest.approx([0.25, 0.375, 0.525])
    assert cols == ["a", "b"]
    # equal shares over each query's predicated columns (section 4.4)
    assert per_col.ravel().tolist() == pytest.approx([0.25, 0.0, 0.1875, 0.1875, 0.4625, 0.0625])
    assert per_col.sum(axis=1) == pytest.approx(total)


def test_breakdown_bytes_and_hits() -> None:
    frags, scans = _window()
    br = breakdown_for_window(_zonemaps(), scans, frags, S)
    assert br.bytes_saved.tolist() == pytest.approx([50.0, 37.5, 80.0 + 12.5])
    assert br.hits.tolist() == [1, 1, 2]
    assert br.queries == 2
    assert br.bonus.tolist() == [0.0, 0.0, 0.0]


def test_beta_adds_expected_bonus() -> None:
    """Equation 6: + beta * |d pruned|, with |d pruned| ~ (1 - u) per boundary partition."""
    frags, scans = _window()
    base, _, _ = partition_savings(_zonemaps(), scans, frags, S)
    boosted, per_col, _ = partition_savings(_zonemaps(), scans, frags, S, beta=2.0)
    # P0: 2 * 0.5 ; P1: 2 * 0.75 ; P2: 2 * (0.8 + 0.5)
    assert (boosted - base).tolist() == pytest.approx([1.0, 1.5, 2.6])
    assert per_col.sum(axis=1) == pytest.approx(boosted)


def test_window_and_scans_must_align() -> None:
    frags, scans = _window()
    with pytest.raises(InvalidParameterError, match="2 fragments but 1"):
        partition_savings(_zonemaps(), scans[:1], frags, S)


def test_scan_of_another_snapshot_is_refused() -> None:
    frags, scans = _window()
    short = FragmentScan("q9", np.array([True]), np.array([False]), np.array([0.5]),
                         np.array([1.0]), ("a",))
    with pytest.raises(InvalidParameterError, match="q9"):
        partition_savings(_zonemaps(), [short], frags[:1], S)
