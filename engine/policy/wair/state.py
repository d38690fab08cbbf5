"""WAIR's memory between decisions: the sliding-window size, the credit ledger and the debt.

* Window rule (``window_rule``): ``"paper"`` is section 4.2 as written, ``"adaptive"`` (the
  default) adds the deviations 1-3 below. With ``"paper"`` a window is judged only when it
  completes, and every window that is not accurate halves, an idle or pending one included
  (actual = predicted = 0 is not "actual > predicted"); ``early_shrink`` is ignored.
* Adaptive window (section 4.2): "After completing a window W of queries, we compare the
  actual cost reduction against the predicted cost reduction. If actual > predicted, ...
  the workload is relatively stable, and we therefore double the window size ...
  Otherwise, we halve the window size." We compare once per *window of queries*, counted
  with ``PolicyContext.queries_seen`` (:meth:`WairState.advance`), over the predicted and
  realized savings of every run whose feedback arrived during that window
  (:meth:`WairState.record`), and keep the size within ``[min_window, max_window]``.
  Taken literally, the rule starves the policy (``bench/sim/README.md``): after two slightly
  optimistic runs the window is so short that no rewrite pays off over it, no feedback
  arrives and the window never grows back. Our deviations, each for a reason:

  1. **Idle windows grow.** A completed window in which WAIR proposed nothing and got no
     feedback has actual = predicted = 0, which the literal rule would halve. Nothing
     paid off, so nothing was mispredicted: the window is "stable, not enough evidence",
     and we double it so a longer history can accumulate savings that amortize a
     rewrite. This is what lets a collapsed window recover.
  2. **Shrinking does not wait for the window to end.** Doubling needs the whole window
     (evidence of stability), but halving exists to follow a shift quickly, and at a
     window of hundreds of queries waiting for its end keeps stale queries in every
     decision for hundreds of queries. So as soon as the feedback received in the window
     in progress falls short (realized <= predicted), the window closes early and halves.
     On the simulator's TPC-H preset, where the predicate switches in P5, closing only at
     the end lets the window grow to 400 queries through the stable P3/P4, then keeps
     rewriting partitions on the old predicate through P5 and P6 (realized savings turn
     negative; 48.6% CPU reduction against no reclustering at 200k rows, 54% of it spent
     reclustering, against 62.2% with early shrinking); with early shrinking it follows
     the switch within a few batches.
  3. **Pending windows keep their size.** A window with proposals but no feedback yet
     (the plan awaits approval or execution, or its queries have not arrived) carries no
     evidence either way.
  4. **Tolerance** (``window_tolerance``, default 0 = the paper's rule): a window counts
     as accurate when ``realized > (1 - tolerance) * predicted``, for estimates known to
     be biased (equation 3 credits all ``(1 - u)`` bytes of a boundary partition, but
     rewritten partitions have boundaries of their own). With 1-3 in place a tolerance
     made no consistent difference on the three presets, so the default keeps the paper's
     strict rule.

  Each deviation raises the CPU reduction against no reclustering on the simulator's
  TPC-H / DSB / Mirrors presets; the figures are in ``bench/sim/README.md``.

  Closing is idempotent in the number of queries: windows that elapsed between two calls
  are closed one by one (the first with whatever feedback arrived, the rest idle), so a
  caller that does not persist the state after a no-action decision gets the same window
  the next time.
* Credit (equation 5): a reclustering is allowed only if its cost does not exceed
  ``sum of realized savings - sum of past reclustering costs + c * |Q|`` (net savings of past
  decisions plus a per-query allowance c for the |Q| queries seen so far).
* Debt (equation 2, the cost limit): over the sliding window W, "sum over P_i in W of
  cost_r(P_i) - sum over Q in W of d cost_q(Q)": the reclustering costs booked during the
  last ``window_size`` queries minus the realized savings booked during them (not clamped:
  savings larger than the costs leave room). A run is booked when its feedback arrives
  (:meth:`WairState.record` stamps it with the last ``queries_seen`` the state was told);
  a new reclustering is allowed only if ``debt + its cost < cost_limit``. This bounds the
  wasted effort under a dramatic workload shift. (:attr:`WairState.debt` keeps the debt over
  the whole history, clamped at 0, for display.)

Realized savings arrive through :class:`engine.policy.base.Feedback` (measured by the caller
with zonemaps before and after on later queries). The state is plain data so the plan store
can persist it between plan creations (:meth:`WairState.to_json`); states saved before the
window bookkeeping existed load with an unstarted window.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

from engine.core.errors import InvalidParameterError

HISTORY_LIMIT = 200

#: window verdicts (``window_history[i]["verdict"]``)
ACCURATE, OPTIMISTIC, IDLE, PENDING, FIXED = "accurate", "optimistic", "idle", "pending", "fixed"


@dataclass
class WairState:
    window_size: int
    realized_total: float = 0.0  # CPU-s saved by past reclusterings, measured
    predicted_total: float = 0.0  # CPU-s those reclusterings were predicted to save
    cost_total: float = 0.0  # CPU-s spent reclustering
    runs: int = 0
    history: list[dict[str, float]] = field(default_factory=list)  # most recent last
    # the window of queries in progress (section 4.2's "window W of queries")
    window_start: int = -1  # queries_seen when it started; -1: not started yet
    window_predicted: float = 0.0  # predicted CPU-s of the runs whose feedback arrived in it
    window_realized: float = 0.0  # realized CPU-s of those runs
    window_feedbacks: int = 0
    window_proposals: int = 0  # proposals made during it
    windows: int = 0  # completed windows
    window_history: list[dict[str, Any]] = field(default_factory=list)  # most recent last
    last_seen: int = 0  # the latest queries_seen the state was told (stamps the history)

    @property
    def debt(self) -> float:
        """Reclustering cost of the whole history not recovered by realized savings,
        clamped at 0 (display only; equation 2 uses :meth:`window_debt`)."""
        return max(0.0, self.cost_total - self.realized_total)

    def window_debt(self, queries_seen: int, window: int) -> float:
        """Equation 2's current cost over the window: costs minus realized savings of the
        runs booked during the last ``window`` queries (history entries stamped ``at``;
        entries of states saved before the stamp count as booked at query 0)."""
        start = int(queries_seen) - int(window)
        return float(sum(h["cost_cpu_s"] - h["realized_cpu_s"] for h in self.history
                         if h.get("at", 0.0) > start))

    def credit(self, queries_seen: int, allowance_c: float) -> float:
        """Equation 5's budget: net realized savings plus ``c * |Q|``."""
        if math.isinf(allowance_c):
            return math.inf
        return self.realized_total - self.cost_total + allowance_c * max(0, queries_seen)

    def record(self, predicted: float, realized: float, cost: float, queries: int) -> None:
        """Book one run's outcome: credit and debt now, the window tally for its close."""
        for name, value in (("predicted", predicted), ("realized", realized), ("cost", cost)):
            if not math.isfinite(value):
                raise InvalidParameterError(f"feedback {name} saving must be finite, got {value}")
        if cost < 0:
            raise InvalidParameterError(f"feedback reclustering cost must be >= 0, got {cost}")
        self.realized_total += realized
        self.predicted_total += predicted
        self.cost_total += cost
        self.runs += 1
        self.window_predicted += predicted
        self.window_realized += realized
        self.window_feedbacks += 1
        self.history.append({"predicted_cpu_s": predicted, "realized_cpu_s": realized,
                             "cost_cpu_s": cost, "queries": float(queries),
                             "window": float(self.window_size), "at": float(self.last_seen)})
        del self.history[:-HISTORY_LIMIT]

    def proposed(self) -> None:
        """Count a proposal in the window in progress (a window with one is not idle)."""
        self.window_proposals += 1

    def advance(self, queries_seen: int, adapt: bool, min_window: int, max_window: int,
                tolerance: float, early_shrink: bool = False, rule: str = "adaptive") -> int:
        """Close every window of queries completed by ``queries_seen``; returns how many.

        Each close compares the window's realized with its predicted savings and doubles
        or halves the size (module docstring; ``rule`` "paper" or "adaptive"); the next
        window starts where it ended.
        """
        self.last_seen = max(0, int(queries_seen))
        if self.window_start < 0 or queries_seen < self.window_start:
            # first decision, or a caller whose query count restarted: start counting here
            self.window_start = max(0, int(queries_seen))
            return 0
        closed = 0
        paper = rule == "paper"
        if (not paper and early_shrink and self.window_feedbacks
                and not self._accurate(tolerance)):
            self._close(adapt, min_window, max_window, tolerance, end=int(queries_seen))
            closed += 1
        while queries_seen - self.window_start >= self.window_size:
            self._close(adapt, min_window, max_window, tolerance, paper=paper)
            closed += 1
        return closed

    def _accurate(self, tolerance: float) -> bool:
        """Section 4.2's test over the window's feedback: actual > predicted (less a tolerance)."""
        return self.window_realized > (1.0 - tolerance) * self.window_predicted

    def _close(self, adapt: bool, min_window: int, max_window: int, tolerance: float,
               end: int | None = None, paper: bool = False) -> None:
        before = self.window_size
        end = self.window_start + before if end is None else end
        pred, real = self.window_predicted, self.window_realized
        if self.window_feedbacks:
            verdict = ACCURATE if self._accurate(tolerance) else OPTIMISTIC
        else:
            verdict = PENDING if self.window_proposals else IDLE
        if adapt and paper:  # section 4.2 as written: double if actual > predicted, else halve
            if verdict == ACCURATE:
                self.window_size = min(max_window, before * 2)
            else:
                self.window_size = max(min_window, before // 2)
        elif adapt:
            if verdict in (ACCURATE, IDLE):
                self.window_size = min(max_window, before * 2)
            elif verdict == OPTIMISTIC:
                self.window_size = max(min_window, before // 2)
        else:
            verdict = f"{verdict} ({FIXED})"
        self.window_history.append({
            "end_queries": end, "window_before": before,
            "window_after": self.window_size, "verdict": verdict, "predicted_cpu_s": pred,
            "realized_cpu_s": real, "feedbacks": self.window_feedbacks,
            "proposals": self.window_proposals})
        del self.window_history[:-HISTORY_LIMIT]
        self.window_start = end
        self.window_predicted = self.window_realized = 0.0
        self.window_feedbacks = self.window_proposals = 0
        self.windows += 1

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "WairState":
        try:
            return cls(window_size=int(data["window_size"]),
                       realized_total=float(data.get("realized_total", 0.0)),
                       predicted_total=float(data.get("predicted_total", 0.0)),
                       cost_total=float(data.get("cost_total", 0.0)),
                       runs=int(data.get("runs", 0)),
                       history=[dict(h) for h in data.get("history", [])],
                       window_start=int(data.get("window_start", -1)),
                       window_predicted=float(data.get("window_predicted", 0.0)),
                       window_realized=float(data.get("window_realized", 0.0)),
                       window_feedbacks=int(data.get("window_feedbacks", 0)),
                       window_proposals=int(data.get("window_proposals", 0)),
                       windows=int(data.get("windows", 0)),
                       window_history=[dict(h) for h in data.get("window_history", [])],
                       last_seen=int(data.get("last_seen", 0)))
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidParameterError(f"invalid WAIR state: {exc}") from None
