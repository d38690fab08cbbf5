"""The Workload, Overview and Partitions figures of a log with repeated statements are the
same whether they are computed query by query or over the distinct statements with their
counts (what the dashboard does with a busy log), and the depth profile draws what it drew
with one ``add_vrect`` per deepest range."""

from __future__ import annotations

import json
import math
import types

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from app import charts, views
from app.views import fmt_bytes
from engine import api
from engine.table.model import TableSchema
from engine.workload.model import Range, RangeSource, ScanFragment
from engine.workload.store import WorkloadStore

SCHEMA = TableSchema((("a", "int"), ("b", "int"), ("d", "date")))


def busy_log(tmp_path):
    """Four statements, 40 queries, stored and read back as the dashboard reads them."""
    shapes = [
        ScanFragment("", "t", ({"a": Range(1, 9)},), ("a",), sql="SELECT * FROM t WHERE a <= 9",
                     sources=(RangeSource("a", "direct"),)),
        ScanFragment("", "t", ({"a": Range(3, 4), "b": Range(0, 1)},), ("a", "b"),
                     sql="SELECT b FROM t WHERE a BETWEEN 3 AND 4 AND b <= 1",
                     sources=(RangeSource("a", "propagated", "x"), RangeSource("b", "direct"))),
        ScanFragment("", "t", ({"b": Range(5, None)},), ("b",), sql="SELECT b FROM t WHERE b >= 5",
                     sources=(RangeSource("b", "lookup", "k", "dim", "7", "k > 1"),)),
        ScanFragment("", "t", (), ("a",), sql="SELECT a FROM t"),
    ]
    rng = np.random.default_rng(5)
    frags = [shapes[int(k)].relogged(f"q{i}", f"2024-01-01T{int(h):02d}:00:00")
             for i, (k, h) in enumerate(zip(rng.integers(0, 4, 40), rng.integers(0, 24, 40)))]
    store = WorkloadStore(types.SimpleNamespace(home=str(tmp_path)))
    store.replace("t", frags, SCHEMA)
    frags = store.fragments("t")
    # a statement's pruning is the same for each of its queries (as the engine's summary)
    waste = {s.sql: w for s, w in zip(shapes, (0.1, 1e6 / 3, 0.7, 0.0))}
    per_query = pd.DataFrame({"query_id": [f.query_id for f in frags],
                              "predicated_columns": [", ".join(f.predicated_columns) for f in frags],
                              "wasted_bytes": [waste[f.sql] for f in frags],
                              "scanned": [3] * len(frags), "boundary": [1] * len(frags),
                              "pruning_rate": [0.5] * len(frags),
                              "bytes_scanned": [10.0] * len(frags)})
    return frags, store.distinct("t"), per_query


def test_workload_views_are_the_same_over_distinct_statements(tmp_path) -> None:
    frags, distinct, per_query = busy_log(tmp_path)
    assert len(distinct.fragments) == 4 and int(distinct.counts.sum()) == 40
    each = views.workload_views(frags, per_query)
    grouped = views.workload_views(frags, per_query, distinct)
    pd.testing.assert_series_equal(each["freq"], grouped["freq"])
    assert list(each["freq"].index) == list(grouped["freq"].index)
    pd.testing.assert_series_equal(each["waste"], grouped["waste"], check_exact=True)
    assert list(each["labels"].items()) == list(grouped["labels"].items())
    pd.testing.assert_series_equal(each["times"], grouped["times"])
    # rows in another order than the log are found by query id: the same figures
    shuffled = views.workload_views(frags, per_query.sample(frac=1, random_state=2), distinct)
    pd.testing.assert_series_equal(shuffled["waste"], grouped["waste"], check_exact=True)
    assert list(shuffled["labels"].items()) == list(grouped["labels"].items())
    # the figures a user reads: counted query by query as the page did before
    counted: dict[str, int] = {}
    for f in frags:
        for c in f.predicated_columns:
            counted[c] = counted.get(c, 0) + 1
    assert grouped["freq"].to_dict() == counted
    wasted = dict(zip(per_query["query_id"], per_query["wasted_bytes"]))
    for col, total in grouped["waste"].items():
        assert total == math.fsum(wasted[f.query_id] for f in frags if col in f.predicated_columns)
    ranked = sorted(frags, key=lambda f: ("a" not in f.predicated_columns, -wasted[f.query_id]))
    assert list(grouped["labels"]) == [f.query_id for f in ranked]
    first = ranked[0]
    assert grouped["labels"][first.query_id] == (
        f"{first.query_id} · {', '.join(first.predicated_columns)} · wastes "
        f"{fmt_bytes(wasted[first.query_id])}")


def test_summary_and_range_sources_are_the_same_over_distinct_statements(tmp_path) -> None:
    frags, distinct, per_query = busy_log(tmp_path)
    assert views.workload_summary(per_query, frags) == \
        views.workload_summary(per_query, frags, distinct)
    each = views.range_sources(frags, api.source_text)
    grouped = views.range_sources(frags, api.source_text, distinct)
    assert list(each.items()) == list(grouped.items()) and len(grouped) == 40
    assert grouped[next(f.query_id for f in frags if not f.sources)] == \
        api.source_text([])


def test_depth_profile_draws_the_shapes_add_vrect_drew() -> None:
    segments = [["1992-01-02", "1992-01-03", 1], ["1992-01-03", "1992-01-05", 5],
                ["1992-01-05", "1992-02-01", 2]]
    deepest = [{"start": "1992-01-03", "end": "1992-01-05", "depth": 5},
               {"start": "1992-01-05", "end": "1992-02-01", "depth": 2}]
    got = json.loads(charts.depth_profile(segments, "date", "d", deepest).to_json())
    ref = go.Figure(json.loads(charts.depth_profile(segments, "date", "d", ()).to_json()))
    for i, rng in enumerate(deepest):
        note = dict(annotation_text=f"deepest: depth {rng['depth']}",
                    annotation_position="top left") if i == 0 else {}
        ref.add_vrect(x0=rng["start"], x1=rng["end"], fillcolor="#d62728", opacity=0.25,
                      line=dict(color="#d62728", width=1), **note)
    assert got == json.loads(ref.to_json())
    assert got["data"][0]["x"] == ["1992-01-02", "1992-01-03", "1992-01-03", "1992-01-05",
                                   "1992-01-05", "1992-02-01"]
    assert got["data"][0]["y"] == [1, 1, 5, 5, 2, 2]
