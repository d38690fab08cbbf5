"""A run's rewrite cost beside its prediction: the warm and fresh-session figures a plan
was priced at (:func:`predicted_seconds`) and what the run measured (:func:`cost_check`),
kept for the history of prediction errors (:func:`engine.plans.runs.prediction_history`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from engine.plans.plan import Plan

if TYPE_CHECKING:
    from engine.core.config import Settings

__all__ = ["cost_check", "predicted_seconds", "priced_with_calibration"]


def predicted_seconds(plan: Plan) -> dict[str, Any]:
    """The plan's predicted rewrite wall time in a warm session (the priced cost) and in a
    fresh one (plus the calibrated ``cold_start_s``: the first rewrite job of a new JVM
    pays its JIT and Python workers; a CLI ``plan run`` starts a fresh session, the
    dashboard's stays warm after its first run). ``cold`` is None for a plan priced
    without a calibrated cold start (or whose details do not record one).

    Example:
    >>> from engine.policy.base import CostEstimate, Proposal
    >>> pr = Proposal("wair", {}, (), CostEstimate(0, 0, 2.0, 0), {}, details={"cold_start_s": 7.5})
    >>> p = Plan(1, "t", "s1", "wair", {}, pr, "proposed", "x", None, "x", None)
    >>> predicted_seconds(p)
    {'warm': 2.0, 'cold': 9.5, 'cold_start_s': 7.5}
    """
    warm = float(plan.proposal.estimated_cost.cpu_seconds)
    start = float(plan.proposal.details.get("cold_start_s") or 0.0)
    return {"warm": warm, "cold": warm + start if start > 0 else None, "cold_start_s": start}


def cost_check(settings: "Settings", plan: Plan, result: Mapping[str, Any]) -> dict[str, Any]:
    """The plan's predicted rewrite cost beside what the run measured (wall time and
    executor CPU from Spark's task metrics, the input files' bytes read, the bytes written)
    and the relative error of the prediction; money at ``price_per_cpu_hour`` on the
    measured executor CPU.

    The run is compared with the prediction that matches its session: a run
    whose Spark session was fresh (``measured["fresh_session"]``, the executor's record)
    with the cold figure when the plan has one, else with the warm one
    (:func:`predicted_seconds`); ``compared_with`` says which."""
    cost = plan.proposal.estimated_cost
    measured = result.get("measured") or {}
    wall = float(measured.get("wall_seconds", result.get("seconds", 0.0)) or 0.0)
    cpu = float(measured.get("executor_cpu_seconds", 0.0) or 0.0)
    figures = predicted_seconds(plan)
    fresh = measured.get("fresh_session")
    # the prediction that matches the run: the cold figure for a fresh session's run
    cold_run = bool(fresh) and figures["cold"] is not None
    predicted = figures["cold"] if cold_run else figures["warm"]
    return {"predicted_seconds": predicted, "predicted_money": float(cost.money),
            "predicted_warm_seconds": figures["warm"],
            "predicted_cold_seconds": figures["cold"],
            "fresh_session": None if fresh is None else bool(fresh),
            "compared_with": "cold" if cold_run else "warm",
            "predicted_bytes_read": float(cost.bytes_read),
            "measured_wall_seconds": wall, "measured_cpu_seconds": cpu,
            # the input files' bytes: the job reads each whole (every column). Spark 4's
            # task metric (``spark_input_bytes``) misses small Parquet files, whose footer
            # and pages are read outside the task thread's counter (bench/executor/README.md)
            "measured_bytes_read": int(result.get("bytes_read")
                                       or measured.get("bytes_read", 0) or 0),
            "spark_input_bytes": int(measured.get("bytes_read", 0) or 0),
            "measured_bytes_written": int(measured.get("bytes_written", 0) or 0),
            "measured_money": cpu / 3600.0 * settings.price_per_cpu_hour,
            "spark_jobs": int(measured.get("spark_jobs", 0) or 0),
            "calibrated": priced_with_calibration(plan),
            "error": (predicted - wall) / wall if wall > 0 else None}


def priced_with_calibration(plan: Plan) -> bool | None:
    """Whether the plan's predicted cost came from a calibration (None: the plan's
    details do not record it)."""
    flag = plan.proposal.details.get("priced_with_calibration")
    return None if flag is None else bool(flag)
