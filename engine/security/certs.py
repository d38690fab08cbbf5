"""Approver certificates: who is an approver is what an admin's signature says.

A row in the ``approvers`` table grants nothing by itself: anyone who can write
``control.db`` can insert one. An approver's role counts only when its certificate verifies:
an Ed25519 signature (:mod:`engine.security.keys`) over (name, role, public key, certifier)
by an admin whose own certificate verifies, up to the first admin, whose certificate is
signed by itself (the root). The root's key fingerprint is what ``audit verify --pin``
compares with a copy kept outside the workspace; a replaced root is seen there.

Certificates are issued when an admin adds an approver or resets its secret
(:mod:`engine.api.security`), and by ``approvers certify`` for an approver whose key was made
at its first sign-in after the upgrade (a store made before signed approvals). In such a
store, while no approver holds a certificate at all, the first admin to sign in becomes the
root.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from engine.security.keys import fingerprint, message, sign, verify

#: the purpose tag of a certificate's signed message
CERT_PURPOSE = "approver-certificate"


def cert_message(name: str, role: str, public_key: str, certified_by: str) -> bytes:
    """What a certificate signs: the approver's name, role and public key, and who
    certifies them."""
    return message(CERT_PURPOSE, name, role, public_key, certified_by)


def issue(certifier_key: Ed25519PrivateKey, name: str, role: str, public_key: str,
          certified_by: str) -> str:
    """A certificate (signature hex) of ``name`` as ``role`` with ``public_key``, by the
    admin ``certified_by`` holding ``certifier_key`` (``certified_by == name`` for the root)."""
    return sign(certifier_key, cert_message(name, role, public_key, certified_by))


@dataclass(frozen=True)
class Trust:
    """The approvers whose certificates verify, worked out from the approvers table.

    ``roles`` and ``keys`` hold only certified approvers; ``roots`` the self-certified
    admins (one in a sound store; with a pin, only the pinned one counts); ``uncertified``
    maps every other approver to the reason; ``legacy`` is True when no approver holds a
    certificate (a store made before signed approvals, not migrated yet).
    """

    roles: dict[str, str] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)
    roots: tuple[str, ...] = ()
    root_keys: tuple[str, ...] = ()
    uncertified: dict[str, str] = field(default_factory=dict)
    legacy: bool = False

    @property
    def root_fingerprint(self) -> str | None:
        """The root admin's key fingerprint (None unless exactly one root)."""
        return fingerprint(self.root_keys[0]) if len(self.root_keys) == 1 else None

    def problems(self) -> list[str]:
        """What ``audit verify`` reports about the approvers table."""
        out = [f"approver {name!r}: {why}" for name, why in sorted(self.uncertified.items())]
        if len(self.roots) > 1:
            out.append(f"{len(self.roots)} self-certified root admins ({', '.join(self.roots)});"
                       " only the first admin is one: an approver was written into control.db")
        return out


def _chain(name: str, rows: Mapping[str, Mapping[str, Any]], memo: dict[str, str | None],
           stack: frozenset[str]) -> str | None:
    """None if ``name``'s certificate chain verifies up to a root; else the reason."""
    if name in memo:
        return memo[name]
    row = rows[name]
    pk, cert, by = row.get("public_key"), row.get("cert"), row.get("certified_by")
    if not pk:
        why: str | None = "has no signing key yet (it gets one at the next sign-in)"
    elif not cert or not by:
        why = (f"its signing key is not certified by an admin (`layout-advisor approvers "
               f"certify {name} --as ADMIN`)")
    elif by == name:
        ok = row.get("role") == "admin" and verify(pk, cert, cert_message(
            name, str(row.get("role")), pk, by))
        why = None if ok else "its self-signed certificate does not verify (forged or edited)"
    elif by not in rows or by in stack:
        why = f"its certificate names {by!r}, who is not a certified admin"
    else:
        parent = _chain(by, rows, memo, stack | {name})
        parent_row = rows[by]
        if parent is not None or parent_row.get("role") != "admin":
            why = f"its certificate names {by!r}, who is not a certified admin"
        elif not verify(parent_row.get("public_key"), cert,
                        cert_message(name, str(row.get("role")), pk, by)):
            why = (f"its certificate does not verify with {by!r}'s key (its role, key or name "
                   "was edited, or the row was written into control.db)")
        else:
            why = None
    memo[name] = why
    return why


def trust(rows: Iterable[Mapping[str, Any]], pin: str | None = None) -> Trust:
    """The :class:`Trust` of the approvers ``rows`` (with ``public_key``, ``cert``,
    ``certified_by``, ``role``). With ``pin`` (a root fingerprint), only a chain up to the
    root with that fingerprint counts."""
    by_name = {str(r["name"]): dict(r) for r in rows}
    memo: dict[str, str | None] = {}
    for name in by_name:
        _chain(name, by_name, memo, frozenset())
    roots = [n for n in by_name if memo[n] is None and by_name[n].get("certified_by") == n]
    if pin is not None:
        pin = pin.strip().lower()
        wrong = [n for n in roots if fingerprint(by_name[n]["public_key"]) != pin]
        for n in wrong:
            memo[n] = (f"its root key fingerprint {fingerprint(by_name[n]['public_key'])} is "
                       f"not the pinned {pin}")
        roots = [n for n in roots if n not in wrong]
        memo = {n: (why if why is not None or _root_of(n, by_name) in roots
                    else "its certificate chain ends at a root that is not the pinned one")
                for n, why in memo.items()}
    certified = {n for n, why in memo.items() if why is None}
    return Trust(roles={n: str(by_name[n]["role"]) for n in certified},
                 keys={n: str(by_name[n]["public_key"]) for n in certified},
                 roots=tuple(sorted(roots)),
                 root_keys=tuple(str(by_name[n]["public_key"]) for n in sorted(roots)),
                 uncertified={n: why for n, why in memo.items() if why is not None},
                 legacy=not any(r.get("cert") for r in by_name.values()))


def _root_of(name: str, rows: Mapping[str, Mapping[str, Any]]) -> str | None:
    seen = set()
    while name in rows and name not in seen:
        seen.add(name)
        by = rows[name].get("certified_by")
        if by == name:
            return name
        name = str(by)
    return None
