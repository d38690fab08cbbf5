"""Plans and their approval gate: states, allowed transitions, staleness.

A plan is a stored :class:`~engine.policy.base.Proposal` for one base snapshot. Its life:

    proposed -> approved -> running -> succeeded | failed
    proposed | approved -> rejected
    proposed | approved -> stale      (the table's current snapshot is no longer the base)

Staleness is checked on every read and before every transition, so a plan made against an
old snapshot can never run. A ``running`` plan is never marked stale (its own commit moves
the table); if its runner process died, the next read settles it as ``succeeded`` when the
current snapshot carries the plan's commit, else ``failed``. Every change is audited.
"""

from __future__ import annotations

import getpass
import math
import os
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from engine.core.jsonable import plain_json
from engine.plans.store import ControlStore, PlanRow
from engine.core.errors import (ApprovalError, PlanError, SnapshotNotFoundError, StalePlanError,
                           TableNotFoundError)
from engine.policy.base import CostEstimate, PlanGroup, Proposal

if TYPE_CHECKING:
    from engine.core.config import Settings

PROPOSED, APPROVED, RUNNING = "proposed", "approved", "running"
SUCCEEDED, FAILED, REJECTED, STALE = "succeeded", "failed", "rejected", "stale"
STATES = (PROPOSED, APPROVED, RUNNING, SUCCEEDED, FAILED, REJECTED, STALE)
FINAL_STATES = frozenset({SUCCEEDED, FAILED, REJECTED, STALE})
#: states whose plans turn stale when the base snapshot stops being current
STALEABLE = (PROPOSED, APPROVED)
SYSTEM_ACTOR = "system"


# -- proposal <-> JSON -------------------------------------------------------------------
def group_to_json(group: PlanGroup) -> dict[str, Any]:
    return {
        "partitions": list(group.partitions),
        "layout": group.layout,
        "columns": list(group.columns),
        "reason": group.reason,
        "layout_params": dict(group.layout_params),
        "predicted_saving_bytes": float(group.predicted_saving_bytes),
    }


def group_from_json(data: Mapping[str, Any]) -> PlanGroup:
    return PlanGroup(partitions=tuple(data["partitions"]), layout=data["layout"],
                     columns=tuple(data["columns"]), reason=data.get("reason", ""),
                     layout_params=dict(data.get("layout_params") or {}),
                     predicted_saving_bytes=float(data.get("predicted_saving_bytes", 0.0)))


def proposal_to_json(proposal: Proposal) -> dict[str, Any]:
    cost = proposal.estimated_cost
    return {
        "policy": proposal.policy,
        "params": plain_json(dict(proposal.params)),
        "groups": [group_to_json(g) for g in proposal.groups],
        "estimated_cost": {"bytes_read": float(cost.bytes_read),
                           "bytes_written": float(cost.bytes_written),
                           "cpu_seconds": float(cost.cpu_seconds), "money": float(cost.money)},
        "predicted_saving": plain_json(dict(proposal.predicted_saving)),
        "break_even_queries": (None if proposal.break_even_queries is None
                               else float(proposal.break_even_queries)),
        "curve": [[int(c), float(v)] for c, v in proposal.curve],
        "details": plain_json(dict(proposal.details)),
    }


def proposal_from_json(data: Mapping[str, Any]) -> Proposal:
    cost = data.get("estimated_cost") or {}
    return Proposal(
        policy=data["policy"], params=dict(data.get("params") or {}),
        groups=tuple(group_from_json(g) for g in data.get("groups", [])),
        estimated_cost=CostEstimate(float(cost.get("bytes_read", 0.0)),
                                    float(cost.get("bytes_written", 0.0)),
                                    float(cost.get("cpu_seconds", 0.0)),
                                    float(cost.get("money", 0.0))),
        predicted_saving=dict(data.get("predicted_saving") or {}),
        break_even_queries=data.get("break_even_queries"),
        curve=tuple((int(c), float(v)) for c, v in data.get("curve", [])),
        details=dict(data.get("details") or {}))


# -- the plan ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    """A stored plan (immutable view of one control-store row)."""

    id: int
    table: str
    base_snapshot: str
    policy: str
    params: Mapping[str, Any]
    proposal: Proposal
    status: str
    created_at: str
    created_by: str | None
    updated_at: str
    result: Mapping[str, Any] | None

    @property
    def groups(self) -> tuple[PlanGroup, ...]:
        return self.proposal.groups

    @property
    def partitions(self) -> tuple[str, ...]:
        return self.proposal.partitions

    @property
    def is_final(self) -> bool:
        return self.status in FINAL_STATES

    @classmethod
    def from_row(cls, row: PlanRow) -> "Plan":
        return cls(id=row.id, table=row.table, base_snapshot=row.base_snapshot,
                   policy=row.policy, params=row.params,
                   proposal=proposal_from_json(row.proposal), status=row.status,
                   created_at=row.created_at, created_by=row.created_by,
                   updated_at=row.updated_at, result=row.result)

    def to_json(self) -> dict[str, Any]:
        """The plan as the CLI and the dashboard show it."""
        p = proposal_to_json(self.proposal)
        return {
            "id": self.id, "status": self.status, "table": self.table,
            "base_snapshot": self.base_snapshot, "policy": self.policy,
            "params": dict(self.params), "groups": p["groups"],
            "partition_count": len(self.partitions),
            "estimated_cost": p["estimated_cost"], "predicted_saving": p["predicted_saving"],
            "break_even_queries": p["break_even_queries"], "curve": p["curve"],
            "details": p["details"], "created_at": self.created_at,
            "created_by": self.created_by, "updated_at": self.updated_at,
            "result": dict(self.result) if self.result else None,
        }


def default_actor() -> str:
    """Who is acting when no name was given (the OS user)."""
    try:
        return getpass.getuser()
    except Exception:  # pragma: no cover - no passwd entry in some containers
        return "unknown"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - exists, owned by someone else
        return True
    return True


class PlanBook:
    """The state machine over the control store. All transitions go through here."""

    def __init__(self, settings: "Settings", control: ControlStore | None = None) -> None:
        self.settings = settings
        self.control = control or ControlStore(settings)
        self._tables: Any = None

    # -- table access (lazy: the table store is only needed for staleness) --------------
    @property
    def tables(self) -> Any:
        if self._tables is None:
            from engine.table.store import TableStore

            self._tables = TableStore(self.settings)
        return self._tables

    def _current_id(self, table: str) -> str | None:
        """The table's current snapshot id (reads only its pointer), None if it is gone."""
        try:
            return str(self.tables.current_id(table))
        except (TableNotFoundError, SnapshotNotFoundError):
            return None

    # -- reads -----------------------------------------------------------------------
    def get(self, plan_id: int) -> Plan:
        """The plan, after settling staleness and dead runners."""
        return self._refresh(Plan.from_row(self.control.get_plan(plan_id)), {})

    def list(self, table: str | None = None) -> list[Plan]:
        cache: dict[str, str | None] = {}
        return [self._refresh(Plan.from_row(r), cache) for r in self.control.list_plans(table)]

    def _refresh(self, plan: Plan, cache: dict[str, str | None]) -> Plan:
        if plan.status in STALEABLE:
            if plan.table not in cache:
                cache[plan.table] = self._current_id(plan.table)
            current = cache[plan.table]
            if current != plan.base_snapshot:
                why = (f"table {plan.table} no longer exists" if current is None else
                       f"table {plan.table} moved from snapshot {plan.base_snapshot} to {current}")
                try:
                    return Plan.from_row(self.control.transition(
                        plan.id, STALEABLE, STALE, SYSTEM_ACTOR, "stale", why))
                except ApprovalError:  # someone else moved it meanwhile
                    return Plan.from_row(self.control.get_plan(plan.id))
        elif plan.status == RUNNING:
            return self._settle_dead_runner(plan)
        return plan

    def _settle_dead_runner(self, plan: Plan) -> Plan:
        job = self.control.progress(plan.id)
        if not job or job.get("host") != socket.gethostname() or not job.get("pid"):
            return plan
        if _pid_alive(int(job["pid"])):
            return plan
        committed = False
        try:
            snap = self.tables.current_snapshot(plan.table)
            committed = str(snap.summary.get("plan_id")) == str(plan.id)
        except (TableNotFoundError, SnapshotNotFoundError):
            pass
        to, why = ((SUCCEEDED, f"runner pid {job['pid']} exited after committing")
                   if committed else
                   (FAILED, f"runner pid {job['pid']} died before committing; "
                            "the table is unchanged"))
        try:
            return Plan.from_row(self.control.transition(
                plan.id, (RUNNING,), to, SYSTEM_ACTOR, "settle", why,
                result={"error": why} if to == FAILED else {"note": why}))
        except ApprovalError:
            return Plan.from_row(self.control.get_plan(plan.id))

    # -- the gate --------------------------------------------------------------------
    def check_approver(self, actor: str | None) -> str:
        approvers = tuple(self.settings.approvers)
        hint = ("set approvers = [\"name\", ...] in layout-advisor.toml or "
                "LAYOUT_ADVISOR_APPROVERS=name1,name2")
        if not approvers:
            raise ApprovalError(f"no approvers are configured; {hint}")
        if not actor:
            raise ApprovalError(f"an approver name is required (--as NAME); approvers are: "
                                f"{', '.join(approvers)}")
        if actor not in approvers:
            raise ApprovalError(f"{actor!r} is not an approver; approvers are: "
                                f"{', '.join(approvers)} ({hint})")
        return actor

    def approve(self, plan_id: int, actor: str | None, reason: str | None = None) -> Plan:
        actor = self.check_approver(actor)
        plan = self.get(plan_id)
        if plan.status == STALE:
            raise StalePlanError(f"plan {plan_id} is stale ({self._stale_reason(plan)}); "
                                 "create a new plan")
        if plan.status != PROPOSED:
            raise ApprovalError(f"plan {plan_id} is {plan.status}; only a proposed plan "
                                "can be approved")
        return Plan.from_row(self.control.transition(plan_id, (PROPOSED,), APPROVED, actor,
                                                     "approve", reason))

    def reject(self, plan_id: int, actor: str | None, reason: str | None = None) -> Plan:
        actor = self.check_approver(actor)
        plan = self.get(plan_id)
        if plan.status not in (PROPOSED, APPROVED):
            raise ApprovalError(f"plan {plan_id} is {plan.status}; only a proposed or "
                                "approved plan can be rejected")
        return Plan.from_row(self.control.transition(plan_id, (PROPOSED, APPROVED), REJECTED,
                                                     actor, "reject", reason))

    def start(self, plan_id: int, actor: str | None = None) -> Plan:
        """approved -> running, refusing anything else with the reason."""
        plan = self.get(plan_id)
        if plan.status == STALE:
            raise StalePlanError(f"plan {plan_id} is stale and cannot run "
                                 f"({self._stale_reason(plan)}); create a new plan")
        if plan.status == PROPOSED:
            raise ApprovalError(f"plan {plan_id} is not approved; run "
                                f"`layout-advisor plan approve {plan_id} --as NAME` first")
        if plan.status == REJECTED:
            raise ApprovalError(f"plan {plan_id} was rejected and cannot run")
        if plan.status != APPROVED:
            raise PlanError(f"plan {plan_id} is {plan.status}; only an approved plan can run")
        return Plan.from_row(self.control.transition(plan_id, (APPROVED,), RUNNING,
                                                     actor or default_actor(), "run", None))

    def succeed(self, plan_id: int, result: Mapping[str, Any], actor: str | None = None) -> Plan:
        return Plan.from_row(self.control.transition(
            plan_id, (RUNNING,), SUCCEEDED, actor or SYSTEM_ACTOR, "succeed",
            f"snapshot {result.get('snapshot_id')}", result=result))

    def fail(self, plan_id: int, error: str, result: Mapping[str, Any] | None = None,
             actor: str | None = None) -> Plan:
        payload = dict(result or {})
        payload["error"] = error
        return Plan.from_row(self.control.transition(
            plan_id, (RUNNING,), FAILED, actor or SYSTEM_ACTOR, "fail", error, result=payload))

    def _stale_reason(self, plan: Plan) -> str:
        for entry in reversed(self.control.audit(plan.id)):
            if entry["to_status"] == STALE and entry["reason"]:
                return str(entry["reason"])
        return f"base snapshot {plan.base_snapshot} is no longer current"
