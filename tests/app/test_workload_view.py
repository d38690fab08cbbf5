"""The Workload page pages its query table, finds queries by id or SQL, and bins
its histograms on the engine side (engine/browse/queries.py); on a small table the page
shows what a pandas sort shows, a click picks the query and the search finds it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app_open import open_page
from page_helpers import all_pages, joined
from app_workspace import init_home, write_lineitem, write_queries
from engine import api
from engine.core.config import load_settings
from engine.core.errors import InvalidParameterError


def _per_query(n: int, seed: int = 3) -> pd.DataFrame:
    """A pruning summary's columns with ties, NaN and missing values in every kind."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({key: rng.integers(0, 6, n).astype(float)
                          for key in api.QUERY_SORT_KEYS if key != "log"})
    frame["query_id"] = [f"q{v:02d}" for v in rng.permutation(n)]
    frame["ts"] = [None if v == 0 else f"2024-03-0{v}T08:00:00" for v in rng.integers(0, 4, n)]
    frame["predicated_columns"] = rng.choice(["a", "a, b", "b"], n)
    frame.loc[rng.random(n) < 0.2, "wasted_bytes"] = np.nan
    frame["scanned"] = frame["scanned"].astype(int)
    return frame


@pytest.mark.parametrize("sort", api.QUERY_SORT_KEYS)
@pytest.mark.parametrize("descending", [True, False])
def test_pages_concatenate_to_a_pandas_sort(sort: str, descending: bool) -> None:
    cols = _per_query(90)
    frame = cols.assign(i=np.arange(90), log=np.arange(90))
    frame["unknown"] = frame[sort].isna()
    want = frame.sort_values(["unknown", sort, "i"], ascending=[True, not descending, True],
                             kind="stable")["i"].tolist()
    pages = all_pages(lambda offset, limit: api.query_page(cols, sort=sort, descending=descending,
                                                           offset=offset, limit=limit))
    assert [(p["total"], p["offset"]) for p in pages] == [(90, 17 * k) for k in range(len(pages))]
    assert joined(pages) == want


def test_query_page_refuses_an_unknown_sort_and_a_bad_page() -> None:
    cols = _per_query(5)
    with pytest.raises(InvalidParameterError, match="sort must be one of"):
        api.query_page(cols, sort="cost")
    with pytest.raises(InvalidParameterError, match="limit >= 1"):
        api.query_page(cols, limit=0)


def test_find_queries_ranks_exact_then_prefix_then_contains_then_sql() -> None:
    ids = ["q10", "q1", "xq1", "q2", "Q100", "r5"]
    sql = ["", "", "", "where l_commitdate", "", "select q1 from t"]
    # exact "q1" (1), ids starting with it in log order (0, 4), containing it (2), SQL (5)
    assert api.find_queries(ids, " Q1 ", sql=sql).tolist() == [1, 0, 4, 2, 5]
    assert api.find_queries(ids, "q1", sql=sql, limit=2).tolist() == [1, 0]
    assert api.find_queries(ids, "COMMITDATE", sql=sql).tolist() == [3]
    assert api.find_queries(ids, "commitdate").tolist() == []  # no SQL given: ids only
    assert api.find_queries(ids, "  ").tolist() == []


def test_histogram_bins_count_every_value_once() -> None:
    values = np.array([0.0, 0.5, 24.9, 25.0, 99.0, 100.0, np.nan])
    out = api.histogram_bins(values, bins=4, value_range=(0, 100))
    assert out["edges"].tolist() == [0.0, 25.0, 50.0, 75.0, 100.0]
    assert out["counts"].tolist() == [3, 1, 0, 2]  # the last bin holds 100
    rng = np.random.default_rng(1)
    many = rng.normal(size=10_000)
    out = api.histogram_bins(many, bins=40)
    assert out["counts"].sum() == 10_000
    assert out["edges"][0] == many.min() and out["edges"][-1] == many.max()
    one = api.histogram_bins([7.0, 7.0], bins=3)
    assert one["counts"].sum() == 2 and one["edges"][0] < 7 < one["edges"][-1]


def test_histogram_bins_of_datetimes_keep_datetime_edges() -> None:
    stamps = np.array(["2024-03-01T00:00", "2024-03-01T06:00", "2024-03-02T00:00", "NaT"],
                      dtype="datetime64[m]")
    out = api.histogram_bins(stamps, bins=4)
    assert out["edges"].dtype == np.dtype("datetime64[ns]")
    assert out["edges"][0] == np.datetime64("2024-03-01T00:00")
    assert out["edges"][1] == np.datetime64("2024-03-01T06:00")
    assert out["counts"].tolist() == [1, 1, 0, 1]


@pytest.fixture(scope="module")
def settings(tmp_path_factory):
    home = init_home(tmp_path_factory.mktemp("wview") / "home")
    settings = load_settings({"home": str(home)}, environ={})
    src = write_lineitem(home.parent / "lineitem.parquet", rows=6000)
    api.create_demo_table(settings, "lineitem", src, 100, table_format="native")
    api.import_workload(settings, "lineitem",
                        str(write_queries(home.parent / "queries.jsonl", "lineitem", 130)))
    return settings


def test_query_scan_of_a_held_fragment_equals_fragment_scan(settings) -> None:
    frags = api.workload_fragments(settings, "lineitem")
    for frag in (frags[0], frags[77]):
        want = api.fragment_scan(settings, "lineitem", frag.query_id)
        got = api.query_scan(settings, "lineitem", frag)
        assert 0 < int(got.scanned.sum()) < len(got.scanned)
        for field in ("scanned", "fully_covered", "boundary", "utilization"):
            assert np.array_equal(getattr(got, field), getattr(want, field)), field
        assert got.bytes_scanned == want.bytes_scanned


def _open(settings, monkeypatch) -> AppTest:
    monkeypatch.setenv("LAYOUT_ADVISOR_HOME", str(settings.home))
    return open_page("workload", "lineitem")


def _table(at: AppTest) -> pd.DataFrame:
    return next(f.value for f in at.dataframe if "pruned (%)" in f.value.columns)


def test_workload_page_shows_one_page_sorted_and_a_click_picks_its_query(settings,
                                                                        monkeypatch) -> None:
    rows = api.pruning_summary(settings, "lineitem")
    assert len(rows) == 130
    at = _open(settings, monkeypatch)
    # the first view: log order, 100 rows a page, 2 pages
    assert _table(at)["query"].tolist() == [r["query_id"] for r in rows[:100]]
    assert at.number_input(key="workload_page").label == "Page (of 2)"
    # sorting by wasted bytes turns "Largest first" on and goes back to page 1
    at.selectbox(key="workload_per_page").set_value(50).run()
    at.selectbox(key="workload_sort").set_value("wasted_bytes").run()
    assert at.toggle(key="workload_desc").value is True
    at.number_input(key="workload_page").set_value(2).run()
    assert not at.exception, [e.value for e in at.exception]
    waste = np.array([r["wasted_bytes"] for r in rows])
    order = np.lexsort((np.arange(130), -waste))  # largest first, ties in log order
    table = _table(at)
    assert table["query"].tolist() == [rows[i]["query_id"] for i in order[50:100]]
    assert table["bytes wasted"].tolist() == np.round(waste[order[50:100]]).astype(int).tolist()
    captions = " ".join(c.value for c in at.caption)
    assert "130 queries; rows 51 to 100 shown, largest bytes wasted first" in captions
    # a click on the page's fourth row draws that query (the 54th most wasteful)
    key = "workload_table_wasted_bytes_1_50_2"
    at.session_state[key] = {"selection": {"rows": [3], "columns": []}}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="workload_query").value == rows[order[53]]["query_id"]
    # another page is another widget: the old click does not pick a row of the new page
    at.number_input(key="workload_page").set_value(3).run()
    assert at.selectbox(key="workload_query").value == rows[order[53]]["query_id"]
    assert _table(at)["query"].tolist() == [rows[i]["query_id"] for i in order[100:130]]


def test_the_picker_lists_the_most_wasteful_and_finds_any_query_by_id(settings,
                                                                      monkeypatch) -> None:
    at = _open(settings, monkeypatch)
    picker = at.selectbox(key="workload_query")
    assert len(picker.options) == 50  # the first 50 of 130, not every query
    hot = [r for r in api.pruning_summary(settings, "lineitem")
           if "l_shipdate" in r["predicated_columns"]]
    worst = max(hot, key=lambda r: r["wasted_bytes"])  # the most filtered column's worst
    assert picker.value == worst["query_id"]
    at.text_input(key="workload_find").input("q117").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="workload_query").value == "q117"
    frag = next(f for f in api.workload_fragments(settings, "lineitem") if f.query_id == "q117")
    assert frag.sql in [c.value for c in at.code]
    # a search by SQL text lists only the queries it finds
    at.text_input(key="workload_find").input("l_commitdate").run()
    options = at.selectbox(key="workload_query").options
    commit = [f.query_id for f in api.workload_fragments(settings, "lineitem")
              if "l_commitdate" in (f.sql or "")]
    assert 0 < len(commit) < 50
    assert [o.split(" · ")[0] for o in options] == commit
    at.text_input(key="workload_find").input("nothing like this").run()
    assert any("No query id or SQL contains" in c.value for c in at.caption)


def test_workload_histograms_are_sent_as_bins(settings, monkeypatch) -> None:
    import json

    at = _open(settings, monkeypatch)
    charts = {json.loads(c.proto.spec)["layout"]["title"]["text"]: json.loads(c.proto.spec)
              for c in at.get("plotly_chart")}
    sel = next(v for k, v in charts.items() if k.startswith("Selectivity"))
    (trace,) = sel["data"]
    assert trace["type"] == "bar"
    want = api.histogram_bins([r["selectivity"] * 100
                               for r in api.pruning_summary(settings, "lineitem")], 40)
    assert _numbers(trace["y"]) == want["counts"].tolist()
    util = next(v for k, v in charts.items() if k.startswith("Utilization"))
    assert len(_numbers(util["data"][0]["y"])) == 20
    # the one-query chart names each state with its partitions (60: drawn one by one)
    qid = at.selectbox(key="workload_query").value
    scan = api.fragment_scan(settings, "lineitem", qid)
    segments = next(v for k, v in charts.items() if k == f"Query {qid}: partitions on l_shipdate")
    names = {t["name"] for t in segments["data"]}
    want = {"pruned": int((~scan.scanned).sum()), "fully covered": int(scan.fully_covered.sum()),
            "boundary": int(scan.boundary.sum())}
    assert names == {f"{k} ({v:,})" for k, v in want.items() if v}
    assert sum(want.values()) == len(scan.scanned) == 60


def _numbers(values) -> list:
    """A plotly array as JSON gives it (a list, or a typed array as base64)."""
    import base64

    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]).tolist()
    return list(values)
