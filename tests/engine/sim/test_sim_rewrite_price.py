"""The simulator prices a rewrite as the engine that runs it pays (engine.sim.apply): once per
plan for the Spark executor (one job per plan), as the policies' groups_rewrite_cost does;
per group for the presets' DuckDB economics (one COPY per group)."""

from __future__ import annotations

import pytest

from engine.core.config import Settings
from engine.core.errors import InvalidParameterError
from engine.policy.base import PlanGroup
from engine.policy.costmodel import groups_rewrite_cost
from engine.scenarios.presets import build_scenario
from engine.sim.apply import apply_groups
from engine.sim.table import SimTable

TARGET = 40
#: round rates so the expected seconds can be written by hand
S = Settings(scan_bytes_per_s=1e9, rewrite_read_bytes_per_s=1000.0, sort_bytes_per_s=500.0,
             rewrite_fixed_s=2.0, file_s=0.25, target_rows=TARGET)


@pytest.fixture()
def table_and_groups():
    sc = build_scenario("tpch", rows=2_000, seed=1,
                        overrides={"periods": 1, "batches_per_period": 2, "recluster_start": 1,
                                                  "target_rows": TARGET})
    table = SimTable(sc.dataset.schema, sc.dataset.data, sc.dataset.widths, TARGET)
    for b in sc.batches:
        table.ingest(b.row_start, b.row_stop)
    zm, pids = table.zonemaps()
    paths = [table.path(int(p)) for p in pids]
    groups = [PlanGroup(tuple(paths[:6]), "sort", ("l_shipdate",)),
              PlanGroup(tuple(paths[6:10]), "sort", ("l_partkey",)),
              PlanGroup(tuple(paths[10:13]), "sort", ("l_commitdate",))]
    return table, zm, groups


def _by_hand(table, groups, fixed_times: int, files: int) -> float:
    nbytes = [float(table.zonemaps_of([table.pid_of(p) for p in g.partitions]).bytes.sum()) for g in groups]
    return fixed_times * 2.0 + sum(b / 1000.0 + b / 500.0 for b in nbytes) + files * 0.25


def test_a_plan_pays_the_fixed_cost_once_like_the_policies_price_it(table_and_groups):
    table, zm, groups = table_and_groups
    expected = _by_hand(table, groups, 1, 13)  # 6 + 4 + 3 partitions of 40 rows -> 13 files
    predicted = groups_rewrite_cost(zm, groups, S).cpu_seconds
    res = apply_groups(table, groups, S)
    assert len(res.new_pids) == 13 and res.groups == 3
    assert res.cpu_seconds == pytest.approx(expected)
    assert predicted == pytest.approx(expected)  # the simulator charges what the policy priced


def test_duckdb_economics_pay_it_per_group(table_and_groups):
    table, _, groups = table_and_groups
    expected = _by_hand(table, groups, 3, 13)
    assert apply_groups(table, groups, S, "group").cpu_seconds == pytest.approx(expected)


def test_unknown_fixed_cost_rule_is_refused(table_and_groups):
    table, _, groups = table_and_groups
    with pytest.raises(InvalidParameterError, match="fixed_per"):
        apply_groups(table, groups, S, "statement")


def test_a_calibrated_rewrite_is_priced_per_cell_like_the_plan(table_and_groups):
    """Once calibrated (``rewrite_cell_bytes``), the plan prices a group at rows x columns x
    bytes per cell (costmodel.work_bytes); the simulator must charge the same size, not the
    groups' modelled compressed bytes. By hand: the three groups hold 238, 159 and 119 rows
    (partitions of 39-40 rows) of the 16-column TPC-H table, at 2 B per cell 7,616 + 5,088 +
    3,808 = 16,512 work bytes; 2 s once + 16,512 / 1,000 + 16,512 / 500 + 13 files x 0.25 s
    = 54.786 s. (Their compressed bytes, 9,142 + 6,107 + 4,571 = 19,820, gave 64.71 s.)"""
    table, zm, groups = table_and_groups
    s = Settings(scan_bytes_per_s=1e9, rewrite_read_bytes_per_s=1000.0, sort_bytes_per_s=500.0,
                 rewrite_fixed_s=2.0, file_s=0.25, target_rows=TARGET, rewrite_cell_bytes=2.0)
    rows = [int(table.zonemaps_of([table.pid_of(p) for p in g.partitions]).rows.sum()) for g in groups]
    assert rows == [238, 159, 119] and len(table.schema.columns) == 16
    predicted = groups_rewrite_cost(zm, groups, s).cpu_seconds
    res = apply_groups(table, groups, s)
    assert predicted == pytest.approx(54.786)
    assert res.cpu_seconds == pytest.approx(54.786)  # the simulator charges what the plan priced
    assert res.bytes_read == pytest.approx(9142 + 6107 + 4571)  # bytes moved stay the real ones
