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

OpenID Connect (the dashboard's ``st.login``): the provider authenticates the person and
Authlib has checked the ID token's signature, issuer, audience and expiry; what remains is
who that person is here. :func:`sign_in_oidc` maps the token's claims to an approver an
admin linked beforehand (:meth:`ControlStore.link_oidc`): by issuer and subject (the stable
identifier OIDC Core section 2 defines), or by issuer and email when the provider asserts
``email_verified`` (section 5.1). The issuer is part of every link, so an account of another
provider with the same subject or email maps to nobody. An account linked to nobody may read
but gets no identity, so the gate refuses its changes.
"""

from __future__ import annotations

import functools
import hashlib
import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from engine.core.errors import ApprovalError, AuthenticationError, InvalidParameterError
from engine.plans.store import ControlStore

if TYPE_CHECKING:
    from engine.core.config import Settings

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


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


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


def authenticate(settings: "Settings", name: str, secret: str,
                 control: ControlStore | None = None) -> Identity:
    """Sign ``name`` in with ``secret``; AuthenticationError after the growing delay if
    they do not match (the same message whether or not the name exists)."""
    control = control or ControlStore(settings)
    name = check_name(name)
    row = control.approver(name)
    if row is None or not _secret_matches(row["secret_hash"], secret):
        control.record(name, "sign-in-failed", "wrong name or secret")
        failures = control.failures_since_sign_in(name, FAILURE_WINDOW_S)
        time.sleep(failure_delay(failures, settings.auth_delay_s))
        if not control.approvers():  # a fresh workspace (or image): say how to begin
            raise AuthenticationError(f"wrong name or secret for {name!r}: no approver exists "
                                      "yet; create the first admin with `layout-advisor "
                                      "approvers add NAME --admin`")
        raise AuthenticationError(f"wrong name or secret for {name!r} (failed sign-ins are "
                                  "audited and each makes the next answer slower)")
    if _HASHER.check_needs_rehash(row["secret_hash"]):
        control.rehash_secret(name, _HASHER.hash(secret))
    token = secrets.token_urlsafe(32)
    control.create_session(_token_hash(token), name, time.time() + settings.session_idle_s)
    control.record(name, "sign-in", None)
    return Identity(name=name, role=str(row["role"]), token=token)


def sign_out(settings: "Settings", identity: Identity) -> None:
    """End the session at once (the CLI does after its one command)."""
    ControlStore(settings).end_session(_token_hash(identity.token))


def check_issuer(issuer: str | None) -> str:
    """An OIDC issuer as links store it: an http(s) URL, without a trailing slash (so
    ``https://id.example.com/`` and ``https://id.example.com`` link alike).

    Example:
    >>> check_issuer(" https://accounts.google.com/ ")
    'https://accounts.google.com'
    >>> check_issuer("accounts.google.com")
    Traceback (most recent call last):
    ...
    engine.core.errors.InvalidParameterError: OIDC issuer 'accounts.google.com' must be an https:// (or http://) URL, as in the provider's discovery document
    """
    text = (issuer or "").strip().rstrip("/")
    scheme, sep, host = text.partition("://")
    if not sep or scheme not in ("https", "http") or not host or not text.isprintable():
        raise InvalidParameterError(f"OIDC issuer {issuer!r} must be an https:// (or http://) "
                                    "URL, as in the provider's discovery document")
    return text


def oidc_key(subject: str | None = None, email: str | None = None) -> tuple[str, str]:
    """``(kind, value)`` of an OIDC link: ``("sub", subject)`` or ``("email", lowercase
    email)``; exactly one of the two must be given.

    Example:
    >>> oidc_key(email="Alice@Example.COM")
    ('email', 'alice@example.com')
    """
    if (subject is None) == (email is None):
        raise InvalidParameterError("link by an OIDC subject or by an email, not both "
                                    "and not neither")
    if subject is not None:
        value, kind = subject.strip(), "sub"
    else:
        value, kind = (email or "").strip().lower(), "email"
        if "@" not in value:
            raise InvalidParameterError(f"OIDC email {email!r} is not an email address")
    if not value or len(value) > 255 or not value.isprintable():
        raise InvalidParameterError(f"OIDC {kind} {value!r} must be 1 to 255 printable "
                                    "characters")
    return kind, value


def _claim(claims: Mapping[str, Any], key: str) -> str:
    value = claims.get(key)
    if not isinstance(value, str) or not value.strip():
        raise AuthenticationError(f"the identity provider's token has no {key!r} claim; "
                                  "the dashboard cannot tell who signed in")
    return value.strip()


def _email_verified(claims: Mapping[str, Any]) -> bool:
    """OIDC Core 5.1 says boolean; some providers send the string "true"."""
    flag = claims.get("email_verified")
    return flag is True or (isinstance(flag, str) and flag.strip().lower() == "true")


def sign_in_oidc(settings: "Settings", claims: Mapping[str, Any],
                 control: ControlStore | None = None) -> Identity | None:
    """The approver linked to the OIDC account in ``claims`` (an ID token's: ``iss``,
    ``sub``, optionally ``email``/``email_verified``), signed in with a fresh session;
    None (audited ``sign-in-unlinked``) when no approver is linked: that person may read only.

    A link by subject wins over one by email. An email link applies only if the provider
    asserts ``email_verified``; otherwise the sign-in is refused and audited.
    """
    control = control or ControlStore(settings)
    issuer, subject = check_issuer(_claim(claims, "iss")), _claim(claims, "sub")
    name, how = control.oidc_approver(issuer, "sub", subject), "subject"
    email = claims.get("email")
    if name is None and isinstance(email, str) and email.strip():
        kind, value = oidc_key(email=email)
        linked = control.oidc_approver(issuer, kind, value)
        if linked is not None and not _email_verified(claims):
            control.record(linked, "sign-in-failed",
                           f"OIDC email {value} of {issuer} is not verified by the provider")
            raise AuthenticationError(f"{issuer} does not say that {value} is verified; an "
                                      "approver linked by email needs a verified email (link "
                                      "the subject instead)")
        name, how = linked, "verified email"
    if name is None:
        control.record(f"oidc:{email or subject}", "sign-in-unlinked",
                       f"subject {subject} of {issuer}: no approver linked; read-only")
        return None
    row = control.approver(name)
    if row is None:  # pragma: no cover - removing an approver removes its links
        raise AuthenticationError(f"{name!r} is no longer an approver")
    token = secrets.token_urlsafe(32)
    control.create_session(_token_hash(token), name, time.time() + settings.session_idle_s)
    control.record(name, "sign-in", f"OIDC {how} of {issuer}")
    return Identity(name=name, role=str(row["role"]), token=token)


def resolve(control: ControlStore, settings: "Settings", actor: object) -> tuple[str, str]:
    """``(name, current role)`` of a live session; ApprovalError for anything else (a bare
    name, an expired session, a removed approver)."""
    if not isinstance(actor, Identity):
        hint = ("sign in first: `--as NAME` on the command line, or "
                "api.authenticate(settings, name, secret) in Python")
        if actor is None or (isinstance(actor, str) and not actor.strip()):
            raise ApprovalError(f"an approver is required; {hint}")
        raise ApprovalError(f"{actor!r} is not signed in; {hint}")
    name = control.touch_session(_token_hash(actor.token), settings.session_idle_s)
    if name is None or name != actor.name:
        raise AuthenticationError(f"the session of {actor.name!r} has expired; sign in again")
    row = control.approver(name)
    if row is None:
        raise AuthenticationError(f"{name!r} is no longer an approver")
    return name, str(row["role"])
