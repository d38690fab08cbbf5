"""``layout-advisor approvers ...``: add, list, remove, passwd, certify, policy, link, unlink,
links.

The first admin is added without signing in, only while no admin exists
(``approvers add NAME --admin``); every later change needs ``--as ADMIN`` (``passwd`` also
lets an approver change their own secret). New secrets are asked twice on a terminal or
read from stdin's first line; the signing-in secret from a prompt or a secret file.

``link NAME --oidc ISSUER SUBJECT`` (or ``--oidc-email ISSUER EMAIL``) lets the person behind
that OpenID Connect account act as NAME in the dashboard after "Sign in with ..."
(``st.login``); an admin's action, audited. ``unlink`` removes a link, ``links`` lists them.

``policy`` shows the security policy (separation of duties, dual approval, the failed
sign-in delay) stored in the workspace and the one in force for this process; with
``--as ADMIN`` and a setting flag it changes the stored one (signed and audited).
``certify NAME`` certifies the signing key an approver got at its first sign-in in a store
made before signed approvals.
"""

from __future__ import annotations

import argparse
from contextlib import nullcontext
from typing import Any

from engine import api
from engine.cli.auth import add_identity_args, read_new_secret, signed_in
from engine.cli.output import add_json_flag, aligned, emit
from engine.core.errors import InvalidParameterError


def _add(args: argparse.Namespace, ws: "api.Workspace") -> int:
    guard = signed_in(args, ws) if args.actor else nullcontext(None)
    with guard as identity:
        secret = read_new_secret(args.name)
        added = api.add_approver(ws, args.name, secret, admin=args.admin, actor=identity)
    emit(args, added, lambda d: f"added {d['role']} {d['name']}")
    return 0


def _remove(args: argparse.Namespace, ws: "api.Workspace") -> int:
    with signed_in(args, ws) as identity:
        api.remove_approver(ws, args.name, identity)
    emit(args, {"name": args.name, "removed": True}, f"removed approver {args.name}")
    return 0


def _passwd(args: argparse.Namespace, ws: "api.Workspace") -> int:
    with signed_in(args, ws) as identity:
        api.change_secret(ws, args.name, read_new_secret(args.name), identity)
    emit(args, {"name": args.name, "changed": True},
         f"secret of {args.name} changed; their sessions ended")
    return 0


def _oidc_target(args: argparse.Namespace) -> dict[str, str]:
    """``{"issuer", "subject"|"email"}`` from ``--oidc ISSUER SUBJECT`` or
    ``--oidc-email ISSUER EMAIL`` (argparse makes them mutually exclusive and required)."""
    if args.oidc:
        return {"issuer": args.oidc[0], "subject": args.oidc[1]}
    return {"issuer": args.oidc_email[0], "email": args.oidc_email[1]}


def _link(args: argparse.Namespace, ws: "api.Workspace") -> int:
    with signed_in(args, ws) as identity:
        linked = api.link_oidc(ws, args.name, actor=identity, **_oidc_target(args))
    emit(args, linked, lambda d: f"linked {d['name']} to the OIDC {d['kind']} {d['value']} of "
                                 f"{d['issuer']}")
    return 0


def _unlink(args: argparse.Namespace, ws: "api.Workspace") -> int:
    with signed_in(args, ws) as identity:
        gone = api.unlink_oidc(ws, actor=identity, **_oidc_target(args))
    emit(args, gone, lambda d: f"unlinked {d['name']} from the OIDC {d['kind']} {d['value']} "
                               f"of {d['issuer']}")
    return 0


def _links_text(rows: list[dict]) -> str:
    if not rows:
        return ("no OIDC links (add one: `layout-advisor approvers link NAME --oidc ISSUER "
                "SUBJECT --as ADMIN`)")
    return aligned(["name", "issuer", "by", "value", "added", "added by"],
                   [[r["name"], r["issuer"], r["kind"], r["value"], r["created_at"],
                     r["created_by"]] for r in rows])


def _add_oidc_target(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--oidc", nargs=2, metavar=("ISSUER", "SUBJECT"),
                       help="the provider's issuer URL and the account's subject (the ID "
                            "token's iss and sub claims)")
    group.add_argument("--oidc-email", nargs=2, metavar=("ISSUER", "EMAIL"),
                       help="the issuer URL and an email the provider marks verified")


def _list_text(rows: list[dict]) -> str:
    if not rows:
        return "no approvers (create the first admin: `layout-advisor approvers add NAME --admin`)"
    return aligned(["name", "role", "added", "by"],
                   [[r["name"], r["role"], r["created_at"], r["created_by"]] for r in rows])


def _certify(args: argparse.Namespace, ws: "api.Workspace") -> int:
    with signed_in(args, ws) as identity:
        done = api.certify_approver(ws, args.name, identity)
    emit(args, done, lambda d: f"certified {d['name']} as {d['role']} (key {d['fingerprint']})")
    return 0


#: ``approvers policy`` flags -> security policy settings
_POLICY_FLAGS = {"separation_of_duties": "--separation-of-duties",
                 "dual_approval_bytes": "--dual-approval-bytes",
                 "dual_approval_cpu_seconds": "--dual-approval-cpu-seconds",
                 "auth_delay_s": "--auth-delay-s"}


def _policy_text(d: dict) -> str:
    def row(p: dict) -> str:
        above = ([f"{p['dual_approval_bytes'] / 1024**3:g} GiB read"] if p["dual_approval_bytes"]
                 else []) + ([f"{p['dual_approval_cpu_seconds']:g} CPU-seconds"]
                             if p["dual_approval_cpu_seconds"] else [])
        return (f"separation of duties {'on' if p['separation_of_duties'] else 'off'}; "
                + (f"two approvers above {' or '.join(above)}" if above
                   else "no dual-approval threshold")
                + f"; failed sign-in delay {p['auth_delay_s']:g} s (doubling)")
    who = f"set by {d['set_by']} at {d['set_at']}" if d["set_by"] else "the defaults"
    lines = [f"stored ({who}): {row(d['stored'])}", f"in force here: {row(d['effective'])}"]
    if d["problem"]:
        lines.append(f"warning: {d['problem']}")
    return "\n".join(lines)


def _policy(args: argparse.Namespace, ws: "api.Workspace") -> int:
    changes = {key: getattr(args, key) for key in _POLICY_FLAGS if getattr(args, key) is not None}
    if "separation_of_duties" in changes:
        changes["separation_of_duties"] = changes["separation_of_duties"] == "on"
    if not changes:
        if args.actor:
            raise InvalidParameterError("approvers policy --as: name at least one of "
                                        + ", ".join(_POLICY_FLAGS.values()) + " to change")
        emit(args, api.security_policy(ws), _policy_text)
        return 0
    if not args.actor:
        raise InvalidParameterError("changing the security policy needs an admin: add --as ADMIN")
    with signed_in(args, ws) as identity:
        done = api.set_security_policy(ws, changes, identity)
    emit(args, done, _policy_text)
    return 0


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number >= 0")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("approvers", help="who may approve, run and administer")
    sub = parser.add_subparsers(dest="approvers_command", metavar="ACTION")
    sub.required = True

    p = sub.add_parser("add", help="add an approver (the secret is asked twice, or read "
                                   "from stdin)")
    p.add_argument("name")
    p.add_argument("--admin", action="store_true",
                   help="role admin: also rollback, gc, drop and approver management")
    add_identity_args(p, required=False, who="admin (not needed for the first admin)")
    add_json_flag(p)
    p.set_defaults(func=_add)

    p = sub.add_parser("list", help="approvers and their roles")
    add_json_flag(p)
    p.set_defaults(func=lambda a, s: emit(a, api.list_approvers(s), _list_text))

    p = sub.add_parser("remove", help="remove an approver (admin)")
    p.add_argument("name")
    add_identity_args(p, who="admin")
    add_json_flag(p)
    p.set_defaults(func=_remove)

    p = sub.add_parser("link", help="let an OpenID Connect account act as an approver in "
                                    "the dashboard (admin)")
    p.add_argument("name")
    _add_oidc_target(p)
    add_identity_args(p, who="admin")
    add_json_flag(p)
    p.set_defaults(func=_link)

    p = sub.add_parser("unlink", help="remove an OpenID Connect link (admin)")
    _add_oidc_target(p)
    add_identity_args(p, who="admin")
    add_json_flag(p)
    p.set_defaults(func=_unlink)

    p = sub.add_parser("links", help="OpenID Connect accounts linked to approvers")
    add_json_flag(p)
    p.set_defaults(func=lambda a, s: emit(a, api.list_oidc_links(s), _links_text))

    p = sub.add_parser("certify", help="certify an approver's signing key made at its first "
                                       "sign-in after an upgrade (admin)")
    p.add_argument("name")
    add_identity_args(p, who="admin")
    add_json_flag(p)
    p.set_defaults(func=_certify)

    p = sub.add_parser("policy", help="show the security policy, or change it (admin): "
                                      "stored in the workspace; the environment and flags of "
                                      "a process may only tighten it")
    p.add_argument("--separation-of-duties", dest="separation_of_duties", choices=("on", "off"),
                   help="may a plan's proposer approve it (on: no)")
    p.add_argument("--dual-approval-bytes", dest="dual_approval_bytes", type=_non_negative,
                   metavar="BYTES", help="plans reading more need two approvers (0: off)")
    p.add_argument("--dual-approval-cpu-seconds", dest="dual_approval_cpu_seconds",
                   type=_non_negative, metavar="S",
                   help="plans costing more CPU-seconds need two approvers (0: off)")
    p.add_argument("--auth-delay-s", dest="auth_delay_s", type=_non_negative, metavar="S",
                   help="wait after a failed sign-in before the next attempt is accepted, "
                        "doubling with each failure")
    add_identity_args(p, required=False, who="admin (to change it)")
    add_json_flag(p)
    p.set_defaults(func=_policy)

    p = sub.add_parser("passwd", help="change a secret (your own, or anyone's as admin)")
    p.add_argument("name")
    add_identity_args(p)
    add_json_flag(p)
    p.set_defaults(func=_passwd)
