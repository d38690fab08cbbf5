"""The gate: who may approve, reject, run, roll back or administer.

This module is the one place that decides who may do what. Nobody is an approver by
configuration: approvers are stored in the control database with an Argon2id hash of their
secret (:mod:`engine.security.identity`), and every guarded action takes the
:class:`~engine.security.identity.Identity` of a signed-in approver, never a bare name.

Roles (:data:`ROLE_ACTIONS`): an ``approver`` may approve, reject and run plans; an
``admin`` may also roll back, gc, drop, clear a workload and manage approvers. A role counts
only as its certificate states it (:mod:`engine.security.certs`): a row written into the
approvers table, or a role changed there, grants nothing. The first
admin may be added without signing in, only while no admin exists. The plan transitions
that these roles guard, with separation of duties and dual approval, are
:mod:`engine.plans.approval`'s.
"""

from __future__ import annotations

import getpass
from typing import TYPE_CHECKING

from engine.core.errors import ApprovalError
from engine.security.identity import ADMIN, APPROVER, resolve

if TYPE_CHECKING:
    from engine.workspace import Workspace

#: what each role may do
ROLE_ACTIONS: dict[str, frozenset[str]] = {
    APPROVER: frozenset({"approve", "reject", "run"}),
    ADMIN: frozenset({"approve", "reject", "run", "rollback", "gc", "drop", "workload-clear",
                      "approvers"}),
}
#: every action the gate knows
GUARDED_ACTIONS = tuple(sorted(ROLE_ACTIONS[ADMIN]))


def default_actor() -> str:
    """Who proposes when no name was given (the OS user); never grants anything."""
    try:
        return getpass.getuser()
    except Exception:  # pragma: no cover - no passwd entry in some containers
        return "unknown"


def allowed(role: str, action: str) -> bool:
    """May ``role`` do ``action``?

    Example:
    >>> allowed("approver", "approve"), allowed("approver", "rollback"), allowed("admin", "gc")
    (True, False, True)
    """
    return action in ROLE_ACTIONS.get(role, frozenset())


def require(ws: "Workspace", actor: object, action: str) -> str:
    """The signed-in name behind ``actor`` if its role may ``action`` in the workspace
    ``ws``; else ApprovalError (an AuthenticationError for an expired session) saying what
    is missing."""
    if action not in GUARDED_ACTIONS:
        raise ValueError(f"unknown guarded action {action!r}; one of {GUARDED_ACTIONS}")
    if not ws.security.approvers.approvers():
        raise ApprovalError("no approvers exist yet; create the first admin with "
                            "`layout-advisor approvers add NAME --admin`")
    name, role = resolve(ws, actor)
    if not allowed(role, action):
        needs = "an admin" if not allowed(APPROVER, action) else "an approver"
        raise ApprovalError(f"{name!r} is {role_article(role)}; {action} needs {needs}")
    return name


def role_article(role: str) -> str:
    """'an admin' / 'an approver'."""
    return f"an {role}" if role[:1] in "aeiou" else f"a {role}"
