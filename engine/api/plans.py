"""Plans: create (or preview), list, show, approve, reject, run, progress, audit.

``create_plan`` gives a policy the table's current snapshot, the workload window with its
pruning analysis and the policy's persisted state, and stores what it proposes as a
``proposed`` plan. ``run_plan`` goes through the approval gate (:mod:`engine.plans.plan`), runs
the Spark executor (:mod:`engine.spark.executor`), records realized against predicted savings
(:mod:`engine.plans.feedback`) and feeds them back to the policy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping

from engine.plans.store import ControlStore
from engine.core.errors import AdvisorError, ExecutionError
from engine.plans.plan import Plan, PlanBook, default_actor, plain_json, proposal_to_json

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from engine.core.config import Settings

__all__ = ["create_plan", "preview_plan", "list_plans", "show_plan", "approve_plan",
           "reject_plan", "run_plan", "plan_progress", "audit_log", "policy_state"]

def _clean_params(policy: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Drop unset values; map ``key`` to each policy's own name for a fixed key."""
    out = {k.replace("-", "_"): v for k, v in (params or {}).items() if v is not None}
    if "key" in out and policy.lower() == "wair":
        out["fixed_key"] = out.pop("key")
    return out


def _decide(settings: "Settings", table: str, policy: str, params: Mapping[str, Any] | None):
    """Run the policy once; returns (snapshot, policy object, proposal or None, clean params)."""
    from engine.policy.base import PolicyContext
    from engine.policy.registry import accepted_params, make_policy
    from engine.scan.pruning import analyze_workload
    from engine.table.store import TableStore
    from engine.workload.store import WorkloadStore

    clean = _clean_params(policy, params)
    store = TableStore(settings)
    snapshot = store.current_snapshot(table)
    table = snapshot.table or table
    policy = policy.lower()
    # "window" is a parameter of WAIR and greedy; for the others it only sizes the context
    own_window = "window" in accepted_params(policy)
    policy_params = {k: v for k, v in clean.items() if own_window or k != "window"}
    pol = make_policy(policy, policy_params)
    control = ControlStore(settings)
    saved = control.policy_state(table, policy)
    if saved and hasattr(pol, "load_state"):
        pol.load_state(saved)
        if "window" in clean and hasattr(pol, "state"):  # an explicit --window wins
            state = pol.state()
            state["window_size"] = int(clean["window"])
            pol.load_state(state)
    fragments = list(WorkloadStore(settings).fragments(table))
    zonemaps = snapshot.zonemaps()
    # WAIR looks at most at its (adaptive) window; analyze only what it can see. The others
    # see the same window as WAIR would, so "saving per window" compares like with like.
    if hasattr(pol, "advance"):  # close WAIR's finished windows before sizing the context
        pol.advance(len(fragments))
    limit = (getattr(pol, "window_size", None) or clean.get("window")
             or _wair_window(control, table))
    window = fragments[-int(limit):]
    scans = analyze_workload(zonemaps, window) if window else []
    ctx = PolicyContext(table=table, snapshot_id=snapshot.id, zonemaps=zonemaps, window=window,
                        scans=scans, settings=settings, queries_seen=len(fragments))
    proposal = pol.propose(ctx)
    return snapshot, pol, proposal, clean


def _wair_window(control: ControlStore, table: str) -> int:
    """WAIR's current sliding-window size on ``table`` (its saved state, else its default)."""
    from engine.policy.wair import WairParams

    saved = control.policy_state(table, "wair") or {}
    try:
        return int(saved.get("window_size") or WairParams().window)
    except (TypeError, ValueError):
        return WairParams().window


def _no_action(pol: Any, table: str, snapshot_id: str, policy: str) -> dict[str, Any]:
    decision = dict(getattr(pol, "last_decision", {}) or {})
    reason = decision.pop("reason", None) or f"policy {policy} proposes nothing for {table}"
    curve = decision.pop("curve", [])
    return {"id": None, "status": "no-action", "table": table, "base_snapshot": snapshot_id,
            "policy": policy, "reason": reason, "curve": [[int(c), float(v)] for c, v in curve],
            "details": _jsonable(decision)}


def _jsonable(value: Any) -> Any:
    return plain_json(value, inf_as_none=True)


def preview_plan(settings: "Settings", table: str, policy: str = "wair",
                 params: dict | None = None) -> dict[str, Any]:
    """What ``create_plan`` would store, without storing anything or touching policy state."""
    snapshot, pol, proposal, clean = _decide(settings, table, policy, params)
    if proposal is None:
        return _no_action(pol, snapshot.table, snapshot.id, policy)
    p = proposal_to_json(proposal)
    return {"id": None, "status": "preview", "table": snapshot.table,
            "base_snapshot": snapshot.id, "policy": policy, "params": _jsonable(clean),
            "partition_count": len(proposal.partitions), **{k: v for k, v in p.items()
                                                             if k not in ("policy", "params")},
            "effective_params": p["params"]}


def create_plan(settings: "Settings", table: str, policy: str = "wair",
                params: dict | None = None, created_by: str | None = None) -> dict[str, Any]:
    """Ask ``policy`` for a plan on the current snapshot of ``table`` and store it as
    ``proposed``; ``{"id": None, "status": "no-action", "reason": ...}`` if it declines."""
    snapshot, pol, proposal, clean = _decide(settings, table, policy, params)
    if proposal is None:
        return _no_action(pol, snapshot.table, snapshot.id, policy)
    control = ControlStore(settings)
    if hasattr(pol, "state"):
        control.save_policy_state(snapshot.table, policy.lower(), _jsonable(pol.state()))
    plan_id = control.insert_plan(snapshot.table, snapshot.id, policy, _jsonable(clean),
                                  proposal_to_json(proposal), created_by or default_actor())
    return show_plan(settings, plan_id)


def list_plans(settings: "Settings", table: str | None = None) -> list[dict[str, Any]]:
    """All plans (of ``table``), oldest first, in summary form (statuses refreshed)."""
    out = []
    for plan in PlanBook(settings).list(table):
        cost = plan.proposal.estimated_cost
        out.append({"id": plan.id, "status": plan.status, "table": plan.table,
                    "base_snapshot": plan.base_snapshot, "policy": plan.policy,
                    "groups": len(plan.groups), "partitions": len(plan.partitions),
                    "estimated_cpu_seconds": cost.cpu_seconds,
                    "predicted_saving_cpu_seconds":
                        float(plan.proposal.predicted_saving.get("cpu_seconds", 0.0) or 0.0),
                    "created_at": plan.created_at, "created_by": plan.created_by,
                    "updated_at": plan.updated_at})
    return out


def show_plan(settings: "Settings", id: int) -> dict[str, Any]:
    """Everything about one plan: groups, cost, saving, curve, audit, progress, result."""
    book = PlanBook(settings)
    plan = book.get(int(id))
    data = plan.to_json()
    data["audit"] = book.control.audit(plan.id)
    data["progress"] = book.control.progress(plan.id)
    return data


def approve_plan(settings: "Settings", id: int, actor: str | None,
                 reason: str | None = None) -> dict[str, Any]:
    """proposed -> approved by a configured approver."""
    PlanBook(settings).approve(int(id), actor, reason)
    return show_plan(settings, id)


def reject_plan(settings: "Settings", id: int, actor: str | None,
                reason: str | None = None) -> dict[str, Any]:
    """proposed (or approved) -> rejected by a configured approver."""
    PlanBook(settings).reject(int(id), actor, reason)
    return show_plan(settings, id)


def run_plan(settings: "Settings", id: int,
             progress: Callable[[Mapping[str, Any]], None] | None = None,
             spark: "SparkSession | None" = None, actor: str | None = None) -> dict[str, Any]:
    """Run an approved, non-stale plan; returns its result (new snapshot, groups, realized).

    On failure the plan becomes ``failed``, nothing is committed, and an ExecutionError
    (or the AdvisorError that caused it) is raised.
    """
    from engine.spark.executor import execute_plan

    book = PlanBook(settings)
    plan = book.start(int(id), actor)
    control = book.control
    control.start_job(plan.id, len(plan.groups))

    def on_progress(event: Mapping[str, Any]) -> None:
        control.set_progress(plan.id, int(event["groups_done"]), int(event["groups_total"]),
                             int(event["rows"]), int(event["bytes"]), str(event["message"]))
        if progress is not None:
            progress(event)

    try:
        result = execute_plan(settings, plan, spark=spark, progress=on_progress)
    except BaseException as exc:
        message = str(exc) or type(exc).__name__
        book.fail(plan.id, message)
        if isinstance(exc, AdvisorError):
            raise
        if isinstance(exc, Exception):
            raise ExecutionError(f"plan {plan.id} failed, nothing was committed: "
                                 f"{type(exc).__name__}: {message}") from exc
        raise
    result["realized"] = _realized(settings, plan, result["snapshot_id"])
    book.succeed(plan.id, result)
    return result


def _realized(settings: "Settings", plan: Plan, snapshot_id: str) -> dict[str, Any]:
    """Realized vs predicted over the decision's window; fed to the policy. Never fails
    the run (the data is committed by now): errors are recorded instead."""
    try:
        from engine.plans.feedback import feed_policy, realized_report, window_fragments
        from engine.table.store import TableStore
        from engine.workload.store import WorkloadStore

        store = TableStore(settings)
        before = store.snapshot(plan.table, plan.base_snapshot)
        after = store.snapshot(plan.table, snapshot_id)
        predicted = plan.proposal.predicted_saving
        n = int(predicted.get("window_queries", 0) or 0)
        frags = window_fragments(WorkloadStore(settings).fragments(plan.table), n)
        report = realized_report(settings, before, after, frags, predicted,
                                 plan.proposal.estimated_cost.cpu_seconds)
        state = feed_policy(settings, plan.table, plan.policy, plan.params, report)
        if state is not None:
            report["policy_state"] = _jsonable({k: v for k, v in state.items()
                                                if k != "history"})
        return report
    except Exception as exc:  # noqa: BLE001 - the commit is done; report, do not fail
        return {"error": f"{type(exc).__name__}: {exc}"}


def plan_progress(settings: "Settings", id: int) -> dict[str, Any]:
    """The running (or last) job's progress and the plan's status."""
    book = PlanBook(settings)
    plan = book.get(int(id))
    prog = book.control.progress(plan.id) or {}
    return {"id": plan.id, "status": plan.status, **{k: prog.get(k) for k in (
        "groups_done", "groups_total", "rows", "bytes", "message", "started_at",
        "updated_at")}}


def audit_log(settings: "Settings", plan_id: int | None = None) -> list[dict[str, Any]]:
    """Append-only audit entries (of one plan), oldest first."""
    if plan_id is not None:
        PlanBook(settings).get(int(plan_id))  # PlanNotFoundError for a wrong id
    return ControlStore(settings).audit(None if plan_id is None else int(plan_id))


def policy_state(settings: "Settings", table: str, policy: str = "wair") -> dict[str, Any] | None:
    """The persisted memory of ``policy`` on ``table`` (WAIR: window, credit, history)."""
    return ControlStore(settings).policy_state(table, policy)
