"""Every dashboard page under Streamlit's AppTest, on a small demo-like workspace.

The numbers on the pages are compared with what ``engine.api`` returns for the same
snapshot; no page may show an exception element.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_workspace import build_table, engine_settings  # noqa: F401 (fixture)

APP = str(Path(__file__).resolve().parents[2] / "app" / "streamlit_app.py")
TIMEOUT = 120

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, spark) -> Path:
    """One workspace for the module: ``lineitem`` with a workload, ``bare`` without."""
    home = tmp_path_factory.mktemp("app") / "home"
    build_table(home, "lineitem", rows=6000, queries=60)
    build_table(home, "bare", rows=1500, queries=0)
    return home


def open_app(page: str | None = None, table: str = "lineitem") -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["table"] = table
    at.run()
    if page:
        at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def frame_with(at: AppTest, column: str):
    """The first dataframe on the page that has ``column``."""
    for frame in at.dataframe:
        if column in frame.value.columns:
            return frame.value
    raise AssertionError(f"no table with a {column!r} column on the page")


def metric(at: AppTest, label: str) -> list[str]:
    return [m.value for m in at.metric if m.label == label]


def test_overview_cards_match_engine(engine_settings):
    from engine import api

    at = open_app()
    assert at.title[0].value == "Overview"
    chosen = at.multiselect[0].value
    assert "l_shipdate" in chosen and "l_commitdate" in chosen  # the workload's columns
    metrics = {m.column: m for m in api.analyze(engine_settings, "lineitem")}
    depths = metric(at, "Average depth")
    overlaps = metric(at, "Average overlaps")
    assert len(depths) == len(chosen)
    for col, depth, ovl in zip(chosen, depths, overlaps):
        assert depth == f"{metrics[col].average_depth:,.2f}"
        assert ovl == f"{metrics[col].average_overlaps:,.2f}"
    text = " ".join(m.value for m in at.markdown).lower()
    verdict, reason = metrics["l_shipdate"].reason.split(": ", 1)
    assert reason.lower() in text and verdict.lower() in text  # the verdict with its reason
    assert metric(at, "Queries") == ["60"]
    frags = api.workload_fragments(engine_settings, "lineitem")
    assert len(frags) == 60


def test_overview_without_workload_says_how_to_import(engine_settings):
    at = open_app(table="bare")
    infos = " ".join(i.value for i in at.info)
    assert "layout-advisor workload import bare FILE" in infos
    assert not at.error


def test_partitions_page(engine_settings):
    from engine import api

    at = open_app("partitions")
    assert at.selectbox(key="partitions_column").value == "l_shipdate"
    snap = api.load_snapshot(engine_settings, "lineitem")
    table = frame_with(at, "overlaps")
    assert len(table) == snap.partition_count
    assert sorted(table["rows"].tolist()) == sorted(p.rows for p in snap.partitions)
    charts = at.get("plotly_chart")
    assert len(charts) >= 3  # segments, depth profile, EP regions
    at.radio(key="partitions_order").set_value("min").run()
    at.selectbox(key="partitions_column").set_value("l_orderkey").run()
    assert not at.exception


def test_workload_page_counts_match_pruning(engine_settings):
    from engine import api
    from engine.scan.pruning import analyze_fragment

    at = open_app("workload")
    qid = at.selectbox(key="workload_query").value
    frag = next(f for f in api.workload_fragments(engine_settings, "lineitem") if f.query_id == qid)
    scan = analyze_fragment(api.load_snapshot(engine_settings, "lineitem").zonemaps(), frag)
    assert metric(at, "Pruned") == [f"{int((~scan.scanned).sum()):,}"]
    assert metric(at, "Scanned") == [f"{int(scan.scanned.sum()):,}"]
    assert metric(at, "Fully covered") == [f"{int(scan.fully_covered.sum()):,}"]
    assert metric(at, "Boundary") == [f"{int(scan.boundary.sum()):,}"]
    assert len(at.get("plotly_chart")) >= 5


def test_workload_page_empty_state(engine_settings):
    at = open_app("workload", table="bare")
    assert "layout-advisor workload import bare FILE" in " ".join(i.value for i in at.info)


def test_recommendation_matches_preview_and_stores_a_plan(engine_settings):
    from engine import api

    at = open_app("recommendation")
    labels = [n.label for n in at.number_input]
    for needed in ("Window (queries)", "alpha (aggressiveness)", "k_max (partitions per sort)",
                   "DBSCAN eps (cosine)", "DBSCAN min_samples"):
        assert needed in labels
    rec = api.preview_plan(engine_settings, "lineitem", "wair",
                           {"window": 50, "alpha": 1.0, "beta": 0.0, "eps": 0.1,
                            "min_samples": 5})  # k_max derived, as the page's default
    if rec.status == "no-action":
        assert rec.reason in " ".join(i.value for i in at.info)
        return
    assert metric(at, "Partitions to rewrite")[0] == f"{rec.partition_count:,}"
    before = len(api.list_plans(engine_settings, "lineitem"))
    at.button(key="rec_store").click().run()
    assert not at.exception
    plans = api.list_plans(engine_settings, "lineitem")
    assert len(plans) == before + 1 and plans[-1].status == "proposed"
    assert any("stored as **proposed**" in s.value for s in at.success)


def test_whatif_runs_the_simulator_and_shows_its_numbers(engine_settings):
    from engine import api

    at = open_app("whatif")
    assert at.selectbox(key="wi_preset").value == "tpch"
    at.radio(key="wi_mode").set_value("quick").run()
    at.number_input(key="wi_tpch_rows").set_value(20_000)
    at.number_input(key="wi_tpch_periods").set_value(3)
    at.number_input(key="wi_tpch_batches_per_period").set_value(2)
    at.multiselect(key="wi_policies").set_value(["nr", "wair"])
    at.button(key="wi_run").click().run(timeout=300)
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.get("plotly_chart")) == 3
    summary = at.dataframe[0].value.set_index("policy")
    defaults = {f["name"]: f["default"] for f in api.scenario_parameters("tpch")}
    overrides = {k: v for k, v in defaults.items()
                 if k not in ("preset", "rows", "seed") and v is not None}
    overrides.update(periods=3, batches_per_period=2, recluster_start=2)
    ref = api.simulate(engine_settings, "tpch", rows=20_000, policies=["nr", "wair"], seed=0,
                       overrides=overrides)
    for name, res in ref["policies"].items():
        assert summary.loc[res["label"], "total CPU-s"] == pytest.approx(res["cpu_seconds"])
        assert summary.loc[res["label"], "partitions rewritten"] == res["partitions_rewritten"]


def test_whatif_readme_setup_is_the_presets_own_scenario(engine_settings):
    """'As in the benchmark', the default, fills the form with the preset's own scenario at
    200,000 rows (the setup of bench/sim/wair_replication.py --quick), not the quick shortened
    one."""
    from engine import api

    at = open_app("whatif")
    assert at.radio(key="wi_mode").value == "readme"  # the default
    at.radio(key="wi_mode").set_value("quick").run()
    assert at.number_input(key="wi_tpch_periods").value == 4
    at.radio(key="wi_mode").set_value("readme").run()
    assert not at.exception
    defaults = {f["name"]: f["default"] for f in api.scenario_parameters("tpch")}
    assert at.number_input(key="wi_tpch_readme_rows").value == 200_000
    for name in ("periods", "batches_per_period", "recluster_start"):
        assert at.number_input(key=f"wi_tpch_readme_{name}").value == defaults[name]


def test_vanished_table_is_an_error_not_a_traceback(engine_settings):
    def script():
        import streamlit as st

        from app import components, services

        with components.guard():
            services.analyze("no_such_table")
        st.write("unreachable")

    at = AppTest.from_function(script, default_timeout=TIMEOUT).run()
    assert not at.exception
    assert "no_such_table" in at.error[0].value


def test_wair_memory_is_shown_and_an_approver_resets_it(engine_settings):
    """After a decision WAIR remembers its window; the Recommendation page shows it, and a
    signed-in approver resets it (audited), after which the page says nothing is learned."""
    from engine import api
    from security_helpers import SECRET

    api.create_plan(engine_settings, "lineitem", "wair", {"window": 40}, created_by="carol")
    state = api.wair_state(engine_settings, "lineitem")
    assert state.saved and state.window_size == 40
    at = open_app("recommendation")
    assert metric(at, "Window now") == ["40 queries"]
    assert metric(at, "Debt") == [f"{views_fmt_seconds(state.debt_cpu_s)} CPU"]
    assert at.button(key="wair_reset").disabled  # reading needs nothing; resetting an approver
    at.sidebar.text_input(key="signin_name").input("alice")
    at.sidebar.text_input(key="signin_secret").input(SECRET).run()
    at.sidebar.button(key="signin").click().run()
    at.text_input(key="wair_reset_reason").input("workload changed").run()
    at.button(key="wair_reset").click().run()
    assert not at.exception, [e.value for e in at.exception]
    after = api.wair_state(engine_settings, "lineitem")
    assert after.runs == 0 and after.windows_closed == 0 and after.window_size == 50
    assert any(s.value.startswith("WAIR's memory on this table was reset") for s in at.success)
    entry = [a for a in api.audit_log(engine_settings) if a["action"] == "policy-reset"][-1]
    assert entry["actor"] == "alice" and "workload changed" in entry["reason"]


def views_fmt_seconds(value: float) -> str:
    from app import views
    return views.fmt_seconds(value)


def test_design_page_shows_paw_against_its_baselines(engine_settings):
    """The Design page runs PAW on a button; its table is engine.api.design_paw's costs."""
    from engine import api

    at = open_app("design")
    assert [b for b in at.button if b.key == "pto_run"]  # PTO is one tab away
    at.button(key="paw_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    design = api.design_paw(engine_settings, "lineitem")["design"]
    costs = frame_with(at, "rows read per query (history)").set_index("design")
    assert costs.loc["PAW", "rows read per query (history)"] == round(design["costs"]["paw"]["history"])
    assert costs.loc["Qd-tree (greedy)", "rows read per query (worst δ-similar future)"] == \
        round(design["costs"]["qdtree"]["worst_future"])
    assert metric(at, "Leaves") == [f"{len(design['leaves']):,}"]
    # the tree drawn over two of its columns with the history and the extended queries
    import json as _json

    from test_workload_view import _numbers  # a plotly array as its JSON gives it

    charts = {c.proto.id: _json.loads(c.proto.spec) for c in at.get("plotly_chart")}
    tree, sizes = (next(v for k, v in charts.items() if name in k) for name in ("paw_tree", "paw_leaf_sizes"))
    traces = {t["name"]: t for t in tree["data"]}
    n_rect = sum(not lf["irregular"] for lf in design["leaves"])
    assert len(_numbers(traces["partition"]["x"])) == 6 * n_rect  # one closed outline per partition
    assert len(_numbers(traces["history query"]["x"])) == 6 * len(design["queries"]["history"])
    assert len(_numbers(traces["extended query q* (δ)"]["x"])) == 6 * len(design["queries"]["extended"])
    assert len(traces["leaf (hover: rows)"]["text"]) == len(design["leaves"])
    assert sorted(_numbers(sizes["data"][0]["x"])) == sorted(lf["rows"] for lf in design["leaves"])
    x_col, y_col = at.selectbox(key="paw_x").value, at.selectbox(key="paw_y").value
    assert {x_col, y_col} <= set(design["summary"]["columns"]) and x_col != y_col
