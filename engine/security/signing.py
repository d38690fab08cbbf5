"""Signed proposals and approvals: each bound to the signer's key and to the exact plan.

A signed-in proposer signs the plan it stores (``propose``) and every approver signs its
approval (``approve``), with the private key its secret unseals at sign-in
(:mod:`engine.security.keys`). The signature covers (purpose, plan id, table, base snapshot,
proposal digest, signer), where the proposal digest is the SHA-256 of the plan's canonical
table, base snapshot, policy, parameters and proposal (groups with their partitions, layout
and keys, and the estimates that decide dual approval) as stored: any later change to the
plan breaks every signature on it. A signature counts only when the signer's key is
certified (:mod:`engine.security.certs`) at the time it is checked, which the run gate
(:func:`engine.plans.approval.start`) and ``audit verify`` both do.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from engine.core.errors import ApprovalError
from engine.security.certs import Trust, trust
from engine.security.db import utc_now
from engine.security.keys import canonical_digest, message, sign, verify
from engine.security.policy import (
    PolicyStore, SecurityPolicy, from_settings, stored_policy, stricter,
)

if TYPE_CHECKING:
    from engine.security.db import ControlDB
    from engine.security.identity import Identity
    from engine.workspace import Workspace

#: the purpose tag of a plan signature's message
PLAN_PURPOSE = "plan-signature"
PROPOSE, APPROVE = "propose", "approve"


def load_trust(ws: "Workspace", pin: str | None = None) -> Trust:
    """Which approvers' certificates verify now (:func:`engine.security.certs.trust`)."""
    return trust(ws.security.approvers.key_rows(), pin=pin)


def effective_policy(ws: "Workspace", current: Trust | None = None) -> SecurityPolicy:
    """The policy in force: the stricter of the admin's stored policy and the acting
    process's settings (:func:`engine.security.policy.stricter`)."""
    stored, _problem = stored_policy(PolicyStore(ws.security.db).row(),
                                     current if current is not None else load_trust(ws))
    return stricter(stored, from_settings(ws.settings))


def proposal_digest(row: Mapping[str, Any]) -> str:
    """SHA-256 of a stored plan's canonical table, base snapshot, policy, parameters and
    proposal (a ``plans`` row)."""
    return canonical_digest({"table": row["table_name"], "base_snapshot": row["base_snapshot"],
                             "policy": row["policy"], "params": json.loads(row["params"]),
                             "proposal": json.loads(row["proposal"])})


def plan_message(kind: str, plan_id: int, table: str, base_snapshot: str, digest: str,
                 name: str) -> bytes:
    """What a plan signature signs."""
    return message(PLAN_PURPOSE, kind, int(plan_id), table, base_snapshot, digest, name)


def _plan_row(db: "ControlDB", plan_id: int) -> dict[str, Any]:
    with db.connect() as conn:
        row = conn.execute("SELECT id, table_name, base_snapshot, policy, params, proposal,"
                           " created_by FROM plans WHERE id = ?", (int(plan_id),)).fetchone()
    if row is None:
        raise ApprovalError(f"no plan {plan_id}")
    return dict(row)


def sign_plan(ws: "Workspace", plan_id: int, identity: "Identity", kind: str) -> None:
    """Sign plan ``plan_id`` as it is stored now, with ``identity``'s unsealed key."""
    key = identity.signing_key
    if key is None:
        raise ApprovalError(f"{kind == APPROVE and 'approving' or 'proposing'} signs plan "
                            f"{plan_id} with the signing key of {identity.name!r}, which only "
                            "that approver's secret unlocks: sign in with the secret, or "
                            "unlock the key with it (an identity-provider sign-in does not)")
    db = ws.security.db
    row = _plan_row(db, plan_id)
    digest = proposal_digest(row)
    signature = sign(key, plan_message(kind, plan_id, row["table_name"], row["base_snapshot"],
                                       digest, identity.name))
    with db.transaction() as conn:
        conn.execute("INSERT OR REPLACE INTO signatures(plan_id, name, kind, digest,"
                     " base_snapshot, signature, signed_at) VALUES (?,?,?,?,?,?,?)",
                     (int(plan_id), identity.name, kind, digest, row["base_snapshot"],
                      signature, utc_now()))


@dataclass(frozen=True)
class Signers:
    """Who signed a plan as it is stored now: ``proposer`` (None if the proposer did not
    sign in, or its signature does not verify), ``approvers`` (valid approval signatures,
    by name), and ``problems`` (signatures that no longer verify, and why)."""

    proposer: str | None
    approvers: tuple[str, ...]
    created_by: str | None
    problems: list[str] = field(default_factory=list)
    changed: bool = False


def plan_signers(ws: "Workspace", plan_id: int, current: Trust | None = None) -> Signers:
    """The valid signatures on plan ``plan_id`` against its current digest and the
    currently certified keys."""
    db = ws.security.db
    row = _plan_row(db, plan_id)
    with db.connect() as conn:
        sigs = [dict(r) for r in conn.execute(
            "SELECT * FROM signatures WHERE plan_id = ? ORDER BY signed_at", (int(plan_id),))]
    return check_signatures(row, sigs, current if current is not None else load_trust(ws))


def check_signatures(row: Mapping[str, Any], sigs: list[Mapping[str, Any]],
                     current: Trust) -> Signers:
    """:func:`plan_signers` on a plans ``row`` and its ``signatures`` rows."""
    digest = proposal_digest(row)
    plan_id, table, base = int(row["id"]), str(row["table_name"]), str(row["base_snapshot"])
    proposer, approvers, problems, changed = None, [], [], False
    for sig in sigs:
        name, kind = str(sig["name"]), str(sig["kind"])
        key = current.keys.get(name)
        if key is None:
            problems.append(f"plan {plan_id}: the {kind} signature of {name!r} is not by a "
                            "certified approver")
            continue
        if verify(key, sig["signature"], plan_message(kind, plan_id, table, base, digest, name)):
            if kind == PROPOSE and name == row["created_by"]:
                proposer = name
            elif kind == APPROVE and current.roles.get(name) in ("approver", "admin"):
                approvers.append(name)
            continue
        if sig["digest"] != digest and verify(key, sig["signature"], plan_message(
                kind, plan_id, table, str(sig["base_snapshot"]), str(sig["digest"]), name)):
            changed = True
            problems.append(f"plan {plan_id}: its proposal changed after {name!r} signed it "
                            f"({kind}); the signed proposal digest is {sig['digest'][:16]}..., "
                            f"the stored one {digest[:16]}...")
        else:
            problems.append(f"plan {plan_id}: the {kind} signature of {name!r} does not verify "
                            "(forged or edited)")
    return Signers(proposer, tuple(dict.fromkeys(approvers)), row.get("created_by"), problems,
                   changed)


def all_signatures(db: "ControlDB") -> tuple[list[dict[str, Any]], dict[int, list[dict]]]:
    """Every plan row (``id``, ``status``, ...) and the signatures of each, for the audit."""
    with db.connect() as conn:
        plans = [dict(r) for r in conn.execute(
            "SELECT id, status, table_name, base_snapshot, policy, params, proposal, created_by"
            " FROM plans ORDER BY id")]
        sigs = [dict(r) for r in conn.execute("SELECT * FROM signatures ORDER BY signed_at")]
    by_plan: dict[int, list[dict]] = {}
    for sig in sigs:
        by_plan.setdefault(int(sig["plan_id"]), []).append(sig)
    return plans, by_plan


def needed_approvals(policy: SecurityPolicy, bytes_read: float, cpu_seconds: float,
                     proposer_signed: bool) -> int:
    """Distinct approvals a plan needs: 2 when its estimated read or cost passes a
    dual-approval threshold, or when separation of duties holds and its proposer did not
    sign in (nobody knows who proposed it, so one approver could be approving their own
    proposal); else 1.

    Example:
    >>> needed_approvals(SecurityPolicy(), 10.0, 0.0, proposer_signed=True)
    1
    >>> needed_approvals(SecurityPolicy(), 10.0, 0.0, proposer_signed=False)
    2
    """
    big = ((policy.dual_approval_bytes > 0 and bytes_read > policy.dual_approval_bytes)
           or (policy.dual_approval_cpu_seconds > 0
               and cpu_seconds > policy.dual_approval_cpu_seconds))
    unsigned = policy.separation_of_duties and not proposer_signed
    return 2 if big or unsigned else 1


def eligible_approvers(signers: Signers, separation_of_duties: bool) -> tuple[str, ...]:
    """The valid approval signatures that count: under separation of duties, not the
    proposer's (signed, or the name the plan was stored under)."""
    excluded = {signers.proposer, signers.created_by} if separation_of_duties else set()
    return tuple(n for n in signers.approvers if n not in excluded)


def plan_cost(row: Mapping[str, Any]) -> tuple[float, float]:
    """``(estimated bytes read, CPU-seconds)`` of a stored plan's proposal."""
    cost = (json.loads(row["proposal"]) or {}).get("estimated_cost") or {}
    return float(cost.get("bytes_read", 0.0)), float(cost.get("cpu_seconds", 0.0))
