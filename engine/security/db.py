"""The control database: one SQLite file holding a workspace's control state.

``control.db`` (``settings.control_db``) holds the plans, the job records and the policy
state (:class:`engine.plans.store.ControlStore`) beside the approvers, sessions, OIDC links
and the hash-chained audit log (:class:`engine.security.store.SecurityStore`). Both sides
share one :class:`ControlDB`, so a plan's transition and its audit entry are written in one
transaction.

The file is in WAL mode, so the dashboard, the CLI and a running job can use it at once:
readers never block the writer, and every write is one short ``BEGIN IMMEDIATE``
transaction (a busy timeout absorbs the rare collision). A connection is opened per call and
closed at once; nothing is held between calls, so the stores are safe to use from threads
and from several processes.

A missing control database beside tables that carry reclustered snapshots is an error, not a
fresh start (the plans and the audit of those snapshots would vanish without a word).
"""

from __future__ import annotations

import os
import sqlite3
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from engine.core.errors import AdvisorError, ControlStoreError
from engine.security.chain import TRIGGERS, chain_unhashed

if TYPE_CHECKING:
    from engine.table.store import TableStore

BUSY_TIMEOUT_MS = 30_000

SCHEMA = """
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
    updated_at  TEXT NOT NULL,
    public_key  TEXT,
    sealed_key  TEXT,
    cert        TEXT,
    certified_by TEXT
);
CREATE TABLE IF NOT EXISTS signatures (
    plan_id       INTEGER NOT NULL,
    name          TEXT NOT NULL,
    kind          TEXT NOT NULL,
    digest        TEXT NOT NULL,
    base_snapshot TEXT NOT NULL,
    signature     TEXT NOT NULL,
    signed_at     TEXT NOT NULL,
    PRIMARY KEY (plan_id, name, kind)
);
CREATE TABLE IF NOT EXISTS security_policy (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    body      TEXT NOT NULL,
    set_by    TEXT NOT NULL,
    set_at    TEXT NOT NULL,
    signature TEXT NOT NULL
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
CREATE TABLE IF NOT EXISTS verifications (
    plan_id     INTEGER PRIMARY KEY,
    verified_at TEXT NOT NULL,
    actor       TEXT NOT NULL,
    result      TEXT NOT NULL
);
"""

#: SQLite messages that mean the file itself cannot be used
_DAMAGE_SIGNS = ("not a database", "malformed", "disk image", "unable to open", "readonly",
                 "disk I/O", "file is encrypted")


def utc_now() -> str:
    """ISO-8601 UTC timestamp with microseconds (sortable as text)."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def _damaged(path: Path, exc: BaseException) -> ControlStoreError:
    """The one message for a control store SQLite cannot use (not a database, malformed,
    unwritable): the path and what to do."""
    return ControlStoreError(
        f"control store {path} cannot be used ({exc}); restore it from a backup, or check "
        "that the workspace directory is writable")


def reclustered_tables(tables: "TableStore") -> list[str]:
    """Tables of the catalog ``tables`` whose history holds a reclustered snapshot (a plan
    ran); tables that cannot be read are skipped (their own commands report them)."""
    out = []
    try:
        infos = tables.list_tables()
    except (AdvisorError, OSError):
        return []
    for info in infos:
        try:
            if any(h["operation"] == "recluster" for h in tables.history(info.name)):
                out.append(info.name)
        except (AdvisorError, OSError, KeyError, ValueError):
            continue
    return out


class ControlDB:
    """The control database at ``path``: schema, connections and write transactions.

    Opening creates the file with its schema and the audit log's append-only triggers (and
    upgrades a store made before the hash chain or the runner heartbeat). With ``tables``
    (the workspace's catalog), a missing file beside reclustered tables raises
    ControlStoreError and nothing is created.
    """

    def __init__(self, path: "str | os.PathLike[str]", tables: "TableStore | None" = None) -> None:
        self.path = Path(path)
        if self.path.parent.exists() and not self.path.parent.is_dir():
            raise ControlStoreError(f"workspace {self.path.parent} is a file, not a directory; "
                                    "pass --home a directory")
        if tables is not None and not self.path.exists():
            lost = reclustered_tables(tables)
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
        with self.connect() as conn:
            conn.executescript(SCHEMA + TRIGGERS)
            chain_unhashed(conn)
            _add_heartbeat_column(conn)
            _add_key_columns(conn)

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        """A fresh connection (rows as :class:`sqlite3.Row`, autocommit unless a transaction
        is begun), closed on exit; a file SQLite cannot use raises ControlStoreError."""
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

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A short write transaction (BEGIN IMMEDIATE takes the write lock up front, so
        a read-check-write sequence inside it cannot interleave with another writer)."""
        with self.connect() as conn:
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


def _add_heartbeat_column(conn: sqlite3.Connection) -> None:
    """Give a store made before heartbeats its ``jobs.heartbeat_at`` (NULL: readers fall
    back to the record's ``updated_at``)."""
    if "heartbeat_at" not in {r["name"] for r in conn.execute("PRAGMA table_info(jobs)")}:
        conn.execute("ALTER TABLE jobs ADD COLUMN heartbeat_at REAL")


def _add_key_columns(conn: sqlite3.Connection) -> None:
    """Give a store made before signed approvals the approvers' key columns (NULL: the
    approver gets a key pair at the next sign-in, :mod:`engine.security.certs`)."""
    have = {r["name"] for r in conn.execute("PRAGMA table_info(approvers)")}
    for col in ("public_key", "sealed_key", "cert", "certified_by"):
        if col not in have:
            conn.execute(f"ALTER TABLE approvers ADD COLUMN {col} TEXT")
