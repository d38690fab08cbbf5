"""Declined decisions in plain words (engine.policy.explain), and through the plan API."""

from __future__ import annotations

import math
import re

import pytest

from app_workspace import build_table
from engine import api
from engine.core.config import load_settings
from engine.policy.explain import explain_no_action


@pytest.mark.parametrize("decision, why, change", [
    ({"reason": "no boundary partition with a positive saving in the window", "window_queries": 0},
     "no queries in the window", "Import the table's query log"),
    ({"reason": "no boundary partition with a positive saving in the window", "window_queries": 40},
     "None of the last 40 queries", "New queries on other value ranges"),
    ({"reason": "after grouping, saving 1 CPU-s is not above alpha x cost 2 CPU-s (eq. 4)",
      "window_queries": 30}, "over the last 30 queries (eq. 4)", "lower alpha"),
    ({"reason": "cost limit: debt 3 + cost 2 CPU-s is not below 4 (eq. 2)"},
     "cost limit (eq. 2)", "higher cost_limit"),
    ({"reason": "credit budget: cost 2 CPU-s exceeds credit 1 CPU-s (eq. 5)"},
     "(eq. 5)", "credit_allowance_c"),
    ({"reason": "net of losses, saving 5 - predicted loss 9 = -4 CPU-s is not positive",
      "window_queries": 44, "saving_cpu_s": 5.0,
      "loss_cpu_s": 9.0, "cost_cpu_s": 2.0,
      "regressions": [{"column": "b", "queries": 40, "depth_before": 1.0, "depth_after": 20.0}]},
     "slow down others by 9 CPU-s, because it mixes the order that serves their filters: "
     "b (40 queries, depth 1 -> 20); it loses more than it gains", "losses=off"),
    ({"reason": "none of the 2 selected partitions can change a zonemap when rewritten"},
     "Algorithm 1's guard", "overlapping partitions"),
], ids=["no-queries", "served", "grouping", "cost-limit", "credit", "losses", "unchangeable"])
def test_each_wair_refusal_has_its_plain_reason(decision, why, change):
    out = explain_no_action("wair", decision)
    assert why in out["why"] and change in out["what_would_change"]


def test_break_even_queries_of_a_cut_that_does_not_pay():
    # cost 2 CPU-s against a saving of 0.5 CPU-s over 20 queries, alpha 2: pays after
    # 2 * 2 / 0.5 * 20 = 160 queries
    out = explain_no_action("wair", {"reason": "best cut 4 has net cost +1.75 CPU-s >= 0",
                                     "window_queries": 20, "cut": 4, "cut_cost_cpu_s": 2.0,
                                     "cut_saving_cpu_s": 0.5, "alpha": 2.0})
    assert "Rewriting the 4 most useful partitions would cost 2 CPU-s" in out["why"]
    assert "(25% of its cost)" in out["why"]
    assert "after about 160 queries" in out["what_would_change"]


def test_other_policies_keep_their_reason_as_a_sentence():
    out = explain_no_action("dd", {"reason": "no partition deeper than 4 on l_shipdate"})
    assert out["why"] == "No partition deeper than 4 on l_shipdate."


@pytest.mark.spark
def test_preview_explains_a_decline_with_its_own_numbers(tmp_path, spark):
    home = tmp_path / "home"
    build_table(home, "lineitem", rows=3000, queries=30, spark=spark)
    settings = load_settings({"home": str(home)}, environ={})
    # alpha this large makes every cut's net cost positive (eq. 4): WAIR declines
    rec = api.preview_plan(settings, "lineitem", "wair", {"alpha": 1e9})
    assert rec.status == "no-action", rec
    d, e = rec.details, rec.explanation
    assert rec.reason.startswith("best cut")
    # the break-even is the cut that pays first as the workload gets busier: never later
    # than Algorithm 2's own cut (its cost over its saving)
    be = d["break_even"]
    shown = int(re.search(r"([\d,]+) queries like these per window", e["what_would_change"])
                .group(1).replace(",", ""))
    assert shown == be["queries"] == math.floor(be["factor"] * d["window_queries"]) + 1
    assert be["factor"] <= d["alpha"] * d["cut_cost_cpu_s"] / d["cut_saving_cpu_s"] * (1 + 1e-12)
    assert math.isclose(be["factor"], d["alpha"] * be["cost_cpu_s"] / be["saving_cpu_s"])
    assert math.isclose(d["cut_cost_cpu_s"] - d["cut_saving_cpu_s"] / d["alpha"], d["net_cpu_s"],
                        rel_tol=1e-9)
