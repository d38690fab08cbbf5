"""Who is acting: approvers' secrets (Argon2id), sign-in, sessions and the failure delay.

An approver signs in with a name and a secret (:func:`authenticate`) and gets a
:class:`Identity` holding a random session token; only the token's SHA-256 is stored, with
an expiry pushed forward on each use (a session ends after ``session_idle_s`` seconds of
inactivity). Every guarded call hands the identity back and the gate resolves it again
(:func:`resolve`), so an expired session, a removed approver or a changed role takes effect
at once, and a name typed into a form or a command line is never enough.

Secrets are hashed with Argon2id (argon2-cffi's ``PasswordHasher``, RFC 9106 parameters);
nothing is stored in clear. A wrong secret is audited (``sign-in-failed``), and the next
attempt at that name, from any process, is refused unchecked until a delay has passed since
the failure; the delay doubles with each failure since the last successful sign-in
(:func:`failure_delay`; its base ``auth_delay_s`` is the security policy's,
:mod:`engine.security.policy`), so guessing from scripts, even many at once, is slow.

The secret also unseals the approver's Ed25519 signing key (:mod:`engine.security.keys`),
which the :class:`Identity` carries in memory for the session: approvals and signed
proposals are made with it (:mod:`engine.security.signing`). An approver whose stored key
does not open with its secret, or does not match its public key, cannot sign in. An
approver made before signed approvals gets its key pair at its next sign-in; the roles the
gate grants are those of certified keys only (:mod:`engine.security.certs`).

A sign-in through OpenID Connect (:func:`engine.security.oidc.sign_in_oidc`) ends in the
same kind of session (:func:`open_session`).

Every function takes the workspace and uses its security store
(:attr:`engine.workspace.Workspace.security`) and settings.
"""

from __future__ import annotations

import dataclasses
import functools
import secrets
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from engine.core.errors import ApprovalError, AuthenticationError, InvalidParameterError
from engine.security import keys as _keys
from engine.security.approvers import ApproverKeys
from engine.security.certs import issue
from engine.security.sessions import token_hash
from engine.security.signing import effective_policy, load_trust

if TYPE_CHECKING:
    from engine.workspace import Workspace

APPROVER, ADMIN = "approver", "admin"
ROLES = (APPROVER, ADMIN)
MIN_SECRET_CHARS = 8
MAX_NAME_CHARS = 64
#: longest delay after repeated failures, seconds
MAX_DELAY_S = 30.0
#: failures older than this no longer lengthen the delay, seconds
FAILURE_WINDOW_S = 3600.0

_HASHER = PasswordHasher()  # Argon2id, RFC 9106 low-memory profile (t=3, m=64 MiB, p=4)


@dataclass(frozen=True)
class Identity:
    """A signed-in approver: what :func:`authenticate` returns and the gate accepts.

    ``token`` is the session's secret (kept out of ``repr``); ``role`` is the role at
    sign-in, for display only: the gate reads the current role from the store.
    ``signing_key`` is the approver's Ed25519 private key, unsealed by the secret at
    sign-in (None after an identity-provider sign-in, which cannot unseal it); it lives
    only in this object's memory.
    """

    name: str
    role: str
    token: str = field(repr=False)
    signing_key: Any = field(default=None, repr=False, compare=False)


def failure_delay(failures: int, base_s: float) -> float:
    """Seconds to wait after the ``failures``-th consecutive failed sign-in: ``base_s``
    doubled per failure, capped at :data:`MAX_DELAY_S`.

    Example:
    >>> [failure_delay(n, 1.0) for n in range(0, 7)]
    [0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0]
    """
    if failures <= 0 or base_s <= 0:
        return 0.0
    return min(base_s * 2 ** (failures - 1), MAX_DELAY_S)


def check_name(name: str | None) -> str:
    """An approver name: 1..64 printable characters without spaces at the ends.

    Example:
    >>> check_name(" alice ")
    'alice'
    >>> check_name("a\\nb")
    Traceback (most recent call last):
    ...
    engine.core.errors.InvalidParameterError: approver name 'a\\nb' must be 1 to 64 printable characters
    """
    text = (name or "").strip()
    if not text or len(text) > MAX_NAME_CHARS or not text.isprintable():
        raise InvalidParameterError(f"approver name {name!r} must be 1 to {MAX_NAME_CHARS} "
                                    "printable characters")
    return text


def check_secret(secret: str) -> str:
    """A new secret: at least :data:`MIN_SECRET_CHARS` characters, not only spaces."""
    if len(secret) < MIN_SECRET_CHARS or not secret.strip():
        raise InvalidParameterError(f"the secret must have at least {MIN_SECRET_CHARS} "
                                    "characters")
    return secret


def hash_secret(secret: str) -> str:
    """The Argon2id hash (PHC string, salt included) of a new secret."""
    return _HASHER.hash(check_secret(secret))


def _secret_matches(stored: str | None, secret: str) -> bool:
    """True if ``secret`` matches the stored hash; an unknown name still costs one hash, so
    timing does not tell which names exist."""
    try:
        return _HASHER.verify(stored or _dummy_hash(), secret) and stored is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


@functools.cache
def _dummy_hash() -> str:
    """A hash to verify against for unknown names (made on first need: hashing costs)."""
    return _HASHER.hash("not a secret anyone has")


def open_session(ws: "Workspace", name: str, role: str, how: str | None,
                 signing_key: Any = None) -> Identity:
    """A fresh session of ``name`` (expiring after ``session_idle_s`` seconds unused),
    audited as ``sign-in`` with ``how`` as its reason."""
    security = ws.security
    token = secrets.token_urlsafe(32)
    security.sessions.create(token_hash(token), name, time.time() + ws.settings.session_idle_s)
    security.audit.record(name, "sign-in", how)
    return Identity(name=name, role=role, token=token, signing_key=signing_key)


def new_keys(name: str, secret: str, certifier: Identity | None = None,
             role: str | None = None) -> tuple[Any, ApproverKeys]:
    """A fresh signing key for ``name``, sealed by ``secret`` with this module's Argon2id
    cost, and certified as ``role`` by ``certifier``'s key (self-certified when the
    certifier is ``name`` itself: the root; not certified without one)."""
    private, public = _keys.new_key_pair()
    sealed = _keys.seal(private, secret, aad=name,
                        cost=(_HASHER.time_cost, _HASHER.memory_cost, _HASHER.parallelism))
    if certifier is None or role is None:
        return private, ApproverKeys(public, sealed)
    signer = private if certifier.name == name else certifier.signing_key
    if signer is None:
        raise ApprovalError(f"certifying {name!r} needs {certifier.name!r}'s signing key, "
                            "which only a sign-in with the secret unlocks")
    return private, ApproverKeys(public, sealed, issue(signer, name, role, public,
                                                       certifier.name), certifier.name)


def reseal(name: str, secret: str, private: Any, row: dict[str, Any]) -> ApproverKeys:
    """The same key and certificate, sealed by a new ``secret``."""
    sealed = _keys.seal(private, secret, aad=name,
                        cost=(_HASHER.time_cost, _HASHER.memory_cost, _HASHER.parallelism))
    return ApproverKeys(_keys.public_hex(private), sealed, row.get("cert"),
                        row.get("certified_by"))


def _refuse_early(ws: "Workspace", name: str) -> None:
    """Refuse, unchecked, an attempt at ``name`` before the failure delay since its last
    failed sign-in has passed (failures are read from the store: every process agrees)."""
    failures, last = ws.security.audit.recent_failures(name, FAILURE_WINDOW_S)
    wait = failure_delay(failures, effective_policy(ws).auth_delay_s)
    retry_at = last + wait
    if failures and time.time() < retry_at:
        when = datetime.fromtimestamp(retry_at, timezone.utc).strftime("%H:%M:%S")
        raise AuthenticationError(
            f"{name!r} has {failures} failed sign-in(s) in a row: the next attempt is "
            f"accepted from {when} UTC (in {retry_at - time.time():.1f} s); this one was "
            "not checked")


def _unseal_or_migrate(ws: "Workspace", row: dict[str, Any], secret: str) -> Any:
    """The approver's private key (a store made before signed approvals: a new one,
    self-certified if this is an admin and no approver holds a certificate yet)."""
    name, approvers = str(row["name"]), ws.security.approvers
    if row.get("sealed_key"):
        private = _keys.unseal(row["sealed_key"], secret, aad=name)
        if private is None or _keys.public_hex(private) != row.get("public_key"):
            ws.security.audit.record(name, "sign-in-failed", "the signing key does not open")
            raise AuthenticationError(
                f"the signing key of {name!r} does not open with this secret or does not "
                "match its public key (control.db was edited); run `layout-advisor audit "
                "verify` and ask an admin to reset the secret")
        return private
    root = row["role"] == ADMIN and load_trust(ws).legacy
    who = Identity(name, str(row["role"]), "", None) if root else None
    private, keys = new_keys(name, secret, who, str(row["role"]) if root else None)
    approvers.store_key(name, keys, f"signing key {_keys.fingerprint(keys.public_key)}"
                        + (" (root)" if root else " (not certified yet)"))
    return private


def authenticate(ws: "Workspace", name: str, secret: str) -> Identity:
    """Sign ``name`` in with ``secret``; AuthenticationError if they do not match (the
    same message whether or not the name exists), or if the attempt comes before the delay
    since the last failure has passed."""
    security = ws.security
    name = check_name(name)
    _refuse_early(ws, name)
    row = security.approvers.approver(name)
    if row is None or not _secret_matches(row["secret_hash"], secret):
        security.audit.record(name, "sign-in-failed", "wrong name or secret")
        if not security.approvers.approvers():  # a fresh workspace (or image): how to begin
            raise AuthenticationError(f"wrong name or secret for {name!r}: no approver exists "
                                      "yet; create the first admin with `layout-advisor "
                                      "approvers add NAME --admin`")
        raise AuthenticationError(f"wrong name or secret for {name!r} (failed sign-ins are "
                                  "audited and each doubles the wait before the next "
                                  "attempt is accepted)")
    private = _unseal_or_migrate(ws, row, secret)
    if _HASHER.check_needs_rehash(row["secret_hash"]):
        security.approvers.rehash_secret(name, _HASHER.hash(secret))
    return open_session(ws, name, str(row["role"]), None, private)


def unlock(ws: "Workspace", identity: Identity, secret: str) -> Identity:
    """``identity`` (signed in through an identity provider) with its signing key unsealed
    by the approver's ``secret``, so that it can sign approvals. A wrong secret is a failed
    sign-in (audited, and throttled alike)."""
    name, _role = resolve(ws, identity)
    _refuse_early(ws, name)
    row = ws.security.approvers.approver(name)
    if row is None or not _secret_matches(row["secret_hash"], secret):
        ws.security.audit.record(name, "sign-in-failed", "wrong secret to unlock the signing key")
        raise AuthenticationError(f"wrong secret for {name!r}: the signing key stays locked "
                                  "(failed attempts are audited)")
    return dataclasses.replace(identity, signing_key=_unseal_or_migrate(ws, row, secret))


def sign_out(ws: "Workspace", identity: Identity) -> None:
    """End the session at once (the CLI does after its one command)."""
    ws.security.sessions.end(token_hash(identity.token))


def resolve(ws: "Workspace", actor: object) -> tuple[str, str]:
    """``(name, current role)`` of a live session; ApprovalError for anything else (a bare
    name, an expired session, a removed approver)."""
    if not isinstance(actor, Identity):
        hint = ("sign in first: `--as NAME` on the command line, or "
                "api.authenticate(settings, name, secret) in Python")
        if actor is None or (isinstance(actor, str) and not actor.strip()):
            raise ApprovalError(f"an approver is required; {hint}")
        raise ApprovalError(f"{actor!r} is not signed in; {hint}")
    security = ws.security
    name = security.sessions.touch(token_hash(actor.token), ws.settings.session_idle_s)
    if name is None or name != actor.name:
        raise AuthenticationError(f"the session of {actor.name!r} has expired; sign in again")
    row = security.approvers.approver(name)
    if row is None:
        raise AuthenticationError(f"{name!r} is no longer an approver")
    current = load_trust(ws)
    if len(current.roots) > 1:
        raise ApprovalError(f"control.db holds {len(current.roots)} self-certified root admins "
                            f"({', '.join(current.roots)}); nothing is allowed until it is "
                            "repaired: run `layout-advisor audit verify --pin FINGERPRINT`")
    role = current.roles.get(name)
    if role is None:
        raise ApprovalError(f"{name!r} may not act: {current.uncertified.get(name, 'unknown')}")
    return name, role
