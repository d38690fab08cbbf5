"""A plan never promises more than its written output delivers: WAIR's equation-3 saving is
lowered to the output check's when the check, scoring the window on the files the executor
writes, finds less; a check that finds more, or one that does not model the output, leaves
the policy's figure."""

from __future__ import annotations

import pytest

from engine.policy.base import CostEstimate, PlanGroup, Proposal
from engine.policy.output_check import OutputCheck
from engine.policy.output_saving import capped_by_output
from engine.core.config import Settings

MIB = 2**20


def _proposal(saved_bytes: float, cpu: float) -> Proposal:
    groups = (PlanGroup(partitions=("a", "b"), layout="sort", columns=("x",),
                        predicted_saving_bytes=saved_bytes * 0.75),
              PlanGroup(partitions=("c",), layout="sort", columns=("y",),
                        predicted_saving_bytes=saved_bytes * 0.25))
    return Proposal(policy="wair", params={}, groups=groups,
                    estimated_cost=CostEstimate(3 * MIB, 3 * MIB, 10.0, 0.0),
                    predicted_saving={"bytes": saved_bytes, "cpu_seconds": cpu, "money": 0.0,
                                      "window_queries": 50.0}, break_even_queries=25.0)


def test_a_promise_above_the_output_check_is_lowered_to_it():
    capped = capped_by_output(_proposal(80 * MIB, 20.0),
                              OutputCheck((), 100 * MIB, 80 * MIB, ""), Settings())
    assert capped.predicted_saving["bytes"] == pytest.approx(20 * MIB)  # 100 - 80
    assert capped.predicted_saving["cpu_seconds"] == pytest.approx(5.0)  # a quarter of 20
    assert [g.predicted_saving_bytes for g in capped.groups] == pytest.approx([15 * MIB, 5 * MIB])
    assert capped.break_even_queries == pytest.approx(10.0 / (5.0 / 50))  # 100 queries
    assert capped.details["policy_saving_bytes"] == 80 * MIB
    assert capped.details["saving_from"] == "output check"


@pytest.mark.parametrize("before, after, modelled", [
    (100 * MIB, 10 * MIB, True),   # the check finds more: the policy's figure stands
    (100 * MIB, 90 * MIB, False),  # the check does not model this output
    (100 * MIB, 100 * MIB, True),  # nothing saved: declined elsewhere, not rescaled here
])
def test_otherwise_the_policy_figure_stands(before, after, modelled):
    proposal = _proposal(80 * MIB, 20.0)
    check = OutputCheck((), before, after, "", modelled=modelled)
    assert capped_by_output(proposal, check, Settings()) is proposal
