"""The plan page shows what ``plan show`` prints about a plan's price:
the predicted rewrite time in a warm session and in a fresh one (the calibration's cold
start), and which price per cell it was priced with (the table's own, ``calibrate
--rewrite-on``, or the calibration table's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app import views
from app_workspace import build_table, engine_settings, plan_page  # noqa: F401 (fixture)
from engine import api
from engine.core.config import CALIBRATION_FILE_NAME

COLD = 11.25
OWN_CELL = 6.5


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, spark) -> Path:
    home = tmp_path_factory.mktemp("price") / "home"
    build_table(home, "lineitem", rows=3000, queries=30)
    # a hand-made calibration: the machine's rates, a cold start, and lineitem's own price
    (home / CALIBRATION_FILE_NAME).write_text(json.dumps({
        "measured_at": "2026-11-27T05:00:00+00:00", "spark_master": "local[2]",
        "rates": {"rewrite_fixed_s": 0.4, "rewrite_read_bytes_per_s": 4e7,
                  "sort_bytes_per_s": 1e7, "rewrite_cell_bytes": 2.0, "cold_start_s": COLD},
        "terms": {"file_s": 0.01}, "points": [],
        "tables": {"lineitem": {"rewrite_cell_bytes": OWN_CELL,
                                "measured_at": "2026-11-27T06:00:00+00:00",
                                "snapshot_id": "1", "spark_master": "local[2]"}}}))
    return home


@pytest.mark.spark
def test_the_plan_page_shows_warm_and_fresh_times_and_the_tables_own_price(workspace,
                                                                           engine_settings):
    # savings weigh 1000x: WAIR proposes whatever the calibrated price
    plan = api.create_plan(engine_settings, "lineitem", "wair", {"alpha": 0.001},
                           created_by="carol")
    assert plan.id is not None, plan
    shown = api.show_plan(engine_settings, plan.id)
    warm = shown.estimated_cost["cpu_seconds"]
    assert shown.predicted_rewrite_seconds["cold"] == pytest.approx(warm + COLD)
    assert shown.rewrite_price["source"] == "table"
    assert shown.rewrite_price["cell_bytes"] == OWN_CELL

    at = plan_page("lineitem", plan.id)
    captions = [c.value for c in at.caption if c.value.startswith("Predicted rewrite time")]
    assert captions == [views.predicted_time_caption(shown.to_json())], [c.value for c in at.caption]
    text = captions[0]
    assert f"{views.fmt_seconds(warm)} in a warm session" in text
    assert f"{views.fmt_seconds(warm + COLD)} in a fresh one" in text
    assert f"+{views.fmt_seconds(COLD)} cold start" in text
    assert "Priced at 6.50 B per cell: table lineitem's own price" in text
