"""The audit log: append-only and tamper-evident.

No code here updates or deletes an entry, SQL triggers refuse any UPDATE or DELETE that
another tool might try, and every entry is chained to the previous one by its hash
(:mod:`engine.security.chain`), so :meth:`AuditLog.verify` detects an edited, inserted or
deleted entry even after someone dropped the triggers. A plan whose stored status is not the
one its last audit entry moved it to (an ``UPDATE plans`` behind the stores' back) is
reported too. Plan transitions append their entries in the plans store's own transaction;
this store appends administrative entries (approver changes, sign-ins, rollback, gc, ...).
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from engine.security.chain import GENESIS_HASH, append_entry, entry_hash
from engine.security.db import utc_now

if TYPE_CHECKING:
    from engine.security.db import ControlDB


class AuditLog:
    """The hash-chained audit log of one control database."""

    def __init__(self, db: "ControlDB") -> None:
        self.db = db

    def record(self, actor: str, action: str, reason: str | None = None,
               plan_id: int | None = None) -> None:
        """Append an administrative entry (rollback, gc, drop, approver changes, sign-ins)."""
        with self.db.transaction() as conn:
            append_entry(conn, plan_id, actor, action, None, None, reason, utc_now())

    def entries(self, plan_id: int | None = None) -> list[dict[str, Any]]:
        """Audit entries, oldest first (all plans when ``plan_id`` is None)."""
        with self.db.connect() as conn:
            if plan_id is None:
                rows = conn.execute("SELECT * FROM audit ORDER BY id").fetchall()
            else:
                rows = conn.execute("SELECT * FROM audit WHERE plan_id = ? ORDER BY id",
                                    (int(plan_id),)).fetchall()
        return [dict(r) for r in rows]

    def verify(self) -> dict[str, Any]:
        """Check the hash chain, the plans against their audit trail, and the id sequence.

        Returns ``{"ok", "entries", "head", "problems": [...]}``; each problem names the
        entry or plan. Detects an edited entry (its hash no longer matches), a deleted or
        inserted one (the next entry's ``prev_hash`` no longer links; deleted last entries
        by the AUTOINCREMENT high-water mark), and a plan status changed without its audit
        entry. An attacker who rewrites the whole chain consistently is caught only by
        comparing ``head`` with a copy kept elsewhere.
        """
        problems: list[str] = []
        with self.db.connect() as conn:
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

    def failures_since_sign_in(self, name: str, window_s: float) -> int:
        """Failed sign-ins of ``name`` within ``window_s`` seconds and after its last
        successful one (the growing delay's count)."""
        since = datetime.fromtimestamp(time.time() - window_s, timezone.utc).isoformat(
            timespec="microseconds")
        with self.db.connect() as conn:
            rows = conn.execute(
                "SELECT action FROM audit WHERE actor = ?"
                " AND action IN ('sign-in', 'sign-in-failed') AND ts >= ? ORDER BY id DESC",
                (name, since)).fetchall()
        n = 0
        for row in rows:
            if row["action"] == "sign-in":
                break
            n += 1
        return n

    def recent_failures(self, name: str, window_s: float) -> tuple[int, float]:
        """``(failed sign-ins of name within window_s seconds and after its last successful
        one, time of the latest in seconds since the epoch)``; ``(0, 0.0)`` if none. Read
        from the store, so every process throttles the same name alike."""
        n = self.failures_since_sign_in(name, window_s)
        if n == 0:
            return 0, 0.0
        with self.db.connect() as conn:
            row = conn.execute("SELECT ts FROM audit WHERE actor = ? AND action = 'sign-in-failed'"
                               " ORDER BY id DESC LIMIT 1", (name,)).fetchone()
        return n, datetime.fromisoformat(row["ts"]).timestamp()
