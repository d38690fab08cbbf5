"""The control store: plans, their append-only audit log, job progress and policy state.

One SQLite file (``settings.control_db``) in WAL mode, so the dashboard, the CLI and a
running job can use it at once: readers never block the writer, and every write is one
short ``BEGIN IMMEDIATE`` transaction (a busy timeout absorbs the rare collision).
A connection is opened per call and closed at once; nothing is held between calls, so
the store is safe to use from threads and from several processes.

The audit log is append-only: this module has no UPDATE or DELETE statement for it, and
SQL triggers refuse any that another tool might try.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence

from engine.core.errors import ApprovalError, PlanNotFoundError

if TYPE_CHECKING:
    from engine.core.config import Settings

BUSY_TIMEOUT_MS = 30_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS plans (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    table_name    TEXT NOT NULL,
    base_snapshot TEXT NOT NULL,
    policy        TEXT NOT NULL,
    params        TEXT NOT NULL,
    proposal      TEXT NOT NULL,
    status        TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    created_by    TEXT,
    updated_at    TEXT NOT NULL,
    result        TEXT
);
CREATE INDEX IF NOT EXISTS plans_by_table ON plans(table_name, id);
CREATE TABLE IF NOT EXISTS audit (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    plan_id     INTEGER,
    ts          TEXT NOT NULL,
    actor       TEXT NOT NULL,
    action      TEXT NOT NULL,
    from_status TEXT,
    to_status   TEXT,
    reason      TEXT
);
CREATE INDEX IF NOT EXISTS audit_by_plan ON audit(plan_id, id);
CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TABLE IF NOT EXISTS jobs (
    plan_id      INTEGER PRIMARY KEY,
    groups_done  INTEGER NOT NULL DEFAULT 0,
    groups_total INTEGER NOT NULL DEFAULT 0,
    rows         INTEGER NOT NULL DEFAULT 0,
    bytes        INTEGER NOT NULL DEFAULT 0,
    message      TEXT,
    host         TEXT,
    pid          INTEGER,
    started_at   TEXT,
    updated_at   TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS policy_state (
    table_name TEXT NOT NULL,
    policy     TEXT NOT NULL,
    state      TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (table_name, policy)
);
"""


def utc_now() -> str:
    """ISO-8601 UTC timestamp with microseconds (sortable as text)."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


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
    """Transactional control state shared by every process of one workspace."""

    def __init__(self, settings: "Settings | str | os.PathLike[str]") -> None:
        path = settings if isinstance(settings, (str, os.PathLike)) else settings.control_db
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            conn.executescript(_SCHEMA)

    # -- connections -----------------------------------------------------------------
    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000,
                               isolation_level=None)  # explicit transactions only
        try:
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            yield conn
        finally:
            conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A short write transaction (BEGIN IMMEDIATE takes the write lock up front, so
        a read-check-write sequence inside it cannot interleave with another writer)."""
        with self._connect() as conn:
            for attempt in range(50):
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    break
                except sqlite3.OperationalError as exc:  # pragma: no cover - heavy contention
                    if "locked" not in str(exc) or attempt == 49:
                        raise
                    time.sleep(0.05)
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            else:
                conn.execute("COMMIT")

    # -- plans -----------------------------------------------------------------------
    def insert_plan(self, table: str, base_snapshot: str, policy: str,
                    params: Mapping[str, Any], proposal: Mapping[str, Any],
                    created_by: str | None, status: str = "proposed") -> int:
        """Store a new plan and its 'create' audit entry; returns the plan id."""
        now = utc_now()
        with self.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO plans(table_name, base_snapshot, policy, params, proposal, status,"
                " created_at, created_by, updated_at) VALUES (?,?,?,?,?,?,?,?,?)",
                (table, base_snapshot, policy, _dumps(params), _dumps(proposal), status,
                 now, created_by, now))
            plan_id = int(cur.lastrowid)
            self._append_audit(conn, plan_id, created_by or "system", "create", None, status,
                               f"policy {policy} on snapshot {base_snapshot}", now)
        return plan_id

    def get_plan(self, plan_id: int) -> PlanRow:
        with self._connect() as conn:
            row = conn.execute("SELECT * FROM plans WHERE id = ?", (int(plan_id),)).fetchone()
        if row is None:
            raise PlanNotFoundError(f"no plan with id {plan_id}")
        return _row_to_plan(row)

    def list_plans(self, table: str | None = None) -> list[PlanRow]:
        with self._connect() as conn:
            if table is None:
                rows = conn.execute("SELECT * FROM plans ORDER BY id").fetchall()
            else:
                rows = conn.execute("SELECT * FROM plans WHERE table_name = ? ORDER BY id",
                                    (table,)).fetchall()
        return [_row_to_plan(r) for r in rows]

    def transition(self, plan_id: int, allowed_from: Sequence[str], to_status: str,
                   actor: str, action: str, reason: str | None = None,
                   result: Mapping[str, Any] | None = None) -> PlanRow:
        """Move a plan to ``to_status`` if it is in one of ``allowed_from``, atomically,
        writing the audit entry in the same transaction. Raises ApprovalError otherwise."""
        now = utc_now()
        with self.transaction() as conn:
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
            self._append_audit(conn, plan_id, actor, action, current, to_status, reason, now)
        return self.get_plan(plan_id)

    # -- audit -----------------------------------------------------------------------
    @staticmethod
    def _append_audit(conn: sqlite3.Connection, plan_id: int | None, actor: str, action: str,
                      from_status: str | None, to_status: str | None, reason: str | None,
                      ts: str) -> None:
        conn.execute(
            "INSERT INTO audit(plan_id, ts, actor, action, from_status, to_status, reason)"
            " VALUES (?,?,?,?,?,?,?)",
            (plan_id, ts, actor, action, from_status, to_status, reason))

    def audit(self, plan_id: int | None = None) -> list[dict[str, Any]]:
        """Audit entries, oldest first (all plans when ``plan_id`` is None)."""
        with self._connect() as conn:
            if plan_id is None:
                rows = conn.execute("SELECT * FROM audit ORDER BY id").fetchall()
            else:
                rows = conn.execute("SELECT * FROM audit WHERE plan_id = ? ORDER BY id",
                                    (int(plan_id),)).fetchall()
        return [dict(r) for r in rows]

    # -- job progress ----------------------------------------------------------------
    def start_job(self, plan_id: int, groups_total: int) -> None:
        """Register the running job (host and pid let readers detect a dead runner)."""
        now = utc_now()
        with self.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO jobs(plan_id, groups_done, groups_total, rows, bytes,"
                " message, host, pid, started_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (int(plan_id), 0, groups_total, 0, 0, "starting", socket.gethostname(),
                 os.getpid(), now, now))

    def set_progress(self, plan_id: int, groups_done: int, groups_total: int, rows: int,
                     bytes_: int, message: str = "") -> None:
        with self.transaction() as conn:
            conn.execute(
                "UPDATE jobs SET groups_done = ?, groups_total = ?, rows = ?, bytes = ?,"
                " message = ?, updated_at = ? WHERE plan_id = ?",
                (groups_done, groups_total, int(rows), int(bytes_), message, utc_now(),
                 int(plan_id)))

    def progress(self, plan_id: int) -> dict[str, Any] | None:
        with self._connect() as conn:
            row = conn.execute("SELECT * FROM jobs WHERE plan_id = ?", (int(plan_id),)).fetchone()
        return dict(row) if row else None

    # -- policy state ----------------------------------------------------------------
    def policy_state(self, table: str, policy: str) -> dict[str, Any] | None:
        with self._connect() as conn:
            row = conn.execute("SELECT state FROM policy_state WHERE table_name = ? AND policy = ?",
                               (table, policy)).fetchone()
        return json.loads(row["state"]) if row else None

    def save_policy_state(self, table: str, policy: str, state: Mapping[str, Any]) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO policy_state(table_name, policy, state, updated_at) VALUES (?,?,?,?)"
                " ON CONFLICT(table_name, policy) DO UPDATE SET state = excluded.state,"
                " updated_at = excluded.updated_at",
                (table, policy, _dumps(state), utc_now()))
