"""Qd-tree plan groups through the real Spark executor.

A group built exactly as WAIR builds a diffuse group (``anchor`` note +
:func:`engine.policy.wair.groups.qdtree_params` over the window) is executed on a tiny
lineitem-like table of real Parquet files: every row is kept, the tree has several leaves,
the files' zonemaps get narrower on the tree's columns, and the window's queries scan fewer
bytes. Three reported faults each have their own test: ``min_leaf_rows`` not scaled to the
driver sample, leaf-id keys that cannot split a big leaf, and ISO-date / misnamed layout
parameters.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

import engine.spark.fitting as fitting
from engine import api
from engine.core.errors import AdvisorError, PlanError
from engine.layout.groups import build_ordering
from engine.policy.base import PlanGroup
from engine.policy.wair.groups import qdtree_params
from engine.table.store import TableStore
from engine.workload.model import Range, ScanFragment
from plan_helpers import EPOCH, insert_plan, make_table, rows_of
from security_helpers import sign_in

TYPES = {"l_orderkey": "int", "l_orderdate": "date", "l_shipdate": "date",
         "l_commitdate": "date", "l_quantity": "float", "l_comment": "string"}
COLS = ("l_shipdate", "l_quantity")


def _day(n: int) -> dt.date:
    return EPOCH + dt.timedelta(days=n)


def _window(table: str = "lineitem") -> list[ScanFragment]:
    """Three recurring query shapes over ship date and quantity (a diffuse workload)."""
    shapes = [
        {"l_shipdate": Range(_day(700), _day(1300)), "l_quantity": Range(0.0, 20.0)},
        {"l_shipdate": Range(_day(2000), None), "l_quantity": Range(30.0, None)},
        {"l_quantity": Range(40.0, 50.0)},
        {"l_shipdate": Range(None, _day(500))},
    ]
    return [ScanFragment(query_id=f"q{i}", table=table, boxes=(shapes[i % len(shapes)],),
                         columns=("l_shipdate", "l_quantity", "l_orderkey"))
            for i in range(12)]


def _wair_params(window, min_leaf_rows: int) -> dict:
    """Exactly what WairPolicy._groups puts into a Qd-tree group's layout_params."""
    params = {"anchor": "diffuse", "similarity": 0.93}
    params.update(qdtree_params(window, COLS, TYPES, min_leaf_rows))
    return params


def _meets(stats, rng: Range) -> bool:
    if stats is None or stats.min is None or stats.max is None:
        return True
    if rng.max is not None and stats.min > rng.max:
        return False
    if rng.min is not None and stats.max < rng.min:
        return False
    return True


def _bytes_scanned(snapshot, fragments) -> int:
    """Independent oracle: bytes of the files whose zonemaps meet every range of a box."""
    total = 0
    for frag in fragments:
        for p in snapshot.partitions:
            if any(all(_meets(p.columns.get(c), r) for c, r in box.items()) for box in frag.boxes):
                total += p.bytes
    return total


def _mean_width(partitions, column: str) -> float:
    spans = []
    for p in partitions:
        st = p.columns[column]
        lo, hi = st.min, st.max
        spans.append((hi - lo).days if isinstance(lo, dt.date) else float(hi - lo))
    return float(np.mean(spans))


def _run(settings, spark, snap, groups):
    pid = insert_plan(settings, snap, groups)
    alice = sign_in(settings, "alice")
    api.approve_plan(settings, pid, alice, reason="test")
    return api.run_plan(settings, pid, spark=spark, actor=alice)


# -- layout parameters: names WAIR emits, ISO dates, typos -------------------------------
def test_wair_qdtree_params_are_all_taken_and_a_misnamed_one_is_an_error():
    params = _wair_params(_window(), 1000)
    ordering = build_ordering("qdtree", COLS, params, TYPES)
    # nothing WAIR emits for the tree was dropped on the way
    assert ordering.min_leaf_rows == 1000
    assert len(ordering.queries) == len(params["queries"]) == 4
    assert ordering.weights == params["weights"]
    with pytest.raises(PlanError, match="min_leaf"):
        build_ordering("qdtree", COLS, {**params, "min_leaf": 10}, TYPES)
    with pytest.raises(PlanError, match="bits"):
        build_ordering("hilbert", COLS, {"anchor": "a+b", "bitz": 8}, TYPES)


def test_the_executors_output_params_reach_a_fitted_ordering_untouched():
    """A PTO group (engine.policy.pto) over a fitted layout carries the executor's file
    size, row-group size and ``partition_by`` beside the ordering's own parameters: one
    path for both, the output ones left to the executor (not a PlanError)."""
    pto = {"target_file_bytes": 1 << 27, "row_group_bytes": 1 << 20,
           "partition_by": "l_returnflag", "bits": 6}
    ordering = build_ordering("hilbert", COLS, pto, TYPES)
    assert ordering.bits == 6
    output = {k: v for k, v in pto.items() if k != "bits"}
    assert build_ordering("qdtree", COLS, {**output, "min_leaf_rows": 7},
                          TYPES).min_leaf_rows == 7


def test_iso_date_bounds_are_encoded_like_the_data():
    params = {"queries": [{"l_shipdate": ["1994-01-01", "1995-01-01", True, False]}],
              "weights": [1.0], "min_leaf_rows": 2,
              "cuts": [["l_shipdate", "1993-06-01"], ["l_quantity", 10.0, "le"]]}
    ordering = build_ordering("qdtree", COLS, params, TYPES)
    lo = (dt.date(1994, 1, 1) - dt.date(1970, 1, 1)).days
    box = ordering.queries[0]["l_shipdate"]
    assert [box[0], box[1]] == [float(lo), float(lo + 365)]
    assert ordering.cuts[0][1] == float((dt.date(1993, 6, 1) - dt.date(1970, 1, 1)).days)
    days = np.arange(lo - 400, lo + 800, dtype=np.float64)
    ordering.fit({"l_shipdate": days, "l_quantity": days % 50})
    assert ordering.n_leaves_ > 1
    with pytest.raises(AdvisorError, match="l_shipdate"):
        build_ordering("qdtree", COLS, {"min_leaf_rows": 2, "queries": [
            {"l_shipdate": ["someday", None, True, True]}]}, TYPES)


# -- through Spark ------------------------------------------------------------------------
@pytest.mark.spark
def test_wair_qdtree_group_end_to_end(settings, spark):
    base = make_table(settings, n=4000, rows_per_file=500)  # 8 ingestion-ordered files
    window = _window()
    params = _wair_params(window, settings.target_rows)  # WAIR passes settings.target_rows
    paths = tuple(p.path for p in base.partitions)
    result = _run(settings, spark, base, [PlanGroup(paths, "qdtree", COLS, "diffuse", params)])

    after = TableStore(settings).current_snapshot("lineitem")
    assert rows_of([p.path for p in after.partitions]).equals(rows_of(list(paths)))
    fit = result["groups"][0]["fit"]
    assert fit["leaves"] > 1 and fit["min_leaf_rows"] == settings.target_rows  # no sampling
    new = after.partitions
    assert {p.path for p in new}.isdisjoint(paths)
    assert all(p.rows <= 2 * 500 for p in new)  # the table's target size, leaves cut to it
    for col in COLS:
        assert _mean_width(new, col) < 0.75 * _mean_width(base.partitions, col), col
    assert _bytes_scanned(after, window) < 0.8 * _bytes_scanned(base, window)


@pytest.mark.spark
def test_min_leaf_rows_is_scaled_to_the_driver_sample(settings, spark, monkeypatch):
    """A group larger than the driver sample: min_leaf_rows counts group rows, the tree is
    fitted on the sample, so it must be scaled by sample_rows / group_rows (else one leaf).
    The ship-date bounds are ISO strings, as in a hand-written JSON plan."""
    monkeypatch.setattr(fitting, "SAMPLE_ROWS", 600)
    base = make_table(settings, n=4000, rows_per_file=500)
    params = _wair_params(_window(), 500)
    for q in params["queries"]:  # as a JSON plan written by hand would: ISO dates
        if "l_shipdate" in q:
            q["l_shipdate"] = [None if v is None else
                               (dt.date(1970, 1, 1) + dt.timedelta(days=int(v))).isoformat()
                               for v in q["l_shipdate"][:2]] + q["l_shipdate"][2:]
    paths = tuple(p.path for p in base.partitions)
    result = _run(settings, spark, base, [PlanGroup(paths, "qdtree", COLS, "diffuse", params)])
    fit = result["groups"][0]["fit"]
    assert 300 < fit["sample_rows"] < 1000
    assert fit["min_leaf_rows"] == max(1, round(500 * fit["sample_rows"] / 4000))
    assert fit["leaves"] >= 3
    after = TableStore(settings).current_snapshot("lineitem")
    assert rows_of([p.path for p in after.partitions]).equals(rows_of(list(paths)))


@pytest.mark.spark
def test_a_big_leaf_is_cut_into_files_along_the_first_column(settings, spark):
    """Two leaves of ~2000 rows and a 500-row target: leaf ids alone cannot split a leaf;
    the fine key (leaf, rank of the first column) cuts each leaf into ordered files."""
    base = make_table(settings, n=4000, rows_per_file=500)
    params = {"anchor": "diffuse", **qdtree_params(
        [ScanFragment("q", "lineitem", ({"l_quantity": Range(25.0, None)},), ("l_quantity",))],
        ("l_shipdate", "l_quantity"), TYPES, 1500)}
    paths = tuple(p.path for p in base.partitions)
    result = _run(settings, spark, base, [PlanGroup(paths, "qdtree", COLS, "diffuse", params)])
    assert result["groups"][0]["fit"]["leaves"] == 2
    after = TableStore(settings).current_snapshot("lineitem")
    assert rows_of([p.path for p in after.partitions]).equals(rows_of(list(paths)))
    assert len(after.partitions) >= 6 and all(p.rows <= 1000 for p in after.partitions)
    # no file straddles the tree's cut (quantity < 25 | >= 25) ...
    low = [p for p in after.partitions if p.columns["l_quantity"].max < 25.0]
    high = [p for p in after.partitions if p.columns["l_quantity"].min >= 25.0]
    assert len(low) + len(high) == len(after.partitions) and low and high
    # ... and inside each leaf the files are ship-date ranges that do not overlap
    for leaf in (low, high):
        spans = sorted((p.columns["l_shipdate"].min, p.columns["l_shipdate"].max) for p in leaf)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), spans
