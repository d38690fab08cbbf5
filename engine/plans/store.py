"""The plans store: plans, their job progress and the policies' state.

Plans live in the workspace's control database (:class:`engine.security.db.ControlDB`: one
SQLite file in WAL mode, shared by several processes), beside the security state and the
hash-chained audit log (:mod:`engine.security`). Every change of a plan appends its audit
entry in the same write transaction (:func:`engine.security.chain.append_entry`), so a plan's
status and its audit trail never disagree; :meth:`engine.security.audit.AuditLog.verify`
reports a status set behind the store's back.

A running plan's job record names its runner (host, pid) and carries a heartbeat
(``heartbeat_at``, seconds since the epoch) that the runner refreshes every
:data:`HEARTBEAT_S` seconds (:mod:`engine.plans.heartbeat`). A reader on the runner's host
asks the operating system whether the pid lives; a reader on another host cannot, and
takes a runner whose heartbeat is older than the ``runner_timeout_s`` setting for gone
(:meth:`engine.plans.plan.PlanBook.get` then settles the plan).
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from engine.core.config import RUNNER_HEARTBEAT_S
from engine.core.errors import ApprovalError, PlanNotFoundError
from engine.security.chain import append_entry
from engine.security.db import utc_now

if TYPE_CHECKING:
    from engine.security.audit import AuditLog
    from engine.security.db import ControlDB

#: seconds between two heartbeats of a running plan's runner (defined beside the
#: ``runner_timeout_s`` setting, which must exceed it)
HEARTBEAT_S = RUNNER_HEARTBEAT_S


@dataclass(frozen=True)
class PlanRow:
    """One stored plan, JSON columns decoded."""

    id: int
    table: str
    base_snapshot: str
    policy: str
    params: dict[str, Any]
    proposal: dict[str, Any]
    status: str
    created_at: str
    created_by: str | None
    updated_at: str
    result: dict[str, Any] | None


def _row_to_plan(row: sqlite3.Row) -> PlanRow:
    return PlanRow(
        id=int(row["id"]), table=row["table_name"], base_snapshot=row["base_snapshot"],
        policy=row["policy"], params=json.loads(row["params"]),
        proposal=json.loads(row["proposal"]), status=row["status"],
        created_at=row["created_at"], created_by=row["created_by"],
        updated_at=row["updated_at"],
        result=json.loads(row["result"]) if row["result"] else None)


def _dumps(value: Any) -> str:
    return json.dumps(value, default=str, sort_keys=True)


class ControlStore:
    """Plans, job records and policy state, shared by every process of one workspace.

    Built by the workspace (:attr:`engine.workspace.Workspace.control`) over its control
    database and the audit log of that database (``audit``), where every plan change is
    recorded.
    """

    def __init__(self, db: "ControlDB", audit: "AuditLog") -> None:
        self.db = db
        self.audit_log = audit

    @property
    def path(self) -> Path:
        """The control database's file."""
        return self.db.path

    # -- plans -----------------------------------------------------------------------
    def insert_plan(self, table: str, base_snapshot: str, policy: str,
                    params: Mapping[str, Any], proposal: Mapping[str, Any],
                    created_by: str | None, status: str = "proposed") -> int:
        """Store a new plan and its 'create' audit entry; returns the plan id."""
        now = utc_now()
        with self.db.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO plans(table_name, base_snapshot, policy, params, proposal, status,"
                " created_at, created_by, updated_at) VALUES (?,?,?,?,?,?,?,?,?)",
                (table, base_snapshot, policy, _dumps(params), _dumps(proposal), status,
                 now, created_by, now))
            plan_id = int(cur.lastrowid)
            append_entry(conn, plan_id, created_by or "system", "create", None, status,
                               f"policy {policy} on snapshot {base_snapshot}", now)
        return plan_id

    def get_plan(self, plan_id: int) -> PlanRow:
        with self.db.connect() as conn:
            row = conn.execute("SELECT * FROM plans WHERE id = ?", (int(plan_id),)).fetchone()
        if row is None:
            raise PlanNotFoundError(f"no plan with id {plan_id}")
        return _row_to_plan(row)

    def list_plans(self, table: str | None = None) -> list[PlanRow]:
        with self.db.connect() as conn:
            if table is None:
                rows = conn.execute("SELECT * FROM plans ORDER BY id").fetchall()
            else:
                rows = conn.execute("SELECT * FROM plans WHERE table_name = ? ORDER BY id",
                                    (table,)).fetchall()
        return [_row_to_plan(r) for r in rows]

    def transition(self, plan_id: int, allowed_from: Sequence[str], to_status: str,
                   actor: str, action: str, reason: str | None = None,
                   result: Mapping[str, Any] | None = None,
                   job_groups: int | None = None) -> PlanRow:
        """Move a plan to ``to_status`` if it is in one of ``allowed_from``, atomically,
        writing the audit entry in the same transaction. Raises ApprovalError otherwise.

        ``job_groups``: also register this process as the plan's runner (:meth:`start_job`)
        in the same transaction, so a plan is never ``running`` without a job record naming
        its host and pid (a kill between two transactions would wedge it for good)."""
        now = utc_now()
        with self.db.transaction() as conn:
            row = conn.execute("SELECT status FROM plans WHERE id = ?", (int(plan_id),)).fetchone()
            if row is None:
                raise PlanNotFoundError(f"no plan with id {plan_id}")
            current = row["status"]
            if current not in allowed_from:
                raise ApprovalError(
                    f"plan {plan_id} is {current}; {action} needs it to be "
                    f"{' or '.join(allowed_from)}")
            if result is None:
                conn.execute("UPDATE plans SET status = ?, updated_at = ? WHERE id = ?",
                             (to_status, now, int(plan_id)))
            else:
                conn.execute("UPDATE plans SET status = ?, updated_at = ?, result = ? WHERE id = ?",
                             (to_status, now, _dumps(result), int(plan_id)))
            append_entry(conn, plan_id, actor, action, current, to_status, reason, now)
            if job_groups is not None:
                self._insert_job(conn, plan_id, job_groups, now)
        return self.get_plan(plan_id)

    def plan_ids(self) -> set[int]:
        with self.db.connect() as conn:
            return {int(r["id"]) for r in conn.execute("SELECT id FROM plans")}

    # -- a plan's audit trail -------------------------------------------------------
    def record(self, actor: str, action: str, reason: str | None = None,
               plan_id: int | None = None) -> None:
        """Append an administrative entry to the audit log (rollback, gc, drop, cancel)."""
        self.audit_log.record(actor, action, reason, plan_id)

    def audit(self, plan_id: int | None = None) -> list[dict[str, Any]]:
        """Audit entries, oldest first (all plans when ``plan_id`` is None)."""
        return self.audit_log.entries(plan_id)

    # -- job progress ----------------------------------------------------------------
    def start_job(self, plan_id: int, groups_total: int) -> None:
        """Register the running job (host and pid let readers detect a dead runner)."""
        with self.db.transaction() as conn:
            self._insert_job(conn, plan_id, groups_total, utc_now())

    @staticmethod
    def _insert_job(conn: sqlite3.Connection, plan_id: int, groups_total: int, now: str) -> None:
        """The job record naming this host and pid as the plan's runner (inside ``conn``'s
        transaction)."""
        conn.execute(
            "INSERT OR REPLACE INTO jobs(plan_id, groups_done, groups_total, rows, bytes,"
            " message, host, pid, started_at, updated_at, heartbeat_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (int(plan_id), 0, int(groups_total), 0, 0, "starting", socket.gethostname(),
             os.getpid(), now, now, time.time()))

    def set_progress(self, plan_id: int, groups_done: int, groups_total: int, rows: int,
                     bytes_: int, message: str = "") -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE jobs SET groups_done = ?, groups_total = ?, rows = ?, bytes = ?,"
                " message = ?, updated_at = ?, heartbeat_at = ? WHERE plan_id = ?",
                (groups_done, groups_total, int(rows), int(bytes_), message, utc_now(),
                 time.time(), int(plan_id)))

    def heartbeat(self, plan_id: int) -> str | None:
        """Refresh this runner's heartbeat on the job of ``plan_id`` (only if this host and
        pid still own it); returns the plan's status (None if the plan is gone): a runner
        whose plan is no longer ``running`` was settled by a reader and must not commit."""
        with self.db.transaction() as conn:
            conn.execute("UPDATE jobs SET heartbeat_at = ? WHERE plan_id = ? AND host = ?"
                         " AND pid = ?", (time.time(), int(plan_id), socket.gethostname(),
                                          os.getpid()))
            row = conn.execute("SELECT status FROM plans WHERE id = ?", (int(plan_id),)).fetchone()
        return None if row is None else str(row["status"])

    def progress(self, plan_id: int) -> dict[str, Any] | None:
        with self.db.connect() as conn:
            row = conn.execute("SELECT * FROM jobs WHERE plan_id = ?", (int(plan_id),)).fetchone()
        return dict(row) if row else None

    # -- verifications (engine.plans.verify) --------------------------------------------
    def verification(self, plan_id: int) -> dict[str, Any] | None:
        with self.db.connect() as conn:
            row = conn.execute("SELECT * FROM verifications WHERE plan_id = ?",
                               (int(plan_id),)).fetchone()
        return {**json.loads(row["result"]), "verified_at": row["verified_at"],
                "verified_by": row["actor"]} if row else None

    def save_verification(self, plan_id: int, actor: str, result: Mapping[str, Any]) -> None:
        """Store (replace) a plan's verification (:mod:`engine.plans.verify` audits it)."""
        now = utc_now()
        with self.db.transaction() as conn:
            conn.execute("INSERT INTO verifications(plan_id, verified_at, actor, result) "
                         "VALUES (?,?,?,?) ON CONFLICT(plan_id) DO UPDATE SET verified_at = "
                         "excluded.verified_at, actor = excluded.actor, result = excluded.result",
                         (int(plan_id), now, actor, _dumps(result)))

    # -- policy state ----------------------------------------------------------------
    def policy_state(self, table: str, policy: str) -> dict[str, Any] | None:
        with self.db.connect() as conn:
            row = conn.execute("SELECT state FROM policy_state WHERE table_name = ? AND policy = ?",
                               (table, policy)).fetchone()
        return json.loads(row["state"]) if row else None

    def save_policy_state(self, table: str, policy: str, state: Mapping[str, Any]) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO policy_state(table_name, policy, state, updated_at) VALUES (?,?,?,?)"
                " ON CONFLICT(table_name, policy) DO UPDATE SET state = excluded.state,"
                " updated_at = excluded.updated_at",
                (table, policy, _dumps(state), utc_now()))
