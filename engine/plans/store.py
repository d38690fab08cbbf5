"""The control store: plans, their append-only audit log, job progress and policy state.

One SQLite file (``settings.control_db``) in WAL mode, so the dashboard, the CLI and a
running job can use it at once: readers never block the writer, and every write is one
short ``BEGIN IMMEDIATE`` transaction (a busy timeout absorbs the rare collision).
A connection is opened per call and closed at once; nothing is held between calls, so
the store is safe to use from threads and from several processes.

The audit log is append-only and tamper-evident: this module has no UPDATE or DELETE
statement for it, SQL triggers refuse any that another tool might try, and every entry
carries the SHA-256 of the previous entry (``prev_hash``) and its own (``hash``), so that
:meth:`ControlStore.verify_audit` detects an edited, inserted or deleted entry even after
someone dropped the triggers. A plan whose stored status is not the one its last audit entry
moved it to (an ``UPDATE plans`` behind the store's back) is reported too.

Approvers live here as well: a name, a role and an Argon2id hash of the secret
(:mod:`engine.plans.gate` decides what the roles may do). Sign-ins are stored as sessions:
only the SHA-256 of a session token is kept, with its expiry. An approver may also be linked
to OpenID Connect accounts (``oidc_links``: an issuer and a subject, or an issuer and a
verified email; :func:`engine.plans.identity.sign_in_oidc` reads them).

A missing control store beside tables that carry reclustered snapshots is an error, not
a fresh start (the plans and the audit of those snapshots would vanish without a word).

A running plan's job record names its runner (host, pid) and carries a heartbeat
(``heartbeat_at``, seconds since the epoch) that the runner refreshes every
:data:`HEARTBEAT_S` seconds (:mod:`engine.plans.heartbeat`). A reader on the runner's host
asks the operating system whether the pid lives; a reader on another host cannot, and
takes a runner whose heartbeat is older than the ``runner_timeout_s`` setting for gone
(:meth:`engine.plans.plan.PlanBook.get` then settles the plan).
"""

from __future__ import annotations

import hashlib
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

from engine.core.config import RUNNER_HEARTBEAT_S
from engine.core.errors import (
    AdvisorError, ApprovalError, ControlStoreError, PlanNotFoundError,
)
from engine.table.store import TableStore

if TYPE_CHECKING:
    from engine.core.config import Settings

BUSY_TIMEOUT_MS = 30_000
#: seconds between two heartbeats of a running plan's runner (defined beside the
#: ``runner_timeout_s`` setting, which must exceed it)
HEARTBEAT_S = RUNNER_HEARTBEAT_S

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
    reason      TEXT,
    prev_hash   TEXT,
    hash        TEXT
);
CREATE INDEX IF NOT EXISTS audit_by_plan ON audit(plan_id, id);
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
    updated_at   TEXT NOT NULL,
    heartbeat_at REAL
);
CREATE TABLE IF NOT EXISTS approvers (
    name        TEXT PRIMARY KEY,
    role        TEXT NOT NULL,
    secret_hash TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    created_by  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    token_hash TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    last_used  REAL NOT NULL,
    expires_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS oidc_links (
    issuer     TEXT NOT NULL,
    kind       TEXT NOT NULL,
    value      TEXT NOT NULL,
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL,
    PRIMARY KEY (issuer, kind, value)
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


#: ``prev_hash`` of the first audit entry
GENESIS_HASH = "0" * 64
_AUDIT_FIELDS = ("plan_id", "ts", "actor", "action", "from_status", "to_status", "reason")
_TRIGGER_STATEMENTS = (
    "CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit "
    "BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END",
    "CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit "
    "BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END",
)
_TRIGGERS = "".join(f"{stmt};\n" for stmt in _TRIGGER_STATEMENTS)


def entry_hash(prev_hash: str, entry: Mapping[str, Any]) -> str:
    """SHA-256 of one audit entry's fields chained to the previous entry's hash.

    Example:
    >>> e = dict(plan_id=1, ts="t", actor="alice", action="approve", from_status="proposed",
    ...          to_status="approved", reason=None)
    >>> entry_hash(GENESIS_HASH, e) == entry_hash(GENESIS_HASH, dict(e))
    True
    >>> entry_hash(GENESIS_HASH, e) == entry_hash(GENESIS_HASH, {**e, "actor": "mallory"})
    False
    """
    body = json.dumps([prev_hash, *(entry.get(k) for k in _AUDIT_FIELDS)],
                      ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


#: SQLite messages that mean the file itself cannot be used
_DAMAGE_SIGNS = ("not a database", "malformed", "disk image", "unable to open", "readonly",
                 "disk I/O", "file is encrypted")


def _damaged(path: Path, exc: BaseException) -> ControlStoreError:
    """The one message for a control store SQLite cannot use (not a database, malformed,
    unwritable): the path and what to do."""
    return ControlStoreError(
        f"control store {path} cannot be used ({exc}); restore it from a backup, or check "
        "that the workspace directory is writable")


def reclustered_tables(settings: "Settings") -> list[str]:
    """Tables of the workspace whose history holds a reclustered snapshot (a plan ran);
    tables that cannot be read are skipped (their own commands report them)."""
    store, out = TableStore(settings), []
    try:
        infos = store.list_tables()
    except (AdvisorError, OSError):
        return []
    for info in infos:
        try:
            if any(h["operation"] == "recluster" for h in store.history(info.name)):
                out.append(info.name)
        except (AdvisorError, OSError, KeyError, ValueError):
            continue
    return out


class ControlStore:
    """Transactional control state shared by every process of one workspace."""

    def __init__(self, settings: "Settings | str | os.PathLike[str]") -> None:
        from_settings = not isinstance(settings, (str, os.PathLike))
        path = settings.control_db if from_settings else settings  # type: ignore[union-attr]
        self.path = Path(path)
        if self.path.parent.exists() and not self.path.parent.is_dir():
            raise ControlStoreError(f"workspace {self.path.parent} is a file, not a directory; "
                                    "pass --home a directory")
        if from_settings and not self.path.exists():
            lost = reclustered_tables(settings)  # type: ignore[arg-type]
            if lost:
                raise ControlStoreError(
                    f"control store {self.path} is missing, but table(s) {', '.join(lost)} "
                    "carry reclustered snapshots: the plans and audit log behind them would be "
                    "lost; restore control.db from a backup (nothing was created)")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ControlStoreError(f"cannot create workspace {self.path.parent}: "
                                    f"{exc.strerror or exc}") from None
        with self._connect() as conn:
            conn.executescript(_SCHEMA + _TRIGGERS)
            self._chain_legacy_audit(conn)
            self._add_heartbeat_column(conn)

    # -- connections -----------------------------------------------------------------
    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000,
                                   isolation_level=None)  # explicit transactions only
        except sqlite3.Error as exc:
            raise _damaged(self.path, exc) from None
        try:
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            yield conn
        except sqlite3.DatabaseError as exc:
            if not any(sign in str(exc) for sign in _DAMAGE_SIGNS):
                raise  # a constraint, a lock or a bug: not the file's fault
            raise _damaged(self.path, exc) from None
        finally:
            conn.close()

    @staticmethod
    def _chain_legacy_audit(conn: sqlite3.Connection) -> None:
        """Give a store made before the hash chain its ``prev_hash``/``hash`` columns and
        chain its existing entries (once, in one transaction)."""
        cols = {r["name"] for r in conn.execute("PRAGMA table_info(audit)")}
        missing = [c for c in ("prev_hash", "hash") if c not in cols]
        if not missing and conn.execute(
                "SELECT 1 FROM audit WHERE hash IS NULL LIMIT 1").fetchone() is None:
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            for col in missing:
                conn.execute(f"ALTER TABLE audit ADD COLUMN {col} TEXT")
            conn.execute("DROP TRIGGER IF EXISTS audit_no_update")
            prev = GENESIS_HASH
            for row in conn.execute("SELECT * FROM audit ORDER BY id").fetchall():
                if row["hash"] is None:
                    h = entry_hash(prev, dict(row))
                    conn.execute("UPDATE audit SET prev_hash = ?, hash = ? WHERE id = ?",
                                 (prev, h, row["id"]))
                    prev = h
                else:
                    prev = row["hash"]
            for stmt in _TRIGGER_STATEMENTS:  # back before the lock is released
                conn.execute(stmt)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    @staticmethod
    def _add_heartbeat_column(conn: sqlite3.Connection) -> None:
        """Give a store made before heartbeats its ``jobs.heartbeat_at`` (NULL: readers fall
        back to the record's ``updated_at``)."""
        if "heartbeat_at" not in {r["name"] for r in conn.execute("PRAGMA table_info(jobs)")}:
            conn.execute("ALTER TABLE jobs ADD COLUMN heartbeat_at REAL")

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
                   result: Mapping[str, Any] | None = None,
                   job_groups: int | None = None) -> PlanRow:
        """Move a plan to ``to_status`` if it is in one of ``allowed_from``, atomically,
        writing the audit entry in the same transaction. Raises ApprovalError otherwise.

        ``job_groups``: also register this process as the plan's runner (:meth:`start_job`)
        in the same transaction, so a plan is never ``running`` without a job record naming
        its host and pid (a kill between two transactions used to wedge it for good)."""
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
            if job_groups is not None:
                self._insert_job(conn, plan_id, job_groups, now)
        return self.get_plan(plan_id)

    # -- audit -----------------------------------------------------------------------
    @staticmethod
    def _append_audit(conn: sqlite3.Connection, plan_id: int | None, actor: str, action: str,
                      from_status: str | None, to_status: str | None, reason: str | None,
                      ts: str) -> None:
        """Append one entry chained to the last one (inside the caller's write
        transaction, so two writers cannot chain to the same predecessor)."""
        last = conn.execute("SELECT hash FROM audit ORDER BY id DESC LIMIT 1").fetchone()
        prev = last["hash"] if last is not None and last["hash"] else GENESIS_HASH
        entry = dict(plan_id=plan_id, ts=ts, actor=actor, action=action,
                     from_status=from_status, to_status=to_status, reason=reason)
        conn.execute(
            "INSERT INTO audit(plan_id, ts, actor, action, from_status, to_status, reason,"
            " prev_hash, hash) VALUES (?,?,?,?,?,?,?,?,?)",
            (plan_id, ts, actor, action, from_status, to_status, reason, prev,
             entry_hash(prev, entry)))

    def record(self, actor: str, action: str, reason: str | None = None,
               plan_id: int | None = None) -> None:
        """Append an administrative entry (rollback, gc, drop, approver changes, sign-ins)."""
        with self.transaction() as conn:
            self._append_audit(conn, plan_id, actor, action, None, None, reason, utc_now())

    def audit(self, plan_id: int | None = None) -> list[dict[str, Any]]:
        """Audit entries, oldest first (all plans when ``plan_id`` is None)."""
        with self._connect() as conn:
            if plan_id is None:
                rows = conn.execute("SELECT * FROM audit ORDER BY id").fetchall()
            else:
                rows = conn.execute("SELECT * FROM audit WHERE plan_id = ? ORDER BY id",
                                    (int(plan_id),)).fetchall()
        return [dict(r) for r in rows]

    def verify_audit(self) -> dict[str, Any]:
        """Check the hash chain, the plans against their audit trail, and the id sequence.

        Returns ``{"ok", "entries", "head", "problems": [...]}``; each problem names the
        entry or plan. Detects an edited entry (its hash no longer matches), a deleted or
        inserted one (the next entry's ``prev_hash`` no longer links; deleted last entries
        by the AUTOINCREMENT high-water mark), and a plan status changed without its audit
        entry. An attacker who rewrites the whole chain consistently is caught only by
        comparing ``head`` with a copy kept elsewhere.
        """
        problems: list[str] = []
        with self._connect() as conn:
            rows = [dict(r) for r in conn.execute("SELECT * FROM audit ORDER BY id")]
            plans = conn.execute("SELECT id, status FROM plans ORDER BY id").fetchall()
            seq = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'audit'").fetchone()
        prev = GENESIS_HASH
        last_status: dict[int, str] = {}
        for row in rows:
            if row["prev_hash"] != prev:
                problems.append(f"audit entry {row['id']}: does not follow the entry before it "
                                "(an entry was deleted or inserted)")
            if row["hash"] != entry_hash(row["prev_hash"] or "", row):
                problems.append(f"audit entry {row['id']}: its content was edited "
                                f"(action {row['action']!r} by {row['actor']!r})")
            prev = row["hash"] or ""
            if row["plan_id"] is not None and row["to_status"]:
                last_status[int(row["plan_id"])] = row["to_status"]
        if seq is not None and rows and int(seq["seq"]) > int(rows[-1]["id"]):
            problems.append(f"audit entries {int(rows[-1]['id']) + 1}..{int(seq['seq'])} "
                            "were deleted from the end of the log")
        for plan in plans:
            logged = last_status.get(int(plan["id"]))
            if logged != plan["status"]:
                problems.append(f"plan {plan['id']}: status {plan['status']!r} was set without "
                                f"an audit entry (the log last moved it to {logged!r})")
        return {"ok": not problems, "entries": len(rows), "head": prev, "problems": problems}

    def plan_ids(self) -> set[int]:
        with self._connect() as conn:
            return {int(r["id"]) for r in conn.execute("SELECT id FROM plans")}

    # -- approvers and sessions ------------------------------------------------------
    def approver(self, name: str) -> dict[str, Any] | None:
        """The approver's row (``name``, ``role``, ``secret_hash``, ...), None if unknown."""
        with self._connect() as conn:
            row = conn.execute("SELECT * FROM approvers WHERE name = ?", (name,)).fetchone()
        return dict(row) if row else None

    def approvers(self) -> list[dict[str, Any]]:
        """Every approver without the secret hash, by name."""
        with self._connect() as conn:
            rows = conn.execute("SELECT name, role, created_at, created_by, updated_at"
                                " FROM approvers ORDER BY name").fetchall()
        return [dict(r) for r in rows]

    def count_role(self, role: str) -> int:
        with self._connect() as conn:
            return int(conn.execute("SELECT count(*) FROM approvers WHERE role = ?",
                                    (role,)).fetchone()[0])

    def add_approver(self, name: str, role: str, secret_hash: str, by: str,
                     first_admin: bool = False) -> None:
        """Store a new approver and audit it; ``first_admin`` re-checks, under the write
        lock, that no admin exists yet (two racing bootstraps cannot both win)."""
        now = utc_now()
        with self.transaction() as conn:
            if first_admin and conn.execute(
                    "SELECT 1 FROM approvers WHERE role = 'admin'").fetchone():
                raise ApprovalError("an admin exists already; add approvers with --as ADMIN")
            if conn.execute("SELECT 1 FROM approvers WHERE name = ?", (name,)).fetchone():
                raise ApprovalError(f"approver {name!r} exists already; change the secret with "
                                    f"`layout-advisor approvers passwd {name}`")
            conn.execute("INSERT INTO approvers(name, role, secret_hash, created_at, created_by,"
                         " updated_at) VALUES (?,?,?,?,?,?)",
                         (name, role, secret_hash, now, by, now))
            self._append_audit(conn, None, by, "approver-add", None, None,
                               f"{name} as {role}", now)

    def remove_approver(self, name: str, by: str) -> None:
        now = utc_now()
        with self.transaction() as conn:
            if conn.execute("DELETE FROM approvers WHERE name = ?", (name,)).rowcount == 0:
                raise ApprovalError(f"no approver named {name!r}")
            conn.execute("DELETE FROM sessions WHERE name = ?", (name,))
            conn.execute("DELETE FROM oidc_links WHERE name = ?", (name,))
            self._append_audit(conn, None, by, "approver-remove", None, None, name, now)

    def set_secret(self, name: str, secret_hash: str, by: str) -> None:
        now = utc_now()
        with self.transaction() as conn:
            if conn.execute("UPDATE approvers SET secret_hash = ?, updated_at = ? WHERE name = ?",
                            (secret_hash, now, name)).rowcount == 0:
                raise ApprovalError(f"no approver named {name!r}")
            conn.execute("DELETE FROM sessions WHERE name = ?", (name,))
            self._append_audit(conn, None, by, "approver-passwd", None, None, name, now)

    def link_oidc(self, name: str, issuer: str, kind: str, value: str, by: str) -> None:
        """Link the OIDC account (``issuer``, ``kind`` "sub" or "email", ``value``) to the
        approver ``name`` and audit it (``approver-link``); one account maps to one approver."""
        now = utc_now()
        with self.transaction() as conn:
            if conn.execute("SELECT 1 FROM approvers WHERE name = ?", (name,)).fetchone() is None:
                raise ApprovalError(f"no approver named {name!r}")
            row = conn.execute("SELECT name FROM oidc_links WHERE issuer = ? AND kind = ? AND "
                               "value = ?", (issuer, kind, value)).fetchone()
            if row is not None:
                raise ApprovalError(f"the OIDC {kind} {value!r} of {issuer} is linked to "
                                    f"{row['name']!r} already; unlink it first")
            conn.execute("INSERT INTO oidc_links(issuer, kind, value, name, created_at, "
                         "created_by) VALUES (?,?,?,?,?,?)", (issuer, kind, value, name, now, by))
            self._append_audit(conn, None, by, "approver-link", None, None,
                               f"{name} to {kind} {value} of {issuer}", now)

    def unlink_oidc(self, issuer: str, kind: str, value: str, by: str) -> str:
        """Remove a link (audited ``approver-unlink``); returns the approver it named."""
        now = utc_now()
        with self.transaction() as conn:
            row = conn.execute("SELECT name FROM oidc_links WHERE issuer = ? AND kind = ? AND "
                               "value = ?", (issuer, kind, value)).fetchone()
            if row is None:
                raise ApprovalError(f"no approver is linked to the OIDC {kind} {value!r} of "
                                    f"{issuer}")
            conn.execute("DELETE FROM oidc_links WHERE issuer = ? AND kind = ? AND value = ?",
                         (issuer, kind, value))
            self._append_audit(conn, None, by, "approver-unlink", None, None,
                               f"{row['name']} from {kind} {value} of {issuer}", now)
        return str(row["name"])

    def oidc_approver(self, issuer: str, kind: str, value: str) -> str | None:
        """The approver linked to this OIDC account, None if none is."""
        with self._connect() as conn:
            row = conn.execute("SELECT name FROM oidc_links WHERE issuer = ? AND kind = ? AND "
                               "value = ?", (issuer, kind, value)).fetchone()
        return str(row["name"]) if row else None

    def oidc_links(self) -> list[dict[str, Any]]:
        """Every link (``name``, ``issuer``, ``kind``, ``value``, ``created_at``,
        ``created_by``), by approver."""
        with self._connect() as conn:
            rows = conn.execute("SELECT name, issuer, kind, value, created_at, created_by "
                                "FROM oidc_links ORDER BY name, issuer, kind, value").fetchall()
        return [dict(r) for r in rows]

    def rehash_secret(self, name: str, secret_hash: str) -> None:
        """Store a stronger hash of the same secret (parameters changed); not audited."""
        with self.transaction() as conn:
            conn.execute("UPDATE approvers SET secret_hash = ? WHERE name = ?",
                         (secret_hash, name))

    def failures_since_sign_in(self, name: str, window_s: float) -> int:
        """Failed sign-ins of ``name`` within ``window_s`` seconds and after its last
        successful one (the growing delay's count)."""
        since = datetime.fromtimestamp(time.time() - window_s, timezone.utc).isoformat(
            timespec="microseconds")
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT action FROM audit WHERE actor = ?"
                " AND action IN ('sign-in', 'sign-in-failed') AND ts >= ? ORDER BY id DESC", (name, since)).fetchall()
        n = 0
        for row in rows:
            if row["action"] == "sign-in":
                break
            n += 1
        return n

    def create_session(self, token_hash: str, name: str, expires_at: float) -> None:
        with self.transaction() as conn:
            conn.execute("DELETE FROM sessions WHERE expires_at < ?", (time.time(),))
            conn.execute("INSERT INTO sessions(token_hash, name, created_at, last_used,"
                         " expires_at) VALUES (?,?,?,?,?)",
                         (token_hash, name, utc_now(), time.time(), expires_at))

    def touch_session(self, token_hash: str, idle_s: float) -> str | None:
        """The session's approver name if it has not expired (and push its expiry
        ``idle_s`` further: expiry is after inactivity); None otherwise."""
        now = time.time()
        with self.transaction() as conn:
            row = conn.execute("SELECT name, expires_at FROM sessions WHERE token_hash = ?",
                               (token_hash,)).fetchone()
            if row is None or row["expires_at"] < now:
                return None
            conn.execute("UPDATE sessions SET last_used = ?, expires_at = ? WHERE token_hash = ?",
                         (now, now + idle_s, token_hash))
            return str(row["name"])

    def end_session(self, token_hash: str) -> None:
        with self.transaction() as conn:
            conn.execute("DELETE FROM sessions WHERE token_hash = ?", (token_hash,))

    # -- job progress ----------------------------------------------------------------
    def start_job(self, plan_id: int, groups_total: int) -> None:
        """Register the running job (host and pid let readers detect a dead runner)."""
        with self.transaction() as conn:
            self._insert_job(conn, plan_id, groups_total, utc_now())

    @staticmethod
    def _insert_job(conn: sqlite3.Connection, plan_id: int, groups_total: int, now: str) -> None:
        conn.execute(
            "INSERT OR REPLACE INTO jobs(plan_id, groups_done, groups_total, rows, bytes,"
            " message, host, pid, started_at, updated_at, heartbeat_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (int(plan_id), 0, int(groups_total), 0, 0, "starting", socket.gethostname(),
             os.getpid(), now, now, time.time()))

    def set_progress(self, plan_id: int, groups_done: int, groups_total: int, rows: int,
                     bytes_: int, message: str = "") -> None:
        with self.transaction() as conn:
            conn.execute(
                "UPDATE jobs SET groups_done = ?, groups_total = ?, rows = ?, bytes = ?,"
                " message = ?, updated_at = ?, heartbeat_at = ? WHERE plan_id = ?",
                (groups_done, groups_total, int(rows), int(bytes_), message, utc_now(),
                 time.time(), int(plan_id)))

    def heartbeat(self, plan_id: int) -> str | None:
        """Refresh this runner's heartbeat on the job of ``plan_id`` (only if this host and
        pid still own it); returns the plan's status (None if the plan is gone): a runner
        whose plan is no longer ``running`` was settled by a reader and must not commit."""
        with self.transaction() as conn:
            conn.execute("UPDATE jobs SET heartbeat_at = ? WHERE plan_id = ? AND host = ?"
                         " AND pid = ?", (time.time(), int(plan_id), socket.gethostname(),
                                          os.getpid()))
            row = conn.execute("SELECT status FROM plans WHERE id = ?", (int(plan_id),)).fetchone()
        return None if row is None else str(row["status"])

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
