"""The security policy: set by an admin in the workspace, tightened (never loosened) locally.

Separation of duties, the dual-approval thresholds and the failed-sign-in delay restrain the
very people who run the commands, so the acting process's environment, configuration file
and flags cannot switch them off. The policy an admin sets (``layout-advisor security set
... --as ADMIN``) is stored in ``control.db``, signed with the admin's key
(:mod:`engine.security.keys`) and audited (``policy-set``); the policy in force is the
stricter, setting by setting, of that and the acting process's settings
(:func:`effective_policy`): a ``LAYOUT_ADVISOR_DUAL_APPROVAL_BYTES=0`` or
``separation_of_duties = false`` can only make a rule stricter than the stored one.

Until an admin sets one, the stored policy is :data:`DEFAULT_POLICY`. A stored policy whose
signature does not verify with a certified admin's key (edited into ``control.db``) is
ignored in favour of :data:`DEFAULT_POLICY`, and ``audit verify`` reports it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from typing import TYPE_CHECKING, Any, Mapping

from engine.core.errors import InvalidParameterError
from engine.security.chain import append_entry
from engine.security.db import utc_now
from engine.security.keys import message, sign, verify

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from engine.core.config import Settings
    from engine.security.certs import Trust
    from engine.security.db import ControlDB

#: the purpose tag of a stored policy's signed message
POLICY_PURPOSE = "security-policy"


@dataclass(frozen=True, slots=True)
class SecurityPolicy:
    """The rules that restrain approvers (units in the names; 0 disables a threshold)."""

    separation_of_duties: bool = True
    dual_approval_bytes: int = 100 * 1024**3
    dual_approval_cpu_seconds: float = 0.0
    auth_delay_s: float = 1.0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


#: the stored policy of a workspace where no admin set one
DEFAULT_POLICY = SecurityPolicy()
POLICY_KEYS = tuple(f.name for f in fields(SecurityPolicy))


def _lower_threshold(a: float, b: float) -> float:
    """The stricter of two thresholds where 0 means off: the smaller positive one."""
    live = [x for x in (a, b) if x > 0]
    return min(live) if live else 0


def stricter(a: SecurityPolicy, b: SecurityPolicy) -> SecurityPolicy:
    """Setting by setting, the stricter of two policies.

    Example:
    >>> s = stricter(SecurityPolicy(), SecurityPolicy(False, 0, 0.0, 0.0))
    >>> (s.separation_of_duties, s.dual_approval_bytes, s.auth_delay_s)
    (True, 107374182400, 1.0)
    >>> off, five = SecurityPolicy(dual_approval_bytes=0), SecurityPolicy(dual_approval_bytes=5)
    >>> stricter(off, five).dual_approval_bytes
    5
    """
    return SecurityPolicy(
        separation_of_duties=a.separation_of_duties or b.separation_of_duties,
        dual_approval_bytes=int(_lower_threshold(a.dual_approval_bytes, b.dual_approval_bytes)),
        dual_approval_cpu_seconds=float(_lower_threshold(a.dual_approval_cpu_seconds,
                                                         b.dual_approval_cpu_seconds)),
        auth_delay_s=max(a.auth_delay_s, b.auth_delay_s))


def from_settings(settings: "Settings") -> SecurityPolicy:
    """The acting process's view (defaults < file < environment < flags)."""
    return SecurityPolicy(**{k: getattr(settings, k) for k in POLICY_KEYS})


def check_changes(changes: Mapping[str, Any]) -> dict[str, Any]:
    """``changes`` as policy values, refusing unknown keys and out-of-range numbers."""
    out: dict[str, Any] = {}
    for key, value in changes.items():
        if key not in POLICY_KEYS:
            raise InvalidParameterError(f"unknown security setting {key!r}; one of "
                                        f"{', '.join(POLICY_KEYS)}")
        if key == "separation_of_duties":
            out[key] = bool(value)
            continue
        number = float(value)
        if not number >= 0 or number == float("inf"):
            raise InvalidParameterError(f"security setting {key!r} must be a finite number "
                                        f">= 0, not {value!r}")
        out[key] = int(number) if key == "dual_approval_bytes" else number
    return out


class PolicyStore:
    """The stored, signed security policy of one control database."""

    def __init__(self, db: "ControlDB") -> None:
        self.db = db

    def row(self) -> dict[str, Any] | None:
        with self.db.connect() as conn:
            row = conn.execute("SELECT * FROM security_policy WHERE id = 1").fetchone()
        return dict(row) if row else None

    def set(self, policy: SecurityPolicy, key: "Ed25519PrivateKey", by: str) -> None:
        """Store ``policy`` signed by the admin ``by`` (audited ``policy-set``)."""
        now = utc_now()
        body = json.dumps(policy.to_json(), sort_keys=True, separators=(",", ":"))
        signature = sign(key, message(POLICY_PURPOSE, body, by, now))
        with self.db.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO security_policy(id, body, set_by, set_at,"
                         " signature) VALUES (1,?,?,?,?)", (body, by, now, signature))
            append_entry(conn, None, by, "policy-set", None, None, body, now)


def stored_policy(row: Mapping[str, Any] | None,
                  trust: "Trust") -> tuple[SecurityPolicy, str | None]:
    """The stored policy and None, or :data:`DEFAULT_POLICY` and the reason the stored row
    is not trusted (not signed by a certified admin)."""
    if row is None:
        return DEFAULT_POLICY, None
    by = str(row["set_by"])
    ok = trust.roles.get(by) == "admin" and verify(
        trust.keys.get(by), row["signature"], message(POLICY_PURPOSE, row["body"], by,
                                                      row["set_at"]))
    if not ok:
        return DEFAULT_POLICY, (f"the stored security policy is not signed by a certified "
                                f"admin (it names {by!r}); the defaults apply")
    try:
        values = json.loads(row["body"])
        return replace(DEFAULT_POLICY, **check_changes(values)), None
    except (ValueError, TypeError, InvalidParameterError):
        return DEFAULT_POLICY, "the stored security policy cannot be read; the defaults apply"
