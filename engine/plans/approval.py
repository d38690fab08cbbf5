"""The approval transitions of a plan: approve, reject, start a run, and rollbacks undoing runs.

Who may do each is the gate's (:func:`engine.security.gate.require`); this module applies the
plan's rules on top and moves the plan through :class:`~engine.plans.plan.PlanBook`, each move
atomic and audited.

Separation of duties (on unless an admin's security policy turns it off,
:mod:`engine.security.policy`): the proposer of a plan cannot approve it, and a plan whose
proposer did not sign in (so nobody knows who proposed it) needs two distinct approvers. A
plan whose estimated read exceeds ``dual_approval_bytes`` or whose estimated cost exceeds
``dual_approval_cpu_seconds`` (0 disables either) needs two distinct approvers too: the
first approval is audited and leaves the plan ``proposed``; the second, by someone else,
approves it.

Every approval is signed with the approver's key over the plan's exact proposal
(:mod:`engine.security.signing`), and :func:`start` (the run gate) counts only signatures
that verify against the plan as it is stored now, by certified approvers: an approval edited
into ``control.db``, or a plan changed after approval, does not run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.core.errors import ApprovalError, PlanError, StalePlanError
from engine.plans.plan import (
    APPROVED, PROPOSED, REJECTED, ROLLED_BACK, RUNNING, STALE, SUCCEEDED, Plan, PlanBook,
)
from engine.plans.verify import require_verified
from engine.security.gate import require
from engine.security.signing import (
    APPROVE, eligible_approvers, effective_policy, needed_approvals, plan_signers, sign_plan,
)

if TYPE_CHECKING:
    from engine.security.policy import SecurityPolicy
    from engine.workspace import Workspace


def approvals_needed(policy: "SecurityPolicy", plan: Plan, proposer_signed: bool = True) -> int:
    """1, or 2 when the plan's estimated size or cost passes the dual-approval threshold
    of ``policy`` (the policy in force, or settings), or its proposer did not sign in."""
    cost = plan.proposal.estimated_cost
    return needed_approvals(policy, cost.bytes_read, cost.cpu_seconds, proposer_signed)


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
    require_verified(ws, plan)
    policy = effective_policy(ws)
    signers = plan_signers(ws, plan_id)
    if policy.separation_of_duties and name in (plan.created_by, signers.proposer):
        raise ApprovalError(f"{name!r} proposed plan {plan_id} and cannot approve it "
                            "(separation of duties); another approver must")
    before = eligible_approvers(signers, policy.separation_of_duties)
    if name in before:
        raise ApprovalError(f"{name!r} has approved plan {plan_id} already; it needs a "
                            "second, different approver")
    needed = approvals_needed(policy, plan, signers.proposer is not None)
    sign_plan(ws, plan_id, actor, APPROVE)  # type: ignore[arg-type]  # require() checked it
    if len(before) + 1 < needed:
        why = "" if signers.proposer is not None or len(before) else (
            " (the proposer did not sign in, so two different approvers must approve)")
        note = f"approval {len(before) + 1} of {needed}{why}" + (f": {reason}" if reason else "")
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
    _check_signed(ws, plan)
    name = require(ws, actor, "run")
    # status and job record in one transaction: a plan is never running without a runner
    return Plan.from_row(book.control.transition(plan_id, (APPROVED,), RUNNING, name, "run",
                                                 job_groups=len(plan.groups)))


def _check_signed(ws: "Workspace", plan: Plan) -> None:
    """Refuse to run ``plan`` unless enough certified approvers signed it as it is stored
    now (the approval is bound to the exact proposal and the approvers' secrets)."""
    policy = effective_policy(ws)
    signers = plan_signers(ws, plan.id)
    if signers.changed:
        raise ApprovalError(f"plan {plan.id} was changed after it was approved (its proposal "
                            "is not the one that was signed) and cannot run; reject it and "
                            "create a new plan")
    valid = eligible_approvers(signers, policy.separation_of_duties)
    needed = approvals_needed(policy, plan, signers.proposer is not None)
    if len(valid) < needed:
        detail = "; ".join(signers.problems) or "no signature"
        raise ApprovalError(f"plan {plan.id} is marked approved but carries {len(valid)} valid "
                            f"approval signature(s) of the {needed} it needs ({detail}); it "
                            "cannot run: run `layout-advisor audit verify`, then reject it and "
                            "create a new plan")


def undo_rolled_back(book: PlanBook, table: str, target: str, new_snapshot: str,
                     actor: str) -> list[int]:
    """After a rollback of ``table`` to snapshot ``target``: a succeeded plan whose committed
    snapshot is no longer in the current snapshot's lineage (its parent chain, through
    restoring commits: :meth:`engine.table.formats.base.TableFormat.lineage`) no longer
    shows in the data and becomes ``rolled-back``; a ``rolled-back`` plan whose snapshot is
    in the lineage again (a roll forward) becomes ``succeeded`` again. Both audited as the
    rollback's actor. Returns the ids of the plans rolled back.

    Ancestry, not the ids' order: Iceberg snapshot ids are random numbers, and a roll forward
    brings later commits back."""
    lineage = set(book.tables.format(table).lineage())
    note = f"table {table} rolled back to snapshot {target} (snapshot {new_snapshot})"
    undone = []
    for plan in book.list(table):
        committed = (plan.result or {}).get("snapshot_id")
        if committed is None or plan.status not in (SUCCEEDED, ROLLED_BACK):
            continue
        live = str(committed) in lineage
        if plan.status == SUCCEEDED and not live:
            book.move(plan.id, (SUCCEEDED,), ROLLED_BACK, actor, "rollback", note)
            undone.append(plan.id)
        elif plan.status == ROLLED_BACK and live:
            book.move(plan.id, (ROLLED_BACK,), SUCCEEDED, actor, "rollback",
                      f"{note}: its commit is in the table's lineage again")
    return undone
