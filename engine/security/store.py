"""The security store: the approvers, sessions, OIDC links and audit log of one workspace.

One object per workspace (:attr:`engine.workspace.Workspace.security`), over the control
database the plans store shares (:class:`engine.security.db.ControlDB`). Each part is a small
store with one responsibility; the sign-in and the gate (:mod:`engine.security.identity`,
:mod:`engine.security.gate`) use them through this one handle.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.security.approvers import ApproverStore
    from engine.security.audit import AuditLog
    from engine.security.db import ControlDB
    from engine.security.oidc import OidcLinks
    from engine.security.sessions import SessionStore


@dataclass(frozen=True)
class SecurityStore:
    """The security state of one control database, part by part."""

    db: "ControlDB"
    audit: "AuditLog"
    approvers: "ApproverStore"
    sessions: "SessionStore"
    oidc: "OidcLinks"

    @property
    def path(self) -> Path:
        """The control database's file."""
        return self.db.path
