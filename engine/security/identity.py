"""Who is acting: approvers' secrets (Argon2id), sign-in, sessions and the failure delay.

An approver signs in with a name and a secret (:func:`authenticate`) and gets a
:class:`Identity` holding a random session token; only the token's SHA-256 is stored, with
an expiry pushed forward on each use (a session ends after ``session_idle_s`` seconds of
inactivity). Every guarded call hands the identity back and the gate resolves it again
(:func:`resolve`), so an expired session, a removed approver or a changed role takes effect
at once, and a name typed into a form or a command line is never enough.

Secrets are hashed with Argon2id (argon2-cffi's ``PasswordHasher``, RFC 9106 parameters);
nothing is stored in clear. A wrong secret is audited (``sign-in-failed``) and answered
after a delay that doubles with each failure since the last successful sign-in
(:func:`failure_delay`), so guessing from a script is slow.

A sign-in through OpenID Connect (:func:`engine.security.oidc.sign_in_oidc`) ends in the
same kind of session (:func:`open_session`).

Every function takes the workspace and uses its security store
(:attr:`engine.workspace.Workspace.security`) and settings.
"""

from __future__ import annotations

import functools
import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from engine.core.errors import ApprovalError, AuthenticationError, InvalidParameterError
from engine.security.sessions import token_hash

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
    """

    name: str
    role: str
    token: str = field(repr=False)


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


def open_session(ws: "Workspace", name: str, role: str, how: str | None) -> Identity:
    """A fresh session of ``name`` (expiring after ``session_idle_s`` seconds unused),
    audited as ``sign-in`` with ``how`` as its reason."""
    security = ws.security
    token = secrets.token_urlsafe(32)
    security.sessions.create(token_hash(token), name, time.time() + ws.settings.session_idle_s)
    security.audit.record(name, "sign-in", how)
    return Identity(name=name, role=role, token=token)


def authenticate(ws: "Workspace", name: str, secret: str) -> Identity:
    """Sign ``name`` in with ``secret``; AuthenticationError after the growing delay if
    they do not match (the same message whether or not the name exists)."""
    security = ws.security
    name = check_name(name)
    row = security.approvers.approver(name)
    if row is None or not _secret_matches(row["secret_hash"], secret):
        security.audit.record(name, "sign-in-failed", "wrong name or secret")
        failures = security.audit.failures_since_sign_in(name, FAILURE_WINDOW_S)
        time.sleep(failure_delay(failures, ws.settings.auth_delay_s))
        if not security.approvers.approvers():  # a fresh workspace (or image): how to begin
            raise AuthenticationError(f"wrong name or secret for {name!r}: no approver exists "
                                      "yet; create the first admin with `layout-advisor "
                                      "approvers add NAME --admin`")
        raise AuthenticationError(f"wrong name or secret for {name!r} (failed sign-ins are "
                                  "audited and each makes the next answer slower)")
    if _HASHER.check_needs_rehash(row["secret_hash"]):
        security.approvers.rehash_secret(name, _HASHER.hash(secret))
    return open_session(ws, name, str(row["role"]), None)


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
    return name, str(row["role"])
