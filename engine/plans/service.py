"""The plan service: create (or preview), run, and read plans.

This is the only owner of a decision's window and of policy state. One decision:

1. the policy is built from its parameters and its saved state on the table
   (:func:`engine.plans.feedback.load_policy`);
2. the window is decided once: the policy's own (:meth:`Policy.decision_window`: WAIR closes
   the windows its queries completed and answers its adaptive size, section 4.2), else an
   explicit ``window`` parameter, else WAIR's saved window on the table, so that DD, DD-EP
   and greedy see the queries WAIR would see and "saving per window" compares like with like.
   WAIR's first decision on a table without a given window starts from a day of its queries
   (:func:`engine.plans.wair_defaults.first_window`);
3. the window's fragments are analyzed against the current snapshot's zonemaps and the
   policy proposes; :func:`create_plan` stores the proposal as ``proposed`` and the
   policy's new state, :func:`preview_plan` stores nothing.

Before step 2 the policy learns from the queries that came after its past runs
(:func:`engine.plans.feedback.settle_later`: a run followed by as many queries as its
window is scored on them and fed to ``observe``), so WAIR's credit, debt and window follow
the realized savings (WAIR section 4.3); a preview learns in memory only.

:func:`run_plan` goes through the gate (:mod:`engine.plans.approval`), runs the workspace's
executor (:class:`engine.plans.ports.Executor`; Spark's, :mod:`engine.spark.executor`),
records the re-estimated saving (the decision's window replayed) and where the run stood
in the query log; :func:`realized_savings` scores the queries imported since
(:mod:`engine.plans.feedback`). A preview lists the plan's predicted regressions
(:func:`engine.policy.impact.rewrite_losses`).

Every entry point takes the :class:`~engine.workspace.Workspace` (``ws``): its stores
(``ws.tables``, ``ws.workloads``, ``ws.control``, ``ws.plans``) are opened once and shared
by every step of a decision or a run.
"""

from __future__ import annotations

import contextlib
import threading
from datetime import datetime, timezone
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Mapping

from engine.core.errors import AdvisorError, ApprovalError, ExecutionError
from engine.core.jsonable import plain_json
from engine.plans import approval, delivery
from engine.plans.feedback import (later_fragments, later_report, load_policy,
                                   realized_report, save_policy_state, settle_later,
                                   settled_plans, window_fragments)
from engine.plans.cost_check import cost_check, predicted_seconds
from engine.plans.heartbeat import Heartbeat
from engine.plans.plan import ROLLED_BACK, RUNNING, SUCCEEDED, Plan, PlanBook, run_outcome
from engine.plans.ports import ProgressFn
from engine.plans.store import ControlStore
from engine.plans.wair_defaults import first_window
from engine.policy import pricing
from engine.policy.base import Policy, PolicyContext, Proposal
from engine.policy.codec import proposal_to_json
from engine.policy.costmodel import for_table
from engine.policy.explain import explain_no_action
from engine.policy.impact import rewrite_losses
from engine.policy.output_check import check_output
from engine.policy.output_saving import capped_by_output, priced_by_output
from engine.policy.registry import make_policy, plan_params
from engine.scan import rowgroups
from engine.scan.pruning import analyze_workload
from engine.security.gate import default_actor, require
from engine.spark.progress import RunCancelled, clear_cancel_request, read_cancel_request
from engine.table.formats.partitioning import prepare_groups
from engine.table.model import Snapshot

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from engine.core.config import Settings
    from engine.table.store import TableStore
    from engine.workspace import Workspace

__all__ = ["decide", "window_size", "saved_window", "Decision", "preview_plan", "create_plan",
           "run_plan", "start_run", "BackgroundRun", "list_plans", "show_plan", "plan_progress",
           "audit_log", "policy_state", "realized_savings", "reset_policy_state",
           "reset_state_after_rollback", "predicted_seconds"]

#: the policy whose saved window sizes the decisions of policies without a window of their own
WINDOW_POLICY = "wair"


def _jsonable(value: Any) -> Any:
    return plain_json(value, inf_as_none=True)


# -- deciding ----------------------------------------------------------------------------
def saved_window(control: ControlStore, table: str) -> int:
    """WAIR's current sliding-window size on ``table`` (its saved state, else its default):
    the window of policies that have none of their own."""
    saved = control.policy_state(table, WINDOW_POLICY) or {}
    default = make_policy(WINDOW_POLICY).get_params()["window"]
    try:
        return int(saved.get("window_size") or default)
    except (TypeError, ValueError):
        return int(default)


def window_size(policy: Policy, explicit: int | None, control: ControlStore, table: str,
                queries_seen: int) -> int:
    """How many of the most recent fragments the decision sees: the policy's own window
    (WAIR's adaptive one), else the ``window`` asked for, else :func:`saved_window`."""
    return int(policy.decision_window(queries_seen) or explicit or saved_window(control, table))


@dataclass(frozen=True)
class Decision:
    """One run of a policy: what it saw and what it proposed (None: it declined)."""

    snapshot: Snapshot
    policy: Policy
    proposal: Proposal | None
    params: dict[str, Any]  # the cleaned parameters as given
    window: tuple = ()  # the fragments the policy saw (ScanFragment)
    settled: tuple[int, ...] = ()  # plans whose later queries the policy has learned from
    declined: str | None = None  # why the table's format left nothing of the proposal


def decide(ws: "Workspace", table: str, policy: str,
           params: Mapping[str, Any] | None) -> Decision:
    """Run ``policy`` once on the current snapshot of ``table`` (nothing is stored)."""
    clean = plan_params(policy, params)
    snapshot = ws.tables.current_snapshot(table)
    table = snapshot.table or table
    name = policy.lower()
    # "window" is a parameter of WAIR and greedy; for the others it only sizes the context
    own_window = "window" in make_policy(name).param_names()
    policy_params = {k: v for k, v in clean.items() if own_window or k != "window"}
    control = ws.control
    fragments = list(ws.workloads.fragments(table))
    if (name == WINDOW_POLICY and clean.get("window") is None
            and not control.policy_state(table, name)):
        defaults = make_policy(name).get_params()  # a day of queries (wair_defaults)
        policy_params["window"] = first_window(fragments, int(defaults["window"]),
                                               int(defaults["max_window"]))
    pol = load_policy(control, table, name, policy_params, window=clean.get("window"))
    settled = _settle(ws, table, pol, fragments)
    window = fragments[-window_size(pol, clean.get("window"), control, table, len(fragments)):]
    zonemaps = snapshot.zonemaps()
    groups = rowgroups.if_enabled(ws.tables, table, snapshot) if window else None
    scans = analyze_workload(zonemaps, window, groups) if window else []
    # priced under the table's own file targets, as the executor will cut its files
    # and at the table's own price per cell when it has one (pricing.resolve)
    own, price = pricing.apply(ws.settings, table)
    target = ws.tables.write_target(table)
    priced = for_table(own, target)
    ctx = PolicyContext(table=table, snapshot_id=snapshot.id, zonemaps=zonemaps, window=window,
                        scans=scans, settings=priced, queries_seen=len(fragments),
                        row_groups=groups)
    fitted = _fit_to_format(ws.tables, table, snapshot, pol.propose(ctx))
    if isinstance(fitted, FormatDeclined):
        return Decision(snapshot, pol, None, clean, tuple(window), settled, fitted.reason)
    if fitted is not None and window:  # priced again at the shape the executor writes
        check = check_output(zonemaps, fitted.groups, window, target, groups,
                             row_group_level=ws.tables.settings.prune_row_groups)
        fitted = replace(fitted, details={**fitted.details, "output": check.to_json()})
        if not check.delivers and check.modelled:
            return Decision(snapshot, pol, None, clean, tuple(window), settled, check.reason)
        fitted = priced_by_output(fitted, check, len(window), priced)  # PAW's, PTO's designs
        if ws.settings.promise_output_saving:  # never promise more than the output delivers
            fitted = capped_by_output(fitted, check, priced)
    return Decision(snapshot, pol, _priced_with(fitted, priced, price), clean, tuple(window),
                    settled)


def _priced_with(proposal: Proposal | None, priced: "Settings",
                 price: "pricing.TablePrice | None" = None) -> Proposal | None:
    """The proposal marked with whether its rewrite cost was priced with a calibration
    (``details["priced_with_calibration"]``): the history of prediction errors
    (:func:`cost_check`) must tell a calibrated prediction from the default rates by how the
    plan was priced, not by whether a calibration exists when it runs."""
    if proposal is None:
        return None
    details = {**proposal.details, "priced_with_calibration": bool(priced.rewrite_fixed_s),
               # what the first rewrite of a fresh Spark session adds (a CLI run)
               "cold_start_s": float(priced.cold_start_s),
               # the price per cell used, the table's own or the calibration's
               "rewrite_price": pricing.describe(price, priced)}
    return replace(proposal, details=details)


@dataclass(frozen=True)
class FormatDeclined:
    """No action, and why: the table's format left nothing of a policy's proposal."""

    reason: str


def _fit_to_format(tables: "TableStore", table: str, snapshot: Snapshot,
                   proposal: Proposal | None) -> Proposal | FormatDeclined | None:
    """The proposal made fit for the table's format: groups split by partition
    value, files with merge-on-read deletes or of an older partition spec that fit no
    current partition left out. A proposal left without groups is
    :class:`FormatDeclined` with the reason; the service records it in the decision (the
    policy's own state and ``last_decision_`` stay as the policy left them)."""
    if proposal is None:
        return None
    groups = prepare_groups(proposal.groups, tables.format(table), snapshot.id)
    if not groups:
        return FormatDeclined(
            "every file the plan would rewrite is left out by the table's format: it has "
            "merge-on-read deletes (Iceberg delete files or Delta deletion vectors; compact "
            "the deletes first) or was written under an older Iceberg partition spec and "
            "spans several partitions of the current one")
    return replace(proposal, groups=groups) if groups != proposal.groups else proposal


def _settle(ws: "Workspace", table: str, policy: Policy, fragments: list) -> tuple[int, ...]:
    """Feed ``policy`` (in memory) the realized savings of its past runs on ``table`` that
    enough later queries have followed; the ids it has learned from, old and new. Policies
    without memory learn nothing."""
    if not policy.state():
        return ()
    before = settled_plans(ws.control, table, policy.name)
    store = ws.tables
    fed = settle_later(store, ws.plans.list(table), policy, fragments,
                       lambda plan, sid: store.snapshot(plan.table, sid), before)
    return tuple(before) + tuple(fed)


def _no_action(decision: Decision, policy: str) -> dict[str, Any]:
    """The answer when the policy declines: its reason, curve and evidence."""
    snap = decision.snapshot
    why = dict(decision.policy.last_decision_)
    # a proposal that the output check or the table's format declined: the policy's own
    # reason describes the proposal, the decline says why there is no plan
    explanation = explain_no_action(decision.policy.name,
                                    {"reason": decision.declined} if decision.declined else why)
    own = why.pop("reason", None)
    reason = decision.declined or own or f"policy {policy} proposes nothing for {snap.table}"
    curve = why.pop("curve", [])
    return {"id": None, "status": "no-action", "table": snap.table, "base_snapshot": snap.id,
            "policy": policy, "reason": reason, "explanation": explanation,
            "curve": [[int(c), float(v)] for c, v in curve], "details": _jsonable(why)}


def preview_plan(ws: "Workspace", table: str, policy: str = "wair",
                 params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What :func:`create_plan` would store, without storing anything or touching policy
    state."""
    decision = decide(ws, table, policy, params)
    if decision.proposal is None:
        return _no_action(decision, policy)
    proposal, snap = decision.proposal, decision.snapshot
    p = proposal_to_json(proposal)
    return {"id": None, "status": "preview", "table": snap.table, "base_snapshot": snap.id,
            "policy": policy, "params": _jsonable(decision.params),
            "partition_count": len(proposal.partitions),
            **{k: v for k, v in p.items() if k not in ("policy", "params")},
            "effective_params": p["params"], "regressions": _regressions(ws.tables, decision),
            "rewrite_price": proposal.details.get("rewrite_price")}


def _regressions(tables: "TableStore", decision: Decision) -> dict[str, Any]:
    """The preview's predicted regressions: WAIR's own (counted in its decision), else
    :func:`rewrite_losses` of the proposal over the window the policy saw."""
    details = decision.proposal.details if decision.proposal is not None else {}
    if "regressions" in details:
        return _jsonable({"bytes": details.get("loss_bytes", 0.0),
                          "cpu_seconds": details.get("loss_cpu_s", 0.0),
                          "queries": details.get("loss_queries", 0),
                          "columns": details["regressions"]})
    settings = tables.settings
    snap, level = decision.snapshot, settings.prune_row_groups  # charged as the scans are
    groups = rowgroups.if_enabled(tables, snap.table, snap)
    return _jsonable(rewrite_losses(snap.zonemaps(), decision.proposal.groups, decision.window,
                                    settings, row_groups=groups, row_group_level=level))


def create_plan(ws: "Workspace", table: str, policy: str = "wair",
                params: Mapping[str, Any] | None = None,
                created_by: str | None = None) -> dict[str, Any]:
    """Store what ``policy`` proposes as a ``proposed`` plan, and the policy's new state.

    A proposal identical to a plan still waiting on the same snapshot (same policy, same
    groups: partitions, layouts, keys) is not stored twice: the answer is that plan, with
    ``duplicate_of`` set to its id, and no policy state changes."""
    decision = decide(ws, table, policy, params)
    if decision.proposal is None:
        return _no_action(decision, policy)
    snap = decision.snapshot
    proposal = proposal_to_json(decision.proposal)
    twin = _waiting_twin(ws.plans, snap.table, snap.id, policy, proposal)
    if twin is not None:
        return {**show_plan(ws, twin), "duplicate_of": twin}
    control = ws.control
    save_policy_state(control, snap.table, policy.lower(), decision.policy, decision.settled)
    plan_id = control.insert_plan(snap.table, snap.id, policy, _jsonable(decision.params),
                                  proposal, created_by or default_actor())
    return show_plan(ws, plan_id)


def _waiting_twin(book: PlanBook, table: str, snapshot_id: str, policy: str,
                  proposal: Mapping[str, Any]) -> int | None:
    """The id of a proposed or approved plan on ``snapshot_id`` whose groups equal
    ``proposal``'s, else None."""
    for plan in book.list(table):
        if (plan.status in ("proposed", "approved") and plan.base_snapshot == snapshot_id
                and plan.policy == policy
                and proposal_to_json(plan.proposal)["groups"] == proposal["groups"]):
            return plan.id
    return None


# -- running -----------------------------------------------------------------------------
def run_plan(ws: "Workspace", id: int, progress: ProgressFn | None = None,
             spark: "SparkSession | None" = None, actor: str | None = None,
             rollback_if_worse: bool | None = None) -> dict[str, Any]:
    """Run an approved, non-stale plan; returns its result (new snapshot, groups, realized).

    Right after the commit the decision's window is replayed on the snapshots before and
    after and judged (:mod:`engine.plans.delivery`): ``result["delivery"]`` says whether
    the run underdelivered; with ``rollback_if_worse`` (default: the setting) an
    underdelivering run is rolled back at once, audited with the figures.

    On failure the plan becomes ``failed``, nothing is committed, and an ExecutionError
    (or the AdvisorError that caused it) is raised (after a commit: :meth:`PlanBook.fail`).
    A run an approver cancelled (:class:`~engine.spark.progress.RunCancelled`, raised after
    the executor removed what it wrote) becomes ``cancelled`` in one audited transition
    (:func:`_settle_cancel`).
    """
    settings, book = ws.settings, ws.plans
    executor = ws.executor  # wired before any transition (Spark itself starts only to write)
    plan = approval.start(ws, int(id), actor)
    control = book.control
    control.start_job(plan.id, len(plan.groups))

    commits: list[tuple[str, bool]] = []  # (snapshot, last batch) as each commit returns

    def on_progress(event: Mapping[str, Any]) -> None:
        if event.get("committed"):
            commits.append((str(event["committed"]), bool(event.get("final"))))
        control.set_progress(plan.id, int(event["groups_done"]), int(event["groups_total"]),
                             int(event["rows"]), int(event["bytes"]), str(event["message"]))
        if progress is not None:
            progress(event)

    try:
        # readers on other hosts see it live
        with Heartbeat(control, plan.id, settings.runner_timeout_s) as beat:
            result = executor.execute_plan(plan, spark=spark, progress=on_progress,
                                           approvers=approval.approvals_so_far(book, plan.id),
                                           may_commit=beat.may_commit)
    except RunCancelled as exc:
        _settle_cancel(settings, book, plan.id, str(exc))
        raise
    except BaseException as exc:
        message = str(exc) or type(exc).__name__
        with contextlib.suppress(ApprovalError):  # already settled by a reader: that stands
            book.fail(plan.id, message, commits)  # committed files stay: "then failed"
        if isinstance(exc, AdvisorError):
            raise
        if isinstance(exc, Exception):
            raise ExecutionError(f"plan {plan.id} {run_outcome(commits)}: "
                                 f"{type(exc).__name__}: {message}") from exc
        raise
    result["cost_check"] = cost_check(settings, plan, result)
    re_estimated = _re_estimated(ws, plan, result["snapshot_id"])
    result["re_estimated"] = re_estimated
    result["realized"] = re_estimated  # until later queries arrive: realized_savings()
    result["queries_at_run"] = len(ws.workloads.fragments(plan.table))
    verdict = delivery.judge(re_estimated, settings.min_realized_ratio)
    undo = settings.rollback_if_worse if rollback_if_worse is None else rollback_if_worse
    who = require(ws, actor, "run") if undo and verdict.underdelivered else None
    if who is not None:
        verdict = delivery.roll_back_if_worse(ws, plan, result, verdict, who)
    result["delivery"] = verdict.to_json()
    book.succeed(plan.id, result)
    if who is not None:
        delivery.settle_rollback(ws, plan, verdict, who)
    return result


def _settle_cancel(settings: "Settings", book: PlanBook, plan_id: int, error: str) -> None:
    """running -> cancelled under the canceller's name, and the request removed; without a
    request (removed meanwhile) the run is settled ``failed`` with the cancellation as its
    error. A plan someone else settled meanwhile keeps their state."""
    request = read_cancel_request(settings.home, plan_id)
    with contextlib.suppress(ApprovalError):
        if request is None:
            book.fail(plan_id, error)
        else:
            book.cancel(plan_id, (RUNNING,), request, error)
    clear_cancel_request(settings.home, plan_id)


def _re_estimated(ws: "Workspace", plan: Plan, snapshot_id: str) -> dict[str, Any]:
    """The decision's window replayed on the snapshots before and after (re-estimated, not
    realized: the policy learns from later queries, :func:`_settle`). Never fails the run
    (the data is committed by now): errors are recorded instead."""
    try:
        store = ws.tables
        before = store.snapshot(plan.table, plan.base_snapshot)
        after = store.snapshot(plan.table, snapshot_id)
        predicted = plan.proposal.predicted_saving
        n = int(predicted.get("window_queries", 0) or 0)
        frags = window_fragments(ws.workloads.fragments(plan.table), n)
        return realized_report(store, before, after, frags, predicted,
                               plan.proposal.estimated_cost.cpu_seconds)
    except Exception as exc:  # noqa: BLE001 - the commit is done; report, do not fail
        return {"error": f"{type(exc).__name__}: {exc}"}


def realized_savings(ws: "Workspace", id: int) -> dict[str, Any]:
    """The realized saving of a succeeded plan: every query imported after its run, scored
    on the snapshots before and after (zonemaps), its prediction scaled to as many
    queries, and the log's measured bytes and durations beside the estimate; ``settled``
    says whether the policy has learned from it (after a window's worth of queries).
    ``{"status": "not run"}`` for a plan that has not succeeded, ``"unknown"`` for a run
    that did not record its place in the log."""
    book = ws.plans
    plan = book.get(int(id))
    if plan.status != "succeeded" or not plan.result:
        return {"id": plan.id, "status": "not run", "queries": 0}
    later = later_fragments(plan, ws.workloads.fragments(plan.table))
    if later is None:
        return {"id": plan.id, "status": "unknown", "queries": 0}
    store = ws.tables
    report = later_report(store, store.snapshot(plan.table, plan.base_snapshot),
                          store.snapshot(plan.table, plan.result["snapshot_id"]), later,
                          plan.proposal.predicted_saving,
                          plan.proposal.estimated_cost.cpu_seconds)
    need = max(1, int(plan.proposal.predicted_saving.get("window_queries", 0) or 0))
    settled = plan.id in settled_plans(book.control, plan.table, plan.policy)
    return {"id": plan.id, "status": "measured" if later else "waiting for later queries",
            "queries_needed_to_learn": need, "settled": settled, **report}


class BackgroundRun:
    """:func:`run_plan` in a daemon thread, for a caller that must not block (the dashboard).

    Progress goes to the control store as for any run (read it with :func:`plan_progress`,
    from any process); a failure is recorded on the plan by :func:`run_plan` and kept here
    in :attr:`error` (the first transition's refusal too, e.g. a plan not approved).
    """

    def __init__(self, ws: "Workspace", plan_id: int, actor: str | None = None,
                 spark: "SparkSession | None" = None) -> None:
        self.plan_id, self.actor = int(plan_id), actor
        self.result: dict[str, Any] | None = None
        self.error: BaseException | None = None
        self._ws, self._spark = ws, spark
        self._thread = threading.Thread(target=self._work, name=f"plan-{plan_id}", daemon=True)

    def _work(self) -> None:
        try:
            self.result = run_plan(self._ws, self.plan_id, spark=self._spark,
                                   actor=self.actor)
        except BaseException as exc:  # handed to the caller, who shows AdvisorErrors plainly
            self.error = exc

    def start(self) -> "BackgroundRun":
        self._thread.start()
        return self

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    def wait(self, timeout_s: float | None = None) -> None:
        self._thread.join(timeout_s)

    def progress(self) -> dict[str, Any]:
        """:func:`plan_progress` of this run's plan."""
        return plan_progress(self._ws, self.plan_id)


def start_run(ws: "Workspace", id: int, actor: str | None = None,
              spark: "SparkSession | None" = None) -> BackgroundRun:
    """Start :func:`run_plan` in a background daemon thread and return at once."""
    return BackgroundRun(ws, id, actor, spark).start()


# -- reading -----------------------------------------------------------------------------
def list_plans(ws: "Workspace", table: str | None = None) -> list[dict[str, Any]]:
    """All plans (of ``table``), oldest first, in summary form (statuses refreshed)."""
    out = []
    for plan in ws.plans.list(table):
        cost = plan.proposal.estimated_cost
        out.append({"id": plan.id, "status": plan.status, "table": plan.table,
                    "base_snapshot": plan.base_snapshot, "policy": plan.policy,
                    "groups": len(plan.groups), "partitions": len(plan.partitions),
                    "estimated_cpu_seconds": cost.cpu_seconds,
                    "predicted_saving_cpu_seconds":
                        float(plan.proposal.predicted_saving.get("cpu_seconds", 0.0) or 0.0),
                    "created_at": plan.created_at, "created_by": plan.created_by,
                    "updated_at": plan.updated_at,
                    "underdelivered": ((plan.result or {}).get("delivery") or {}).get("underdelivered")})
    return out


def show_plan(ws: "Workspace", id: int) -> dict[str, Any]:
    """Everything about one plan: groups, cost, saving, curve, audit, progress, result."""
    book = ws.plans
    plan = book.get(int(id))
    data = plan.to_json()
    data["predicted_rewrite_seconds"] = predicted_seconds(plan)  # warm and fresh session
    data["rewrite_price"] = plan.proposal.details.get("rewrite_price")  # which price per cell
    data["audit"] = book.control.audit(plan.id)
    data["progress"] = book.control.progress(plan.id)
    return data


def plan_progress(ws: "Workspace", id: int) -> dict[str, Any]:
    """The running (or last) job's progress and the plan's status."""
    book = ws.plans
    plan = book.get(int(id))
    prog = book.control.progress(plan.id) or {}
    return {"id": plan.id, "status": plan.status, **{k: prog.get(k) for k in (
        "groups_done", "groups_total", "rows", "bytes", "message", "started_at",
        "updated_at")}}


def audit_log(ws: "Workspace", plan_id: int | None = None) -> list[dict[str, Any]]:
    """Append-only audit entries (of one plan), oldest first."""
    if plan_id is not None:
        ws.plans.get(int(plan_id))  # PlanNotFoundError for a wrong id
    return ws.control.audit(None if plan_id is None else int(plan_id))


def policy_state(ws: "Workspace", table: str, policy: str = "wair") -> dict[str, Any] | None:
    """The persisted memory of ``policy`` on ``table`` (WAIR: window, credit, history)."""
    return ws.control.policy_state(table, policy)


# -- forgetting learned state --------------------------------------------------------------
def reset_policy_state(ws: "Workspace", table: str, policy: str = "wair",
                       actor: object = None, reason: str | None = None,
                       who: str | None = None) -> dict[str, Any] | None:
    """Forget what ``policy`` learned on ``table`` (WAIR: adapted window, credit, debt,
    window history): its saved state becomes that of a fresh policy, which decides exactly
    like one without saved state. Needs a signed-in approver (the gate's ``run``: whoever
    may run a rewrite may reset what rewrites taught); audited. ``who``: a name already
    checked by the caller's own gate (the rollback). Returns the state as saved."""
    control = ws.control
    name = who or require(ws, actor, "run")
    state = save_policy_state(control, table, policy.lower(), make_policy(policy.lower()))
    control.record(name, "policy-reset", f"table {table}: {policy.lower()} state reset"
                   + (f" ({reason})" if reason else ""))
    return state


def reset_state_after_rollback(ws: "Workspace", table: str, target: Snapshot,
                               who: str) -> bool:
    """After ``table`` was rolled back to snapshot ``target`` by ``who``: WAIR's state is
    reset when it is newer than the target: a WAIR decision was taken on another snapshot
    after the target was committed, or a WAIR plan's run committed after it (its credit,
    debt and window describe data that is gone). Returns whether it was reset."""
    control = ws.control
    if control.policy_state(table, WINDOW_POLICY) is None:
        return False
    since = _utc(target.created_at)
    newer = [p for p in ws.plans.list(table) if p.policy == WINDOW_POLICY and (
        (p.base_snapshot != target.id and _utc(p.created_at) > since)
        or (p.status in (SUCCEEDED, ROLLED_BACK) and _utc(p.updated_at) > since))]
    if not newer:
        return False
    reset_policy_state(ws, table, WINDOW_POLICY, who=who,
                       reason=f"rolled back to snapshot {target.id}, older than plan(s) "
                              + ", ".join(str(p.id) for p in newer))
    return True


def _utc(stamp: str) -> datetime:
    """An ISO-8601 time as an aware UTC datetime (snapshot and plan stamps differ in form)."""
    parsed = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)
