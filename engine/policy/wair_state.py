"""WAIR's memory between decisions: the sliding-window size, the credit ledger and the debt.

* Adaptive window (section 4.2): after a window of queries, the realized cost reduction is
  compared with the predicted one; realized > predicted means the workload is stable, so
  the window doubles to capture a longer history, otherwise it halves to follow recent
  shifts. We bound it to ``[min_window, max_window]``.
* Credit (equation 5): a reclustering is allowed only if its cost does not exceed
  ``sum of realized savings - sum of past reclustering costs + c * |Q|`` (net savings of past
  decisions plus a per-query allowance c for the |Q| queries seen so far).
* Debt (equation 2, the cost limit): the outstanding reclustering cost not yet paid back by
  realized savings, ``max(0, sum of costs - sum of realized savings)``; a new reclustering
  is allowed only if ``debt + its cost < cost_limit``. This bounds the wasted effort under a
  dramatic workload shift.

Realized savings arrive through :class:`engine.policy.base.Feedback` (measured by the caller
with zonemaps before and after on later queries). The state is plain data so the plan store
can persist it between plan creations (:meth:`WairState.to_json`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

from engine.errors import InvalidParameterError

HISTORY_LIMIT = 200


@dataclass
class WairState:
    window_size: int
    realized_total: float = 0.0  # CPU-s saved by past reclusterings, measured
    predicted_total: float = 0.0  # CPU-s those reclusterings were predicted to save
    cost_total: float = 0.0  # CPU-s spent reclustering
    runs: int = 0
    history: list[dict[str, float]] = field(default_factory=list)  # most recent last

    @property
    def debt(self) -> float:
        """Reclustering cost not yet recovered by realized savings (eq. 2's current cost)."""
        return max(0.0, self.cost_total - self.realized_total)

    def credit(self, queries_seen: int, allowance_c: float) -> float:
        """Equation 5's budget: net realized savings plus ``c * |Q|``."""
        if math.isinf(allowance_c):
            return math.inf
        return self.realized_total - self.cost_total + allowance_c * max(0, queries_seen)

    def record(self, predicted: float, realized: float, cost: float, queries: int,
               adapt: bool, min_window: int, max_window: int) -> None:
        """Book one run's outcome and adapt the window (double if realized > predicted)."""
        for name, value in (("predicted", predicted), ("realized", realized), ("cost", cost)):
            if not math.isfinite(value):
                raise InvalidParameterError(f"feedback {name} saving must be finite, got {value}")
        if cost < 0:
            raise InvalidParameterError(f"feedback reclustering cost must be >= 0, got {cost}")
        before = self.window_size
        if adapt:
            if realized > predicted:
                self.window_size = min(max_window, self.window_size * 2)
            else:
                self.window_size = max(min_window, self.window_size // 2)
        self.realized_total += realized
        self.predicted_total += predicted
        self.cost_total += cost
        self.runs += 1
        self.history.append({"predicted_cpu_s": predicted, "realized_cpu_s": realized,
                             "cost_cpu_s": cost, "queries": float(queries),
                             "window_before": float(before), "window_after": float(self.window_size)})
        del self.history[:-HISTORY_LIMIT]

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
                       history=[dict(h) for h in data.get("history", [])])
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidParameterError(f"invalid WAIR state: {exc}") from None
