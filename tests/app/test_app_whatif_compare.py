"""AppTest of the DBA controls, numbers checked against ``engine.api``: the
what-if on the sidebar's table, and an unsaved preview compared with a stored plan.

The workspace is a pyarrow-written table registered in place (no Spark needed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import app_open
from app import views
from engine import api
from engine.core.config import load_settings
from engine.core.errors import InvalidParameterError
from own_table_helpers import write_files, write_log

TIMEOUT = 180
WAIR = {"window": 50, "alpha": 1.0, "beta": 0.0, "cost_limit": 0.0, "k_max": None, "eps": 0.1,
        "min_samples": 5}


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "layout-advisor.toml").write_text("target_rows = 400\n")
    monkeypatch.setenv("LAYOUT_ADVISOR_HOME", str(home))
    settings = load_settings()
    api.register_table(settings, "t", str(write_files(tmp_path / "data")))
    api.import_workload(settings, "t", str(write_log(tmp_path / "log.jsonl")))
    return home


def open_page(page: str) -> AppTest:
    return app_open.open_page(page, "t", TIMEOUT)


def test_whatif_tab_replays_the_sidebar_table_with_the_api_numbers(home):
    settings = load_settings()
    at = open_page("whatif")
    assert [t.label for t in at.tabs] == ["This table (t)", "Generated presets"]
    assert at.selectbox(key="own_shift_from").value == "l_shipdate"
    assert at.selectbox(key="own_shift_to").value == "l_commitdate"
    assert at.checkbox(key="own_shift").value is True
    at.number_input(key="own_batches").set_value(4)
    at.number_input(key="own_sample_rows").set_value(2400)
    at.button(key="own_run").click().run(timeout=TIMEOUT)
    assert not at.exception, [e.value for e in at.exception]
    ref = api.whatif_table(settings, "t", batches=4, shift="l_shipdate:l_commitdate",
                           sample_rows=2400)
    summary = next(f.value for f in at.dataframe if "total CPU-s" in f.value.columns).set_index("policy")
    assert set(summary.index) == {"NR", "WAIR", "DD", "DD-EP", "PAW", "PTO"}
    assert "PTO's design: PTO: partition by" in " ".join(m.value for m in at.markdown)
    for name, res in ref.policies.items():
        assert summary.loc[res["label"], "total CPU-s"] == pytest.approx(res["cpu_seconds"])
        assert summary.loc[res["label"], "reclustering CPU-s"] == pytest.approx(res["recluster_cpu_seconds"])
        assert summary.loc[res["label"], "partitions rewritten"] == res["partitions_rewritten"]
    charts = [c for c in at.get("plotly_chart")]
    assert len(charts) == 4  # cumulative, totals, pruning, per period (presets: no result yet)
    periods = next(f.value for f in at.dataframe if "period" in f.value.columns)
    for name, res in ref.policies.items():
        for period, label in ((2, "P2 l_shipdate"), (3, "P3 l_commitdate")):
            row = periods[(periods["policy"] == res["label"]) & (periods["period"] == label)]
            expected = sum(b["query_cpu_seconds"] + b["recluster_cpu_seconds"]
                           for b in res["batches"] if b["period"] == period)
            assert row["total CPU-s"].iloc[0] == pytest.approx(expected), (name, period)
    notes = " ".join(m.value for m in at.markdown)
    assert "Estimated from a sample" in notes and "Check: NR's replayed queries" in notes
    assert f"ratio {ref.check['ratio']:.3f}" in notes
    assert any("P3 l_commitdate" in c.value for c in at.caption)
    # where the seconds went: the sample, PTO's design and each policy, by label
    took = next(c.value for c in at.caption if c.value.startswith("Done in "))
    for part in ("sample read", "PTO design", "NR ", "WAIR ", "DD ", "DD-EP ", "PAW ", "PTO "):
        assert part in took, part


def test_preview_is_compared_with_a_stored_plan_as_the_api_says(home):
    settings = load_settings()
    stored = api.create_plan(settings, "t", "dd", {}, created_by="carol")
    assert stored.id is not None, stored
    at = open_page("recommendation")
    preview = api.preview_plan(settings, "t", "wair", views.wair_params(WAIR))
    assert preview.status == "preview", preview.reason
    assert at.selectbox(key="rec_compare_pick").value == stored.id
    frame = next(f.value for f in at.dataframe if "plan preview" in f.value.columns).set_index("")
    ref = api.compare_preview(settings, preview.to_json(), stored.id)
    expected = views.compare_frame(ref).set_index("")
    assert list(frame.columns) == ["plan preview", f"plan {stored.id}", "b − a"]
    assert frame.equals(expected)
    rows = {r["field"]: r for r in ref["rows"]}
    assert rows["partitions rewritten"]["a"] == preview.partition_count
    assert rows["partitions rewritten"]["b"] == stored.partition_count
    assert rows["cost (CPU-s)"]["difference"] == pytest.approx(
        stored.estimated_cost["cpu_seconds"] - preview.estimated_cost["cpu_seconds"])
    shared = {p for g in preview.groups for p in g["partitions"]} & \
        {p for g in stored.groups for p in g["partitions"]}
    assert ref["shared_partitions"] == len(shared)
    caption = next(c.value for c in at.caption if c.value.startswith("They share"))
    assert f"They share {len(shared):,} partitions" in caption
    # nothing was stored by the comparison
    assert [p.id for p in api.list_plans(settings, "t")] == [stored.id]


def test_a_no_action_preview_cannot_be_compared(home):
    settings = load_settings()
    stored = api.create_plan(settings, "t", "dd", {}, created_by="carol")
    with pytest.raises(InvalidParameterError, match="only a proposed preview can be compared"):
        api.compare_preview(settings, {"status": "no-action", "reason": "nothing"}, stored.id)
