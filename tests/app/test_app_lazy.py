"""The dashboard's on-demand sections: DD-EP's selection on Partitions, the
workload lint and the DD / DD-EP comparison compute nothing until the user asks, and then
show the engine's numbers. The workspace is built without Spark (the demo's Arrow writer)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import app_open
from app_workspace import init_home, write_lineitem, write_queries
from engine import api
from engine.core.config import load_settings

TIMEOUT = 120
#: a predicate no zonemap can prune with (a function on the column): the lint's finding
UNPRUNABLE = "SELECT count(*) FROM lineitem WHERE year(l_shipdate) = 1995"


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = init_home(tmp_path_factory.mktemp("lazy") / "home")
    settings = load_settings({"home": str(home)}, environ={})
    src = write_lineitem(home.parent / "lineitem.parquet", rows=6000)
    api.create_demo_table(settings, "lineitem", src, 500, table_format="native")
    log = write_queries(home.parent / "q.jsonl", "lineitem", count=60)
    with log.open("a") as handle:
        handle.write(json.dumps({"id": "lint1", "ts": "2024-03-09T08:00:00", "sql": UNPRUNABLE}) + "\n")
    api.import_workload(settings, "lineitem", str(log))
    return home


@pytest.fixture
def settings(home, monkeypatch):
    monkeypatch.setenv("LAYOUT_ADVISOR_HOME", str(home))
    return load_settings()


def open_page(page: str) -> AppTest:
    return app_open.open_page(page, "lineitem", TIMEOUT)


def test_comparison_opens_on_demand_with_the_engines_plans(settings):
    at = open_page("recommendation")
    assert [m for m in at.metric if m.label == "Partitions rewritten"] == []  # nothing computed
    at.session_state["rec_compare"] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = [m.value for m in at.metric if m.label == "Partitions rewritten"]
    expected = []
    for policy in ("wair", "dd", "dd-ep"):
        rec = api.preview_plan(settings, "lineitem", policy=policy, params={})
        if rec.status != "no-action":
            expected.append(f"{rec.partition_count:,}")
    assert shown == expected and len(shown) >= 2


def test_lint_runs_when_opened_and_lists_the_engines_findings(settings):
    at = open_page("workload")
    assert all(f.value.shape[1] != 6 or "rewrite" not in f.value.columns for f in at.dataframe)
    at.session_state["workload_lint_open"] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    findings = api.lint_workload(settings, "lineitem")
    assert findings and {f["query_id"] for f in findings} == {"lint1"}
    frame = next(f.value for f in at.dataframe if "rewrite" in f.value.columns)
    assert frame["query_id"].tolist() == [f["query_id"] for f in findings]
    assert frame["rewrite"].tolist() == [f["rewrite"] for f in findings]


def test_ddep_selection_is_a_toggle_matching_the_engine(settings):
    at = open_page("partitions")
    caption = " ".join(c.value for c in at.caption)
    assert "DD-EP's current plan touches" not in caption
    at.toggle(key="partitions_ddep").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    rec = api.preview_plan(settings, "lineitem", policy="dd-ep", params={})
    column = at.selectbox(key="partitions_column").value
    ep = api.ep_metrics(settings, "lineitem", column)
    paths = [p for g in rec.groups or [] for p in g["partitions"]]
    held = api.ep_files_holding(settings, "lineitem", paths, int(ep["ep_file_partitions"]))
    assert held and ep.get("deepest_subrange")  # ship dates trail the ingestion order
    caption = " ".join(c.value for c in at.caption)
    assert f"DD-EP's current plan touches {len(held)} EP files" in caption
