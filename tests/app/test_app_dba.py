"""What a DBA meets on the dashboard beyond the numbers: user strings shown as text, a
glossary for every term, readable workload tables, clicks that select, guarded buttons,
and no request to the internet for the page icon."""

from __future__ import annotations

import base64
import doctest
import importlib
import json
import pkgutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app import charts, glossary, views
from app_workspace import build_table, engine_settings, plan_page  # noqa: F401 (fixture)
from engine import api
from security_helpers import sign_in

APP = str(Path(__file__).resolve().parents[2] / "app" / "streamlit_app.py")
TIMEOUT = 120


# ------------------------------------------------------------------ pure views, no Spark
@pytest.mark.parametrize("module", [views, glossary, charts], ids=["views", "glossary", "charts"])
def test_docstring_examples_run(module):
    failed, tried = _testmod_all(module)
    assert tried > 0 and failed == 0


def _testmod_all(module) -> tuple[int, int]:
    """``doctest.testmod`` of a module, or of every module of a package: (failed, tried)."""
    names = [f"{module.__name__}.{m.name}" for m in pkgutil.iter_modules(getattr(module, "__path__", []))]
    results = [doctest.testmod(m) for m in [module, *map(importlib.import_module, names)]]
    return sum(r.failed for r in results), sum(r.attempted for r in results)


@pytest.mark.parametrize("text", [
    "![pixel](http://evil.example/p.png)", "[click](http://evil.example)", "**bold** _it_",
    "<img src=x onerror=alert(1)>", ":red[alarm] :material/warning:", "$x^2$", "a`b`c",
    "# heading\n- item", "see www.evil.example", "<http://evil.example>", "~~gone~~",
    "1. first", "> quoted",
])
def test_md_text_leaves_no_markdown(text):
    out = views.md_text(text)

    def escaped(i: int) -> bool:
        return i > 0 and out[i - 1] == "\\" and not escaped(i - 1)

    for i, ch in enumerate(out):
        if ch in "[]`*<>$~":
            assert escaped(i), (text, out, i)
        if ch == ":" and i + 1 < len(out) and not out[i + 1].isspace():
            assert escaped(i), (text, out, i)
        if ch == "_" and not (0 < i < len(out) - 1 and out[i - 1].isalnum() and out[i + 1].isalnum()):
            assert escaped(i), (text, out, i)
    assert out[0] not in "#>-+" and "www." not in out and "\n" not in out
    assert out.replace("\\", "") == " ".join(text.split())


def test_md_text_keeps_ordinary_text_as_typed():
    assert views.md_text("no table named 'no_such_table'; tables are: bare") == \
        "no table named 'no_such_table'; tables are: bare"


def test_money_is_never_scientific():
    assert views.fmt_money(1.2e-06) == "< $0.01"
    assert views.fmt_money(0.004) == "< $0.01"
    assert views.fmt_money(12.345) == "$12.35"
    assert "e" not in views.fmt_money(3e-9)


def test_queries_table_shows_whole_bytes_and_percentages():
    per_query = pd.DataFrame([
        {"query_id": "q1", "partitions": 100, "scanned": 44, "pruned": 56, "pruning_rate": 0.56,
         "bytes_scanned": 904097.4, "wasted_bytes": 853251.83, "selectivity": 0.02495,
         "average_utilization": 0.056239, "predicated_columns": "l_shipdate"},
    ])
    out = views.queries_table(per_query)
    row = out.iloc[0]
    assert row["pruned (%)"] == 56.0 and row["rows matching (%)"] == 2.5
    assert row["utilization (%)"] == 5.6
    assert row["bytes scanned"] == 904097 and out["bytes scanned"].dtype.kind == "i"
    assert row["bytes wasted"] == 853252
    assert list(out.columns[:2]) == ["query", "filters on"]


def test_glossary_explains_the_terms_the_pages_use():
    names = " ".join(t.name.lower() for t in glossary.TERMS)
    for word in ("overlap depth", "overlap width", "boundary", "utilization", "alpha", "beta",
                 "k_max", "dbscan", "ep file", "hybrid layout", "qd-tree", "window",
                 "credit", "cost limit", "dd-ep"):
        assert word in names, word
    assert all(t.source and t.meaning for t in glossary.TERMS)
    assert [t.name for t in glossary.search("BOUNDARY")][0] == "Boundary partition"


def test_page_icon_is_a_local_file():
    source = Path(APP).read_text()
    assert ":material/" not in source.split("st.set_page_config", 1)[1].split(")", 1)[0]
    assert (Path(APP).parent / "assets" / "icon.png").is_file()


# ------------------------------------------------------------------ pages (AppTest, Spark)
@pytest.fixture(scope="module")
def workspace(tmp_path_factory, spark) -> Path:
    home = tmp_path_factory.mktemp("dba") / "home"
    build_table(home, "lineitem", rows=4000, queries=40)
    return home


def open_page(page: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["table"] = "lineitem"
    at.run()
    if page:
        at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.spark
def test_glossary_drawer_in_the_sidebar(workspace, engine_settings):
    at = open_page()
    assert any(e.label == "Glossary" for e in at.sidebar.expander)
    at.sidebar.text_input(key="glossary_search").input("utilization").run()
    shown = " ".join(m.value for m in at.sidebar.markdown)
    assert "**Utilization**" in shown and "WAIR §4.1" in shown
    assert "**Snapshot**" not in shown


@pytest.mark.spark
def test_a_proposer_name_with_markdown_renders_as_text(workspace, engine_settings):
    evil = "![x](http://evil.example/p.png) [site](http://evil.example)"
    plan = api.create_plan(engine_settings, "lineitem", "wair", created_by=evil)
    assert plan.id is not None, plan
    at = plan_page("lineitem", plan.id, TIMEOUT)
    captions = [c.value for c in at.caption if "proposed by" in c.value]
    assert captions, [c.value for c in at.caption]
    assert "![x](" not in captions[0] and "[site](" not in captions[0]
    assert views.md_text(evil) in captions[0]


@pytest.mark.spark
def test_workload_table_in_percent_and_a_click_selects_the_query(workspace, engine_settings):
    at = open_page("workload")
    table = next(f.value for f in at.dataframe if "pruned (%)" in f.value.columns)
    rows = api.pruning(engine_settings, "lineitem", selectivity=True)
    assert table["pruned (%)"].tolist() == [round(r["pruning_rate"] * 100, 1) for r in rows]
    assert table["bytes scanned"].dtype.kind == "i"
    # a selection on the table (as a click leaves it in session state) picks that query
    third = rows[2]["query_id"]
    at.session_state["workload_table"] = {"selection": {"rows": [2], "columns": []}}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="workload_query").value == third


# ------------------------------------------------------------------ depth over a predicate
WHERE = "l_shipdate between date '1993-01-01' and date '1993-06-30'"


def _touching(settings, lo: str, hi: str) -> int:
    """Partitions whose l_shipdate zonemap meets [lo, hi], counted by hand from the
    partitions' own statistics (not through the pruning evaluator)."""
    import datetime as dt

    snap = api.load_snapshot(settings, "lineitem")
    low, high = dt.date.fromisoformat(lo), dt.date.fromisoformat(hi)
    stats = [p.columns["l_shipdate"] for p in snap.partitions]
    return sum(1 for s in stats if s.min is None or s.max is None or (s.min <= high and s.max >= low))


@pytest.mark.spark
def test_analyze_where_scopes_metrics_to_the_partitions_a_predicate_touches(workspace,
                                                                            engine_settings):
    whole = api.analyze(engine_settings, "lineitem", columns="l_shipdate")[0]
    scoped = api.analyze(engine_settings, "lineitem", columns="l_shipdate", where=WHERE)[0]
    expected = _touching(engine_settings, "1993-01-01", "1993-06-30")
    assert 0 < expected < whole.total_partition_count
    assert scoped.where_partition_count == scoped.total_partition_count == expected
    assert scoped.where == WHERE
    # the scope is a subset of the table: its depth can only be at most the table's deepest
    assert scoped.average_depth <= max(d for _, _, d in whole.depth_profile)
    mask = api.predicate_partitions(engine_settings, "lineitem", WHERE)
    assert int(mask.sum()) == expected


@pytest.mark.parametrize("where, message", [
    ("nosuch > 3", "unknown column 'nosuch'"),
    ("l_shipdate >", "is not a SQL predicate"),
    ("1 = 1", "constrains no column"),
])
@pytest.mark.spark
def test_analyze_where_refuses_bad_predicates_in_one_line(workspace, engine_settings, capsys,
                                                         where, message):
    from engine.cli import main

    code = main(["--home", str(workspace), "analyze", "lineitem", "--where", where])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.spark
def test_partitions_page_filters_by_predicate_and_depth(workspace, engine_settings):
    at = open_page("partitions")
    at.selectbox(key="partitions_column").set_value("l_shipdate").run()
    total = len(next(f.value for f in at.dataframe if "depth" in f.value.columns))
    at.text_input(key="partitions_where").input(WHERE).run()
    assert not at.exception, [e.value for e in at.exception]
    expected = _touching(engine_settings, "1993-01-01", "1993-06-30")
    touched = [m.value for m in at.metric if m.label == "Partitions it may touch"]
    assert touched == [f"{expected:,} of {total:,}"]
    frame = next(f.value for f in at.dataframe if "depth" in f.value.columns)
    assert len(frame) == expected
    deep = float(frame["depth"].median())
    at.number_input(key="partitions_min_depth").set_value(deep).run()
    frame = next(f.value for f in at.dataframe if "depth" in f.value.columns)
    assert 0 < len(frame) <= expected and (frame["depth"] >= deep).all()


# ------------------------------------------------------------------ trend and history
@pytest.mark.spark
def test_trend_and_reclustering_history_after_a_run(workspace, engine_settings, spark):
    plan = api.create_plan(engine_settings, "lineitem", "wair", created_by=sign_in(engine_settings, "carol"))
    assert plan.id is not None, plan
    alice = sign_in(engine_settings, "alice")
    if api.approve_plan(engine_settings, plan.id, alice).status == "proposed":  # dual approval
        api.approve_plan(engine_settings, plan.id, sign_in(engine_settings, "bob"))
    result = api.run_plan(engine_settings, plan.id, spark=spark, actor=alice)
    key = plan.groups[0]["columns"][0]

    trend = api.clustering_trend(engine_settings, "lineitem", columns=[key])
    assert [r["operation"] for r in trend][-1] == "recluster" and trend[-1]["current"]
    before = next(r for r in trend if r["snapshot"] == plan.base_snapshot)
    after = trend[-1]
    assert after["snapshot"] == result["snapshot_id"]
    # the rewrite of the workload's boundary partitions: the workload reads less, and the
    # key's clustering does not get worse (its table-wide average may not move on a small
    # table where only some partitions were rewritten)
    assert after["bytes_scanned"] < before["bytes_scanned"]
    assert after["pruning_rate"] > before["pruning_rate"]
    assert after[f"{key}.average_depth"] <= before[f"{key}.average_depth"]
    # the trend's numbers are analyze's numbers for each snapshot
    for row in (before, after):
        m = api.analyze(engine_settings, "lineitem", columns=key, snapshot_id=row["snapshot"])[0]
        assert row[f"{key}.average_depth"] == m.average_depth

    history = api.reclustering_history(engine_settings, "lineitem")
    run = next(h for h in history if h["plan"] == plan.id)
    assert run["status"] == "succeeded" and run["new_snapshot"] == result["snapshot_id"]
    assert run["partitions_rewritten"] == result["partitions_removed"]
    assert run["measured_seconds"] == result["seconds"]
    assert run["realized_saving_cpu_seconds"] == result["realized"]["saving_cpu_seconds"]

    at = open_page("approve_run")
    shown = next(f.value for f in at.dataframe if views.RE_ESTIMATED_LABEL in f.value.columns)
    assert plan.id in shown["plan"].tolist()
    at = open_page()
    assert any(c.proto.spec and "Average depth per snapshot" in c.proto.spec
               for c in at.get("plotly_chart"))


def test_hybrid_layout_drawing_colours_each_partition_by_its_group():
    """Each partition is drawn with the label of the group that rewrites it (layout and key),
    ordered by its min; the untouched ones are grey and drawn first (below the groups)."""
    import types

    import numpy as np

    from app import charts

    col = types.SimpleNamespace(lo=np.array([30, 10, 20, 0]), hi=np.array([40, 50, 25, 5]),
                                valid=np.array([True, True, True, True]), ltype="int64")
    zm = types.SimpleNamespace(paths=["p0", "p1", "p2", "p3"], column=lambda name: col)
    groups = [{"layout": "sort", "columns": ["a"], "partitions": ["p1", "p3"]},
              {"layout": "hilbert", "columns": ["a", "b"], "partitions": ["p0"]}]
    out = views.group_assignment(zm, groups, "a")
    assert out["lo"].tolist() == [0, 10, 20, 30]  # by min
    assert out["category"].tolist() == ["sort a", "sort a", views.NOT_REWRITTEN, "hilbert a+b"]
    assert out["labels"] == ["sort a", "hilbert a+b", views.NOT_REWRITTEN] and not out["sampled"]
    colors = charts.group_colors(out["labels"], views.NOT_REWRITTEN)
    assert list(colors)[0] == views.NOT_REWRITTEN and len(set(colors.values())) == 3
    fig = charts.group_layout(out, "a", views.NOT_REWRITTEN)
    assert [t.name for t in fig.data] == ["not rewritten (1)", "sort a (2)", "hilbert a+b (1)"]
    # past the limit the untouched partitions are sampled, the rewritten ones all kept
    few = views.group_assignment(zm, groups, "a", limit=3)
    assert sorted(few["category"].tolist()) == ["hilbert a+b", "sort a", "sort a"] and few["sampled"]


def test_group_layout_joins_neighbouring_partitions_of_a_group_past_the_limit(monkeypatch):
    """Rows 0-5 ordered by min in bins of 2 (by hand): {0,1} both sort, {2,3} sort and
    untouched, {4,5} both untouched -> 4 marks; the legend still counts partitions."""
    monkeypatch.setattr(charts.partitions, "BIN_LIMIT", 4)
    monkeypatch.setattr(charts.partitions, "BINS", 3)
    rest = views.NOT_REWRITTEN
    assignment = {"lo": np.array([0, 1, 2, 3, 4, 5]), "hi": np.array([10, 3, 4, 9, 6, 8]),
                  "y": np.arange(6), "ltype": "int64", "labels": ["sort a", rest], "sampled": False,
                  "category": np.array(["sort a", "sort a", "sort a", rest, rest, rest], dtype=object)}
    fig = charts.group_layout(assignment, "a", rest)
    lines = {t.name: t for t in fig.data if t.mode != "markers"}
    assert set(lines) == {"sort a (3)", f"{rest} (3)"}
    sort_marks = lines["sort a (3)"]
    assert list(sort_marks.x[0::3]) == [0, 2] and list(sort_marks.x[1::3]) == [10, 4]
    assert sort_marks.customdata[0::3].tolist() == [[0, 1, 2], [2, 2, 1]]
    assert list(lines[f"{rest} (3)"].x[0::3]) == [3, 4] and list(lines[f"{rest} (3)"].x[1::3]) == [9, 8]
    assert "joins up to 2 neighbouring partitions" in fig.layout.title.text


def test_plan_comparison_frame_formats_each_field():
    out = {"a": 1, "b": 2, "rows": [
        {"field": "partitions rewritten", "a": 126, "b": 43, "difference": -83.0},
        {"field": "bytes written", "a": 2048.0, "b": 1024.0, "difference": -1024.0},
        {"field": "policy", "a": "wair", "b": "dd", "difference": None}]}
    frame = views.compare_frame(out).set_index("")
    assert frame.loc["partitions rewritten"].tolist() == ["126", "43", "−83"]
    assert frame.loc["bytes written", "b − a"] == "−" + views.fmt_bytes(1024.0)
    assert frame.loc["policy"].tolist() == ["wair", "dd", "–"]


# ------------------------------------------------------------------ charts past a few thousand partitions
def test_binned_categories_keep_their_natural_order_and_type():
    """Marks of one bin follow the categories' own order (group 9 before group 10, not
    "10" before "9" as text) and keep their values: numbers stay numbers, so a colour map
    keyed by numbers still finds them. By hand: one bin of 4 rows holding groups 10, 9, 10, 2."""
    lo, hi = np.array([0, 1, 2, 3]), np.array([5, 6, 7, 8])
    out = charts.bin_partitions(lo, hi, np.arange(4), np.array([10, 9, 10, 2]),
                                np.array([1.0, 2, 3, 4]), bins=1)
    assert out["category"].tolist() == [2, 9, 10]
    assert [type(c) for c in out["category"]] == [int, int, int]
    assert out["count"].tolist() == [1, 1, 2] and out["value_max"].tolist() == [4.0, 2.0, 3.0]
    # a mix numpy cannot order (a number and a word) is still binned, compared as text
    mixed = charts.bin_partitions(lo, hi, np.arange(4), np.array([10, "unknown", 10, 2], dtype=object),
                                  np.zeros(4), bins=1)
    assert mixed["category"].tolist() == ["10", "2", "unknown"] and mixed["count"].tolist() == [2, 1, 1]


def test_segment_hover_data_travels_as_float32_while_exact():
    """A segment's hover numbers ride on both of its ends (a line is hovered at its points):
    as float32 they cost half of float64 on the websocket, and stay exact for rows,
    partition numbers and counts below 2**24; past that they stay float64."""
    import plotly.io as pio

    lo, hi = np.array([0, 5, 10]), np.array([6, 9, 15])
    custom = np.column_stack([[0, 999_999, 16_777_215], [12.5, 100.0, 0.25]])
    fig = charts.partition_segments(lo, hi, "int64", "a", np.array(["a", "a", "a"]), {"a": "#000"},
                                    "t", "row", y=np.array([0.5, 1.0, 2.0]), custom=custom,
                                    hovertemplate="%{customdata[0]}")
    (line,) = fig.data
    cd, ys = np.asarray(line.customdata), np.asarray(line.y)
    assert cd.dtype == np.float32 and ys.dtype == np.float32
    assert cd[0::3].tolist() == custom.tolist() and cd[1::3].tolist() == custom.tolist()
    assert np.isnan(cd[2::3]).all() and ys[0::3].tolist() == [0.5, 1.0, 2.0]
    assert pio.to_json(fig, validate=False).count('"dtype":"f4"') == 2  # y and customdata
    big = custom.copy()
    big[2, 0] = 2**24 + 1  # a partition number float32 cannot hold exactly
    fig = charts.partition_segments(lo, hi, "int64", "a", np.array(["a", "a", "a"]), {"a": "#000"},
                                    "t", "row", custom=big, hovertemplate="%{customdata[0]}")
    assert np.asarray(fig.data[0].customdata).dtype == np.float64
    assert np.asarray(fig.data[0].customdata)[6, 0] == 2**24 + 1


def test_partition_marks_are_exact_below_the_limit_and_binned_past_it():
    """Below ``BIN_LIMIT`` rows every partition is its own segment; past it, neighbouring
    rows of one colour join into one mark over their combined range, every partition in
    exactly one mark, on a 3,001-partition case like the SF 1 demo."""
    lo, hi = np.array([0, 5, 10, 12, 20, 21]), np.array([6, 9, 15, 30, 25, 22])
    cat = np.array(["a", "a", "a", "b", "a", "a"])
    exact = charts.segment_marks(lo, hi, np.arange(6), cat, np.arange(6) + 100,
                                 np.array([1.0, 3, 2, 7, 1, 1]), "depth", limit=6)
    assert exact["k"] == 1 and exact["lo"].tolist() == lo.tolist()
    assert exact["custom"][:, 0].tolist() == [100, 101, 102, 103, 104, 105]
    # by hand: bins of 2 rows {0,1} {2,3} {4,5}; rows 2 and 3 differ in colour
    binned = charts.segment_marks(lo, hi, np.arange(6), cat, np.arange(6),
                                  np.array([1.0, 3, 2, 7, 1, 1]), "depth", limit=5, bins=3)
    assert binned["k"] == 2
    assert list(zip(binned["lo"].tolist(), binned["hi"].tolist(), binned["category"].tolist())) == [
        (0, 9, "a"), (10, 15, "a"), (12, 30, "b"), (20, 25, "a")]
    # custom: first row, last row, partitions, largest value
    assert binned["custom"].tolist() == [[0, 1, 2, 3], [2, 2, 1, 2], [3, 3, 1, 7], [4, 5, 2, 1]]

    rng = np.random.default_rng(3)
    n = 3001
    lo = np.sort(rng.integers(0, 100_000, n))
    hi = lo + rng.integers(0, 2_000, n)
    depth = rng.integers(1, 20, n).astype(float)
    cat = charts.depth_bin_labels(depth)
    marks = charts.segment_marks(lo, hi, np.arange(n), cat, np.arange(n), depth, "depth")
    assert marks["k"] == 7  # ceil(3001 / 500)
    count = marks["custom"][:, 2]
    # at most one mark per bin and colour (here depths are drawn at random, so most of the
    # eight colours meet in every bin: the worst case; real depths vary smoothly)
    assert count.sum() == n and len(count) <= charts.partitions.BINS * len(set(cat)) and len(count) < n
    for first, last, _, deepest in marks["custom"][:50]:  # each mark spans its members
        rows = np.arange(int(first), int(last) + 1)
        assert int(first) // 7 == int(last) // 7
        assert deepest == depth[rows][cat[rows] == cat[int(first)]].max()
    fig = charts.partition_segments(marks["lo"], marks["hi"], "int64", "a", marks["category"],
                                    charts.depth_colors(), "t", "row", y=marks["y"],
                                    custom=marks["custom"], hovertemplate=marks["hovertemplate"])
    lines = [t for t in fig.data if t.mode != "markers"]  # markers: zero-length segments
    assert sum(len(t.x) for t in lines) == 3 * len(count)  # one segment per mark


def test_partition_charts_are_svg_while_small_and_webgl_past_the_limits(monkeypatch):
    """SVG (go.Scatter) for a few thousand segments: no WebGL context, which a browser
    without a GPU runs in software; a zero-length segment (a constant partition) gets a
    marker, the only way it shows as SVG. Past the point or marker limit: WebGL."""
    lo = np.array([0, 10, 20, 30])
    hi = np.array([5, 10, 25, 40])  # partition 1 is constant
    cat = np.array(["a", "a", "b", "b"])
    colors = {"a": "#111111", "b": "#222222"}
    fig = charts.partition_segments(lo, hi, "int64", "k", cat, colors, "t", "row",
                                    custom=np.arange(4).reshape(-1, 1).astype(float),
                                    hovertemplate="#%{customdata[0]}")
    assert {type(t).__name__ for t in fig.data} == {"Scatter"}
    assert [(t.name, t.mode) for t in fig.data] == [("a (2)", "lines"), ("a (2)", "markers"),
                                                    ("b (2)", "lines")]
    dot = fig.data[1]
    assert list(dot.x) == [10.0] and list(dot.y) == [1] and not dot.showlegend
    assert dot.customdata.tolist() == [[1.0]]  # hovers as its own partition
    assert list(fig.data[0].x)[:2] == [0.0, 5.0] and np.isnan(fig.data[0].x[2])  # NaN gaps
    monkeypatch.setattr(charts.figure, "SVG_MAX_POINTS", 11)  # 4 segments = 12 points
    fig = charts.partition_segments(lo, hi, "int64", "k", cat, colors, "t", "row")
    assert [type(t).__name__ for t in fig.data] == ["Scattergl", "Scattergl"]
    assert all(t.mode == "lines+markers" for t in fig.data)
    monkeypatch.setattr(charts.figure, "SVG_MAX_POINTS", 60_000)
    monkeypatch.setattr(charts.figure, "SVG_MAX_MARKERS", 0)  # the one constant partition is too many
    fig = charts.partition_segments(lo, hi, "int64", "k", cat, colors, "t", "row")
    assert [type(t).__name__ for t in fig.data] == ["Scattergl", "Scattergl"]
    # the other scatter charts follow the same limits
    monkeypatch.setattr(charts.figure, "SVG_MAX_MARKERS", 3)
    pts = np.arange(8.0).reshape(4, 2)
    assert type(charts.signatures(pts[:3], np.array([0, 0, 1]), None, [], ("x", "y")).data[0]).__name__ == "Scatter"
    assert type(charts.signatures(pts, np.array([0, 0, 1, 1]), None, [], ("x", "y")).data[0]).__name__ == "Scattergl"
    profile = charts.depth_profile([[0, 1, 2], [1, 3, 1]], "int64", "k")
    assert type(profile.data[0]).__name__ == "Scatter"


@pytest.mark.spark
def test_partitions_page_bins_its_segments_past_the_limit(workspace, engine_settings,
                                                          monkeypatch):
    monkeypatch.setattr(charts.partitions, "BIN_LIMIT", 4)
    monkeypatch.setattr(charts.partitions, "BINS", 2)
    at = open_page("partitions")
    n = len(api.load_snapshot(engine_settings, "lineitem").zonemaps())
    k = -(-n // 2)
    assert any(f"{n:,} partitions: each mark joins up to {k} neighbouring" in c.value
               for c in at.caption), [c.value for c in at.caption]
    chart = next(c for c in at.get("plotly_chart") if "per partition, colored by" in c.proto.spec)
    counts = _chart_counts(chart)
    assert sum(counts) == n and len(counts) < n


def _chart_counts(chart) -> list[float]:
    """The partitions behind each binned mark of a partition-segment chart (customdata[2]
    of each segment's first point; plotly ships the numbers as typed arrays)."""
    counts = []
    for trace in json.loads(chart.proto.spec)["data"]:
        if trace.get("mode") == "markers":  # the zero-length segments' dots, drawn twice
            continue
        cd = trace["customdata"]
        arr = (np.frombuffer(base64.b64decode(cd["bdata"]), dtype=cd["dtype"]).reshape(-1, 4)
               if isinstance(cd, dict) else np.asarray(cd, dtype=float))
        counts += arr[0::3, 2].tolist()
    return counts


@pytest.mark.spark
def test_workload_query_chart_bins_past_the_limit(workspace, engine_settings, monkeypatch):
    monkeypatch.setattr(charts.partitions, "BIN_LIMIT", 4)
    monkeypatch.setattr(charts.partitions, "BINS", 2)
    at = open_page("workload")
    n = len(api.load_snapshot(engine_settings, "lineitem").zonemaps())
    assert any(f"{n:,} partitions: each mark joins up to {-(-n // 2)} neighbouring" in c.value
               for c in at.caption), [c.value for c in at.caption]
    chart = next(c for c in at.get("plotly_chart") if ": partitions on " in c.proto.spec)
    counts = _chart_counts(chart)
    assert sum(counts) == n and len(counts) < n
