"""PTO's design is held to the output check like any plan: a design whose written files
would make the window read more is not proposed (its row-group size is modelled: the
output model turns it into the rows per row group the executor writes), and a design the
check cannot price still promises over the window it was checked on, never over 0 queries."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from engine import api
from engine.core.config import Settings, load_settings
from engine.layout.output import WriteTarget
from engine.policy import pto
from engine.policy.base import CostEstimate, PlanGroup, Proposal
from engine.policy.output_check import OutputCheck, check_output
from engine.policy.output_saving import priced_by_output
from engine.workload.store import WorkloadStore
from rowgroup_helpers import rowgroup_table, xy_fragment


def _files() -> list[tuple[pa.Table, int]]:
    """8 files of 10 rows, one row group each, clustered on x (file i holds x = 10 i ..
    10 i + 9) and each spanning y 0..80 (0, 80 and 8 values between)."""
    return [(pa.table({"x": 10.0 * i + np.arange(10.0),
                       "y": np.r_[0.0, 80.0, 1.0 + i + 9.0 * np.arange(8)]}), 10) for i in range(8)]


@pytest.fixture
def home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    settings = load_settings({"home": str(home)}, environ={})
    snap = rowgroup_table(settings, "t", _files())
    # 16 queries on x: each meets one file before any rewrite
    WorkloadStore(settings).append(
        "t", [xy_fragment(f"q{j}", {"x": (10.0 * (j % 8) + 2, 10.0 * (j % 8) + 4)}) for j in range(16)],
        snap.schema)
    return home


def _sorted_by_y(zm, params):
    return (PlanGroup(tuple(str(p) for p in zm.paths), "sort", ("y",), layout_params=params),)


def _design(monkeypatch, params):
    """PTO's decision replaced by a fixed design: sort the whole table by y with ``params``."""
    def propose(self, ctx):
        groups = _sorted_by_y(ctx.zonemaps, params)
        return Proposal("pto", {}, groups, CostEstimate(1.0, 1.0, 0.1, 0.0),
                        {"bytes": 0.0, "cpu_seconds": 0.0, "money": 0.0, "window_queries": 0.0})
    monkeypatch.setattr(pto.PtoPolicy, "propose", propose)


def test_a_pto_design_that_reads_more_is_declined(home, monkeypatch):
    """Sorted by y, every file spans x 0..79: each query reads 8 files instead of 1."""
    settings = load_settings({"home": str(home)}, environ={})
    nbytes = int(api.load_snapshot(settings, "t").zonemaps().bytes.mean())
    _design(monkeypatch, {"target_file_bytes": nbytes, "row_group_bytes": nbytes})
    rec = api.preview_plan(settings, "t", "pto")
    assert rec.status == "no-action"
    assert rec.reason.startswith("the output cannot deliver the saving: at the written shape "
                                 "the window would read "), rec.reason
    assert api.create_plan(settings, "t", "pto").status == "no-action"
    assert api.list_plans(settings, "t") == []


def test_row_groups_the_output_writes_are_charged(home):
    """The table sorted by y into 2 files of 40 rows in row groups of 10 rows, the window
    10 queries of y ranges 2 wide, each inside one eighth of y 0..80: every
    file before spans y 0..80, so each query reads the whole table; after, file by file
    one of the 2 files (half), by row group one of its 4 row groups (an eighth). The inputs
    hold one row group each: the output's row groups are charged only at row-group level."""
    settings = load_settings({"home": str(home)}, environ={})
    zm = api.load_snapshot(settings, "t").zonemaps()
    window = [xy_fragment(f"q{j}", {"y": (10.0 * (j % 8) + 2, 10.0 * (j % 8) + 4)}) for j in range(10)]
    groups = _sorted_by_y(zm, {"target_file_rows": 40, "row_group_rows": 10})
    files = check_output(zm, groups, window, WriteTarget())
    row_groups = check_output(zm, groups, window, WriteTarget(), row_group_level=True)
    assert files.modelled and row_groups.modelled
    assert (files.shapes[0].files, files.shapes[0].row_groups_per_file) == (2, 4)
    # the queries read x's and y's column chunks: every file's, before
    chunks = sum(int(zm.columns[c].compressed_bytes.sum()) for c in ("x", "y"))
    assert files.bytes_before == row_groups.bytes_before == 10 * chunks
    assert files.bytes_after == pytest.approx(10 * chunks / 2, abs=10)  # 1 file of 2
    assert row_groups.bytes_after == pytest.approx(10 * chunks / 8, abs=10)  # 1 row group of 8


def test_an_unpriced_design_promises_over_its_window():
    """A design with a partition column: the check does not model it, so 0 bytes are
    promised, but over the window the check scored (the run replays that window)."""
    group = PlanGroup(("a", "b"), "sort", ("x",), layout_params={"partition_by": "y"})
    proposal = Proposal("pto", {}, (group,), CostEstimate(1.0, 1.0, 2.0, 0.0),
                        {"bytes": 0.0, "cpu_seconds": 0.0, "money": 0.0, "window_queries": 0.0})
    check = OutputCheck((), 100.0, 400.0, "reads more", modelled=False)
    out = priced_by_output(proposal, check, 56_000, Settings())
    assert out.predicted_saving["window_queries"] == 56_000
    assert out.predicted_saving["bytes"] == 0.0
    assert out.break_even_queries is None
    assert out.details["saving_from"] == "nothing promised: reads more"


def test_a_column_correlated_with_the_sort_key_stays_clustered_in_row_groups():
    """Four partitions, a = 10 i .. 10 i + 9 and b = a + 100, sorted by a into one file of
    4 row groups: each row group's b range is the union over the partitions whose a range
    meets its a slice (closed ranges: the neighbour below touches at the cut), not the
    file's whole b range, so a filter on b is charged one row group, not four."""
    from engine.policy.impact import predicted_with_row_groups
    from engine.table.model import ColumnStats, Partition, TableSchema, ZoneMaps

    schema = TableSchema((("a", "float"), ("b", "float")))
    parts = [Partition(f"p{i}", 100, 1000, {"a": ColumnStats(10.0 * i, 10.0 * i + 9),
                                            "b": ColumnStats(100 + 10.0 * i, 109 + 10.0 * i)})
             for i in range(4)]
    zm = ZoneMaps.from_partitions(schema, parts)
    group = PlanGroup(tuple(p.path for p in parts), "sort", ("a",),
                      layout_params={"target_file_rows": 400, "row_group_rows": 100})
    after, rg = predicted_with_row_groups(zm, [group], None, WriteTarget())
    assert len(after) == 1 and (after.column("b").lo[0], after.column("b").hi[0]) == (100.0, 139.0)
    z = rg.zonemaps
    assert z.column("a").lo.tolist() == [0.0, 9.0, 19.0, 29.0]
    assert z.column("b").lo.tolist() == [100.0, 100.0, 110.0, 120.0]
    assert z.column("b").hi.tolist() == [109.0, 119.0, 129.0, 139.0]
