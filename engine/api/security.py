"""Security façade: approvers, sign-in, sessions and the audit log's integrity.

For the CLI and the dashboard (the dashboard's sign-in form calls the same functions).
Every function takes the workspace ``ws`` first (or settings, for tests and scripts:
:func:`engine.workspace.as_workspace`).

- ``identity = authenticate(ws, name, secret)`` signs an approver in and returns an
  :class:`Identity` (name, role, session token). Pass it as ``actor`` to every guarded call:
  ``approve_plan``, ``reject_plan``, ``run_plan``/``start_run``, ``rollback_table``,
  ``gc_table`` ... A bare name is refused. A session expires after ``session_idle_s``
  seconds without use (default 900); ``check_session(ws, identity)`` says whether it
  is still alive (and extends it), ``sign_out`` ends it. A wrong secret raises
  :class:`~engine.core.errors.AuthenticationError` after a delay that doubles with each
  failure, and is audited (``sign-in-failed``).
- ``add_approver(ws, name, secret, admin=False, actor=None)``: the first admin needs
  no ``actor`` (only while no admin exists); afterwards ``actor`` must be an admin's
  identity. ``remove_approver``, ``change_secret`` (an admin, or the approver for their own
  secret), ``list_approvers`` (names and roles, never hashes), ``has_admin``.
- OpenID Connect (the dashboard's ``st.login``): ``sign_in_oidc(ws, claims)`` returns
  the Identity of the approver an admin linked to the ID token's account, or None (that
  person may only read). ``link_oidc(ws, name, issuer, subject=... | email=...,
  actor=admin)``, ``unlink_oidc``, ``list_oidc_links``; links are audited.
- Signing keys (:mod:`engine.security.keys`): an identity from ``authenticate`` carries
  the approver's Ed25519 key, unsealed by the secret; approvals are signed with it.
  ``unlock_signing_key(ws, identity, secret)`` unseals it for an OIDC identity;
  ``certify_approver(ws, name, actor=admin)`` certifies a key made at a first sign-in
  after an upgrade.
- ``security_policy(ws)`` / ``set_security_policy(ws, changes, actor=admin)``: the
  admin's stored policy (separation of duties, dual approval, the failed sign-in delay),
  signed and audited; the acting process's settings only tighten it.
- ``verify_audit(ws, pin=None)``: the hash chain of the audit log, plans whose status was
  set without an audit entry, reclustered snapshots whose plan is missing from the control
  store (a replaced ``control.db``), the approvers' certificates up to the root (``pin``: its
  key fingerprint), approver changes replayed against the table, the policy's and approved
  plans' signatures. ``{"ok", "entries", "head", "root", "problems"}``.
"""

from __future__ import annotations

import secrets
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Mapping

from engine.core.errors import ApprovalError
from engine.security import certs as _certs, gate, identity as _identity, keys as _keys
from engine.security import oidc as _oidc, policy as _policy, signing as _signing
from engine.security import trust_audit as _trust_audit
from engine.security.db import reclustered_tables
from engine.security.identity import ADMIN, APPROVER, Identity
from engine.workspace import as_workspace

if TYPE_CHECKING:
    from engine.core.config import Settings
    from engine.workspace import Workspace

__all__ = ["Identity", "authenticate", "check_session", "sign_out", "add_approver",
           "remove_approver", "change_secret", "list_approvers", "has_admin", "verify_audit",
           "generate_secret", "sign_in_oidc", "unlock_signing_key", "link_oidc", "unlink_oidc",
           "list_oidc_links", "certify_approver", "security_policy", "set_security_policy"]


def authenticate(ws: "Workspace | Settings", name: str, secret: str) -> Identity:
    """Sign in; the returned identity is the ``actor`` of guarded calls."""
    return _identity.authenticate(as_workspace(ws), name, secret)


def sign_in_oidc(ws: "Workspace | Settings", claims: Mapping[str, Any]) -> Identity | None:
    """Sign in the approver linked to an OIDC account (``claims``: the ID token's, as
    Streamlit's ``st.user`` holds them: ``iss``, ``sub``, ``email``, ``email_verified``).
    None when no approver is linked (audited): read-only. A link by email is refused
    (AuthenticationError, audited) unless the provider says the email is verified."""
    return _oidc.sign_in_oidc(as_workspace(ws), claims)


def link_oidc(ws: "Workspace | Settings", name: str, issuer: str, subject: str | None = None,
              email: str | None = None, actor: Identity | None = None) -> dict[str, str]:
    """Link approver ``name`` to the OIDC account ``subject`` (or verified ``email``) of
    ``issuer`` (an admin's action, audited ``approver-link``)."""
    ws = as_workspace(ws)
    by = gate.require(ws, actor, "approvers")
    name, issuer = _identity.check_name(name), _oidc.check_issuer(issuer)
    kind, value = _oidc.oidc_key(subject, email)
    ws.security.oidc.link(name, issuer, kind, value, by)
    return {"name": name, "issuer": issuer, "kind": kind, "value": value}


def unlink_oidc(ws: "Workspace | Settings", issuer: str, subject: str | None = None,
                email: str | None = None, actor: Identity | None = None) -> dict[str, str]:
    """Remove a link (an admin's action, audited ``approver-unlink``)."""
    ws = as_workspace(ws)
    by = gate.require(ws, actor, "approvers")
    kind, value = _oidc.oidc_key(subject, email)
    issuer = _oidc.check_issuer(issuer)
    name = ws.security.oidc.unlink(issuer, kind, value, by)
    return {"name": name, "issuer": issuer, "kind": kind, "value": value}


def list_oidc_links(ws: "Workspace | Settings") -> list[dict[str, Any]]:
    """``[{"name", "issuer", "kind", "value", "created_at", "created_by"}]`` by approver."""
    return as_workspace(ws).security.oidc.links()


def unlock_signing_key(ws: "Workspace | Settings", identity: Identity, secret: str) -> Identity:
    """The same identity with its signing key unsealed by ``secret``: an approver signed in
    through an identity provider unlocks it before approving (approvals are signed)."""
    return _identity.unlock(as_workspace(ws), identity, secret)


def check_session(ws: "Workspace | Settings", identity: Identity) -> str:
    """The signed-in name if the session is alive (and extend it); AuthenticationError if
    it expired or the approver was removed."""
    name, _role = _identity.resolve(as_workspace(ws), identity)
    return name


def sign_out(ws: "Workspace | Settings", identity: Identity) -> None:
    """End the session now."""
    _identity.sign_out(as_workspace(ws), identity)


def has_admin(ws: "Workspace | Settings") -> bool:
    """Whether an admin exists (a workspace without one refuses every guarded change)."""
    return as_workspace(ws).security.approvers.count_role(ADMIN) > 0


def list_approvers(ws: "Workspace | Settings") -> list[dict[str, Any]]:
    """``[{"name", "role", "created_at", "created_by", "updated_at"}]`` by name."""
    return as_workspace(ws).security.approvers.approvers()


def add_approver(ws: "Workspace | Settings", name: str, secret: str, admin: bool = False,
                 actor: Identity | None = None) -> dict[str, Any]:
    """Store a new approver (``admin`` for the admin role) with an Argon2id hash of
    ``secret``. Without ``actor`` only the first admin may be added."""
    ws = as_workspace(ws)
    approvers = ws.security.approvers
    name = _identity.check_name(name)
    role = ADMIN if admin else APPROVER
    if actor is None:
        if approvers.count_role(ADMIN) > 0:
            raise ApprovalError("an admin exists already; adding an approver needs an admin: "
                                "--as ADMIN")
        if role != ADMIN:
            raise ApprovalError("no admin exists yet; create the first one with "
                                f"`layout-advisor approvers add {name} --admin`")
        _key, keys = _identity.new_keys(name, secret, Identity(name, ADMIN, ""), ADMIN)
        approvers.add_approver(name, role, _identity.hash_secret(secret), by=name,
                               first_admin=True, keys=keys)
    else:
        by = gate.require(ws, actor, "approvers")
        hashed = _identity.hash_secret(secret)
        _key, keys = _identity.new_keys(name, secret, actor, role)
        approvers.add_approver(name, role, hashed, by=by, keys=keys)
    return {"name": name, "role": role}


def remove_approver(ws: "Workspace | Settings", name: str, actor: Identity) -> None:
    """Remove an approver (an admin's action); the last admin cannot be removed."""
    ws = as_workspace(ws)
    approvers = ws.security.approvers
    by = gate.require(ws, actor, "approvers")
    row = approvers.approver(name)
    if row is not None and row["role"] == ADMIN and approvers.count_role(ADMIN) == 1:
        raise ApprovalError(f"{name!r} is the last admin and cannot be removed; add another "
                            "admin first")
    approvers.remove_approver(name, by)


def change_secret(ws: "Workspace | Settings", name: str, secret: str, actor: Identity) -> None:
    """Set a new secret for ``name``: by that approver, or by an admin; ends its sessions."""
    ws = as_workspace(ws)
    signed_in, role = _identity.resolve(ws, actor)
    if signed_in != name and not gate.allowed(role, "approvers"):
        raise ApprovalError(f"{signed_in!r} may change only their own secret; an admin may "
                            "change anyone's")
    hashed = _identity.hash_secret(secret)
    row = ws.security.approvers.approver(name)
    if row is None:
        raise ApprovalError(f"no approver named {name!r}")
    if signed_in == name and actor.signing_key is not None:
        keys = _identity.reseal(name, secret, actor.signing_key, row)
    elif signed_in == name:
        raise ApprovalError(f"changing {name!r}'s secret re-seals its signing key, which only "
                            "a sign-in with the current secret unlocks")
    else:  # an admin's reset: the old key cannot be opened, so a new certified one
        _key, keys = _identity.new_keys(name, secret, actor, str(row["role"]))
    ws.security.approvers.set_secret(name, hashed, signed_in, keys=keys)


def generate_secret() -> str:
    """A random secret for a generated account (the demo admin): 22 URL-safe characters."""
    return secrets.token_urlsafe(16)


def verify_audit(ws: "Workspace | Settings", pin: str | None = None) -> dict[str, Any]:
    """The audit log's hash chain and the plans' trail, the approvers' certificates (up
    to the root admin, whose key fingerprint must be ``pin`` when given) replayed against
    the approver changes in the log, the signatures of every approved plan, the stored
    security policy's signature, plus reclustered snapshots whose plan the control store
    does not know (it was replaced). ``{"ok", "entries", "head", "root", "problems"}``."""
    ws = as_workspace(ws)
    report = ws.security.audit.verify()
    report["problems"] += _trust_audit.verify_trust(ws, pin, report)
    known = ws.control.plan_ids()
    store = ws.tables
    for table in reclustered_tables(store):
        for h in store.history(table):
            if h["operation"] != "recluster":
                continue
            plan_id = store.snapshot(table, h["id"]).summary.get("plan_id")
            if plan_id is not None and int(plan_id) not in known:
                report["problems"].append(
                    f"table {table} snapshot {h['id']} was written by plan {plan_id}, which "
                    f"this control store does not know: {ws.security.path} was replaced")
    report["ok"] = not report["problems"]
    return report


def certify_approver(ws: "Workspace | Settings", name: str, actor: Identity) -> dict[str, Any]:
    """Certify ``name``'s current signing key and role with the admin ``actor``'s key
    (audited ``approver-certify``): for an approver that got its key at its first sign-in
    in a store made before signed approvals. ``{"name", "role", "fingerprint"}``."""
    ws = as_workspace(ws)
    by = gate.require(ws, actor, "approvers")
    row = ws.security.approvers.approver(_identity.check_name(name))
    if row is None:
        raise ApprovalError(f"no approver named {name!r}")
    if not row.get("public_key"):
        raise ApprovalError(f"approver {name!r} has no signing key yet: it gets one at its "
                            "next sign-in; certify it after that")
    if actor.signing_key is None:
        raise ApprovalError(f"certifying needs the signing key of {by!r}, which only a "
                            "sign-in with the secret unlocks")
    cert = _certs.issue(actor.signing_key, row["name"], str(row["role"]), row["public_key"], by)
    ws.security.approvers.certify(row["name"], row["public_key"], cert, by)
    return {"name": row["name"], "role": str(row["role"]),
            "fingerprint": _keys.fingerprint(row["public_key"])}


def security_policy(ws: "Workspace | Settings") -> dict[str, Any]:
    """The security policy: ``{"stored", "set_by", "set_at", "effective", "problem"}``:
    what an admin stored (the defaults until one does), and what is in force here (the
    stricter of that and this process's settings, :mod:`engine.security.policy`)."""
    ws = as_workspace(ws)
    row = _policy.PolicyStore(ws.security.db).row()
    current = _signing.load_trust(ws)
    stored, problem = _policy.stored_policy(row, current)
    return {"stored": stored.to_json(), "set_by": row["set_by"] if row and not problem else None,
            "set_at": row["set_at"] if row and not problem else None,
            "effective": _signing.effective_policy(ws, current).to_json(), "problem": problem}


def set_security_policy(ws: "Workspace | Settings", changes: Mapping[str, Any],
                        actor: Identity) -> dict[str, Any]:
    """Change settings of the stored security policy (``separation_of_duties``,
    ``dual_approval_bytes``, ``dual_approval_cpu_seconds``, ``auth_delay_s``), as an admin;
    signed with the admin's key and audited (``policy-set``). Returns
    :func:`security_policy` after it."""
    ws = as_workspace(ws)
    by = gate.require(ws, actor, "approvers")
    values = _policy.check_changes(changes)
    if actor.signing_key is None:
        raise ApprovalError(f"the policy is signed with the key of {by!r}, which only a "
                            "sign-in with the secret unlocks")
    stored, _problem = _policy.stored_policy(_policy.PolicyStore(ws.security.db).row(),
                                             _signing.load_trust(ws))
    _policy.PolicyStore(ws.security.db).set(replace(stored, **values), actor.signing_key, by)
    return security_policy(ws)
