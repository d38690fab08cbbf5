"""With row-group pruning on (``prune_row_groups``), the views that score single queries or a
plan's effect charge what the scan analysis charges: the one-query views
(``api.fragment_scan``, ``api.query_scan``), the plan's impact preview
(``api.plan_impact``, ``engine.policy.impact``), the predicted losses
(``rewrite_losses``) and the log's measured bytes beside the estimate
(``feedback.measured_against_estimate``), not whole files.

The table, hand-checked: file 0 holds x = y = 0..29 in 3 row groups of 10 rows
(x in [0, 9], [10, 19], [20, 29]); file 1 holds x = 100..129, y = 0..29 in one. A query on
x in [12, 15] reads file 0 but only its 2nd row group; one on x in [9.2, 9.5] falls in the
gap between row groups, so file 0 is scanned at file level and pruned at row-group level.
"""

from __future__ import annotations

import dataclasses
import math
import os

import numpy as np
import pyarrow as pa
import pytest

from engine import api
from engine.core.config import load_settings
from engine.plans.feedback import later_report, measured_against_estimate
from engine.policy.base import PlanGroup
from engine.policy.impact import rewrite_losses
from engine.scan import rowgroups
from engine.table.store import TableStore
from engine.workload.store import WorkloadStore
from engine.workspace import Workspace
from rowgroup_helpers import chunk_bytes, rowgroup_table, xy_fragment

INSIDE = {"x": (12.0, 15.0)}  # file 0's 2nd row group only
GAP = {"x": (9.2, 9.5)}  # between file 0's 1st and 2nd row groups


@pytest.fixture
def table(tmp_path):
    """(settings with row groups on, the same workspace with them off, the snapshot)."""
    on = load_settings({"home": str(tmp_path / "home"), "target_rows": 30, "prune_row_groups": True})
    a = np.arange(30, dtype=float)
    snap = rowgroup_table(on, "t", [(pa.table({"x": a, "y": a}), 10),
                                    (pa.table({"x": a + 100, "y": a}), 30)])
    WorkloadStore(on).append("t", [xy_fragment("in", INSIDE), xy_fragment("gap", GAP)], snap.schema)
    return on, dataclasses.replace(on, prune_row_groups=False), snap


def _sizes(snap):
    """(file 0's x+y chunk bytes per row group, each file's x+y bytes, file 0's x and y bytes)."""
    zm = snap.zonemaps()
    cols = (int(zm.columns["x"].compressed_bytes[0]), int(zm.columns["y"].compressed_bytes[0]))
    return chunk_bytes(snap.partitions[0].path), zm.read_bytes(["x", "y"]), cols


def test_one_query_views_charge_the_row_groups_met(table):
    on, off, snap = table
    chunks, read, _ = _sizes(snap)
    assert len(chunks) == 3 and sum(chunks) == read[0]
    frags = {f.query_id: f for f in WorkloadStore(on).fragments("t")}
    by_id = {row["query_id"]: row for row in api.pruning(on, "t")}
    for view in (lambda s, q: api.fragment_scan(s, "t", q), lambda s, q: api.query_scan(s, "t", frags[q])):
        inside, gap = view(on, "in"), view(on, "gap")
        assert inside.index.tolist() == [0] and inside.bytes_scanned == chunks[1]
        assert inside.row_groups == (1, 4)  # of 3 + 1 row groups
        # the waste the page shows: what is charged beyond the matching rows' share of the file
        util = (15 - 12) / 9 * 10 / 30
        assert inside.util[0] == pytest.approx(util)
        assert float(inside.waste.sum()) == pytest.approx(chunks[1] - util * read[0])
        assert gap.index.tolist() == [] and gap.bytes_scanned == 0.0  # pruned by its row groups
        # the same answer as the query table's row (api.pruning at the same level)
        for q, scan in (("in", inside), ("gap", gap)):
            assert (scan.bytes_scanned, scan.scanned_count) == (by_id[q]["bytes_scanned"], by_id[q]["scanned"])
        # the setting off keeps the file level: file 0 read whole for both
        for q in ("in", "gap"):
            assert view(off, q).bytes_scanned == read[0] and view(off, q).row_groups is None


def test_measured_bytes_are_set_beside_the_row_group_estimate(table):
    on, off, snap = table
    chunks, read, _ = _sizes(snap)
    later = [xy_fragment("in", INSIDE, bytes_scanned=1000, duration_ms=20.0),
             xy_fragment("gap", GAP, bytes_scanned=0)]
    groups = rowgroups.for_snapshot(TableStore(on), "t", snap)
    got = measured_against_estimate(snap, later, groups)
    assert got["estimated_bytes"] == chunks[1]  # file level said 2 x read[0]
    assert got["measured_over_estimated"] == pytest.approx(1000 / chunks[1])
    assert measured_against_estimate(snap, later)["estimated_bytes"] == 2 * read[0]
    # later_report passes the run's snapshot's row groups when the setting is on
    pred = {"bytes": 0.0, "cpu_seconds": 0.0, "window_queries": 2}
    assert later_report(TableStore(on), snap, snap, later, pred, 0.0)["log"]["estimated_bytes"] == chunks[1]
    assert later_report(TableStore(off), snap, snap, later, pred, 0.0)["log"]["estimated_bytes"] == 2 * read[0]


def test_the_impact_preview_keeps_untouched_row_groups_and_predicts_the_new_ones(table):
    on, off, snap = table
    chunks, read, (cx, cy) = _sizes(snap)
    files = [p.path for p in snap.partitions]
    # rewriting file 1 only: file 0 keeps its row groups after, so nothing changes for "in"
    only_1 = [{"partitions": [files[1]], "layout": "sort", "columns": ["x"]}]
    rows = {q["query_id"]: q for q in api.plan_impact(on, "t", only_1)["queries"]}
    assert rows["in"]["bytes_before"] == rows["in"]["bytes_after"] == chunks[1]
    assert rows["gap"]["partitions_before"] == rows["gap"]["partitions_after"] == 0
    rows = {q["query_id"]: q for q in api.plan_impact(off, "t", only_1)["queries"]}
    assert rows["in"]["bytes_before"] == rows["in"]["bytes_after"] == read[0]  # file level
    # rewriting file 0 sorted on x into 3 row groups (row_group_bytes = a third of its bytes):
    # the predicted file spans x = [0, 29] and its row groups cut it at equal rows, 29/3 and
    # 58/3; "in" meets the 2nd, "gap" the 1st: each charged a third of the file's chunks
    file_bytes = int(snap.zonemaps().bytes[0])
    third = math.ceil(file_bytes / 3)
    assert math.ceil(file_bytes / third) == 3
    sorted_0 = [{"partitions": [files[0]], "layout": "sort", "columns": ["x"],
                 "layout_params": {"row_group_bytes": third}}]
    rows = {q["query_id"]: q for q in api.plan_impact(on, "t", sorted_0)["queries"]}
    a_third = round(cx / 3) + round(cy / 3)
    assert (rows["in"]["bytes_before"], rows["in"]["bytes_after"]) == (chunks[1], a_third)
    assert (rows["gap"]["partitions_before"], rows["gap"]["partitions_after"]) == (0, 1)
    assert (rows["gap"]["bytes_before"], rows["gap"]["bytes_after"]) == (0.0, a_third)
    # written as one row group: read whole by both queries
    one_0 = [{**sorted_0[0], "layout_params": {"row_group_rows": 30}}]
    rows = {q["query_id"]: q for q in api.plan_impact(on, "t", one_0)["queries"]}
    assert rows["in"]["bytes_after"] == rows["gap"]["bytes_after"] == cx + cy
    # without a size the output model keeps the input's row groups (3 of 10 rows): as above
    plain_0 = [{**sorted_0[0], "layout_params": {}}]
    rows = {q["query_id"]: q for q in api.plan_impact(on, "t", plain_0)["queries"]}
    assert (rows["in"]["bytes_after"], rows["gap"]["bytes_after"]) == (a_third, a_third)


def test_losses_count_the_row_groups_a_rewrite_gives_up(table):
    """Rewriting file 0 into one row group (``row_group_rows`` = its 30 rows) loses "in" what
    its row groups saved: the whole
    file after against one row group before; at file level there is no loss to see."""
    on, off, snap = table
    chunks, read, (cx, cy) = _sizes(snap)
    zm = snap.zonemaps()
    groups = rowgroups.for_snapshot(TableStore(on), "t", snap)
    window = list(WorkloadStore(on).fragments("t"))
    plain = [PlanGroup((snap.partitions[0].path,), "sort", ("x",), layout_params={"row_group_rows": 30})]
    got = rewrite_losses(zm, plain, window, on, row_groups=groups, with_depth=False)
    # "in": cx + cy after against chunks[1]; "gap": cx + cy against nothing
    assert got["queries"] == 2
    assert got["bytes"] == pytest.approx((cx + cy - chunks[1]) + (cx + cy))
    assert rewrite_losses(zm, plain, window, on, with_depth=False)["bytes"] == 0.0  # file level
    # written again with 3 row groups: "in" reads a third of the new file, "gap" a third too
    thirds = [PlanGroup((snap.partitions[0].path,), "sort", ("x",),
                        layout_params={"row_group_bytes": math.ceil(int(zm.bytes[0]) / 3)})]
    got = rewrite_losses(zm, thirds, window, on, row_groups=groups, with_depth=False)
    a_third = round(cx / 3) + round(cy / 3)
    assert got["bytes"] == pytest.approx(max(0, a_third - chunks[1]) + a_third)
    # no size given: the output model keeps the input's 3 row groups, the same loss
    kept = [PlanGroup((snap.partitions[0].path,), "sort", ("x",))]
    assert rewrite_losses(zm, kept, window, on, row_groups=groups, with_depth=False)["bytes"] \
        == pytest.approx(got["bytes"])
    # the preview's regressions for a policy without its own (plans.service) follow the setting
    from engine.plans.service import Decision, _regressions
    from engine.policy.base import CostEstimate, Proposal
    from engine.policy.registry import make_policy

    proposal = Proposal("greedy", {}, tuple(plain), CostEstimate(0, 0, 0, 0), {})
    decision = Decision(snap, make_policy("greedy"), proposal, {}, tuple(window))
    assert _regressions(TableStore(on), decision)["bytes"] == pytest.approx((cx + cy - chunks[1]) + (cx + cy))
    assert _regressions(TableStore(off), decision)["bytes"] == 0.0


def test_the_workload_page_draws_the_query_at_the_row_group_level(tmp_path, monkeypatch):
    """The dashboard's one-query view with ``prune_row_groups = true`` in the workspace's
    file: the counts and the bytes line are the row-group answer."""
    from app.views import fmt_bytes
    from app_open import open_page

    home = tmp_path / "home"
    home.mkdir()
    (home / "layout-advisor.toml").write_text("target_rows = 30\nprune_row_groups = true\n")
    on = load_settings({"home": str(home)}, environ={})
    assert on.prune_row_groups
    a = np.arange(30, dtype=float)
    snap = rowgroup_table(on, "t", [(pa.table({"x": a, "y": a}), 10),
                                    (pa.table({"x": a + 100, "y": a}), 30)])
    WorkloadStore(on).append("t", [xy_fragment("in", INSIDE), xy_fragment("gap", GAP)], snap.schema)
    chunks, read, _ = _sizes(snap)
    monkeypatch.setenv("LAYOUT_ADVISOR_HOME", str(home))
    at = open_page("workload", "t")

    def shown(qid: str) -> tuple[dict[str, str], str]:
        at.text_input(key="workload_find").input(qid).run()
        assert not at.exception, [e.value for e in at.exception]
        assert at.selectbox(key="workload_query").value.split(" · ")[0] == qid
        metrics = {m.label: m.value for m in at.metric}
        return metrics, " ".join(c.value for c in at.caption)

    metrics, captions = shown("in")
    assert (metrics["Scanned"], metrics["Pruned"]) == ("1", "1")
    waste = chunks[1] - (15 - 12) / 9 * 10 / 30 * read[0]
    assert (f"Read {fmt_bytes(chunks[1])} in 1 of the table's 4 row groups; "
            f"wasted about {fmt_bytes(waste)}.") in captions
    metrics, captions = shown("gap")  # file 0 scanned at file level, pruned by its row groups
    assert (metrics["Scanned"], metrics["Pruned"]) == ("0", "2")
    assert f"Read {fmt_bytes(0.0)} in 0 of the table's 4 row groups" in captions
    # the setting switched off in the file while the dashboard runs: no cached row-group answer
    config = home / "layout-advisor.toml"
    config.write_text("target_rows = 30\nprune_row_groups = false\n")
    os.utime(config, ns=(config.stat().st_mtime_ns + 10**9,) * 2)
    at.run()
    metrics, captions = shown("gap")
    assert (metrics["Scanned"], metrics["Pruned"]) == ("1", "1")
    assert f"Read {fmt_bytes(read[0])}; wasted" in captions


def test_paw_n_mbr_files_are_predicted_with_their_row_groups():
    """Two files of 100 rows spanning a = [0, 10] rewritten as a PAW group with n_mbr = 2: two
    new files a = [0, 5] and [5, 10], each of 2 row groups cut at equal rows (2.5 and 7.5),
    50 rows and half the file's bytes each; b keeps each file's range."""
    from engine.policy.impact import predicted_with_row_groups
    from engine.table.model import ColumnStats, Partition, TableSchema, ZoneMaps

    schema = TableSchema((("a", "float"), ("b", "float")))
    zm = ZoneMaps.from_partitions(schema, [
        Partition(f"p{i}", 100, 1000, {"a": ColumnStats(0.0, 10.0, compressed_bytes=400),
                                       "b": ColumnStats(float(i), i + 1.0, compressed_bytes=600)})
        for i in range(2)])
    group = PlanGroup(("p0", "p1"), "paw", ("a",), layout_params={"n_mbr": 2})
    after, groups = predicted_with_row_groups(zm, [group], None)
    assert list(zip(after.column("a").lo.tolist(), after.column("a").hi.tolist())) == [(0, 5), (5, 10)]
    assert groups is not None and groups.start.tolist() == [0, 2, 4] and groups.total == 4
    rg = groups.zonemaps
    assert list(zip(rg.column("a").lo.tolist(), rg.column("a").hi.tolist())) == [
        (0, 2.5), (2.5, 5), (5, 7.5), (7.5, 10)]
    assert rg.rows.tolist() == [50] * 4 and rg.bytes.tolist() == [500] * 4
    assert rg.column("a").compressed_bytes.tolist() == [200] * 4
    assert set(zip(rg.column("b").lo.tolist(), rg.column("b").hi.tolist())) == {(0.0, 2.0)}
    # a query on a in [3, 4] meets one row group: 200 + 300 bytes of a and b, not the file's 1,000
    from engine.scan.pruning import analyze_workload
    from engine.workload.model import Range, ScanFragment

    frag = ScanFragment("q", "t", ({"a": Range(3.0, 4.0)},), ("a", "b"))
    (scan,) = analyze_workload(after, [frag], groups)
    assert scan.index.tolist() == [0] and scan.bytes_scanned == 500.0
    # without n_mbr (or for another layout) the files hold one row group
    assert predicted_with_row_groups(zm, [PlanGroup(("p0", "p1"), "sort", ("a",),
                                                    layout_params={"n_mbr": 2})], None)[1] is None


def test_wair_charges_its_losses_at_the_level_of_its_gains(table, monkeypatch):
    """WAIR's gains come from the context's scans, which ``prune_row_groups`` charges per row
    group; its losses (``losses = "net"``, the default) must be charged at the same level, from the row
    groups the decision's scans used (``PolicyContext.row_groups``), not at file level."""
    from engine.plans import service
    from engine.policy.wair.policy import WairParams, WairPolicy

    on, off, snap = table
    chunks, read, (cx, cy) = _sizes(snap)
    seen = {}

    def capture(self, ctx):
        seen[ctx.settings.prune_row_groups] = ctx
        return None

    monkeypatch.setattr(WairPolicy, "propose", capture)
    service.decide(Workspace(on), "t", "wair", {})
    service.decide(Workspace(off), "t", "wair", {})
    assert seen[True].row_groups is not None and seen[False].row_groups is None
    assert [s.bytes_scanned for s in seen[True].scans] == [chunks[1], 0.0]  # "in", "gap"
    plain = [PlanGroup((snap.partitions[0].path,), "sort", ("x",), layout_params={"row_group_rows": 30})]
    p = WairParams()
    got = WairPolicy._losses(p, seen[True], list(seen[True].window), seen[True].scans, plain)
    assert got["bytes"] == pytest.approx((cx + cy - chunks[1]) + (cx + cy))  # as rewrite_losses
    assert WairPolicy._losses(p, seen[False], list(seen[False].window), seen[False].scans,
                              plain)["bytes"] == 0.0  # file level: nothing to lose
