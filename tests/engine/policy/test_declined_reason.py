"""A declined WAIR decision says why where the user looks, with its numbers: a plan
whose net saving is negative is not proposed, and the reason is written.

On the committed sample demo with a stored quiet-machine calibration WAIR proposes nothing
(a rewrite's fixed cost outweighs 50 queries' saving). The reason must give the cost, the
saving over the window, the net and the break-even, and the break-even must be the exact
threshold: a hair busier than it Algorithm 2 finds a cut that pays, a hair less it does not.
"""

from __future__ import annotations

import math
import re

import pytest

from demo_helpers import calibrated_demo
from engine import api
from engine.cli import main
from engine.policy.breakeven import break_even
from engine.policy.explain import explain_no_action
from engine.core.fmt import format_number


def test_break_even_is_the_cut_with_the_smallest_cost_per_saving():
    # by hand, alpha 2: savings 0.4, 0.1, 0.1, 0.1 (S = 0.4, 0.5, 0.6, 0.7), net 0.8 at every
    # cut, so the costs (net + S / 2) are 1.0, 1.05, 1.1, 1.15 and the factors 2 x cost / S
    # 5, 4.2, 3.667, 3.286: cut 4 pays first; 10 queries -> 32.86 -> 33 queries per window
    out = break_even([0.8, 0.8, 0.8, 0.8], [0.4, 0.1, 0.1, 0.1], alpha=2.0, window_queries=10)
    assert out["cut"] == 4
    assert math.isclose(out["cost_cpu_s"], 1.15) and math.isclose(out["saving_cpu_s"], 0.7)
    assert math.isclose(out["factor"], 2 * 1.15 / 0.7)
    assert out["queries"] == 33
    # the least bad cut (smallest net: cut 1) is not the one that pays first: savings 0.05,
    # 0.45, 0.05 (S = 0.05, 0.5, 0.55), net 0.5, 0.55, 0.6 -> costs 0.55, 1.05, 1.15, factors
    # 11, 2.1, 2.0909: cut 3; 20 queries -> 41.8 -> 42
    out = break_even([0.5, 0.55, 0.6], [0.05, 0.45, 0.05], alpha=1.0, window_queries=20)
    assert (out["cut"], out["queries"]) == (3, 42)
    assert math.isclose(out["factor"], 1.15 / 0.55)
    assert break_even([1.0], [0.0], alpha=1.0, window_queries=5) is None


def test_explanation_gives_cost_saving_net_and_break_even():
    decision = {"reason": "best cut 1 has net cost +0.7 CPU-s >= 0", "window_queries": 50,
                "cut": 1, "cut_cost_cpu_s": 0.71, "cut_saving_cpu_s": 0.01, "alpha": 1.0,
                "net_cpu_s": 0.7,
                "break_even": {"factor": 2.92, "cut": 44, "cost_cpu_s": 1.3,
                               "saving_cpu_s": 0.445, "queries": 147}}
    e = explain_no_action("wair", decision)
    assert e["why"].startswith("Rewriting the 1 most useful partition would cost 0.71 CPU-s "
                               "and save 0.01 CPU-s over the last 50 queries (1% of its cost): "
                               "a net cost of +0.7 CPU-s")
    assert ("the 44 most useful partitions, would cost 1.3 CPU-s and save 0.445 CPU-s over "
            "those queries (34% of its cost)") in e["why"]
    assert ("ran at least 2.92 times, 147 queries like these per window instead of 50"
            in e["what_would_change"])
    # 1 / 2.92 = 0.3425 rounded down to two figures: a saving weighed 2.94 times pays
    assert "preview with alpha 0.34 (equation 4 then weighs each saving 2.94 times" \
        in e["what_would_change"]
    assert "DD or PAW" in e["what_would_change"]


def test_grouped_decline_gives_the_grouped_plan_numbers():
    e = explain_no_action("wair", {
        "reason": "after grouping, saving 0.443 CPU-s is not above alpha x cost 0.694 CPU-s (eq. 4)",
        "window_queries": 50, "cut": 44, "alpha": 0.5, "grouped_cost_cpu_s": 2.0,
        "grouped_saving_cpu_s": 0.4})
    # net = 2 - 0.4 / 0.5 = +1.2; pays at 0.5 x 2 / 0.4 = 2.5 times: 126 queries; alpha 0.2
    # would weigh it exactly 2.5 times (net 0), so the hint is the next step down, 0.19
    assert ("rewriting the 44 most useful partitions would cost 2 CPU-s and save 0.4 CPU-s over "
            "the last 50 queries: a net cost of +1.2 CPU-s at alpha 0.5") in e["why"]
    assert "ran 2.5 times, 126 queries like these per window" in e["what_would_change"]
    assert "Preview with alpha 0.19" in e["what_would_change"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The committed sample demo (Arrow writer: no Spark) with the stored calibration."""
    return calibrated_demo(tmp_path_factory.mktemp("declined") / "home")


def _explained(settings):
    rec = api.preview_plan(settings, "lineitem", "wair")
    assert rec.status == "no-action", rec.reason
    return rec


def test_calibrated_demo_declines_with_an_exact_break_even(demo):
    rec = _explained(demo)
    d = rec.details
    be = d["break_even"]
    assert rec.reason.startswith("best cut") and d["net_cpu_s"] > 0
    # the numbers the user reads are the decision's own
    assert f"would cost {format_number(d['cut_cost_cpu_s'])} CPU-s" in rec.explanation["why"]
    assert f"net cost of {d['net_cpu_s']:+.3g} CPU-s" in rec.explanation["why"]
    assert f"{be['queries']:,} queries like these per window instead of 50" \
        in rec.explanation["what_would_change"]
    assert be["queries"] == math.floor(be["factor"] * 50) + 1
    # exact threshold: Algorithm 2 at alpha / (factor x 0.999) still finds no cut that pays
    # (eq. 4 weighs each saving just under factor times); at alpha / (factor x 1.001) it does
    below = api.preview_plan(demo, "lineitem", "wair", {"alpha": 1 / (be["factor"] * 0.999)})
    above = api.preview_plan(demo, "lineitem", "wair", {"alpha": 1 / (be["factor"] * 1.001)})
    assert below.reason.startswith("best cut")
    assert not str(above.reason or "").startswith("best cut")
    assert above.details.get("cut") == be["cut"]


def test_busier_what_if_finds_the_rate_at_which_wair_proposes(demo):
    out = api.busier_preview(demo, "lineitem")
    assert out["plan"] is not None and out["plan"]["status"] == "preview"
    assert out["steps"][0]["factor"] == 1.0 and out["factor"] > out["steps"][-1]["factor"] > 1
    assert math.isclose(out["alpha"], 1 / out["factor"])
    # the plan it shows is what WAIR proposes at that alpha; at the last declined step's
    # rate it proposes nothing
    again = api.preview_plan(demo, "lineitem", "wair", {"alpha": out["alpha"]})
    assert again.status == "preview" and again.groups == out["plan"]["groups"]
    last = api.preview_plan(demo, "lineitem", "wair", {"alpha": 1 / out["steps"][-1]["factor"]})
    assert last.status == "no-action"


def test_plan_create_prints_the_reason_in_plain_words(demo, capsys):
    assert main(["--home", str(demo.home), "plan", "create", "lineitem"]) == 0
    out = capsys.readouterr().out
    d = _explained(demo).details
    assert out.startswith(f"no plan for lineitem (wair): Rewriting the {d['cut']} most useful")
    assert f"save {format_number(d['cut_saving_cpu_s'])} CPU-s over the last 50 queries" in out
    assert f"Break-even: it would pay if each of these queries ran at least " \
           f"{format_number(d['break_even']['factor'])} times" in out
    assert "(the policy's reason: best cut" in out
    assert api.list_plans(demo, "lineitem") == []


def test_plan_preview_busier_prints_the_factor_and_the_plan(demo, capsys):
    assert main(["--home", str(demo.home), "plan", "preview", "lineitem", "--busier"]) == 0
    out = capsys.readouterr().out
    factor = float(re.search(r"if each query of its window runs ([\d.,]+) times", out).group(1)
                   .replace(",", ""))
    assert math.isclose(factor, api.busier_preview(demo, "lineitem")["factor"], rel_tol=1e-2)
    assert "preview (nothing stored)  table lineitem  policy wair" in out
    assert "store it with `layout-advisor plan create lineitem --alpha" in out
    assert api.list_plans(demo, "lineitem") == []
    assert main(["--home", str(demo.home), "plan", "preview", "lineitem", "--busier",
                 "--policy", "dd"]) == 2
    assert "--busier" in capsys.readouterr().err
