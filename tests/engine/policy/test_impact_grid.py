"""A group cut along several key columns (Z-order, Hilbert, Qd-tree) is predicted as a grid
whose every cell holds a file: the predicted files cover the group's whole key domain, so
no query is predicted to read nothing where the written files hold rows."""

from __future__ import annotations

import pytest

from engine.policy.base import PlanGroup
from engine.policy.impact import key_grid, predicted_zonemaps
from engine.scan.pruning import analyze_workload
from engine.table.model import ColumnStats, Partition, TableSchema, ZoneMaps
from engine.workload.model import Range, ScanFragment

SCHEMA = TableSchema((("a", "float"), ("b", "float")))


def _whole_domain(n: int) -> ZoneMaps:
    """``n`` ingestion-ordered files of 100 rows, each spanning a and b 0..100."""
    return ZoneMaps.from_partitions(SCHEMA, [
        Partition(f"p{i}", 100, 1000, {"a": ColumnStats(0.0, 100.0), "b": ColumnStats(0.0, 100.0)})
        for i in range(n)])


@pytest.mark.parametrize("files, grid", [(20, [5, 4]), (16, [4, 4]), (22, [5, 4]), (3, [3, 1])])
def test_twenty_files_on_two_keys_cover_the_domain(files, grid):
    zm = _whole_domain(files)
    after = predicted_zonemaps(zm, [PlanGroup(tuple(str(p) for p in zm.paths), "hilbert", ("a", "b"))])
    assert key_grid(files, 2) == grid
    a, b = after.column("a"), after.column("b")
    cells = {(lo_a, lo_b) for lo_a, lo_b in zip(a.lo.tolist(), b.lo.tolist())}
    assert len(after) == files and len(cells) == grid[0] * grid[1]  # every cell has a file
    assert (a.lo.min(), a.hi.max(), b.lo.min(), b.hi.max()) == (0.0, 100.0, 0.0, 100.0)
    # a query on the top tenth of b reads the files of the top row of the grid: 1 in
    # grid[1] of the rows, never none (with 20 files in a 5 x 5 grid it read nothing)
    top = ScanFragment("q", "t", ({"b": Range(92.0, 98.0)},), ("a", "b"))
    (scan,) = analyze_workload(after, [top])
    assert scan.scanned_count == sum(1 for j in range(files) if (j // grid[0]) % grid[1] == grid[1] - 1)
    assert scan.scanned_count >= grid[0]
