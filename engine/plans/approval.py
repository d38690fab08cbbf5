"""The approval transitions of a plan: approve, reject, start a run, and rollbacks undoing runs.

Who may do each is the gate's (:func:`engine.security.gate.require`); this module applies the
plan's rules on top and moves the plan through :class:`~engine.plans.plan.PlanBook`, each move
atomic and audited.

Separation of duties (on by default, ``separation_of_duties = false`` turns it off): the
proposer of a plan cannot approve it. A plan whose estimated read exceeds
``dual_approval_bytes`` or whose estimated cost exceeds ``dual_approval_cpu_seconds``
(0 disables either) needs two distinct approvers: the first approval is audited and leaves
the plan ``proposed``; the second, by someone else, approves it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.core.errors import ApprovalError, PlanError, StalePlanError
from engine.plans.plan import (
    APPROVED, PROPOSED, REJECTED, ROLLED_BACK, RUNNING, STALE, SUCCEEDED, Plan, PlanBook,
)
from engine.security.gate import require

if TYPE_CHECKING:
    from engine.core.config import Settings
    from engine.workspace import Workspace


def approvals_needed(settings: "Settings", plan: Plan) -> int:
    """1, or 2 when the plan's estimated size or cost passes the dual-approval threshold."""
    cost = plan.proposal.estimated_cost
    big_bytes = settings.dual_approval_bytes > 0 and cost.bytes_read > settings.dual_approval_bytes
    big_cpu = (settings.dual_approval_cpu_seconds > 0
               and cost.cpu_seconds > settings.dual_approval_cpu_seconds)
    return 2 if big_bytes or big_cpu else 1


def approvals_so_far(book: PlanBook, plan_id: int) -> list[str]:
    """Names that approved ``plan_id`` (first approvals of a two-approver plan)."""
    return [e["actor"] for e in book.control.audit(plan_id) if e["action"] == "approve"]


def approve(ws: "Workspace", plan_id: int, actor: object, reason: str | None = None) -> Plan:
    """proposed -> approved by a signed-in approver who did not propose the plan; a plan
    above the dual-approval threshold needs a second, distinct approver."""
    name = require(ws, actor, "approve")
    book = ws.plans
    plan = book.get(plan_id)
    if plan.status == STALE:
        raise StalePlanError(f"plan {plan_id} is stale ({book.stale_reason(plan)}); "
                             "create a new plan")
    if plan.status != PROPOSED:
        raise ApprovalError(f"plan {plan_id} is {plan.status}; only a proposed plan "
                            "can be approved")
    if book.settings.separation_of_duties and plan.created_by == name:
        raise ApprovalError(f"{name!r} proposed plan {plan_id} and cannot approve it "
                            "(separation of duties); another approver must")
    before = approvals_so_far(book, plan_id)
    if name in before:
        raise ApprovalError(f"{name!r} has approved plan {plan_id} already; it needs a "
                            "second, different approver")
    needed = approvals_needed(book.settings, plan)
    if len(before) + 1 < needed:
        note = f"approval 1 of {needed}" + (f": {reason}" if reason else "")
        return book.move(plan_id, (PROPOSED,), PROPOSED, name, "approve", note)
    return book.move(plan_id, (PROPOSED,), APPROVED, name, "approve", reason)


def reject(ws: "Workspace", plan_id: int, actor: object, reason: str | None = None) -> Plan:
    """proposed or approved -> rejected, by a signed-in approver (an approval may be
    revoked until the plan runs)."""
    name = require(ws, actor, "reject")
    book = ws.plans
    plan = book.get(plan_id)
    if plan.status not in (PROPOSED, APPROVED):
        raise ApprovalError(f"plan {plan_id} is {plan.status}; only a proposed or "
                            "approved plan can be rejected")
    return book.move(plan_id, (PROPOSED, APPROVED), REJECTED, name, "reject", reason)


def start(ws: "Workspace", plan_id: int, actor: object) -> Plan:
    """approved -> running by a signed-in approver, refusing anything else with the reason;
    the job record naming this process as the runner is written in the same transaction.

    The plan's status must also be the one its audit trail moved it to: a status set in
    SQLite behind the store's back (no approve entry) cannot run.
    """
    book = ws.plans
    plan = book.get(plan_id)
    if plan.status == STALE:
        raise StalePlanError(f"plan {plan_id} is stale and cannot run "
                             f"({book.stale_reason(plan)}); create a new plan")
    if plan.status == PROPOSED:
        raise ApprovalError(f"plan {plan_id} is not approved; run "
                            f"`layout-advisor plan approve {plan_id} --as NAME` first")
    if plan.status == REJECTED:
        raise ApprovalError(f"plan {plan_id} was rejected and cannot run")
    if plan.status != APPROVED:
        raise PlanError(f"plan {plan_id} is {plan.status}; only an approved plan can run")
    trail = [e for e in book.control.audit(plan_id) if e["to_status"]]
    if not trail or trail[-1]["to_status"] != APPROVED or trail[-1]["action"] != "approve":
        raise ApprovalError(f"plan {plan_id} is marked approved but its audit trail has no "
                            "approval; run `layout-advisor audit verify`")
    name = require(ws, actor, "run")
    # status and job record in one transaction: a plan is never running without a runner
    return Plan.from_row(book.control.transition(plan_id, (APPROVED,), RUNNING, name, "run",
                                                 job_groups=len(plan.groups)))


def undo_rolled_back(book: PlanBook, table: str, target: str, new_snapshot: str,
                     actor: str) -> list[int]:
    """After a rollback of ``table`` to snapshot ``target``: every succeeded plan whose commit
    came after ``target`` no longer shows in the data, so its status says so (audited as
    the rollback's actor). Returns those plans' ids."""
    undone = []
    for plan in book.list(table):
        committed = (plan.result or {}).get("snapshot_id")
        if plan.status == SUCCEEDED and committed is not None \
                and str(committed).isdigit() and int(committed) > int(target):
            book.move(plan.id, (SUCCEEDED,), ROLLED_BACK, actor, "rollback",
                      f"table {table} rolled back to snapshot {target} (snapshot "
                      f"{new_snapshot})")
            undone.append(plan.id)
    return undone
