"""The reclustering cost model: hand-computed in-memory / external sort costs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.core.config import Settings
from engine.core.errors import InvalidParameterError
from engine.policy.costmodel import (RewriteTerms, layout_seconds, merge_passes, money,
                                     output_files, plan_rewrite_cost, recluster_cost,
                                     recluster_cost_groups, recluster_seconds_array, scan_seconds)

# 100 B/s scan, 50 B/s sort, 1000 B of memory, external sort 2x per pass, 3.6 per CPU-hour
S = Settings(scan_bytes_per_s=100.0, sort_bytes_per_s=50.0, memory_budget_bytes=1000,
             external_sort_penalty=2.0, price_per_cpu_hour=3.6)


@pytest.mark.parametrize("nbytes,passes,cpu", [
    (0, 0, 0.0),
    (500, 0, 5.0 + 10.0),            # in memory: read + sort
    (1000, 0, 10.0 + 20.0),          # exactly the budget still fits
    (1500, 1, 15.0 + 2 * 1 * 30.0),  # 2 runs -> 1 merge pass
    (4000, 2, 40.0 + 2 * 2 * 80.0),  # 4 runs -> 2 passes
    (5000, 3, 50.0 + 2 * 3 * 100.0),  # 5 runs -> 3 passes
], ids=["empty", "in-memory", "at-budget", "2-runs", "4-runs", "5-runs"])
def test_recluster_cost_hand_numbers(nbytes: float, passes: int, cpu: float) -> None:
    est = recluster_cost(nbytes, S)
    assert merge_passes(nbytes, S) == passes
    assert est.cpu_seconds == pytest.approx(cpu)
    assert est.bytes_read == est.bytes_written == nbytes
    assert est.money == pytest.approx(cpu / 3600 * 3.6)


def test_external_sort_is_a_step_at_the_memory_budget() -> None:
    inside = recluster_cost(1000, S).cpu_seconds
    outside = recluster_cost(1001, S).cpu_seconds
    assert inside == pytest.approx(10.0 + 20.0)
    assert outside == pytest.approx(10.01 + 2.0 * 20.02)  # the sort part doubles


def test_groups_sum_and_splitting_avoids_external_sort() -> None:
    whole = recluster_cost(1500, S).cpu_seconds  # 75: external
    halves = recluster_cost_groups([750, 750], S)
    assert halves.cpu_seconds == pytest.approx(2 * (7.5 + 15.0))  # 45: both in memory
    assert halves.cpu_seconds < whole
    assert halves.bytes_read == halves.bytes_written == 1500
    assert halves.money == pytest.approx(money(45.0, S))


def test_vectorized_matches_scalar() -> None:
    sizes = np.array([0, 1, 999, 1000, 1001, 2000, 2001, 7777, 123456], dtype=float)
    vec = recluster_seconds_array(sizes, S)
    for b, v in zip(sizes, vec):
        assert v == pytest.approx(recluster_cost(float(b), S).cpu_seconds)


def test_scan_seconds_and_money() -> None:
    assert scan_seconds(250, S) == pytest.approx(2.5)
    assert money(3600, S) == pytest.approx(3.6)


@pytest.mark.parametrize("bad", [-1.0, math.inf, math.nan])
def test_bad_size_is_a_user_error(bad: float) -> None:
    with pytest.raises(InvalidParameterError, match="recluster size"):
        recluster_cost(bad, S)


# layout terms: 2 s fitted job, key function 100 B/s, 0.5 s per output file
T = RewriteTerms(fitted_job_s=2.0, fitted_key_bytes_per_s=100.0, file_s=0.5)


def test_without_calibrated_terms_the_plan_cost_is_the_bytes_only_model() -> None:
    """Settings carry no terms before calibration: the old prediction, to the digit."""
    assert RewriteTerms.from_settings(S) == RewriteTerms()
    plan = plan_rewrite_cost([300, 200], S, ["sort", "hilbert"], [3, 2])
    assert plan.cpu_seconds == pytest.approx(recluster_cost_groups([300, 200], S).cpu_seconds)
    assert plan.cpu_seconds == pytest.approx(500 / 100 + 500 / 50)  # 15, in memory


@pytest.mark.parametrize("layouts,files,extra", [
    (["sort", "sort"], [1, 1], 2 * 0.5),                          # files only
    (["sort", "hilbert"], [3, 2], 5 * 0.5 + 2.0 + 200 / 100),     # one fitted group
    (["zorder", "qdtree"], [1, 1], 2 * 0.5 + 2.0 + 500 / 100),    # the job is paid ONCE
    (["binpack", "paw"], [4, 1], 5 * 0.5 + 2.0 + 200 / 100),
], ids=["sort-only", "sort+hilbert", "two-fitted", "binpack+paw"])
def test_layout_terms_hand_numbers(layouts, files, extra) -> None:
    base = 500 / 100 + 500 / 50  # 15 s: read + in-memory sort of 300 + 200 bytes
    est = plan_rewrite_cost([300, 200], S, layouts, files, T)
    assert est.cpu_seconds == pytest.approx(base + extra)
    assert est.bytes_read == est.bytes_written == 500
    assert est.money == pytest.approx(money(base + extra, S))


def test_files_default_to_the_target_size_and_a_key_rate_of_0_is_not_priced() -> None:
    assert output_files(10, S) == 1  # no target_mb: one file per group
    big = Settings(target_mb=1.0)
    assert output_files(2.5 * 2**20, big) == 3 and output_files(0, big) == 1
    no_key = RewriteTerms(fitted_job_s=2.0, file_s=0.5)
    assert layout_seconds(["hilbert"], [1e9], [1], no_key) == pytest.approx(2.5)
    with pytest.raises(InvalidParameterError, match="1 layouts for 2 groups"):
        plan_rewrite_cost([1, 2], S, ["sort"])


def test_group_terms_hand_numbers_and_one_group_pays_none() -> None:
    """3 groups: 1 s once, 2 extra x 0.25 s, and the plan's 500 bytes at 250 B/s (2 s) on
    top of the 15 s bytes-only cost and 3 files x 0.5 s; one group pays none of them."""
    t = RewriteTerms(file_s=0.5, multi_group_s=1.0, group_s=0.25, multi_group_bytes_per_s=250.0)
    three = plan_rewrite_cost([300, 100, 100], S, ["sort"] * 3, [1, 1, 1], t)
    assert three.cpu_seconds == pytest.approx(15.0 + 1.5 + 1.0 + 0.5 + 2.0)
    one = plan_rewrite_cost([500], S, ["sort"], [3], t)
    assert one.cpu_seconds == pytest.approx(15.0 + 1.5)


def test_a_calibrated_cell_size_prices_rows_times_columns_not_compressed_bytes() -> None:
    """Two groups of 10 and 30 rows of a 5-column table, 2 B per cell: 100 + 300 work
    bytes, priced at 100 B/s read + 50 B/s sort = 4 + 8 = 12 s, whatever their compressed
    sizes (70 and 90 bytes, what is read and written); uncalibrated: 160 bytes, 4.8 s."""
    from engine.policy.base import PlanGroup
    from engine.policy.costmodel import groups_rewrite_cost
    from engine.table.model import ColumnZoneMap, ZoneMaps

    cols = {f"c{i}": ColumnZoneMap("int64", np.zeros(3), np.ones(3), np.ones(3, bool),
                                   np.zeros(3, np.int64), np.zeros(3)) for i in range(5)}
    zm = ZoneMaps(np.array(["a", "b", "c"], dtype=object), np.array([10, 20, 10]),
                  np.array([70, 50, 40]), cols)
    groups = [PlanGroup(("a",), "sort", ("c0",)), PlanGroup(("b", "c"), "sort", ("c1",))]
    cell = Settings(scan_bytes_per_s=100.0, sort_bytes_per_s=50.0, rewrite_cell_bytes=2.0)
    est = groups_rewrite_cost(zm, groups, cell)
    assert est.cpu_seconds == pytest.approx(400 / 100 + 400 / 50)
    assert est.bytes_read == est.bytes_written == 160
    old = groups_rewrite_cost(zm, groups, Settings(scan_bytes_per_s=100.0, sort_bytes_per_s=50.0))
    assert old.cpu_seconds == pytest.approx(160 / 100 + 160 / 50)


def test_partial_progress_pays_the_fixed_terms_once_per_batch() -> None:
    """5 groups (100, 200, 100, 100, 300 B; Hilbert are the 2nd and 5th) committed 2 at a
    time run as 3 jobs, [0, 1] [2, 3] [4], as the executor batches them. By hand: the bytes
    800/100 + 800/50 = 24 s and 5 files + ... 8 files x 0.1 = 0.8 s either way; then
    per batch: the fixed 2 s x 3 = 6, the fitted job in batches 1 and 3 = 2 x 1 s, the
    many-group terms in the two 2-group batches = 2 x (0.5 + 1 x 0.25) = 1.5: 34.3 s.
    As one job: 2 + 1 + (0.5 + 4 x 0.25) = 4.5 on top of 24.8: 29.3 s."""
    from dataclasses import replace

    s = Settings(scan_bytes_per_s=100.0, sort_bytes_per_s=50.0, rewrite_fixed_s=2.0)
    t = RewriteTerms(fitted_job_s=1.0, file_s=0.1, multi_group_s=0.5, group_s=0.25)
    sizes, files = [100, 200, 100, 100, 300], [1, 2, 1, 1, 3]
    layouts = ["sort", "hilbert", "sort", "sort", "hilbert"]
    one_job = plan_rewrite_cost(sizes, s, layouts, files, t)
    assert one_job.cpu_seconds == pytest.approx(24.0 + 0.8 + 2.0 + 1.0 + 1.5)
    batched = plan_rewrite_cost(sizes, replace(s, partial_progress_groups=2), layouts, files, t)
    assert batched.cpu_seconds == pytest.approx(24.0 + 0.8 + 3 * 2.0 + 2 * 1.0 + 2 * 0.75)
    assert batched.bytes_read == batched.bytes_written == 800
    # a batch as large as the plan is one job; the policies' pricing goes the same way
    assert plan_rewrite_cost(sizes, replace(s, partial_progress_groups=5), layouts, files,
                             t).cpu_seconds == pytest.approx(one_job.cpu_seconds)


def test_policies_price_the_batches_of_partial_progress() -> None:
    """groups_rewrite_cost (what every policy prices with) under ``partial_progress_groups``
    = 1: three one-file groups of 100 B, the fixed 2 s three times (6 + 3 + 6 + 3 x 0.5)."""
    from engine.policy.base import PlanGroup
    from engine.policy.costmodel import groups_rewrite_cost
    from engine.table.model import ZoneMaps

    zm = ZoneMaps(np.array(["a", "b", "c"], dtype=object), np.array([1, 1, 1]),
                  np.array([100, 100, 100]), {})
    groups = [PlanGroup((p,), "sort", ("x",)) for p in ("a", "b", "c")]
    s = Settings(scan_bytes_per_s=100.0, sort_bytes_per_s=50.0, rewrite_fixed_s=2.0,
                 file_s=0.5, partial_progress_groups=1)
    assert groups_rewrite_cost(zm, groups, s).cpu_seconds == pytest.approx(3 * 2 + 3 + 6 + 1.5)
    one = Settings(scan_bytes_per_s=100.0, sort_bytes_per_s=50.0, rewrite_fixed_s=2.0, file_s=0.5)
    assert groups_rewrite_cost(zm, groups, one).cpu_seconds == pytest.approx(2 + 3 + 6 + 1.5)


def test_a_plan_counts_the_files_the_table_is_cut_into_not_the_workspaces(settings) -> None:
    """The executor cuts a plan's files at the table's own target (500 rows here), not the
    workspace's (``target_rows`` = 1,000 in the fixture): with 1 s per output file and every
    other rate made negligible, a plan's price is its groups' ceil(rows / 500) files."""
    from dataclasses import replace

    from engine import api
    from engine.table.store import TableStore
    from engine.workload.store import WorkloadStore
    from plan_helpers import make_table, shipdate_fragments

    s = replace(settings, scan_bytes_per_s=1e15, sort_bytes_per_s=1e15, file_s=1.0)
    snap = make_table(s, "lineitem", n=4000, rows_per_file=500)
    assert TableStore(s).info("lineitem").target_rows == 500 and s.target_rows == 1000
    WorkloadStore(s).append("lineitem", shipdate_fragments("lineitem", n=30), snap.schema)
    plan = api.create_plan(s, "lineitem", "dd", {}, created_by="carol")
    assert plan.id is not None, plan
    rows = {p.path: p.rows for p in snap.partitions}
    files = [math.ceil(sum(rows[p] for p in g["partitions"]) / 500) for g in plan.groups]
    assert sum(files) >= 2 and not any(g["layout_params"] for g in plan.groups)
    assert plan.estimated_cost["cpu_seconds"] == pytest.approx(sum(files), abs=1e-6)
