"""Sign-in sessions: only the SHA-256 of a session token is stored, with its expiry.

A session's expiry moves forward on each use (:meth:`SessionStore.touch`), so it ends after
``session_idle_s`` seconds of inactivity; expired sessions are swept when a new one starts.
"""

from __future__ import annotations

import hashlib
import time
from typing import TYPE_CHECKING

from engine.security.db import utc_now

if TYPE_CHECKING:
    from engine.security.db import ControlDB


def token_hash(token: str) -> str:
    """The stored form of a session token: its SHA-256, hex.

    Example:
    >>> len(token_hash("abc")), token_hash("abc") == token_hash("abc")
    (64, True)
    """
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class SessionStore:
    """The sign-in sessions of one control database."""

    def __init__(self, db: "ControlDB") -> None:
        self.db = db

    def create(self, token_hash: str, name: str, expires_at: float) -> None:
        """Start a session of ``name`` until ``expires_at`` (seconds since the epoch)."""
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM sessions WHERE expires_at < ?", (time.time(),))
            conn.execute("INSERT INTO sessions(token_hash, name, created_at, last_used,"
                         " expires_at) VALUES (?,?,?,?,?)",
                         (token_hash, name, utc_now(), time.time(), expires_at))

    def touch(self, token_hash: str, idle_s: float) -> str | None:
        """The session's approver name if it has not expired (and push its expiry
        ``idle_s`` further: expiry is after inactivity); None otherwise."""
        now = time.time()
        with self.db.transaction() as conn:
            row = conn.execute("SELECT name, expires_at FROM sessions WHERE token_hash = ?",
                               (token_hash,)).fetchone()
            if row is None or row["expires_at"] < now:
                return None
            conn.execute("UPDATE sessions SET last_used = ?, expires_at = ? WHERE token_hash = ?",
                         (now, now + idle_s, token_hash))
            return str(row["name"])

    def end(self, token_hash: str) -> None:
        """End the session now."""
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM sessions WHERE token_hash = ?", (token_hash,))
