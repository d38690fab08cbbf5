"""A plan's predicted effect (engine.policy.impact), hand-checked, and on the dashboard."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from engine.policy.base import PlanGroup
from engine.policy.impact import _quantile_cuts, plan_impact, predicted_zonemaps
from engine.table.model import ColumnStats, Partition, TableSchema, ZoneMaps
from engine.workload.model import Range, ScanFragment

SCHEMA = TableSchema((("a", "float"), ("b", "float")))


def table(parts: list[tuple[float, float, float, float, int]]) -> ZoneMaps:
    return ZoneMaps.from_partitions(SCHEMA, [
        Partition(f"p{i}", rows, rows * 10, {"a": ColumnStats(alo, ahi), "b": ColumnStats(blo, bhi)})
        for i, (alo, ahi, blo, bhi, rows) in enumerate(parts)])


def query(qid: str, column: str, lo: float, hi: float) -> ScanFragment:
    return ScanFragment(query_id=qid, table="t", boxes=({column: Range(lo, hi)},), columns=("a", "b"))


def test_sort_splits_the_key_and_mixes_the_other_column():
    # four partitions all spanning a = [0, 10]; on b each its own [2i, 2i + 1]
    zm = table([(0, 10, 2 * i, 2 * i + 1, 100) for i in range(4)])
    group = PlanGroup(tuple(f"p{i}" for i in range(4)), "sort", ("a",))
    out = plan_impact(zm, [group], [query("qa", "a", 0, 2), query("qb", "b", 0, 0.5)], ["a", "b"])
    qa, qb = out["queries"]
    # a in [0, 2]: every file before; after the sort only the file a = [0, 2.5]
    assert (qa["partitions_before"], qa["partitions_after"]) == (4, 1)
    # b in [0, 0.5]: only p0 before; after, every file spans b = [0, 7] (the side effect)
    assert (qb["partitions_before"], qb["partitions_after"]) == (1, 4)
    assert qa["bytes_after"] == pytest.approx(qa["bytes_before"] / 4)
    depth = {c["column"]: c for c in out["columns"]}
    assert depth["a"]["depth_before"] == 4 and depth["a"]["depth_after"] < 4
    assert depth["b"]["depth_before"] == 1 and depth["b"]["depth_after"] == 4


def test_equal_row_cuts_follow_the_rows_not_the_values():
    # 300 rows uniform on [0, 10], 100 rows on [10, 20]: half the rows lie below 200/30
    cuts = _quantile_cuts(np.array([0.0, 10.0]), np.array([10.0, 20.0]), np.array([300.0, 100.0]), 2)
    assert cuts.tolist() == pytest.approx([0.0, 20 / 3, 20.0])
    # a point mass (min == max) holds its rows at one value
    cuts = _quantile_cuts(np.array([5.0, 0.0]), np.array([5.0, 10.0]), np.array([100.0, 100.0]), 2)
    assert cuts[1] == pytest.approx(5.0)


def test_two_keys_make_a_grid_of_slices():
    zm = table([(0, 8, 0, 8, 100)] * 4)
    zm = ZoneMaps.from_partitions(SCHEMA, [
        Partition(f"p{i}", 100, 1000, {"a": ColumnStats(0.0, 8.0), "b": ColumnStats(0.0, 8.0)})
        for i in range(4)])
    after = predicted_zonemaps(zm, [PlanGroup(tuple(f"p{i}" for i in range(4)), "hilbert", ("a", "b"))])
    a = list(zip(after.column("a").lo.tolist(), after.column("a").hi.tolist()))
    b = list(zip(after.column("b").lo.tolist(), after.column("b").hi.tolist()))
    assert a == [(0, 4), (4, 8), (0, 4), (4, 8)] and b == [(0, 4), (0, 4), (4, 8), (4, 8)]
    assert after.rows.tolist() == [100] * 4 and len(after) == 4


def test_untouched_partitions_keep_their_zonemaps():
    zm = table([(0, 10, 0, 1, 100), (0, 10, 2, 3, 100), (20, 30, 5, 6, 50)])
    after = predicted_zonemaps(zm, [PlanGroup(("p0", "p1"), "sort", ("a",))])
    assert after.paths[0] == "p2" and after.column("a").lo[0] == 20 and after.rows[0] == 50
    assert int(after.rows.sum()) == int(zm.rows.sum()) and int(after.bytes.sum()) == int(zm.bytes.sum())


@pytest.mark.spark
def test_impact_on_the_recommendation_page(tmp_path, spark, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from app_workspace import build_table
    from engine import api
    from engine.core.config import load_settings

    home = tmp_path / "home"
    build_table(home, "lineitem", rows=4000, queries=40, spark=spark)
    settings = load_settings({"home": str(home)}, environ={})
    rec = api.preview_plan(settings, "lineitem", "wair")
    assert rec.status == "preview", rec
    n = int(rec.predicted_saving["window_queries"])
    impact = api.plan_impact(settings, "lineitem", rec.groups, window_queries=n)
    assert len(impact["queries"]) == n
    # "before" is exactly what the pruning analysis says of the same queries today
    pruning = {r["query_id"]: r for r in api.pruning(settings, "lineitem")}
    for q in impact["queries"]:
        assert q["bytes_before"] == pytest.approx(pruning[q["query_id"]]["bytes_scanned"])
    total_before = sum(q["bytes_before"] for q in impact["queries"])
    total_after = sum(q["bytes_after"] for q in impact["queries"])
    assert total_after < total_before
    key = rec.groups[0]["columns"][0]
    cols = {c["column"]: c for c in impact["columns"]}
    assert cols[key]["depth_after"] <= cols[key]["depth_before"]  # as the real run shows (test_app_dba)

    monkeypatch.setenv("LAYOUT_ADVISOR_HOME", str(home))
    at = AppTest.from_file(str(Path(__file__).resolve().parents[3] / "app" / "streamlit_app.py"),
                           default_timeout=120)
    at.session_state["table"] = "lineitem"
    at.run()
    at.switch_page("app_pages/recommendation.py").run()
    assert not at.exception, [e.value for e in at.exception]
    per_query = next(f.value for f in at.dataframe if "bytes saved (%)" in f.value.columns)
    assert len(per_query) == n
    saved = per_query["bytes saved (%)"].tolist()
    assert saved == sorted(saved, reverse=True) and not any(math.isnan(s) for s in saved)


def test_losses_are_the_queries_that_read_more_after_the_rewrite():
    # the first case again: the sort on a saves qa 3 files and costs qb 3 files (1000 B each)
    from engine.core.config import Settings
    from engine.policy.impact import rewrite_losses

    zm = table([(0, 10, 2 * i, 2 * i + 1, 100) for i in range(4)])
    group = PlanGroup(tuple(f"p{i}" for i in range(4)), "sort", ("a",))
    frags = [query("qa", "a", 0, 2), query("qb", "b", 0, 0.5)]
    s = Settings(scan_bytes_per_s=1000.0, target_rows=100)  # the executor writes 4 files of 100
    out = rewrite_losses(zm, [group], frags, s)
    assert (out["queries"], out["bytes"], out["cpu_seconds"]) == (1, 3000.0, 3.0)
    (b,) = out["columns"]
    assert (b["column"], b["queries"], b["bytes_lost"]) == ("b", 1, 3000.0)
    assert (b["depth_before"], b["depth_after"]) == (1, 4)
    # with a measured duration, priced like eq. 3: t_read(Q) * lost / size_read(Q)
    timed = [frags[0], ScanFragment("qb", "t", ({"b": Range(0, 0.5)},), ("a", "b"),
                                    duration_ms=2000.0)]
    out = rewrite_losses(zm, [group], timed, s, read_sizes=[4000.0, 1000.0])
    assert out["cpu_seconds"] == pytest.approx(2.0 * 3000 / 1000)
    # nothing to lose: a query on the key alone
    assert rewrite_losses(zm, [group], frags[:1], s)["queries"] == 0


def test_a_column_correlated_with_the_key_keeps_its_order():
    # a: four overlapping ranges; b follows a (b = a + 100), so the files of a sort on a
    # take rows only from the partitions overlapping their slice, and b stays narrow
    zm = table([(5.0 * i, 5.0 * i + 10, 100 + 5.0 * i, 110 + 5.0 * i, 100) for i in range(4)])
    after = predicted_zonemaps(zm, [PlanGroup(tuple(f"p{i}" for i in range(4)), "sort", ("a",))])
    b_lo, b_hi = after.column("b").lo.tolist(), after.column("b").hi.tolist()
    assert b_lo[0] == 100 and b_hi[0] < 125  # not the union [100, 125]
    assert b_lo[-1] > 100 and b_hi[-1] == 125


def test_new_files_are_created_after_every_kept_one():
    # p0..p2 created at 0, 1, 2; p0 and p1 rewritten: p2 keeps 2, the new files get 3
    zm = ZoneMaps.from_partitions(SCHEMA, [
        Partition(f"p{i}", rows, rows * 10, {"a": ColumnStats(alo, ahi), "b": ColumnStats(0.0, 1.0)},
                  created_seq=i)
        for i, (alo, ahi, rows) in enumerate([(0, 10, 100), (0, 10, 100), (20, 30, 50)])])
    assert zm.created_seq.tolist() == [0, 1, 2]
    after = predicted_zonemaps(zm, [PlanGroup(("p0", "p1"), "sort", ("a",))])
    assert after.paths[0] == "p2" and after.created_seq.tolist() == [2] + [3] * (len(after) - 1)
    # every partition rewritten: the new files start at 1, after the empty rest
    after = predicted_zonemaps(zm, [PlanGroup(("p0", "p1", "p2"), "sort", ("a",))])
    assert after.created_seq.tolist() == [1] * len(after)
    # zonemaps without a per-file creation order keep none
    bare = ZoneMaps(zm.paths, zm.rows, zm.bytes, zm.columns, created_seq=np.zeros(0, dtype=np.int64))
    after = predicted_zonemaps(bare, [PlanGroup(("p0", "p1"), "sort", ("a",))])
    assert after.created_seq.size == 0 and len(after) >= 2
