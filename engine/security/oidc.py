"""OpenID Connect: links from a provider's accounts to approvers, and sign-in through them.

The dashboard's ``st.login`` lets the provider authenticate the person, and Authlib has
checked the ID token's signature, issuer, audience and expiry; what remains is who that
person is here. :func:`sign_in_oidc` maps the token's claims to an approver an admin linked
beforehand (:meth:`OidcLinks.link`): by issuer and subject (the stable identifier OIDC Core
section 2 defines), or by issuer and email when the provider asserts ``email_verified``
(section 5.1). The issuer is part of every link, so an account of another provider with the
same subject or email maps to nobody. An account linked to nobody may read but gets no
identity, so the gate refuses its changes. Links are audited (``approver-link``,
``approver-unlink``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from engine.core.errors import ApprovalError, AuthenticationError, InvalidParameterError
from engine.security.chain import append_entry
from engine.security.db import utc_now
from engine.security.identity import Identity, open_session

if TYPE_CHECKING:
    from engine.security.db import ControlDB
    from engine.workspace import Workspace


class OidcLinks:
    """The OIDC links (an issuer and a subject, or an issuer and a verified email, to an
    approver's name) of one control database."""

    def __init__(self, db: "ControlDB") -> None:
        self.db = db

    def link(self, name: str, issuer: str, kind: str, value: str, by: str) -> None:
        """Link the OIDC account (``issuer``, ``kind`` "sub" or "email", ``value``) to the
        approver ``name`` and audit it (``approver-link``); one account maps to one approver."""
        now = utc_now()
        with self.db.transaction() as conn:
            if conn.execute("SELECT 1 FROM approvers WHERE name = ?", (name,)).fetchone() is None:
                raise ApprovalError(f"no approver named {name!r}")
            row = conn.execute("SELECT name FROM oidc_links WHERE issuer = ? AND kind = ? AND "
                               "value = ?", (issuer, kind, value)).fetchone()
            if row is not None:
                raise ApprovalError(f"the OIDC {kind} {value!r} of {issuer} is linked to "
                                    f"{row['name']!r} already; unlink it first")
            conn.execute("INSERT INTO oidc_links(issuer, kind, value, name, created_at, "
                         "created_by) VALUES (?,?,?,?,?,?)", (issuer, kind, value, name, now, by))
            append_entry(conn, None, by, "approver-link", None, None,
                         f"{name} to {kind} {value} of {issuer}", now)

    def unlink(self, issuer: str, kind: str, value: str, by: str) -> str:
        """Remove a link (audited ``approver-unlink``); returns the approver it named."""
        now = utc_now()
        with self.db.transaction() as conn:
            row = conn.execute("SELECT name FROM oidc_links WHERE issuer = ? AND kind = ? AND "
                               "value = ?", (issuer, kind, value)).fetchone()
            if row is None:
                raise ApprovalError(f"no approver is linked to the OIDC {kind} {value!r} of "
                                    f"{issuer}")
            conn.execute("DELETE FROM oidc_links WHERE issuer = ? AND kind = ? AND value = ?",
                         (issuer, kind, value))
            append_entry(conn, None, by, "approver-unlink", None, None,
                         f"{row['name']} from {kind} {value} of {issuer}", now)
        return str(row["name"])

    def approver(self, issuer: str, kind: str, value: str) -> str | None:
        """The approver linked to this OIDC account, None if none is."""
        with self.db.connect() as conn:
            row = conn.execute("SELECT name FROM oidc_links WHERE issuer = ? AND kind = ? AND "
                               "value = ?", (issuer, kind, value)).fetchone()
        return str(row["name"]) if row else None

    def links(self) -> list[dict[str, Any]]:
        """Every link (``name``, ``issuer``, ``kind``, ``value``, ``created_at``,
        ``created_by``), by approver."""
        with self.db.connect() as conn:
            rows = conn.execute("SELECT name, issuer, kind, value, created_at, created_by "
                                "FROM oidc_links ORDER BY name, issuer, kind, value").fetchall()
        return [dict(r) for r in rows]


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


def sign_in_oidc(ws: "Workspace", claims: Mapping[str, Any]) -> Identity | None:
    """The approver linked to the OIDC account in ``claims`` (an ID token's: ``iss``,
    ``sub``, optionally ``email``/``email_verified``), signed in with a fresh session;
    None (audited ``sign-in-unlinked``) when no approver is linked: that person may read only.

    A link by subject wins over one by email. An email link applies only if the provider
    asserts ``email_verified``; otherwise the sign-in is refused and audited.
    """
    security = ws.security
    issuer, subject = check_issuer(_claim(claims, "iss")), _claim(claims, "sub")
    name, how = security.oidc.approver(issuer, "sub", subject), "subject"
    email = claims.get("email")
    if name is None and isinstance(email, str) and email.strip():
        kind, value = oidc_key(email=email)
        linked = security.oidc.approver(issuer, kind, value)
        if linked is not None and not _email_verified(claims):
            security.audit.record(linked, "sign-in-failed",
                                  f"OIDC email {value} of {issuer} is not verified by the "
                                  "provider")
            raise AuthenticationError(f"{issuer} does not say that {value} is verified; an "
                                      "approver linked by email needs a verified email (link "
                                      "the subject instead)")
        name, how = linked, "verified email"
    if name is None:
        security.audit.record(f"oidc:{email or subject}", "sign-in-unlinked",
                              f"subject {subject} of {issuer}: no approver linked; read-only")
        return None
    row = security.approvers.approver(name)
    if row is None:  # pragma: no cover - removing an approver removes its links
        raise AuthenticationError(f"{name!r} is no longer an approver")
    return open_session(ws, name, str(row["role"]), f"OIDC {how} of {issuer}")
