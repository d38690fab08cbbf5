"""The demo's query log is a busy dashboard table's: thousands of queries a day over four
weeks, most of them dashboard panels repeating the same statement on a hot range, the rest
ad hoc; the mix moves from ``l_shipdate`` to ``l_commitdate`` while ``l_suppkey`` filters
run throughout. Figures on the committed sample's ranges (``sample_data/lineitem.parquet``)."""

from __future__ import annotations

import collections
import datetime as dt
import gzip
import json
import re
from pathlib import Path

import pytest

from engine.core.errors import InvalidParameterError
from engine.scenarios import demo_log, tpch

DATA = Path(__file__).resolve().parents[3] / "sample_data" / "lineitem.parquet"
#: 200 queries a day over the default 28 days: the default's shape at a tenth of its size
COUNT = 5600


@pytest.fixture(scope="module")
def log():
    return demo_log.make_demo_log(DATA, count=COUNT)


def test_default_log_is_thousands_of_queries_a_day_over_four_weeks():
    assert demo_log.DEMO_DAYS == 28
    assert demo_log.DEMO_QUERIES_PER_DAY == 2000
    assert demo_log.DEMO_LOG_QUERIES == 56_000


def test_queries_arrive_at_the_daily_rate_every_day(log):
    assert log == demo_log.make_demo_log(DATA, count=COUNT)  # deterministic for a seed
    assert [q["id"] for q in log[:2]] == ["d000001", "d000002"]
    times = [dt.datetime.fromisoformat(q["ts"]) for q in log]
    assert times == sorted(times)
    start = dt.datetime.fromisoformat("2024-03-04T08:00:00+00:00")
    per_day = collections.Counter(int((t - start).total_seconds() // 86400) for t in times)
    assert sorted(per_day) == list(range(28))
    assert all(140 <= n <= 260 for n in per_day.values()), per_day  # 200 a day


def test_dashboards_repeat_a_few_statements_on_hot_ranges(log):
    bounds = demo_log.column_bounds(DATA, ("l_shipdate", "l_commitdate", "l_suppkey",
                                           "l_partkey"))
    panels = demo_log.dashboard_panels(bounds)
    assert {k: len(v) for k, v in panels.items()} == {name: 3 for name, _, _ in demo_log.MIX}
    board = [q for q in log if q["source"] == "dashboard"]
    adhoc = [q for q in log if q["source"] == "adhoc"]
    assert len(board) + len(adhoc) == COUNT
    assert 0.83 < len(board) / COUNT < 0.87  # DASHBOARD_SHARE 0.85
    # every refresh is one of its template's three fixed statements: 15 texts in all
    assert all(q["sql"] in panels[q["template"]] for q in board)
    assert len({q["sql"] for q in board}) == 15
    # ad hoc queries are drawn one by one: mostly distinct texts
    assert len({q["sql"] for q in adhoc}) > 0.6 * len(adhoc)
    # the panels' ranges are hot: ship dates within HOT_DAYS of the newest, commit dates
    # within HOT_DAYS of the oldest
    hot = dt.timedelta(days=demo_log.HOT_DAYS)
    ship = [dt.date.fromisoformat(d) for sql in panels["ship"]
            for d in re.findall(r"l_shipdate >= DATE '(\S+)'", sql)]
    commit = [dt.date.fromisoformat(d) for sql in panels["commit_deals"]
              for d in re.findall(r"l_commitdate >= DATE '(\S+)'", sql)]
    assert len(ship) == len(commit) == 3
    assert all(d >= bounds["l_shipdate"][1] - hot - dt.timedelta(days=90) for d in ship)
    assert all(d <= bounds["l_commitdate"][0] + hot for d in commit)


def test_the_mix_shifts_from_ship_dates_to_commit_dates(log):
    week = COUNT // 4
    first, last = log[:week], log[-week:]

    def share(part, template):
        return sum(q["template"] == template for q in part) / len(part)

    # MIX: commit_deals 0.04 -> 0.34 over the log (means 0.08 and 0.30 over the first and
    # last weeks), ship 0.40 -> 0.34, commit-only scans 0.14 -> 0
    assert 0.05 < share(first, "commit_deals") < 0.11
    assert 0.26 < share(last, "commit_deals") < 0.34
    assert share(first, "commit") > 0.09 and share(last, "commit") < 0.04
    assert share(first, "ship") > share(last, "ship")
    # the dashboards move with the mix
    board_first = [q for q in first if q["source"] == "dashboard"]
    board_last = [q for q in last if q["source"] == "dashboard"]
    assert share(board_last, "commit_deals") > share(board_first, "commit_deals") + 0.15


def test_supplier_filters_are_independent_of_the_dates(log):
    for part in (log[:COUNT // 4], log[-COUNT // 4:]):
        assert sum("l_suppkey" in q["sql"] for q in part) / len(part) > 0.3
    alone = [q["sql"] for q in log if q["template"] == "supplier"]
    assert alone and all("l_shipdate" not in s and "l_commitdate" not in s for s in alone)


def test_log_is_written_gzipped_and_compact(tmp_path, log):
    out = tmp_path / "log.jsonl.gz"
    assert tpch.write_jsonl(log, out) == COUNT
    with gzip.open(out, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    assert [r["sql"] for r in rows] == [q["sql"] for q in log]
    assert out.stat().st_size < 40 * COUNT  # repeated panels compress: under 40 bytes a query


def test_bad_dashboard_share_is_refused():
    with pytest.raises(InvalidParameterError, match="dashboard share"):
        demo_log.make_demo_log(DATA, count=10, dashboard_share=1.5)
