"""Approvers: a name, a role and an Argon2id hash of the secret, with every change audited.

What the roles may do is :mod:`engine.security.gate`'s; how a secret is hashed and checked
is :mod:`engine.security.identity`'s. Removing an approver or changing its secret ends its
sessions in the same transaction; removing one also removes its OIDC links.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.core.errors import ApprovalError
from engine.security.chain import append_entry
from engine.security.db import utc_now

if TYPE_CHECKING:
    from engine.security.db import ControlDB


@dataclass(frozen=True)
class ApproverKeys:
    """An approver's signing key as stored: the public key (hex), the private key sealed by
    the secret, and the certificate (None: not certified yet) with its certifier."""

    public_key: str
    sealed_key: str
    cert: str | None = None
    certified_by: str | None = None


def _store_keys(conn: Any, name: str, keys: ApproverKeys) -> None:
    conn.execute("UPDATE approvers SET public_key = ?, sealed_key = ?, cert = ?,"
                 " certified_by = ? WHERE name = ?",
                 (keys.public_key, keys.sealed_key, keys.cert, keys.certified_by, name))


class ApproverStore:
    """The approvers of one control database."""

    def __init__(self, db: "ControlDB") -> None:
        self.db = db

    def approver(self, name: str) -> dict[str, Any] | None:
        """The approver's row (``name``, ``role``, ``secret_hash``, ...), None if unknown."""
        with self.db.connect() as conn:
            row = conn.execute("SELECT * FROM approvers WHERE name = ?", (name,)).fetchone()
        return dict(row) if row else None

    def key_rows(self) -> list[dict[str, Any]]:
        """Every approver's name, role, public key and certificate (what
        :func:`engine.security.certs.trust` works from), by name."""
        with self.db.connect() as conn:
            rows = conn.execute("SELECT name, role, public_key, cert, certified_by"
                                " FROM approvers ORDER BY name").fetchall()
        return [dict(r) for r in rows]

    def approvers(self) -> list[dict[str, Any]]:
        """Every approver without the secret hash, by name."""
        with self.db.connect() as conn:
            rows = conn.execute("SELECT name, role, created_at, created_by, updated_at"
                                " FROM approvers ORDER BY name").fetchall()
        return [dict(r) for r in rows]

    def count_role(self, role: str) -> int:
        with self.db.connect() as conn:
            return int(conn.execute("SELECT count(*) FROM approvers WHERE role = ?",
                                    (role,)).fetchone()[0])

    def add_approver(self, name: str, role: str, secret_hash: str, by: str,
                     first_admin: bool = False, keys: "ApproverKeys | None" = None) -> None:
        """Store a new approver (with its sealed signing key and certificate, ``keys``) and
        audit it; ``first_admin`` re-checks, under the write lock, that no admin exists yet
        (two racing bootstraps cannot both win)."""
        now = utc_now()
        with self.db.transaction() as conn:
            if first_admin and conn.execute(
                    "SELECT 1 FROM approvers WHERE role = 'admin'").fetchone():
                raise ApprovalError("an admin exists already; add approvers with --as ADMIN")
            if conn.execute("SELECT 1 FROM approvers WHERE name = ?", (name,)).fetchone():
                raise ApprovalError(f"approver {name!r} exists already; change the secret with "
                                    f"`layout-advisor approvers passwd {name}`")
            conn.execute("INSERT INTO approvers(name, role, secret_hash, created_at, created_by,"
                         " updated_at) VALUES (?,?,?,?,?,?)",
                         (name, role, secret_hash, now, by, now))
            if keys is not None:
                _store_keys(conn, name, keys)
            append_entry(conn, None, by, "approver-add", None, None, f"{name} as {role}", now)

    def remove_approver(self, name: str, by: str) -> None:
        """Remove ``name`` with its sessions and OIDC links (audited ``approver-remove``)."""
        now = utc_now()
        with self.db.transaction() as conn:
            if conn.execute("DELETE FROM approvers WHERE name = ?", (name,)).rowcount == 0:
                raise ApprovalError(f"no approver named {name!r}")
            conn.execute("DELETE FROM sessions WHERE name = ?", (name,))
            conn.execute("DELETE FROM oidc_links WHERE name = ?", (name,))
            append_entry(conn, None, by, "approver-remove", None, None, name, now)

    def set_secret(self, name: str, secret_hash: str, by: str,
                   keys: "ApproverKeys | None" = None) -> None:
        """A new secret hash for ``name`` (and its key sealed anew, or a new certified key,
        ``keys``); ends its sessions (audited ``approver-passwd``)."""
        now = utc_now()
        with self.db.transaction() as conn:
            if conn.execute("UPDATE approvers SET secret_hash = ?, updated_at = ? WHERE name = ?",
                            (secret_hash, now, name)).rowcount == 0:
                raise ApprovalError(f"no approver named {name!r}")
            if keys is not None:
                _store_keys(conn, name, keys)
            conn.execute("DELETE FROM sessions WHERE name = ?", (name,))
            append_entry(conn, None, by, "approver-passwd", None, None, name, now)

    def rehash_secret(self, name: str, secret_hash: str) -> None:
        """Store a stronger hash of the same secret (parameters changed); not audited."""
        with self.db.transaction() as conn:
            conn.execute("UPDATE approvers SET secret_hash = ? WHERE name = ?",
                         (secret_hash, name))

    def store_key(self, name: str, keys: ApproverKeys, note: str) -> None:
        """Give ``name`` its first signing key (a store made before signed approvals), or
        its certificate; audited ``approver-key`` with ``note``."""
        now = utc_now()
        with self.db.transaction() as conn:
            if conn.execute("SELECT 1 FROM approvers WHERE name = ?", (name,)).fetchone() is None:
                raise ApprovalError(f"no approver named {name!r}")
            _store_keys(conn, name, keys)
            append_entry(conn, None, name, "approver-key", None, None, note, now)

    def certify(self, name: str, public_key: str, cert: str, by: str) -> None:
        """Store ``by``'s certificate of ``name``'s current key (audited
        ``approver-certify``); refused if the key changed meanwhile."""
        now = utc_now()
        with self.db.transaction() as conn:
            if conn.execute("UPDATE approvers SET cert = ?, certified_by = ?, updated_at = ?"
                            " WHERE name = ? AND public_key = ?",
                            (cert, by, now, name, public_key)).rowcount == 0:
                raise ApprovalError(f"approver {name!r} has no signing key to certify (it "
                                    "gets one at its next sign-in)")
            append_entry(conn, None, by, "approver-certify", None, None, name, now)
