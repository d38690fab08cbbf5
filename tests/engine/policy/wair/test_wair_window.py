"""WAIR's adaptive sliding window (section 4.2, with the deviations of engine.policy.wair.state).

Hand-made cases: a window of queries is counted with ``queries_seen``; feedback that arrives
during it is compared when it completes (double if realized > predicted, less a tolerance),
or at once when it falls short (halve); an idle window doubles; a window with a proposal
but no feedback yet keeps its size; the size stays within [min_window, max_window]; the
state round-trips through JSON and old states load. The policy-level case uses the setup
of tests/engine/policy/wair/test_wair_policy.py: 100 B partitions, scan and sort at 100 B/s, so rewriting one
partition costs 2 CPU-s and a query that reads it at utilization 0.5 would save 0.5 CPU-s.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.core.config import Settings
from engine.core.errors import InvalidParameterError
from engine.policy.base import Feedback, PolicyContext
from engine.policy.wair import WairPolicy
from engine.policy.wair.state import WairState
from engine.scan.pruning import FragmentScan
from engine.table.model import ColumnStats, Partition, TableSchema, ZoneMaps
from engine.workload.model import Range, ScanFragment

S = Settings(scan_bytes_per_s=100.0, sort_bytes_per_s=100.0, memory_budget_bytes=10**9)


def fb(predicted: float, realized: float) -> Feedback:
    return Feedback(predicted_saving_cpu_s=predicted, realized_saving_cpu_s=realized,
                    recluster_cost_cpu_s=0.5, queries=10)


def verdicts(pol: WairPolicy) -> list[tuple[str, int, int]]:
    return [(h["verdict"], h["window_before"], h["window_after"]) for h in pol.state()["window_history"]]


def test_clearly_bad_prediction_halves_as_soon_as_it_arrives() -> None:
    pol = WairPolicy(window=64, min_window=4)
    pol.advance(100)  # the first window starts at query 100
    pol.observe(fb(1.0, 0.2))
    assert pol.window_size == 64  # nothing happens until the next decision point
    assert pol.advance(110) == 1  # 10 queries into a 64-query window: closes early
    assert pol.window_size == 32
    assert verdicts(pol) == [("optimistic", 64, 32)]
    assert pol.state()["window_start"] == 110  # the next window starts there
    late = WairPolicy(window=64, min_window=4, early_shrink=False)  # the paper's timing
    late.advance(100)
    late.observe(fb(1.0, 0.2))
    assert late.advance(163) == 0 and late.window_size == 64
    assert late.advance(164) == 1 and late.window_size == 32


def test_accurate_prediction_doubles_only_when_the_window_completes() -> None:
    pol = WairPolicy(window=50)
    pol.advance(0)
    pol.observe(fb(1.0, 0.6))
    pol.observe(fb(1.0, 1.5))  # the window's total: realized 2.1 > predicted 2.0
    assert pol.advance(49) == 0 and pol.window_size == 50
    assert pol.advance(50) == 1 and pol.window_size == 100
    assert verdicts(pol) == [("accurate", 50, 100)]


@pytest.mark.parametrize("tolerance,realized,expected", [
    (0.0, 1.0, 25),  # the paper: actual > predicted doubles, equal halves
    (0.0, 1.01, 100),
    (0.1, 0.95, 100),  # within 10%: accurate
    (0.1, 0.85, 25),  # clearly short
])
def test_tolerance(tolerance: float, realized: float, expected: int) -> None:
    pol = WairPolicy(window=50, window_tolerance=tolerance, early_shrink=False)
    pol.advance(0)
    pol.observe(fb(1.0, realized))
    pol.advance(50)
    assert pol.window_size == expected


def test_idle_windows_grow_and_are_closed_one_by_one() -> None:
    pol = WairPolicy(window=16, max_window=1000)
    pol.advance(0)
    assert pol.advance(15) == 0 and pol.window_size == 16
    assert pol.advance(16) == 1 and pol.window_size == 32  # idle: stable, not enough evidence
    # 16 + 32 + 64 = 112: three more windows by query 128, the fourth (128 queries) not yet
    assert pol.advance(127) == 2 and pol.window_size == 128
    assert pol.advance(112 + 128) == 1 and pol.window_size == 256
    assert [v for v, _, _ in verdicts(pol)] == ["idle"] * 4
    assert [h["end_queries"] for h in pol.state()["window_history"]] == [16, 48, 112, 240]


def test_a_window_with_a_proposal_awaiting_feedback_keeps_its_size() -> None:
    pol = WairPolicy(window=20)
    pol.propose(context(20, queries_seen=0))  # starts the window and proposes
    assert pol.last_decision["action"] == "propose"
    pol.advance(20)
    assert verdicts(pol) == [("pending", 20, 20)] and pol.window_size == 20
    pol.advance(40)  # the next window has no proposal and no feedback: idle
    assert pol.window_size == 40


def test_bounds_never_below_min_or_above_max() -> None:
    pol = WairPolicy(window=50, min_window=10, max_window=150)
    q = 0
    pol.advance(q)
    sizes = []
    for _ in range(4):  # bad predictions: 25, 12, 10, 10
        q += 1
        pol.observe(fb(1.0, 0.0))
        pol.advance(q)
        sizes.append(pol.window_size)
    assert sizes == [25, 12, 10, 10]
    for _ in range(6):  # accurate windows: 20, 40, 80, 150, 150, 150
        pol.observe(fb(1.0, 2.0))
        q += pol.window_size
        pol.advance(q)
        sizes.append(pol.window_size)
    assert sizes[4:] == [20, 40, 80, 150, 150, 150]


def test_fixed_window_logs_verdicts_but_keeps_its_size() -> None:
    pol = WairPolicy(window=50, adaptive_window=False)
    pol.advance(0)
    pol.observe(fb(1.0, 0.1))
    pol.advance(10)
    pol.advance(200)
    assert pol.window_size == 50
    assert [v for v, _, _ in verdicts(pol)][:2] == ["optimistic (fixed)", "idle (fixed)"]


def test_state_round_trip_and_old_states() -> None:
    pol = WairPolicy(window=40)
    pol.advance(7)
    pol.observe(fb(1.0, 3.0))
    pol.advance(47)  # accurate: 80
    pol.observe(fb(2.0, 2.5))  # in the window in progress
    state = json.loads(json.dumps(pol.state()))  # what the plan store keeps
    assert (state["window_size"], state["window_start"], state["windows"]) == (80, 47, 1)
    assert (state["window_predicted"], state["window_realized"], state["window_feedbacks"]) == (2.0, 2.5, 1)
    other = WairPolicy(window=40)
    other.load_state(state)
    assert other.state() == pol.state()
    other.advance(127)
    pol.advance(127)
    assert other.window_size == pol.window_size == 160
    # a state saved before the window bookkeeping existed: the window starts at the next call
    old = {"window_size": 25, "realized_total": 1.0, "predicted_total": 2.0, "cost_total": 0.5,
           "runs": 1, "history": [{"predicted_cpu_s": 2.0, "realized_cpu_s": 1.0, "cost_cpu_s": 0.5,
                                   "queries": 50.0, "window_before": 50.0, "window_after": 25.0}]}
    legacy = WairPolicy()
    legacy.load_state(old)
    assert legacy.window_size == 25 and legacy.state()["window_start"] == -1
    legacy.advance(1000)
    legacy.advance(1025)
    assert legacy.window_size == 50  # one idle window of 25 queries
    with pytest.raises(InvalidParameterError, match="invalid WAIR state"):
        WairState.from_json({"window_size": 10, "window_start": "x"})


def test_closing_is_idempotent_when_the_caller_does_not_save_a_no_action_state() -> None:
    """The plan API persists state only with a proposal: replaying from the saved state
    must give the same window as a policy that lived through every call."""
    live = WairPolicy(window=16)
    live.advance(0)
    saved = live.state()
    for q in (10, 30, 70, 100):
        live.advance(q)
    fresh = WairPolicy(window=16)
    fresh.load_state(saved)
    fresh.advance(100)
    assert fresh.window_size == live.window_size == 64
    assert fresh.state()["window_start"] == live.state()["window_start"] == 48


def test_window_tolerance_is_validated() -> None:
    with pytest.raises(InvalidParameterError, match="window_tolerance"):
        WairPolicy(window_tolerance=1.0)
    with pytest.raises(InvalidParameterError, match="window_tolerance"):
        WairPolicy(window_tolerance=-0.1)


# ------------------------------------------------------------------ the collapse, end to end

def context(queries: int, queries_seen: int) -> PolicyContext:
    """Three overlapping partitions of 100 B; every query reads p001 and p002 at utilization
    0.5 (each saves 0.5 CPU-s per query if rewritten, which costs 2 CPU-s per partition; the
    two are rewritten together since a lone partition cannot change its zonemap): it pays
    off over > 4 queries."""
    schema = TableSchema((("a", "int"),))
    zm = ZoneMaps.from_partitions(schema, [Partition(f"p{i:03d}.parquet", 10, 100,
                                                     {"a": ColumnStats(10 * i, 10 * i + 19)})
                                           for i in range(3)])
    scanned = np.array([False, True, True])
    util = np.array([0.0, 0.5, 0.5])
    frags = [ScanFragment(f"q{q}", "t", ({"a": Range(0, 10**6)},), ("a",)) for q in range(queries)]
    scans = [FragmentScan(f"q{q}", scanned, np.zeros(3, dtype=bool), util, zm.bytes.astype(float), ("a",))
             for q in range(queries)]
    return PolicyContext("t", "s", zm, frags, scans, S, queries_seen=queries_seen)


def test_a_collapsed_window_grows_back_until_a_rewrite_pays_off() -> None:
    """The starvation the simulator showed: at a window of 2 queries nothing pays off
    (saving 1 CPU-s < cost 2), so no feedback ever arrives. Idle windows double it:
    2 -> 4 (saving 2, net 0: still nothing) -> 8 (saving 4 > 2: a proposal)."""
    pol = WairPolicy(window=2, min_window=1)
    history = 64  # fragments available to the policy
    seen = []
    for q in range(0, 20):
        prop = pol.propose(context(history, queries_seen=q))
        seen.append((q, pol.window_size, prop is not None))
        if prop is not None:
            break
    assert seen[0] == (0, 2, False)
    assert (2, 4, False) in seen and (6, 8, True) == seen[-1]
    assert prop is not None and prop.predicted_saving["window_queries"] == 8
    assert prop.predicted_saving["cpu_seconds"] == pytest.approx(8.0)
    assert [v for v, _, _ in verdicts(pol)] == ["idle", "idle"]


def test_the_paper_rule_halves_idle_and_pending_windows_and_waits_for_the_end() -> None:
    # section 4.2 as written: after a window, double if actual > predicted, else halve;
    # a window without feedback has actual = predicted = 0, so it halves too
    paper = WairPolicy(window=32, min_window=4, window_rule="paper")
    paper.advance(0)
    assert paper.advance(32) == 1 and paper.window_size == 16
    paper.observe(fb(1.0, 0.2))  # optimistic, but judged only when the window ends
    assert paper.advance(40) == 0 and paper.window_size == 16
    assert paper.advance(48) == 1 and paper.window_size == 8
    paper.observe(fb(1.0, 2.0))
    assert paper.advance(56) == 1 and paper.window_size == 16
    assert [v for v, _, _ in verdicts(paper)] == ["idle", "optimistic", "accurate"]
    # the same sequence under the adaptive rule: idle doubles, the shortfall halves at once
    adaptive = WairPolicy(window=32, min_window=4)
    adaptive.advance(0)
    adaptive.advance(32)
    assert adaptive.window_size == 64
    adaptive.observe(fb(1.0, 0.2))
    assert adaptive.advance(40) == 1 and adaptive.window_size == 32
