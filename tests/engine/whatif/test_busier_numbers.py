"""``plan preview --busier`` (and the dashboard's busier what-if) print numbers for people:
at its ceiling (``busier_preview(max_factor=1000)``) the factor printed as ``1e+03``
(Python's ``:.3g``); numbers now go through ``engine.core.fmt.format_number``."""

from __future__ import annotations

from app.views import busier_text
from engine.cli.plans import _busier_text
from engine.core.fmt import format_seconds
from engine.policy.explain import explain_no_action

NOTHING = {"factor": 1000.0, "alpha": 0.001, "plan": None,
           "steps": [{"factor": 1.0}, {"factor": 37.5}, {"factor": 1000.0}]}


def test_the_cli_prints_the_ceiling_as_1000_not_1e03():
    out = _busier_text(NOTHING)
    assert out == "WAIR proposes nothing even if each query of its window ran 1,000 times (tried x1, x37.5, x1,000)"
    assert "e+" not in out


def test_the_dashboard_prints_it_the_same_way():
    out = busier_text(NOTHING)
    assert "ran 1,000 times" in out and "1,000x" in out and "e+" not in out


def test_a_break_even_above_1000_reads_as_a_number():
    """A decline whose break-even is 2,500 times the window (cost 2,500 CPU-s, saving 1 CPU-s
    over 50 queries, alpha 1): the reason printed ``2.5e+03``."""
    text = explain_no_action("wair", {
        "reason": "best cut", "cut": 3, "cut_cost_cpu_s": 2500.0, "cut_saving_cpu_s": 1.0,
        "alpha": 1.0, "window_queries": 50,
        "break_even": {"cut": 3, "factor": 2500.0, "queries": 125000, "cost_cpu_s": 2500.0,
                       "saving_cpu_s": 1.0}})
    both = text["why"] + " " + text["what_would_change"]
    assert "would cost 2,500 CPU-s and save 1 CPU-s" in both
    assert "a net cost of +2,499 CPU-s" in both
    assert "ran at least 2,500 times" in both and "e+" not in both


def test_seconds_above_1000_have_no_exponent():
    assert format_seconds(1234.0) == "1,234 s"


def test_plan_list_prints_costs_and_savings_as_numbers():
    """``plan list``: a saving of 1,234 CPU-s is "1,234", not ``1.23e+03``; small costs keep
    three significant digits."""
    from engine.cli.plans import _list_text

    row = {"id": 7, "status": "approved", "table": "lineitem", "policy": "wair", "groups": 3,
           "partitions": 44, "estimated_cpu_seconds": 0.04567,
           "predicted_saving_cpu_seconds": 1234.4, "created_at": "2026-11-27T09:00:00"}
    line = _list_text([row]).splitlines()[1]
    assert line.split()[6:8] == ["0.0457", "1,234"], line
    assert "e+" not in line
