"""The gate: who may approve, reject, run or roll back, and the transitions they ask for.

This module is the one place that decides who may do what. Today the rule is one list:
``settings.approvers`` (``approvers = [...]`` in ``layout-advisor.toml`` or
``LAYOUT_ADVISOR_APPROVERS``); every guarded action needs a name on it. The plan API, the
table rollback of the CLI and of the dashboard all ask :func:`require_approver`.

Example:
>>> from engine.core.config import Settings
>>> require_approver(Settings(approvers=("alice",)), " alice ", "rollback")
'alice'
>>> require_approver(Settings(approvers=("alice",)), "mallory", "approve")
Traceback (most recent call last):
...
engine.core.errors.ApprovalError: 'mallory' is not an approver; approvers are: alice (set approvers = ["name", ...] in layout-advisor.toml or LAYOUT_ADVISOR_APPROVERS=name1,name2)
"""

from __future__ import annotations

import getpass
from typing import TYPE_CHECKING

from engine.core.errors import ApprovalError, PlanError, StalePlanError
from engine.plans.plan import APPROVED, PROPOSED, REJECTED, RUNNING, STALE, Plan, PlanBook

if TYPE_CHECKING:
    from engine.core.config import Settings

#: the actions that need a configured approver
GUARDED_ACTIONS = ("approve", "reject", "rollback")
_HINT = ("set approvers = [\"name\", ...] in layout-advisor.toml or "
         "LAYOUT_ADVISOR_APPROVERS=name1,name2")


def default_actor() -> str:
    """Who is acting when no name was given (the OS user)."""
    try:
        return getpass.getuser()
    except Exception:  # pragma: no cover - no passwd entry in some containers
        return "unknown"


def require_approver(settings: "Settings", actor: str | None, action: str) -> str:
    """``actor`` (stripped) if it may ``action``; else ApprovalError saying who may.

    ``action`` is one of :data:`GUARDED_ACTIONS`; all need a configured approver today.
    """
    if action not in GUARDED_ACTIONS:
        raise ValueError(f"unknown guarded action {action!r}; one of {GUARDED_ACTIONS}")
    approvers = tuple(settings.approvers)
    name = (actor or "").strip()
    if not approvers:
        raise ApprovalError(f"no approvers are configured; {_HINT}")
    if not name:
        raise ApprovalError(f"an approver name is required (--as NAME); approvers are: "
                            f"{', '.join(approvers)}")
    if name not in approvers:
        raise ApprovalError(f"{name!r} is not an approver; approvers are: "
                            f"{', '.join(approvers)} ({_HINT})")
    return name


def approve(book: PlanBook, plan_id: int, actor: str | None, reason: str | None = None) -> Plan:
    """proposed -> approved, by a configured approver."""
    actor = require_approver(book.settings, actor, "approve")
    plan = book.get(plan_id)
    if plan.status == STALE:
        raise StalePlanError(f"plan {plan_id} is stale ({book.stale_reason(plan)}); "
                             "create a new plan")
    if plan.status != PROPOSED:
        raise ApprovalError(f"plan {plan_id} is {plan.status}; only a proposed plan "
                            "can be approved")
    return book.move(plan_id, (PROPOSED,), APPROVED, actor, "approve", reason)


def reject(book: PlanBook, plan_id: int, actor: str | None, reason: str | None = None) -> Plan:
    """proposed or approved -> rejected, by a configured approver (an approval may be
    revoked until the plan runs)."""
    actor = require_approver(book.settings, actor, "reject")
    plan = book.get(plan_id)
    if plan.status not in (PROPOSED, APPROVED):
        raise ApprovalError(f"plan {plan_id} is {plan.status}; only a proposed or "
                            "approved plan can be rejected")
    return book.move(plan_id, (PROPOSED, APPROVED), REJECTED, actor, "reject", reason)


def start(book: PlanBook, plan_id: int, actor: str | None = None) -> Plan:
    """approved -> running, refusing anything else with the reason (anyone may start an
    approved plan: the approval is the decision)."""
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
    return book.move(plan_id, (APPROVED,), RUNNING, actor or default_actor(), "run", None)
