"""Plans: create (or preview), list, show, approve, reject, run, cancel, export, audit.

Each function delegates to the plans package: deciding and running to
:mod:`engine.plans.service` (the one owner of a decision's window and of policy state), the
guarded transitions to :mod:`engine.plans.approval`, runs' ETA and cancellation to
:mod:`engine.plans.runs`, exports to :mod:`engine.plans.export`. Every guarded call
(approve, reject, run, cancel) takes ``actor``: the :class:`Identity` that
:func:`engine.api.authenticate` returned for a signed-in approver; a bare name is refused.
A run that commits announces ``commit`` on the workspace (its subscribers store the new
snapshot's summaries: in the foreground for :func:`run_plan`, in the run handle's
``warming`` thread for :func:`start_run`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from engine.api.results import KMax, PlanSummary, PlanView, RunEta, WairState
from engine.plans import (
    approval, export, impact, runs, savings_history as savings, service, state, verify, wair_defaults,
)
from engine.plans.export import PREVIEW_LABEL
from engine.plans.runs import CANCELLED, RunCancelled, eta_seconds
from engine.plans.savings_history import SAVINGS_TOLERANCE, SavingsHistory, SavingsRun
from engine.plans.service import BackgroundRun, ProgressFn
from engine.plans.verify import Verification
from engine.policy import registry
from engine.security import gate, signing
from engine.security.gate import default_actor
from engine.security.identity import Identity
from engine.workspace import as_workspace, on_workspace

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from engine.workspace import Workspace

__all__ = ["policy_names", "create_plan", "preview_plan", "list_plans", "show_plan",
           "approve_plan", "reject_plan", "run_plan", "start_run", "BackgroundRun",
           "plan_progress", "audit_log", "policy_state", "require_approver", "default_actor",
           "realized_savings", "prediction_history", "plan_json", "plan_runbook",
           "compare_plans", "compare_preview", "PREVIEW_LABEL", "wair_state",
           "reset_policy_state", "CANCELLED", "RunCancelled", "cancel_plan", "settle_cancelled",
           "run_eta", "eta_seconds", "plan_impact", "wair_k_max", "wair_window", "verify_plan", "verification",
           "Verification", "savings_history", "SavingsHistory", "SavingsRun", "SAVINGS_TOLERANCE"]

plan_progress = on_workspace(service.plan_progress)
verify_plan = on_workspace(verify.verify_plan)
audit_log = on_workspace(service.audit_log)
policy_state = on_workspace(service.policy_state)
realized_savings = on_workspace(service.realized_savings)
prediction_history = on_workspace(runs.prediction_history)
#: every run's predicted saving beside the verified and the realized one (``to_json()``: the
#: time history's shape), with the summary
savings_history = on_workspace(savings.savings_history)
cancel_plan = on_workspace(runs.cancel_plan)
settle_cancelled = on_workspace(runs.settle_cancelled)
plan_json = on_workspace(export.plan_json)
plan_runbook = on_workspace(export.plan_runbook)
compare_plans = on_workspace(export.compare_plans)
compare_preview = on_workspace(export.compare_preview)
plan_impact = on_workspace(impact.plan_impact)


def policy_names() -> list[str]:
    """The policies a plan can be asked of (``--policy`` choices, the dashboard's list)."""
    return registry.policy_names()


def preview_plan(ws: "Workspace", table: str, policy: str = "wair",
                 params: Mapping[str, Any] | None = None) -> PlanView:
    """What :func:`create_plan` would store (status ``preview``, or ``no-action``), without
    storing anything or touching policy state (:func:`engine.plans.service.preview_plan`)."""
    return PlanView(**service.preview_plan(as_workspace(ws), table, policy, params))


def create_plan(ws: "Workspace", table: str, policy: str = "wair",
                params: Mapping[str, Any] | None = None,
                created_by: "str | Identity | None" = None) -> PlanView:
    """Ask ``policy`` for a plan on the current snapshot of ``table`` and store it as
    ``proposed``; status ``no-action`` (``id`` None, with ``reason``) if it declines.
    ``created_by`` is the proposer (a name, or a signed-in identity), whom separation of
    duties keeps from approving it. A signed-in proposer signs the stored plan; a plan
    stored under a bare name (or none: the OS user) needs two different approvers, since
    nobody knows who proposed it (:mod:`engine.security.signing`)."""
    ws = as_workspace(ws)
    name = created_by.name if isinstance(created_by, Identity) else created_by
    view = PlanView(**service.create_plan(ws, table, policy, params, name))
    if (isinstance(created_by, Identity) and created_by.signing_key is not None
            and view.id is not None and getattr(view, "duplicate_of", None) is None):
        signing.sign_plan(ws, view.id, created_by, signing.PROPOSE)  # a signed proposer
    return view


def list_plans(ws: "Workspace", table: str | None = None) -> list[PlanSummary]:
    """All plans (of ``table``), oldest first, statuses refreshed."""
    return [PlanSummary(**row) for row in service.list_plans(as_workspace(ws), table)]


def show_plan(ws: "Workspace", id: int) -> PlanView:
    """Everything about one stored plan: groups, cost, saving, curve, audit, progress,
    result."""
    return PlanView(**service.show_plan(as_workspace(ws), id))


def approve_plan(ws: "Workspace", id: int, actor: Identity | None,
                 reason: str | None = None) -> PlanView:
    """proposed -> approved by a signed-in approver who did not propose it (a plan above
    the dual-approval threshold stays proposed until a second approver approves); returns
    :func:`show_plan` after it."""
    ws = as_workspace(ws)
    approval.approve(ws, int(id), actor, reason)
    return show_plan(ws, id)


def reject_plan(ws: "Workspace", id: int, actor: Identity | None,
                reason: str | None = None) -> PlanView:
    """proposed (or approved) -> rejected by a signed-in approver; returns
    :func:`show_plan` after it."""
    ws = as_workspace(ws)
    approval.reject(ws, int(id), actor, reason)
    return show_plan(ws, id)


def run_plan(ws: "Workspace", id: int, progress: ProgressFn | None = None,
             spark: "SparkSession | None" = None,
             actor: Identity | None = None,
             rollback_if_worse: bool | None = None) -> dict[str, Any]:
    """Run an approved, non-stale plan on Spark as a signed-in approver, and wait; returns
    its result (new snapshot, groups, realized vs predicted, ``delivery``: whether the run
    underdelivered, rolled back at once with ``rollback_if_worse``, default the setting).
    On failure the plan becomes ``failed``, nothing is committed, and an ExecutionError
    (or the AdvisorError that caused it) is raised."""
    ws = as_workspace(ws)
    result = service.run_plan(ws, id, progress=progress, spark=spark, actor=actor,
                              rollback_if_worse=rollback_if_worse)
    ws.emit("commit", ws.plans.get(id).table)
    return result


def start_run(ws: "Workspace", id: int, actor: Identity | None = None,
              spark: "SparkSession | None" = None) -> BackgroundRun:
    """:func:`run_plan` in a background daemon thread; returns at once with a handle
    (``done``, ``wait()``, ``result``, ``error``, ``progress()``, ``warming``: the thread
    that announces the commit once the run has made one). Progress is readable from any
    process with :func:`plan_progress`; a failure is recorded on the plan."""
    ws = as_workspace(ws)
    run = service.start_run(ws, id, actor=actor, spark=spark)
    run.warming = runs.after_commit(run, lambda: ws.emit("commit", ws.plans.get(id).table))
    return run


def run_eta(ws: "Workspace", id: int) -> RunEta:
    """A running (or ended) plan's progress and ETA (:func:`engine.plans.runs.run_eta`)."""
    return RunEta(**runs.run_eta(as_workspace(ws), id))


def wair_k_max(ws: "Workspace", table: str) -> KMax:
    """The k_max WAIR derives on ``table``'s current snapshot when none is given
    (:func:`engine.plans.wair_defaults.wair_k_max`)."""
    return KMax(**wair_defaults.wair_k_max(as_workspace(ws), table))


def wair_window(ws: "Workspace", table: str) -> int | None:
    """The window WAIR's next decision on ``table`` starts from when none is given, None
    once WAIR keeps a state there (:func:`engine.plans.wair_defaults.wair_window`)."""
    return wair_defaults.wair_window(as_workspace(ws), table)


def wair_state(ws: "Workspace", table: str) -> WairState:
    """What WAIR remembers on ``table`` (:func:`engine.plans.state.wair_state`)."""
    return WairState(**state.wair_state(as_workspace(ws), table))


def reset_policy_state(ws: "Workspace", table: str, actor: Identity | None,
                       reason: str | None = None, policy: str = "wair") -> WairState:
    """Forget what ``policy`` learned on ``table``, as a signed-in approver (audited
    ``policy-reset``); returns :func:`wair_state` after the reset."""
    return WairState(**state.reset_policy_state(as_workspace(ws), table, actor, reason, policy))


def require_approver(ws: "Workspace", actor: Identity | None, action: str) -> str:
    """The signed-in name behind ``actor`` if its role may ``action`` ("approve",
    "reject", "run", "rollback", "gc", "drop", "workload-clear", "approvers"); else
    ApprovalError. The one rule the CLI, the API and the dashboard share."""
    return gate.require(as_workspace(ws), actor, action)


def verification(ws: "Workspace", id: int) -> dict[str, Any] | None:
    """The stored verification of plan ``id`` (``plan verify``), None before one."""
    ws = as_workspace(ws)
    ws.plans.get(int(id))  # PlanNotFoundError for a wrong id
    return ws.control.verification(int(id))
