"""The audit log's hash chain: how an entry is hashed, appended and protected.

Every audit entry carries the SHA-256 of the previous entry (``prev_hash``) and its own
(``hash``, over ``prev_hash`` and the entry's fields), so that an edited, inserted or deleted
entry breaks the chain even after someone dropped the triggers that refuse UPDATE and DELETE
on the ``audit`` table (:mod:`engine.security.audit` checks it). These are functions of an
open SQLite connection: the plans store and the security stores append inside their own write
transactions, so a plan's transition and its audit entry commit together.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any, Mapping

#: ``prev_hash`` of the first audit entry
GENESIS_HASH = "0" * 64
#: the fields of an entry that its hash covers, in order
AUDIT_FIELDS = ("plan_id", "ts", "actor", "action", "from_status", "to_status", "reason")
#: the triggers that make the ``audit`` table append-only for any SQLite client
TRIGGER_STATEMENTS = (
    "CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit "
    "BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END",
    "CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit "
    "BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END",
)
TRIGGERS = "".join(f"{stmt};\n" for stmt in TRIGGER_STATEMENTS)


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
    body = json.dumps([prev_hash, *(entry.get(k) for k in AUDIT_FIELDS)],
                      ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def append_entry(conn: sqlite3.Connection, plan_id: int | None, actor: str, action: str,
                 from_status: str | None, to_status: str | None, reason: str | None,
                 ts: str) -> None:
    """Append one entry chained to the last one (inside the caller's write transaction, so
    two writers cannot chain to the same predecessor)."""
    last = conn.execute("SELECT hash FROM audit ORDER BY id DESC LIMIT 1").fetchone()
    prev = last["hash"] if last is not None and last["hash"] else GENESIS_HASH
    entry = dict(plan_id=plan_id, ts=ts, actor=actor, action=action,
                 from_status=from_status, to_status=to_status, reason=reason)
    conn.execute(
        "INSERT INTO audit(plan_id, ts, actor, action, from_status, to_status, reason,"
        " prev_hash, hash) VALUES (?,?,?,?,?,?,?,?,?)",
        (plan_id, ts, actor, action, from_status, to_status, reason, prev,
         entry_hash(prev, entry)))


def chain_unhashed(conn: sqlite3.Connection) -> None:
    """Give a store made before the hash chain its ``prev_hash``/``hash`` columns and chain
    its existing entries (once, in one transaction; a no-op on a chained store)."""
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
        for stmt in TRIGGER_STATEMENTS:  # back before the lock is released
            conn.execute(stmt)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
