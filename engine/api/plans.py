"""Plans: create (or preview), list, show, approve, reject, run, progress, audit.

The facade the CLI and the dashboard call; each function delegates to the plans package:
deciding and running to :mod:`engine.plans.service` (the one owner of a decision's window
and of policy state), who may approve, reject or roll back to :mod:`engine.plans.gate`.

Every guarded call (approve, reject, run) takes ``actor``: the
:class:`~engine.plans.identity.Identity` that :func:`engine.api.security.authenticate`
returned for a signed-in approver; a bare name is refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from engine.api.summaries import warm_after_change, warm_when_done
from engine.plans import gate, service
from engine.plans.identity import Identity
from engine.plans.plan import PlanBook
from engine.plans.service import BackgroundRun, ProgressFn
from engine.policy import registry

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from engine.core.config import Settings

__all__ = ["policy_names", "create_plan", "preview_plan", "list_plans", "show_plan",
           "approve_plan", "reject_plan", "run_plan", "start_run", "BackgroundRun",
           "plan_progress", "audit_log", "policy_state", "require_approver", "default_actor",
           "realized_savings", "prediction_history"]


def policy_names() -> list[str]:
    """The policies a plan can be asked of (``--policy`` choices, the dashboard's list)."""
    return registry.policy_names()


def preview_plan(settings: "Settings", table: str, policy: str = "wair",
                 params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What :func:`create_plan` would store, without storing anything or touching policy
    state."""
    return service.preview_plan(settings, table, policy, params)


def create_plan(settings: "Settings", table: str, policy: str = "wair",
                params: Mapping[str, Any] | None = None,
                created_by: "str | Identity | None" = None) -> dict[str, Any]:
    """Ask ``policy`` for a plan on the current snapshot of ``table`` and store it as
    ``proposed``; ``{"id": None, "status": "no-action", "reason": ...}`` if it declines.
    ``created_by`` is the proposer (a name, or a signed-in identity), whom separation of
    duties keeps from approving it."""
    name = created_by.name if isinstance(created_by, Identity) else created_by
    return service.create_plan(settings, table, policy, params, name)


def list_plans(settings: "Settings", table: str | None = None) -> list[dict[str, Any]]:
    """All plans (of ``table``), oldest first, in summary form (statuses refreshed)."""
    return service.list_plans(settings, table)


def show_plan(settings: "Settings", id: int) -> dict[str, Any]:
    """Everything about one plan: groups, cost, saving, curve, audit, progress, result."""
    return service.show_plan(settings, id)


def approve_plan(settings: "Settings", id: int, actor: Identity | None,
                 reason: str | None = None) -> dict[str, Any]:
    """proposed -> approved by a signed-in approver who did not propose it (a plan above
    the dual-approval threshold stays proposed until a second approver approves)."""
    gate.approve(PlanBook(settings), int(id), actor, reason)
    return service.show_plan(settings, id)


def reject_plan(settings: "Settings", id: int, actor: Identity | None,
                reason: str | None = None) -> dict[str, Any]:
    """proposed (or approved) -> rejected by a signed-in approver."""
    gate.reject(PlanBook(settings), int(id), actor, reason)
    return service.show_plan(settings, id)


def run_plan(settings: "Settings", id: int, progress: ProgressFn | None = None,
             spark: "SparkSession | None" = None,
             actor: Identity | None = None) -> dict[str, Any]:
    """Run an approved, non-stale plan on Spark as a signed-in approver, and wait; returns its result (new snapshot,
    groups, realized vs predicted). On failure the plan becomes ``failed``, nothing is
    committed, and an ExecutionError (or the AdvisorError that caused it) is raised."""
    result = service.run_plan(settings, id, progress=progress, spark=spark, actor=actor)
    warm_after_change(settings, PlanBook(settings).get(id).table)
    return result


def start_run(settings: "Settings", id: int, actor: Identity | None = None,
              spark: "SparkSession | None" = None) -> BackgroundRun:
    """:func:`run_plan` in a background daemon thread; returns at once with a handle
    (``done``, ``wait()``, ``result``, ``error``, ``progress()``). Progress is readable from
    any process with :func:`plan_progress`; a failure is recorded on the plan. After a
    commit the new snapshot's dashboard summaries are stored, as :func:`run_plan` does
    (the handle's ``warming`` thread)."""
    run = service.start_run(settings, id, actor=actor, spark=spark)
    run.warming = warm_when_done(settings, lambda: PlanBook(settings).get(id).table, run)
    return run


def plan_progress(settings: "Settings", id: int) -> dict[str, Any]:
    """The running (or last) job's progress and the plan's status."""
    return service.plan_progress(settings, id)


def audit_log(settings: "Settings", plan_id: int | None = None) -> list[dict[str, Any]]:
    """Append-only audit entries (of one plan), oldest first."""
    return service.audit_log(settings, plan_id)


def policy_state(settings: "Settings", table: str, policy: str = "wair") -> dict[str, Any] | None:
    """The persisted memory of ``policy`` on ``table`` (WAIR: window, credit, history)."""
    return service.policy_state(settings, table, policy)


def realized_savings(settings: "Settings", id: int) -> dict[str, Any]:
    """Realized saving of a run: the queries imported after it, scored on the snapshots
    before and after, the prediction scaled to as many queries, and the log's measured
    bytes and durations beside the estimate. (The run's own ``result["re_estimated"]`` is
    the decision's window replayed, labelled as such.)"""
    return service.realized_savings(settings, id)


def require_approver(settings: "Settings", actor: Identity | None, action: str) -> str:
    """The signed-in name behind ``actor`` if its role may ``action`` ("approve",
    "reject", "run", "rollback", "gc", "drop", "workload-clear", "approvers"); else
    ApprovalError. The one rule the CLI, the API and the dashboard share."""
    return gate.require_approver(settings, actor, action)


def default_actor() -> str:
    """Who proposes when no name was given (the OS user); it grants nothing."""
    return gate.default_actor()


#: a prediction counts as good within this relative error (issue 11, section 2's goal)
PREDICTION_TOLERANCE = 0.30


def prediction_history(settings: "Settings", table: str | None = None) -> dict[str, Any]:
    """Every run's predicted rewrite time beside the measured one, oldest first.

    Each run stores ``cost_check`` (:func:`engine.plans.service.cost_check`) in its
    result; this lists them with the relative error ``(predicted - measured) / measured``
    and summarizes: runs, median and mean absolute error, runs within
    :data:`PREDICTION_TOLERANCE`. Runs before any calibration are marked as such.
    """
    runs = []
    for plan in PlanBook(settings).list(table):
        check = (plan.result or {}).get("cost_check")
        if not check:
            continue
        runs.append({"plan_id": plan.id, "table": plan.table, "policy": plan.policy,
                     "status": plan.status, "ran_at": plan.updated_at,
                     "groups": len(plan.groups), "partitions": len(plan.partitions),
                     "bytes": float(check.get("predicted_bytes_read", 0.0) or 0.0),
                     "predicted_seconds": float(check.get("predicted_seconds", 0.0) or 0.0),
                     "measured_seconds": float(check.get("measured_wall_seconds", 0.0) or 0.0),
                     "measured_cpu_seconds": float(check.get("measured_cpu_seconds", 0.0) or 0.0),
                     "spark_jobs": int(check.get("spark_jobs", 0) or 0),
                     "calibrated": check.get("calibrated"), "error": check.get("error"),
                     # round 9: the run's session, and which prediction it was compared with
                     "fresh_session": check.get("fresh_session"),
                     "compared_with": check.get("compared_with", "warm"),
                     "predicted_warm_seconds": check.get("predicted_warm_seconds"),
                     "predicted_cold_seconds": check.get("predicted_cold_seconds")})
    errors = sorted(abs(float(r["error"])) for r in runs if r["error"] is not None)
    summary = {"runs": len(runs), "with_error": len(errors),
               "median_abs_error": errors[len(errors) // 2] if errors else None,
               "mean_abs_error": sum(errors) / len(errors) if errors else None,
               "within_tolerance": sum(e <= PREDICTION_TOLERANCE for e in errors),
               "tolerance": PREDICTION_TOLERANCE}
    return {"runs": runs, "summary": summary}
