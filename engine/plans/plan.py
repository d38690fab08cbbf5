"""Plans and their states: proposed, approved, running, and how a plan ends.

A plan is a stored :class:`~engine.policy.base.Proposal` for one base snapshot. Its life:

    proposed -> approved -> running -> succeeded | failed
    proposed | approved -> rejected
    proposed | approved -> stale      (the table's current snapshot is no longer the base)
    succeeded -> rolled-back          (an admin rolled the table back past the plan's commit)

Staleness is checked on every read (:class:`PlanBook`), so a plan made against an old
snapshot can never run. A ``running`` plan is never marked stale (its own commit moves the
table); if its runner process died (on this host: its pid is gone; on another host: its
heartbeat is older than the ``runner_timeout_s`` setting), the next read settles
it as ``succeeded`` when the current snapshot carries the plan's commit, else ``failed``. The transitions people ask for
(approve, reject, run) are :mod:`engine.plans.approval`'s, who may ask is the gate's
(:mod:`engine.security.gate`); every change is audited by the store (:mod:`engine.plans.store`).
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from engine.core.errors import ApprovalError, SnapshotNotFoundError, TableNotFoundError
from engine.plans.store import ControlStore, PlanRow
from engine.policy.base import PlanGroup, Proposal
from engine.policy.codec import proposal_from_json, proposal_to_json
from engine.table.leases import pid_alive

if TYPE_CHECKING:
    from engine.core.config import Settings
    from engine.table.store import TableStore

PROPOSED, APPROVED, RUNNING = "proposed", "approved", "running"
SUCCEEDED, FAILED, REJECTED, STALE = "succeeded", "failed", "rejected", "stale"
ROLLED_BACK = "rolled-back"
#: a run an approver cancelled: nothing committed, the files it wrote removed
CANCELLED = "cancelled"
#: states whose plans turn stale when the base snapshot stops being current
STALEABLE = (PROPOSED, APPROVED)
#: the actor of transitions nobody asked for (staleness, settling, a run's outcome)
SYSTEM_ACTOR = "system"


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


class PlanBook:
    """Plans read with their state settled, and the transitions of the plan's life.

    Every read settles staleness and dead runners first; :meth:`move` is the one way a
    state changes (atomically, audited, refused when someone else moved the plan first).
    Built over the home's stores (:attr:`engine.workspace.Workspace.plans`); ``settings``
    are the home's (the runner timeout, and the gate's rules).
    """

    def __init__(self, settings: "Settings", control: ControlStore, tables: "TableStore") -> None:
        self.settings = settings
        self.control = control
        self.tables = tables

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
                return self._settle(plan, STALEABLE, STALE, "stale", why)
        elif plan.status == RUNNING:
            return self._settle_dead_runner(plan)
        return plan

    def _settle_dead_runner(self, plan: Plan) -> Plan:
        job = self.control.progress(plan.id)
        gone = _runner_gone(job, self.settings.runner_timeout_s) if job else None
        if gone is None:
            return plan
        committed = False
        try:
            snap = self.tables.current_snapshot(plan.table)
            # native snapshots record ``plan_id``; Iceberg and Delta ``la.plan-id``
            marker = snap.summary.get("plan_id", snap.summary.get("la.plan-id"))
            committed = str(marker) == str(plan.id)
        except (TableNotFoundError, SnapshotNotFoundError):
            pass
        to, why = ((SUCCEEDED, f"{gone} after committing") if committed else
                   (FAILED, f"{gone} before committing; the table is unchanged"))
        # the committed snapshot is recorded as a run records it: a later rollback finds it
        return self._settle(plan, (RUNNING,), to, "settle", why,
                            result={"error": why} if to == FAILED else
                            {"note": why, "snapshot_id": snap.id, "verified": False})

    def _settle(self, plan: Plan, allowed_from: Sequence[str], to: str, action: str, why: str,
                result: Mapping[str, Any] | None = None) -> Plan:
        """A system transition found on read; if someone else moved the plan meanwhile,
        their state stands."""
        try:
            return self.move(plan.id, allowed_from, to, SYSTEM_ACTOR, action, why, result)
        except ApprovalError:
            return Plan.from_row(self.control.get_plan(plan.id))

    def stale_reason(self, plan: Plan) -> str:
        """Why ``plan`` went stale (from its audit entry)."""
        for entry in reversed(self.control.audit(plan.id)):
            if entry["to_status"] == STALE and entry["reason"]:
                return str(entry["reason"])
        return f"base snapshot {plan.base_snapshot} is no longer current"

    # -- transitions -----------------------------------------------------------------
    def move(self, plan_id: int, allowed_from: Sequence[str], to: str, actor: str, action: str,
             reason: str | None = None, result: Mapping[str, Any] | None = None) -> Plan:
        """``allowed_from -> to``, atomically and audited (ApprovalError if the plan is in
        another state by now)."""
        return Plan.from_row(self.control.transition(plan_id, allowed_from, to, actor, action,
                                                     reason, result=result))

    def succeed(self, plan_id: int, result: Mapping[str, Any]) -> Plan:
        """running -> succeeded, with the run's result (new snapshot, groups, realized)."""
        return self.move(plan_id, (RUNNING,), SUCCEEDED, SYSTEM_ACTOR, "succeed",
                         f"snapshot {result.get('snapshot_id')}", result)

    def cancel(self, plan_id: int, allowed_from: Sequence[str], request: Mapping[str, Any],
               error: str) -> Plan:
        """``allowed_from -> cancelled`` in one audited transition under the canceller's
        name (``request``: who asked, when and why, as left by
        :func:`engine.spark.progress.request_cancel`); ``error`` is the run's own message."""
        base = Plan.from_row(self.control.get_plan(plan_id)).base_snapshot
        who, when = str(request.get("by")), str(request.get("at"))
        reason = str(request.get("reason") or "")
        why = (f"cancelled by {who} at {when}: nothing was committed, the files the run wrote "
               f"were removed, the table is at snapshot {base}"
               + (f" ({reason})" if reason else ""))
        return self.move(plan_id, allowed_from, CANCELLED, who, "cancel", why,
                         {"error": error, "cancelled_by": who, "cancelled_at": when})

    def fail(self, plan_id: int, error: str, commits: Sequence[tuple[str, bool]] = ()) -> Plan:
        """running -> failed; the error is the plan's result.

        ``commits``: the (snapshot id, whether it was the plan's last batch) pairs the run
        committed before it failed (or was interrupted), in order. Once the format's write
        has returned the files are the table's, so such a run is "committed, then failed"
        (:func:`run_outcome`): when the last batch committed (a check after the commit
        failed, or a signal landed after it) the plan is ``succeeded`` with the failure in
        its result (``verified``: False); an earlier batch only, ``failed`` naming the
        committed snapshots. Nothing of a committed snapshot is ever removed."""
        if not commits:
            return self.move(plan_id, (RUNNING,), FAILED, SYSTEM_ACTOR, "fail", error,
                             {"error": error})
        snapshots = [str(sid) for sid, _ in commits]
        done = bool(commits[-1][1])
        why = f"{run_outcome(commits)}: {error}"
        base = Plan.from_row(self.control.get_plan(plan_id)).base_snapshot
        return self.move(plan_id, (RUNNING,), SUCCEEDED if done else FAILED, SYSTEM_ACTOR,
                         "succeed" if done else "fail", why,
                         {"snapshot_id": snapshots[-1], "snapshots": snapshots,
                          "base_snapshot": base, "verified": False, "error": why})


def run_outcome(commits: Sequence[tuple[str, bool]]) -> str:
    """How a failed run ended, for its message: nothing committed, or which snapshots.

    >>> run_outcome([])
    'failed, nothing was committed'
    >>> run_outcome([("7", False), ("8", True)])
    'committed snapshot 8 (the last batch), then failed'
    >>> run_outcome([("7", False)])
    'committed snapshot 7 (not every batch), then failed'
    """
    if not commits:
        return "failed, nothing was committed"
    sid, final = commits[-1]
    return (f"committed snapshot {sid} ({'the last batch' if final else 'not every batch'}), "
            "then failed")


def _runner_gone(job: Mapping[str, Any], timeout: float) -> str | None:
    """How a plan's runner is known to be gone (the start of the settling reason), or None
    while it may still be working: on this host, its pid is not alive; on another host,
    its heartbeat is older than ``timeout`` seconds (the ``runner_timeout_s`` setting; a record
    without one falls back to its last update)."""
    pid, host = job.get("pid"), job.get("host")
    if not pid or not host:
        return None
    if host == socket.gethostname():
        return None if pid_alive(int(pid)) else f"runner pid {pid} died"
    beat = job.get("heartbeat_at")
    if beat is None:
        try:
            beat = datetime.fromisoformat(str(job.get("updated_at"))).timestamp()
        except ValueError:
            return None
    silent = time.time() - float(beat)
    if silent < timeout:
        return None
    return (f"abandoned: runner pid {pid} on host {host} sent no heartbeat for "
            f"{silent:.0f} s (timeout {timeout:.0f} s) and stopped")
