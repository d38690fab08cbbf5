"""WAIR's first window on a busy table is a day of its queries: a log of 80 queries a day
over three days gives a first decision over the last day's 80 fragments, not over the
fixed 50 that no rewrite pays back in; a log shorter than a day, a window given, or WAIR's
saved state keep the window as before."""

from __future__ import annotations

import datetime as dt

import pytest

from engine import api
from engine.plans.wair_defaults import first_window
from engine.workload.model import ScanFragment
from plan_helpers import EPOCH, make_table


def _log(path, days: int, per_day: int):
    """``per_day`` l_shipdate range queries a day, evenly spaced, for ``days`` days."""
    step = dt.timedelta(days=1) / per_day
    start = dt.datetime(2024, 3, 1)
    lines = []
    for i in range(days * per_day):
        lo = EPOCH + dt.timedelta(days=300 + (37 * i) % 2400)
        hi = lo + dt.timedelta(days=45)
        lines.append(f"-- ts: {(start + i * step).isoformat()}\nSELECT sum(l_quantity) FROM "
                     f"lineitem WHERE l_shipdate BETWEEN DATE '{lo}' AND DATE '{hi}';")
    path.write_text("\n".join(lines))
    return path


def _window(settings, params=None) -> int:
    out = api.preview_plan(settings, "lineitem", "wair", params or {}).to_json()
    return int(out["details"]["window_size"])


def test_first_decision_sees_a_day_of_a_busy_table(settings, tmp_path):
    make_table(settings)
    api.import_workload(settings, "lineitem", str(_log(tmp_path / "q.sql", 3, 80)))
    assert _window(settings) == 80
    assert _window(settings, {"window": 30}) == 30  # a window given wins


def test_a_log_shorter_than_a_day_keeps_the_default(settings, tmp_path):
    make_table(settings)
    api.import_workload(settings, "lineitem", str(_log(tmp_path / "q.sql", 1, 80)))
    assert _window(settings) == 50


@pytest.mark.parametrize("per_day, expected", [(10, 50), (80, 80), (20_000, 10_000)])
def test_first_window_is_a_day_of_queries_within_the_bounds(per_day, expected):
    step = dt.timedelta(days=1) / per_day
    t0 = dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc)
    log = [ScanFragment(str(i), "t", (), (), ts=(t0 + i * step).isoformat())
           for i in range(2 * per_day)]
    assert first_window(log, 50, 10_000) == expected
    assert first_window([ScanFragment("q", "t", (), ())] * 100, 50, 10_000) == 50  # no times


def test_the_dashboard_default_is_the_window_the_cli_uses(settings, tmp_path):
    """The Recommendation form shows and sends the CLI's default: a day of queries before
    WAIR has a state on the table, WAIR's own window (None) once it has one."""
    make_table(settings)
    api.import_workload(settings, "lineitem", str(_log(tmp_path / "q.sql", 3, 80)))
    assert api.wair_window(settings, "lineitem") == _window(settings) == 80
    api.create_plan(settings, "lineitem", "wair", {})
    assert api.wair_window(settings, "lineitem") is None
