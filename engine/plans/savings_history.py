"""Every run's predicted saving beside the one realized right after its commit.

The rewrite-time twin is :func:`engine.plans.runs.prediction_history`. A plan predicts the
bytes its decision window's queries stop reading (``predicted_saving["bytes"]``, over the
``window_queries`` the policy decided on); ``plan verify`` may have measured a saving on a
rewritten sample, scaled to the plan (:mod:`engine.plans.verify`, stored beside the plan);
right after the commit the run replays the same window on the snapshots before and after
(``result["re_estimated"]``, :func:`engine.plans.feedback.realized_report`) and judges it
(``result["delivery"]``, :func:`engine.plans.delivery.judge`). This module lists those
three figures per run, oldest first, with the relative error of the prediction

    error = (realized - predicted) / predicted      (bytes over the decision window)

(negative: the run delivered less than promised; None when nothing was predicted or the
window could not be replayed) and a summary: runs, median and mean absolute error, runs
within :data:`SAVINGS_TOLERANCE`, runs judged underdelivered.

Example (predicted 100 MiB, realized 80 MiB: 20 % short of the promise):
>>> run = SavingsRun(1, "t", "wair", "succeeded", "", 50, 100.0, None, 80.0, False, "")
>>> run.error
-0.2
>>> summarize([run]).within_tolerance
1
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping

if TYPE_CHECKING:
    from engine.plans.plan import Plan
    from engine.workspace import Workspace

__all__ = ["SAVINGS_TOLERANCE", "SavingsRun", "SavingsSummary", "SavingsHistory",
           "savings_run", "summarize", "savings_history"]

#: a saving prediction counts as kept within this relative error (the promise's ±30 %)
SAVINGS_TOLERANCE = 0.30


@dataclass(frozen=True, slots=True)
class SavingsRun:
    """One run's saving over its decision window, in bytes the workload no longer reads.

    ``predicted_bytes``: the plan's promise; ``verified_bytes``: ``plan verify``'s measure
    on a sample scaled to the plan (None: not verified); ``realized_bytes``: the window
    replayed on the snapshots before and after the commit (None: not replayed, ``reason``
    says why); ``underdelivered``: the run's verdict (None for a run judged before
    verdicts were kept); ``rolled_back``: the run was undone at once."""

    plan_id: int
    table: str
    policy: str
    status: str
    ran_at: str
    window_queries: int
    predicted_bytes: float
    verified_bytes: float | None
    realized_bytes: float | None
    underdelivered: bool | None
    reason: str
    rolled_back: bool = False

    @property
    def error(self) -> float | None:
        """``(realized - predicted) / predicted``; None without both figures."""
        if self.realized_bytes is None or self.predicted_bytes <= 0:
            return None
        return (self.realized_bytes - self.predicted_bytes) / self.predicted_bytes

    @property
    def verified_error(self) -> float | None:
        """``(verified - predicted) / predicted``; None without a verification."""
        if self.verified_bytes is None or self.predicted_bytes <= 0:
            return None
        return (self.verified_bytes - self.predicted_bytes) / self.predicted_bytes

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "error": self.error, "verified_error": self.verified_error}


@dataclass(frozen=True, slots=True)
class SavingsSummary:
    """Over the runs with an error: the median and mean of ``|error|`` (None when no run
    has one), how many are within ``tolerance``; ``underdelivered`` counts every run
    judged so, ``verified`` every run with a verification."""

    runs: int
    with_error: int
    median_abs_error: float | None
    mean_abs_error: float | None
    within_tolerance: int
    tolerance: float
    underdelivered: int
    verified: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class SavingsHistory:
    """The runs, oldest first, and their summary; ``to_json`` has the time history's shape
    (``{"runs": [...], "summary": {...}}``)."""

    runs: tuple[SavingsRun, ...]
    summary: SavingsSummary

    def to_json(self) -> dict[str, Any]:
        return {"runs": [r.to_json() for r in self.runs], "summary": self.summary.to_json()}


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def savings_run(plan: "Plan", verification: Mapping[str, Any] | None) -> SavingsRun | None:
    """The run of ``plan`` as a history row; None for a plan that never committed (no
    window replay in its result). Runs stored before the replay had its own name keep it
    under ``result["realized"]``."""
    result = plan.result or {}
    replay = result.get("re_estimated") or result.get("realized")
    if not result.get("snapshot_id") or not isinstance(replay, Mapping):
        return None
    predicted = plan.proposal.predicted_saving
    pred = float(replay.get("predicted_saving_bytes", predicted.get("bytes", 0.0)) or 0.0)
    verdict = result.get("delivery") or {}
    realized = _number(replay.get("saving_bytes"))
    reason = str(verdict.get("reason") or "")
    if realized is None and not reason:
        reason = f"the decision's window could not be replayed: {replay.get('error', 'no report')}"
    return SavingsRun(
        plan_id=int(plan.id), table=plan.table, policy=plan.policy, status=plan.status,
        ran_at=str(plan.updated_at or ""),
        window_queries=int(predicted.get("window_queries", 0) or replay.get("queries", 0) or 0),
        predicted_bytes=pred,
        verified_bytes=_number((verification or {}).get("verified_saving_bytes")),
        realized_bytes=realized,
        underdelivered=None if "underdelivered" not in verdict else bool(verdict["underdelivered"]),
        reason=reason, rolled_back=bool(verdict.get("rolled_back_to")))


def summarize(runs: Iterable[SavingsRun], tolerance: float = SAVINGS_TOLERANCE) -> SavingsSummary:
    """The summary of ``runs`` (:class:`SavingsSummary`); the median of an even count is
    the mean of the middle two.

    >>> runs = [SavingsRun(i, "t", "wair", "succeeded", "", 50, 100.0, None, r, r < 50, "")
    ...         for i, r in enumerate((90.0, 40.0, 130.0, -10.0))]
    >>> s = summarize(runs)
    >>> round(s.median_abs_error, 6), round(s.mean_abs_error, 6), s.within_tolerance, s.underdelivered
    (0.45, 0.525, 2, 2)
    """
    rows = list(runs)
    errors = [abs(e) for e in (r.error for r in rows) if e is not None]
    return SavingsSummary(
        runs=len(rows), with_error=len(errors),
        median_abs_error=statistics.median(errors) if errors else None,
        mean_abs_error=statistics.fmean(errors) if errors else None,
        # a hair of float slack: 130 over 100 is an error of 0.30000000000000004
        within_tolerance=sum(e <= tolerance + 1e-12 for e in errors), tolerance=tolerance,
        underdelivered=sum(bool(r.underdelivered) for r in rows),
        verified=sum(r.verified_bytes is not None for r in rows))


def savings_history(ws: "Workspace", table: str | None = None) -> SavingsHistory:
    """Every committed run (of ``table``) with its predicted, verified and realized saving,
    oldest first, and the summary (module docstring)."""
    control = ws.control
    runs = []
    for plan in ws.plans.list(table):
        if not (plan.result or {}).get("snapshot_id"):
            continue
        row = savings_run(plan, control.verification(plan.id))
        if row is not None:
            runs.append(row)
    return SavingsHistory(tuple(runs), summarize(runs))
