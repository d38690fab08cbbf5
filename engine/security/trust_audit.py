"""What ``audit verify`` checks beyond the hash chain: approvers, policy and plan signatures.

The hash chain (:mod:`engine.security.audit`) shows an edited, inserted or deleted log
entry; a user who can write ``control.db`` can still append well-chained entries and edit
the other tables. These checks look at what such a user would need to forge:

- every approver's certificate verifies up to the root admin (:mod:`engine.security.certs`),
  whose key fingerprint must equal ``--pin`` when given (the one check that also catches a
  wholesale rewrite of the approvers table and the log);
- the approver changes in the log (``approver-add``, ``approver-remove``), replayed,
  give the approvers table's names and roles;
- the stored security policy is signed by a certified admin;
- every approved or running plan carries enough valid approval signatures over its current
  proposal, and no plan's signature was broken by a later change of the plan.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.security.policy import PolicyStore, stored_policy
from engine.security.signing import (
    all_signatures, check_signatures, effective_policy, eligible_approvers, load_trust,
    needed_approvals, plan_cost,
)

if TYPE_CHECKING:
    from engine.workspace import Workspace

#: plan statuses that can still run, so must carry enough valid approvals
RUNNABLE = ("approved", "running")


def replay_approvers(entries: list[dict[str, Any]]) -> dict[str, str]:
    """Names and roles that the log's approver changes leave, in order.

    Example:
    >>> replay_approvers([{"action": "approver-add", "reason": "root as admin"},
    ...                   {"action": "approver-add", "reason": "bob as approver"},
    ...                   {"action": "approver-remove", "reason": "bob"}])
    {'root': 'admin'}
    """
    names: dict[str, str] = {}
    for e in entries:
        reason = str(e.get("reason") or "")
        if e["action"] == "approver-add":
            name, _sep, role = reason.rpartition(" as ")
            names[name] = role
        elif e["action"] == "approver-remove":
            names.pop(reason, None)
    return names


def verify_trust(ws: "Workspace", pin: str | None, report: dict[str, Any]) -> list[str]:
    """The problems of the checks above; sets ``report["root"]`` (the root admin's key
    fingerprint, None unless exactly one root)."""
    security = ws.security
    rows = security.approvers.key_rows()
    unpinned = load_trust(ws)
    report["root"] = unpinned.root_fingerprint
    current = load_trust(ws, pin=pin) if pin else unpinned
    problems = current.problems()
    if pin and not current.roots:
        problems.append(f"no root admin has the pinned key fingerprint {pin.strip().lower()} "
                        f"(the root's is {unpinned.root_fingerprint or 'missing'}): the "
                        "approvers table was replaced")
    logged = replay_approvers(security.audit.entries())
    table = {str(r["name"]): str(r["role"]) for r in rows}
    for name in sorted(set(table) - set(logged)):
        problems.append(f"approver {name!r} ({table[name]}) is in the approvers table but the "
                        "audit log never added it")
    for name in sorted(set(logged) - set(table)):
        problems.append(f"approver {name!r} was added in the audit log but is missing from "
                        "the approvers table (deleted without an audit entry)")
    for name in sorted(set(table) & set(logged)):
        if table[name] != logged[name]:
            problems.append(f"approver {name!r} is {table[name]} in the approvers table but the "
                            f"audit log added it as {logged[name]}")
    _policy, why = stored_policy(PolicyStore(security.db).row(), current)
    if why:
        problems.append(why)
    policy = effective_policy(ws, current)
    plans, sigs = all_signatures(security.db)
    for row in plans:
        signers = check_signatures(row, sigs.get(int(row["id"]), []), current)
        problems += signers.problems
        if row["status"] not in RUNNABLE:
            continue
        needed = needed_approvals(policy, *plan_cost(row), signers.proposer is not None)
        valid = eligible_approvers(signers, policy.separation_of_duties)
        if len(valid) < needed:
            problems.append(f"plan {row['id']} is {row['status']} but carries {len(valid)} valid "
                            f"approval signature(s) of the {needed} it needs")
    return problems

