"""`layout-advisor demo --tpcds`: TPC-DS store_sales in the generator's order with date_dim
and item registered, and a star-query log whose dimension filters become store_sales ranges."""

from __future__ import annotations

import pytest

from engine import api
from engine.cli.demo import build_tpcds_demo
from engine.core.errors import EnvironmentCheckError
from engine.spark.tpcds_data import tpcgen_binary

JULIAN_1998 = 2450815  # d_date_sk of 1998-01-01


def _have_tpcgen() -> bool:
    try:
        return bool(tpcgen_binary())
    except EnvironmentCheckError:  # the generator is an optional extra
        return False


@pytest.mark.skipif(not _have_tpcgen(), reason="tpcgen-cli is not installed")
def test_tpcds_demo_builds_the_star_and_looks_up_every_query(settings, monkeypatch) -> None:
    monkeypatch.setenv("LAYOUT_ADVISOR_DEMO_SECRET", "demo-secret-123")
    report = build_tpcds_demo(settings, 0.01, queries=24, table_format="native")
    assert report["fragments"] == 24 and report["skipped"] == []
    assert {t["name"] for t in api.list_tables(settings)} >= {"store_sales", "date_dim", "item"}
    rows = api.show_workload(settings, "store_sales")
    for row in rows:  # every query filters date_dim: every fragment has a looked-up date range
        [date] = [s for s in row["sources"] if s["column"] == "ss_sold_date_sk"]
        assert date["kind"] == "lookup" and date["table"] == "date_dim"
        for box in row["boxes"]:
            r = box["ss_sold_date_sk"]
            assert JULIAN_1998 <= r["min"] <= r["max"] <= JULIAN_1998 + 5 * 366
            assert r["max"] - r["min"] <= 61  # at most two months of days
    # the generator's order: the first micro-partition already spans most sale dates
    first = api.load_snapshot(settings, "store_sales").partitions[0].columns["ss_sold_date_sk"]
    assert first.max - first.min > 4 * 365
    assert build_tpcds_demo(settings, 0.01, queries=24, table_format="native") is None  # kept
